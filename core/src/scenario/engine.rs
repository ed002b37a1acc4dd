//! The scenario engine: plays a scenario one event at a time, checks invariants after every
//! step, and can seek to any step and back.

use crate::authority::{LeaseAuthority, LeaseError};
use crate::clock::Tick;
use crate::gateway::{EffectRequest, GatewayOutcome, SideEffectGateway};
use crate::generation::{Generation, TokenError};
use crate::idempotency::{FencedResource, WriteOutcome};
use crate::ids::{IdError, OperationId, ResourceId, WorkerId, WorkflowKey};
use crate::log::{Attempt, LogEntry, OperationLog};
use crate::memory::{buffer, Bytes, HeapSize, DEFAULT_MEMORY_BUDGET};
use crate::register::{FencedRegister, RejectionReason, Revision, WriteRejection, WriteRequest};
use crate::scenario::event::{Event, StepRecord, TokenKind};
use crate::scenario::invariant::{InvariantKind, Violation};
use crate::scenario::model::{Enforcement, ExpectedRevision, Fault, Scenario, Step, TokenSource};
use crate::scenario::state::*;
use crate::scenario::validate::ScenarioError;
use litemap::LiteMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::mem::size_of;
use std::num::NonZeroU64;
use std::sync::Arc;

/// How often the engine keeps a copy of the state, in steps: seeking backwards restores the
/// nearest copy and replays from there. When a state's own maps and lists (the agenda, the list
/// of workers) weigh more than this many steps' records, copies are kept a multiple of this
/// apart instead, so that they never cost much more than the records between them.
pub const SNAPSHOT_EVERY: usize = 1024;
/// The most steps one run may take; a guard against scenarios that never settle.
pub const MAX_RUN_STEPS: usize = 5_000_000;
/// Stands in for the authority's signing key. A teaching model: real systems use a MAC or a
/// signature with a secret key; what matters here is that callers cannot compute it.
const AUTHORITY_KEY: u64 = 0x5eed_f00d_cafe_d00d;

/// Why the engine could not go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum EngineError {
    /// The schedule names a choice that does not exist at that point of the run.
    #[error("schedule[{index}]: choice {choice}, but only {enabled} events were enabled at step {} ({at})", step + 1)]
    BadChoice {
        /// The position in the schedule.
        index: usize,
        /// The choice it names.
        choice: usize,
        /// How many events were enabled.
        enabled: usize,
        /// The step about to run.
        step: usize,
        /// Its time.
        at: Tick,
    },
    /// The run went on for longer than [`MAX_RUN_STEPS`].
    #[error("the run exceeded {MAX_RUN_STEPS} steps")]
    TooLong,
    /// The next step would take the run's records, operation log and snapshots past the memory
    /// budget (see [`Engine::with_memory_budget`]). The engine stays at the last step that fit.
    #[error(
        "stopped before step {step}: the run's records, operation log and snapshots would take about {}, more than its memory budget of {}",
        Bytes(*estimate),
        Bytes(*budget)
    )]
    MemoryBudget {
        /// The budget, in bytes.
        budget: usize,
        /// The estimate the next step would have reached, in bytes.
        estimate: usize,
        /// The step that did not run.
        step: usize,
    },
}

/// How the schedule's choices are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScheduleMode {
    /// A choice that does not exist is an error.
    #[default]
    Strict,
    /// A choice that does not exist wraps around (modulo the enabled count), so one schedule can
    /// be replayed on variants of a scenario whose choice points differ.
    Lenient,
}

/// Whether a run showed what its scenario expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether the run has ended.
    pub finished: bool,
    /// Every violation, in order.
    pub violations: Vec<Violation>,
    /// The invariants the scenario expected to be broken.
    pub expected: Vec<InvariantKind>,
    /// Broken but not expected.
    pub unexpected: Vec<InvariantKind>,
    /// Expected but not broken.
    pub missing: Vec<InvariantKind>,
    /// Rejections and drops by reason.
    pub rejections: BTreeMap<RejectionReason, u64>,
    /// Whether the rejection counts differ from the expected ones (when the scenario pins them).
    pub rejections_mismatch: bool,
    /// Whether the run met its expectations.
    pub met: bool,
}

#[derive(Debug, Clone)]
struct Snapshot {
    state: SimState,
    /// What it holds beyond the snapshot before it, in estimated bytes.
    bytes: usize,
}

/// The engine's memory estimate by part, in bytes, kept up to date as the timeline grows and
/// shrinks. The lists' own buffers are read off their capacities when asked.
#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    /// The engine itself, the scenario and the name index: fixed for the run.
    fixed: usize,
    /// What the records and log entries own (events, captions, requests).
    timeline: usize,
    /// What each snapshot holds beyond the one before it.
    snapshots: usize,
    /// What the current state holds beyond the snapshot it was copied from or into, measured
    /// then: its own maps and lists. The workers and cells it changes afterwards are counted
    /// with the next snapshot, which shares them.
    live: usize,
    /// The most one step has added to `timeline`: room kept for the next step.
    largest_step: usize,
    /// The most log entries one step has added: room kept in the log for the next step.
    most_entries: usize,
}

/// Plays one scenario. `step` is the primitive; `run` loops over it; `seek` moves anywhere.
#[derive(Debug, Clone)]
pub struct Engine {
    scenario: Scenario,
    mode: ScheduleMode,
    state: SimState,
    /// Every step computed so far, including those after the current position that a
    /// backwards seek left behind: the timeline. Replaying the same choices recomputes the
    /// state but keeps these.
    records: Vec<StepRecord>,
    /// The operation log of the whole computed timeline.
    log: OperationLog,
    /// The log's length after each computed step.
    log_lens: Vec<usize>,
    /// Copies of the state every [`SNAPSHOT_EVERY`] steps along the timeline.
    snapshots: Vec<Snapshot>,
    /// Whether the step being executed was computed before (so its log entries exist).
    replaying: bool,
    /// Whether some events have several ways to go (optional pauses, network jitter).
    branching: bool,
    resource_indices: LiteMap<String, usize>,
    /// The most the bookkeeping may take, in estimated bytes.
    budget: usize,
    usage: Usage,
}

fn proof(resource: &str, generation: Generation) -> u64 {
    // FNV-1a over the key, the resource and the generation.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = AUTHORITY_KEY
        .to_le_bytes()
        .into_iter()
        .chain(resource.bytes())
        .chain(generation.get().to_le_bytes());
    for byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

impl Engine {
    /// Checks the scenario and sets up its initial state.
    pub fn new(scenario: Scenario) -> Result<Engine, ScenarioError> {
        scenario.validate()?;
        let state = initial_state(&scenario);
        let resource_indices =
            crate::maps::index_by_name(scenario.resources.iter().map(String::as_str));
        let snapshot = Snapshot { bytes: state.heap_bytes_beyond(None), state: state.clone() };
        let usage = Usage {
            fixed: size_of::<Engine>() + scenario.heap_bytes() + resource_indices.heap_bytes(),
            snapshots: snapshot.bytes,
            live: state.heap_bytes_beyond(Some(&snapshot.state)),
            ..Usage::default()
        };
        Ok(Engine {
            branching: scenario_branches(&scenario),
            scenario,
            mode: ScheduleMode::Strict,
            state,
            records: Vec::new(),
            log: OperationLog::new(),
            snapshots: vec![snapshot],
            log_lens: Vec::new(),
            replaying: false,
            resource_indices,
            budget: DEFAULT_MEMORY_BUDGET,
            usage,
        })
    }

    /// Parses, checks and sets up a scenario from JSON.
    pub fn from_json(json: &str) -> Result<Engine, ScenarioError> {
        Engine::new(Scenario::from_json(json)?)
    }

    /// Reads the schedule leniently (see [`ScheduleMode`]). Call before stepping.
    pub fn with_schedule_mode(mut self, mode: ScheduleMode) -> Engine {
        self.mode = mode;
        self
    }

    /// Sets the most memory the run's bookkeeping may take, in bytes (the default is
    /// [`DEFAULT_MEMORY_BUDGET`]): the records with their captions, the operation log, the
    /// snapshots and the current state, as estimated from their contents. A step that would go
    /// past it is not run; it fails with [`EngineError::MemoryBudget`] instead.
    pub fn with_memory_budget(mut self, bytes: usize) -> Engine {
        self.budget = bytes;
        self
    }

    /// The memory budget, in bytes.
    pub fn memory_budget(&self) -> usize {
        self.budget
    }

    /// What the run's bookkeeping takes now, in estimated bytes (see
    /// [`Engine::with_memory_budget`]).
    pub fn memory_estimate(&self) -> usize {
        let u = &self.usage;
        u.fixed
            + u.timeline
            + u.snapshots
            + u.live
            + buffer::<StepRecord>(self.records.capacity())
            + buffer::<usize>(self.log_lens.capacity())
            + buffer::<LogEntry>(self.log.capacity())
            + buffer::<Snapshot>(self.snapshots.capacity())
    }

    /// The scenario being played.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Everything a UI draws.
    pub fn state(&self) -> &SimState {
        &self.state
    }

    /// Every attempted write and effect up to the current position.
    pub fn log(&self) -> &[LogEntry] {
        &self.log.entries()[..self.log_len_at(self.state.position)]
    }

    /// Rejections and drops up to the current position, by reason.
    pub fn rejections(&self) -> BTreeMap<RejectionReason, u64> {
        crate::log::rejections_by_reason(self.log())
    }

    /// Every step up to the current position.
    pub fn records(&self) -> &[StepRecord] {
        &self.records[..self.state.position]
    }

    /// Every step computed so far, including steps after the current position that a backwards
    /// seek left in place (a UI can draw them as what comes next).
    pub fn timeline(&self) -> &[StepRecord] {
        &self.records
    }

    fn log_len_at(&self, position: usize) -> usize {
        position.checked_sub(1).map_or(0, |p| self.log_lens[p])
    }

    /// How many steps have run.
    pub fn position(&self) -> usize {
        self.state.position
    }

    /// Whether nothing is left to happen.
    pub fn is_finished(&self) -> bool {
        self.state.finished
    }

    /// The events that could run next, in the order schedule indices refer to.
    pub fn enabled(&self) -> Vec<String> {
        let due = self.state.agenda.values().take(self.state.enabled_count());
        due.flat_map(|pending| {
            let what = self.describe_pending(pending);
            let n = if self.branching { self.alternatives(pending) } else { 1 };
            (0..n).map(move |alt| if n == 1 { what.clone() } else { format!("{what} (way {alt})") })
        })
        .collect()
    }

    /// The choices made so far at points where more than one event was enabled: a schedule that
    /// replays this run exactly.
    pub fn schedule_so_far(&self) -> Vec<usize> {
        self.records().iter().filter(|r| r.enabled > 1).map(|r| r.chosen).collect()
    }

    /// Runs one event, chosen by the schedule where several are enabled. Returns `None` once the
    /// run has ended.
    pub fn step(&mut self) -> Result<Option<&StepRecord>, EngineError> {
        let enabled = self.enabled_count();
        if enabled == 0 {
            return Ok(None);
        }
        let choice = if enabled > 1 {
            let index = self.state.cursor;
            let wanted = self.scenario.schedule.get(index).copied().unwrap_or(0);
            match self.mode {
                ScheduleMode::Strict if wanted >= enabled => {
                    return Err(EngineError::BadChoice {
                        index,
                        choice: wanted,
                        enabled,
                        step: self.state.position,
                        at: self.next_time().unwrap_or(self.state.now),
                    })
                }
                _ => wanted % enabled,
            }
        } else {
            0
        };
        self.step_choice(choice).map(Some)
    }

    /// Runs the `choice`-th enabled event, whatever the schedule says; the explorer's primitive.
    /// The choice must be below the number of enabled events.
    pub fn step_choice(&mut self, choice: usize) -> Result<&StepRecord, EngineError> {
        if choice >= self.enabled_count() {
            return Err(self.bad_choice(choice));
        }
        let position = self.state.position;
        self.replaying = match self.records.get(position) {
            Some(record) if record.chosen == choice => true,
            Some(_) => {
                // A different branch: whatever was computed beyond this point no longer applies.
                self.forget_from(position);
                false
            }
            None => false,
        };
        self.make_room()?;
        let entries_before = self.log.len();
        let violations_before = self.state.violations.len();
        let (enabled, at, event) = self.advance(choice)?;
        let index = position;
        if !self.replaying {
            let broken = &self.state.violations[violations_before..];
            let mut caption = crate::scenario::invariant::narrate(event.caption(), broken);
            // Kept for the whole run, so without the spare room formatting leaves.
            caption.shrink_to_fit();
            let record = StepRecord { index, at, event, caption, enabled, chosen: choice };
            let entries = &self.log.entries()[entries_before..];
            let added =
                record.heap_bytes() + entries.iter().map(LogEntry::heap_bytes).sum::<usize>();
            let usage = &mut self.usage;
            usage.timeline += added;
            usage.largest_step = usage.largest_step.max(added);
            usage.most_entries = usage.most_entries.max(entries.len());
            self.records.push(record);
            self.log_lens.push(self.log.len());
        }
        if self.snapshot_due(self.state.position) {
            let bytes = self.state.heap_bytes_beyond(self.snapshots.last().map(|s| &s.state));
            self.snapshots.push(Snapshot { state: self.state.clone(), bytes });
            self.usage.snapshots += bytes;
            self.usage.live = self.state.heap_bytes_beyond(Some(&self.state));
        }
        Ok(&self.records[index])
    }

    /// Drops the records, log entries and snapshots after `position`, and what they counted.
    fn forget_from(&mut self, position: usize) {
        let log_len = self.log_len_at(position);
        let records: usize = self.records[position..].iter().map(StepRecord::heap_bytes).sum();
        let entries: usize = self.log.entries()[log_len..].iter().map(LogEntry::heap_bytes).sum();
        self.usage.timeline -= records + entries;
        self.records.truncate(position);
        self.log.rewind_to(log_len);
        self.log_lens.truncate(position);
        while self.snapshots.last().is_some_and(|s| s.state.position > position) {
            let dropped = self.snapshots.pop().map_or(0, |s| s.bytes);
            self.usage.snapshots -= dropped;
        }
    }

    /// Whether a snapshot is due after step `position`: on a multiple of [`SNAPSHOT_EVERY`], and
    /// far enough from the last one that a snapshot costs no more than the records between two.
    /// A snapshot's cost is what the last one held beyond the one before it (the first, which
    /// shares nothing, is no guide: then the current state's own maps and lists).
    fn snapshot_due(&self, position: usize) -> bool {
        // The start is always kept, so there is a last snapshot.
        let (at, bytes) = self.snapshots.last().map_or((0, 0), |s| (s.state.position, s.bytes));
        if position % SNAPSHOT_EVERY != 0 || position <= at {
            return false;
        }
        let cost = if at == 0 { self.usage.live } else { bytes };
        let per_step = size_of::<StepRecord>() + self.usage.timeline / self.records.len().max(1);
        let spacing = SNAPSHOT_EVERY * cost.div_ceil(SNAPSHOT_EVERY * per_step).max(1);
        position >= at + spacing
    }

    /// Checks that the next step fits the memory budget with room for what it may add (a record
    /// and log entries as large as the largest so far, the growth of a full list, the snapshot
    /// due after it), then grows the full lists. Lists grow by an eighth, not by doubling, so
    /// that growing never needs twice the memory.
    fn make_room(&mut self) -> Result<(), EngineError> {
        let grow = |len: usize| (len / 8).max(64);
        let mut need = 0;
        let (records, log_lens) = (self.records.len(), self.log_lens.len());
        let entries = self.usage.most_entries.max(1);
        let new_records = !self.replaying && records == self.records.capacity();
        let new_log_lens = !self.replaying && log_lens == self.log_lens.capacity();
        let new_log = !self.replaying && self.log.capacity() - self.log.len() < entries;
        if !self.replaying {
            need += self.usage.largest_step;
        }
        // While a list grows, its old and new buffers both exist.
        if new_records {
            need += buffer::<StepRecord>(records + grow(records));
        }
        if new_log_lens {
            need += buffer::<usize>(log_lens + grow(log_lens));
        }
        if new_log {
            need += buffer::<LogEntry>(self.log.len() + grow(self.log.len()).max(entries));
        }
        if self.snapshot_due(self.state.position + 1) {
            let last = self.snapshots.last().map(|s| &s.state);
            need +=
                self.state.heap_bytes_beyond(last) + buffer::<Snapshot>(self.snapshots.len() + 1);
        }
        let estimate = self.memory_estimate() + need;
        if estimate > self.budget {
            return Err(EngineError::MemoryBudget {
                budget: self.budget,
                estimate,
                step: self.state.position,
            });
        }
        if new_records {
            self.records.reserve_exact(grow(records));
        }
        if new_log_lens {
            self.log_lens.reserve_exact(grow(log_lens));
        }
        if new_log {
            self.log.reserve_exact(grow(self.log.len()).max(entries));
        }
        Ok(())
    }

    /// An engine that keeps no operation log, for the explorer, which only needs states.
    pub(crate) fn quiet(mut self) -> Engine {
        self.replaying = true;
        self
    }

    /// Replaces the current state, for the explorer. Records and the log are left alone.
    pub(crate) fn set_state(&mut self, state: SimState) {
        self.state = state;
    }

    /// Runs the `choice`-th enabled event on the current state and returns how many were
    /// enabled, when it ran and what happened. Records nothing; `step_choice` and the explorer
    /// build on it.
    pub(crate) fn advance(&mut self, choice: usize) -> Result<(usize, Tick, Event), EngineError> {
        let enabled = self.enabled_count();
        let Some((key, alternative)) = self.enabled_choice(choice) else {
            return Err(self.bad_choice(choice));
        };
        if self.state.position >= MAX_RUN_STEPS {
            return Err(EngineError::TooLong);
        }
        if enabled > 1 {
            self.state.cursor += 1;
        }
        let pending = self.state.agenda_remove(&key).expect("enabled keys come from the agenda");
        self.state.now = key.at;
        let event = self.execute(pending, alternative);
        if self.state.agenda.is_empty() {
            self.finish();
        }
        self.state.position += 1;
        Ok((enabled, key.at, event))
    }

    fn bad_choice(&self, choice: usize) -> EngineError {
        EngineError::BadChoice {
            index: self.state.cursor,
            choice,
            enabled: self.enabled_count(),
            step: self.state.position,
            at: self.next_time().unwrap_or(self.state.now),
        }
    }

    /// How many ways the event `pending` can go: an optional pause is taken or skipped; a message
    /// on a jittery network takes any of its possible latencies. Everything else has one way.
    fn alternatives(&self, pending: &Pending) -> usize {
        let Pending::WorkerStep(w) = pending else { return 1 };
        match self.scenario.workers[*w].script.get(self.state.workers[*w].pc) {
            Some(Step::Pause { optional: true, .. }) => 2,
            Some(Step::Write(_) | Step::Effect(_) | Step::Retry { .. }) => {
                self.scenario.network.jitter as usize + 1
            }
            _ => 1,
        }
    }

    /// How many choices there are now: the alternatives of every event due at the earliest tick.
    pub fn enabled_count(&self) -> usize {
        if !self.branching {
            return self.state.enabled_count();
        }
        let due = self.state.agenda.values().take(self.state.enabled_count());
        due.map(|p| self.alternatives(p)).sum()
    }

    fn enabled_choice(&self, choice: usize) -> Option<(AgendaKey, usize)> {
        if !self.branching {
            return self.state.enabled_key(choice).map(|k| (k, 0));
        }
        let mut rest = choice;
        for (key, pending) in self.state.agenda.iter().take(self.state.enabled_count()) {
            let n = self.alternatives(pending);
            if rest < n {
                return Some((*key, rest));
            }
            rest -= n;
        }
        None
    }

    /// Runs to the end.
    pub fn run(&mut self) -> Result<Verdict, EngineError> {
        while self.step()?.is_some() {}
        Ok(self.verdict())
    }

    /// Moves to just after step `n` (0 is the start), forwards or backwards, along the same
    /// choices as before. It restores the nearest snapshot at or before `n` when that saves work
    /// and replays from there. Stops early at the end of the run.
    pub fn seek(&mut self, n: usize) -> Result<(), EngineError> {
        let at = self.snapshots.partition_point(|s| s.state.position <= n).saturating_sub(1);
        let snapshot = &self.snapshots[at];
        if n < self.state.position || snapshot.state.position > self.state.position {
            self.state = snapshot.state.clone();
            self.usage.live = self.state.heap_bytes_beyond(Some(&snapshot.state));
        }
        while self.state.position < n {
            let next = match self.records.get(self.state.position) {
                Some(record) => Some(self.step_choice(record.chosen)?),
                None => self.step()?,
            };
            if next.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// The verdict so far (final once the run has ended).
    pub fn verdict(&self) -> Verdict {
        // Sets of invariants are read off the fixed list, in report order, without sorting.
        let broken = |k: &InvariantKind| self.state.violations.iter().any(|v| v.invariant == *k);
        let expected = |k: &InvariantKind| self.scenario.expect.violations.contains(k);
        let kinds = || InvariantKind::ALL.into_iter();
        let rejections = self.rejections();
        let rejections_mismatch =
            self.scenario.expect.rejections.as_ref().is_some_and(|want| *want != rejections);
        let unexpected: Vec<_> = kinds().filter(|k| broken(k) && !expected(k)).collect();
        let missing: Vec<_> = kinds().filter(|k| expected(k) && !broken(k)).collect();
        Verdict {
            finished: self.state.finished,
            violations: self.state.violations.clone(),
            expected: kinds().filter(expected).collect(),
            met: unexpected.is_empty() && missing.is_empty() && !rejections_mismatch,
            unexpected,
            missing,
            rejections,
            rejections_mismatch,
        }
    }

    fn next_time(&self) -> Option<Tick> {
        self.state.agenda.keys().next().map(|k| k.at)
    }

    fn describe_pending(&self, pending: &Pending) -> String {
        let s = &self.state;
        match pending {
            Pending::Fault(i) => format!("fault {i}"),
            Pending::Expire(r) => format!("lease on {} expires", self.scenario.resources[*r]),
            Pending::Deliver(id) => format!("message {id} arrives"),
            Pending::Commit(id) => format!("checked write {id} commits"),
            Pending::Resume(w) => format!("{} resumes", s.workers[*w].name),
            Pending::WorkerStep(w) => format!("{} takes its next step", s.workers[*w].name),
        }
    }

    fn schedule(&mut self, at: Tick, pending: Pending) -> AgendaKey {
        let id = match &pending {
            Pending::Fault(i)
            | Pending::Expire(i)
            | Pending::Resume(i)
            | Pending::WorkerStep(i) => *i as u64,
            Pending::Deliver(id) | Pending::Commit(id) => *id,
        };
        let key = AgendaKey { at, rank: pending.rank(), id };
        self.state.agenda_insert(key, pending);
        key
    }

    fn schedule_worker(&mut self, w: usize, at: Tick, resume: bool) {
        if let Some(old) = Arc::make_mut(&mut self.state.workers[w]).pending.take() {
            self.state.agenda_remove(&old);
        }
        let key =
            self.schedule(at, if resume { Pending::Resume(w) } else { Pending::WorkerStep(w) });
        Arc::make_mut(&mut self.state.workers[w]).pending = Some(key);
    }

    fn violation(&mut self, invariant: InvariantKind, detail: String, location: &str) {
        let step = self.state.position;
        let location = Some(location.to_string());
        self.state.violations.push(Violation { invariant, step, detail, location });
    }

    /// How a store cell is named in captions, and the id of its diagram lane.
    fn place(&self, s: usize, path: &str, resource: &str) -> (String, String) {
        let store = &self.scenario.stores[s];
        let text = if path == "primary" {
            format!("{resource} in {}", store.name)
        } else {
            format!("{resource} in {}/{path}", store.name)
        };
        (text, crate::scenario::diagram::store_lane_id(store, path))
    }

    /// The data a write path reaches and how that path is protected. Validation guarantees the
    /// path exists; an unknown one falls back to the primary data rather than panicking.
    fn route(&self, s: usize, path: &str) -> (String, Enforcement) {
        let store = &self.scenario.stores[s];
        store
            .route(path)
            .map_or(("primary".to_string(), store.enforcement), |(d, e)| (d.to_string(), e))
    }

    fn resource_index(&self, name: &str) -> usize {
        self.resource_indices.get(name).copied().unwrap_or(0)
    }

    fn store_index(&self, name: Option<&str>) -> usize {
        name.and_then(|n| self.scenario.stores.iter().position(|s| s.name == n)).unwrap_or(0)
    }

    fn execute(&mut self, pending: Pending, alternative: usize) -> Event {
        match pending {
            Pending::Fault(i) => self.fault(i),
            Pending::Expire(r) => self.expire(r),
            Pending::Deliver(id) => self.deliver(id),
            Pending::Commit(id) => self.commit(id),
            Pending::Resume(w) => self.resume(w),
            Pending::WorkerStep(w) => {
                Arc::make_mut(&mut self.state.workers[w]).pending = None;
                self.worker_step(w, alternative as u64)
            }
        }
    }

    fn fault(&mut self, i: usize) -> Event {
        match self.scenario.faults[i].fault.clone() {
            Fault::PauseWorker { worker, ticks, reason } => {
                let w = self.state.workers.iter().position(|x| x.name == worker).unwrap_or(0);
                let until = self.state.now.after(ticks);
                if matches!(
                    self.state.workers[w].status,
                    WorkerStatus::Finished | WorkerStatus::Stopped { .. }
                ) {
                    return Event::PauseIgnored { worker, ticks };
                }
                Arc::make_mut(&mut self.state.workers[w]).status =
                    WorkerStatus::Paused { until, reason };
                let later = self.state.workers[w].pending.map_or(until, |k| k.at.max(until));
                self.schedule_worker(w, later, true);
                Event::Paused { worker, ticks, reason, believes: self.believed(w) }
            }
            Fault::DelayMessages { worker, ticks, count } => {
                let w = self.state.workers.iter().position(|x| x.name == worker).unwrap_or(0);
                Arc::make_mut(&mut self.state.workers[w]).slowed = (ticks, count);
                Event::MessagesDelayed { worker, ticks, count }
            }
            Fault::RestartAuthority => {
                let kept = self.scenario.authority.token_source != TokenSource::VolatileCounter;
                if !kept {
                    self.state.authority.restart_losing_counter();
                    for r in 0..self.scenario.resources.len() {
                        self.state.ghost.live[r] = None;
                        if let Some(key) = self.state.expiry[r].take() {
                            self.state.agenda_remove(&key);
                        }
                    }
                }
                Event::AuthorityRestarted { counter_kept: kept }
            }
            Fault::RestartStore { store } => {
                let s = self.store_index(Some(&store));
                let kept = self.scenario.stores[s].persist_highest;
                if !kept {
                    for (_, cell) in self.state.stores[s].cells.iter_mut() {
                        Arc::make_mut(cell).resource.register.forget_highest();
                    }
                }
                Event::StoreRestarted { store, highest_kept: kept }
            }
        }
    }

    fn believed(&self, w: usize) -> Option<Generation> {
        self.state.workers[w].leases.values().next().map(|l| l.generation)
    }

    fn expire(&mut self, r: usize) -> Event {
        self.state.expiry[r] = None;
        self.state.ghost.live[r] = None;
        let resource = self.scenario.resources[r].clone();
        let id = validated(ResourceId::new(resource.clone()));
        // The expiry agenda is kept in step with grants, renewals and releases, so the lease is
        // there; the fallback only keeps a corrupted state from panicking.
        let (worker, generation) = self
            .state
            .authority
            .expire_resource(&id, self.state.now)
            .map_or(("nobody".to_string(), Generation::FIRST), |l| {
                (l.holder.to_string(), l.generation)
            });
        Event::LeaseExpired { worker, resource, generation }
    }

    fn resume(&mut self, w: usize) -> Event {
        let worker = Arc::make_mut(&mut self.state.workers[w]);
        worker.pending = None;
        // A worker frozen while its grant was on the way goes back to waiting for it; any other
        // worker carries on with its script.
        match worker.awaiting_grant.clone() {
            Some(resource) => worker.status = WorkerStatus::AwaitingGrant { resource },
            None => {
                worker.status = WorkerStatus::Running;
                let now = self.state.now;
                self.schedule_worker(w, now, false);
            }
        }
        let now = self.state.now;
        let worker = &self.state.workers[w];
        let held = worker.leases.iter().next().map(|(r, l)| (r.clone(), l.generation));
        let (resource, believes) = held.map_or((None, None), |(r, g)| (Some(r), Some(g)));
        let name = worker.name.clone();
        let (still_owner, current) = match &resource {
            Some(r) => {
                let id = ResourceId::new(r.clone()).ok();
                let current = id.as_ref().and_then(|id| self.state.authority.generation(id));
                let holder = id.as_ref().and_then(|id| self.state.authority.lease(id, now));
                let owner = holder
                    .is_some_and(|l| l.holder.as_str() == name && Some(l.generation) == believes);
                (owner, current)
            }
            None => (false, None),
        };
        Event::Resumed { worker: name, believes, resource, still_owner, current }
    }

    fn stop(&mut self, w: usize, reason: String) -> Event {
        let worker = Arc::make_mut(&mut self.state.workers[w]);
        worker.status = WorkerStatus::Stopped { reason: reason.clone() };
        Event::WorkerStopped { worker: worker.name.clone(), reason }
    }

    /// Runs a worker's next script step. `alternative` picks how a branching step goes: 1 skips
    /// an optional pause; for a send it is the extra network latency.
    fn worker_step(&mut self, w: usize, alternative: u64) -> Event {
        let now = self.state.now;
        let spec = &self.scenario.workers[w];
        let name = spec.name.clone();
        let pc = self.state.workers[w].pc;
        let Some(step) = spec.script.get(pc).cloned() else {
            Arc::make_mut(&mut self.state.workers[w]).status = WorkerStatus::Finished;
            return Event::WorkerFinished { worker: name };
        };
        Arc::make_mut(&mut self.state.workers[w]).status = WorkerStatus::Running;
        let advance = |engine: &mut Engine, at: Tick| {
            Arc::make_mut(&mut engine.state.workers[w]).pc += 1;
            engine.schedule_worker(w, at, false);
        };
        match step {
            Step::Acquire { resource } => self.acquire(w, &resource),
            Step::Renew { resource } => {
                let Some(held) = self.state.workers[w].leases.get(&resource).copied() else {
                    return self.stop(w, format!("it holds no lease on {resource} to renew"));
                };
                let (rid, wid) = ids(&resource, &name);
                match self.state.authority.renew(&rid, &wid, held.generation, now) {
                    Ok(lease) => {
                        let r = self.resource_index(&resource);
                        self.state.ghost.live[r] = Some((held.epoch, lease.valid_until));
                        self.schedule_expiry(r, lease.valid_until);
                        if let Some(l) =
                            Arc::make_mut(&mut self.state.workers[w]).leases.get_mut(&resource)
                        {
                            l.valid_until = lease.valid_until;
                        }
                        advance(self, now);
                        Event::Renewed {
                            worker: name,
                            resource,
                            generation: held.generation,
                            valid_until: lease.valid_until,
                        }
                    }
                    Err(e) => {
                        Arc::make_mut(&mut self.state.workers[w]).leases.remove(&resource);
                        Arc::make_mut(&mut self.state.workers[w]).status =
                            WorkerStatus::Stopped { reason: "its lease is gone".into() };
                        Event::RenewFailed { worker: name, resource, reason: e.to_string() }
                    }
                }
            }
            Step::Release { resource } => {
                let held = Arc::make_mut(&mut self.state.workers[w]).leases.remove(&resource);
                advance(self, now);
                let Some(held) = held else {
                    return Event::WorkerStopped {
                        worker: name,
                        reason: format!("it holds no lease on {resource} to release"),
                    };
                };
                let (rid, wid) = ids(&resource, &name);
                if self.state.authority.release(&rid, &wid, held.generation).is_ok() {
                    let r = self.resource_index(&resource);
                    self.state.ghost.live[r] = None;
                    if let Some(key) = self.state.expiry[r].take() {
                        self.state.agenda_remove(&key);
                    }
                }
                Event::Released { worker: name, resource, generation: held.generation }
            }
            Step::Read { resource, store, path } => {
                let s = self.store_index(store.as_deref());
                let path = path.unwrap_or_else(|| "primary".into());
                let (data, _) = self.route(s, &path);
                let cell = &self.state.stores[s].cells[&(data.clone(), resource.clone())];
                let (value, revision) = (
                    cell.resource.register.value().map(str::to_string),
                    cell.resource.register.revision(),
                );
                Arc::make_mut(&mut self.state.workers[w])
                    .last_read
                    .insert((s, data, resource.clone()), revision);
                advance(self, now);
                Event::ReadValue {
                    worker: name,
                    store: self.scenario.stores[s].name.clone(),
                    path,
                    resource,
                    value,
                    revision,
                }
            }
            Step::Compute { ticks } => {
                let until = now.after(ticks);
                advance(self, until);
                Arc::make_mut(&mut self.state.workers[w]).status = WorkerStatus::Busy { until };
                Event::Computing { worker: name, ticks }
            }
            Step::Pause { ticks, optional: true, .. } if alternative == 1 => {
                advance(self, now);
                Event::PauseSkipped { worker: name, ticks }
            }
            Step::Pause { ticks, reason, .. } => {
                let until = now.after(ticks);
                Arc::make_mut(&mut self.state.workers[w]).pc += 1;
                self.schedule_worker(w, until, true);
                Arc::make_mut(&mut self.state.workers[w]).status =
                    WorkerStatus::Paused { until, reason };
                Event::Paused { worker: name, ticks, reason, believes: self.believed(w) }
            }
            Step::CheckLease { resource } => {
                let local = self.local_time(w);
                let Some(held) = self.state.workers[w].leases.get(&resource).copied() else {
                    return self.stop(w, format!("it holds no lease on {resource}"));
                };
                let ok = local < held.valid_until.0;
                if ok {
                    advance(self, now);
                } else {
                    Arc::make_mut(&mut self.state.workers[w]).status = WorkerStatus::Stopped {
                        reason: "its own clock says the lease ran out".into(),
                    };
                }
                Event::LeaseChecked {
                    worker: name,
                    resource,
                    local_time: local,
                    valid_until: held.valid_until,
                    believes_valid: ok,
                }
            }
            Step::Write(write) => {
                let s = self.store_index(write.store.as_deref());
                let path = write.path.clone().unwrap_or_else(|| "primary".into());
                let operation = self.scenario.operation_name(spec, pc, write.operation.as_deref());
                let (token, generation, ghost) =
                    match self.token_for(w, &write.resource, write.forge) {
                        Ok(t) => t,
                        Err(reason) => return self.stop(w, reason),
                    };
                let (data, _) = self.route(s, &path);
                let expected_revision = write.expected_revision.map(|e| match e {
                    ExpectedRevision::Exactly(n) => Revision(n),
                    ExpectedRevision::LastRead => self.state.workers[w]
                        .last_read
                        .get(&(s, data.clone(), write.resource.clone()))
                        .copied()
                        .unwrap_or_default(),
                });
                // Validation guarantees both names; a scenario built in code without validating
                // stops the worker instead of panicking.
                let (Ok(resource), Ok(operation_id)) =
                    (ResourceId::new(write.resource.clone()), OperationId::new(operation.clone()))
                else {
                    return self
                        .stop(w, format!("operation id or resource name of step {pc} is invalid"));
                };
                let request = WriteRequest {
                    resource,
                    generation,
                    operation: operation_id,
                    expected_revision,
                    value: write.value.clone(),
                };
                let body = MessageBody::Write { store: s, path, request, token, ghost };
                advance(self, now);
                self.send(w, operation, body, write.delay + alternative, None)
            }
            Step::Effect(effect) => {
                let operation = self.scenario.operation_name(spec, pc, effect.operation.as_deref());
                let (token, generation, ghost) = match self.token_for(w, &effect.resource, None) {
                    Ok(t) => t,
                    Err(reason) => return self.stop(w, reason),
                };
                let workflow = effect.workflow.clone().unwrap_or_else(|| effect.resource.clone());
                let (Ok(workflow), Ok(operation_id)) =
                    (WorkflowKey::new(workflow), OperationId::new(operation.clone()))
                else {
                    return self
                        .stop(w, format!("operation id or workflow key of step {pc} is invalid"));
                };
                let request = EffectRequest {
                    workflow,
                    generation,
                    operation: operation_id,
                    effect: effect.effect.clone(),
                };
                let body = MessageBody::Effect {
                    request,
                    token,
                    resource: effect.resource.clone(),
                    ghost,
                };
                advance(self, now);
                self.send(w, operation, body, effect.delay + alternative, None)
            }
            Step::Retry { operation } => {
                let Some((mut body, seq)) = self.state.workers[w].sent.get(&operation).cloned()
                else {
                    return self.stop(w, format!("it never sent operation {operation}"));
                };
                // The request is the same, but it is sent now: whether its lease is still valid
                // is judged at this moment, not when it was first sent.
                let (resource, epoch) = match &body {
                    MessageBody::Write { request, ghost, .. } => {
                        (request.resource.to_string(), ghost.epoch)
                    }
                    MessageBody::Effect { resource, ghost, .. } => (resource.clone(), ghost.epoch),
                    MessageBody::Grant { .. } => {
                        return self.stop(w, format!("operation {operation} is not a request"))
                    }
                };
                let r = self.resource_index(&resource);
                let valid =
                    self.state.ghost.live[r].is_some_and(|(e, until)| e == epoch && now < until);
                if let MessageBody::Write { ghost, .. } | MessageBody::Effect { ghost, .. } =
                    &mut body
                {
                    ghost.lease_valid_at_send = valid;
                }
                advance(self, now);
                self.send(w, operation, body, alternative, Some(seq))
            }
        }
    }

    fn local_time(&self, w: usize) -> u64 {
        let now = i128::from(self.state.now.0);
        (now + i128::from(self.state.workers[w].clock_offset)).clamp(0, i128::from(u64::MAX)) as u64
    }

    /// The token a worker presents, and what the checker knows about it.
    fn token_for(
        &self,
        w: usize,
        resource: &str,
        forge: Option<u64>,
    ) -> Result<(TokenKind, Generation, MessageGhost), String> {
        let held = self.state.workers[w].leases.get(resource).copied();
        let r = self.resource_index(resource);
        let epoch = held.map_or(0, |l| l.epoch);
        let valid = held.is_some()
            && self.state.ghost.live[r]
                .is_some_and(|(e, until)| e == epoch && self.state.now < until);
        let ghost = MessageGhost { epoch, lease_valid_at_send: valid, proof: 0 };
        if let Some(forged) = forge {
            let g = Generation::new(forged).map_err(|e| e.to_string())?;
            return Ok((TokenKind::Forged, g, ghost));
        }
        let Some(held) = held else {
            return Err(format!("it holds no lease on {resource} to write under"));
        };
        if self.scenario.authority.token_source == TokenSource::WallClock {
            let g = Generation::new(self.local_time(w).max(1)).map_err(|e| e.to_string())?;
            return Ok((TokenKind::WallClock, g, ghost));
        }
        Ok((TokenKind::Lease, held.generation, MessageGhost { proof: held.proof, ..ghost }))
    }

    /// Puts a write or effect on the network. A retry (`original` is the first send's sequence
    /// number) keeps that number: it is the same request, not a later one.
    fn send(
        &mut self,
        w: usize,
        operation: String,
        body: MessageBody,
        delay: u64,
        original: Option<u64>,
    ) -> Event {
        let retry = original.is_some();
        let now = self.state.now;
        let id = self.state.next_message;
        self.state.next_message += 1;
        let worker_state = Arc::make_mut(&mut self.state.workers[w]);
        let mut delay = delay;
        if worker_state.slowed.1 > 0 {
            delay = delay.saturating_add(worker_state.slowed.0);
            worker_state.slowed.1 -= 1;
        }
        let arrives_at = now.after(self.scenario.network.latency).after(delay);
        let worker = self.state.workers[w].name.clone();
        let worker_state = Arc::make_mut(&mut self.state.workers[w]);
        let seq = original.unwrap_or_else(|| {
            worker_state.send_seq += 1;
            worker_state.send_seq - 1
        });
        worker_state.sent.insert(operation, (body.clone(), seq));
        let event = match &body {
            MessageBody::Write { store, path, request, token, .. } => Event::WriteSent {
                worker: worker.clone(),
                message: id,
                store: self.scenario.stores[*store].name.clone(),
                path: path.clone(),
                request: request.clone(),
                token: *token,
                arrives_at,
                retry,
            },
            MessageBody::Effect { request, token, .. } => Event::EffectSent {
                worker: worker.clone(),
                message: id,
                request: request.clone(),
                token: *token,
                arrives_at,
                retry,
            },
            MessageBody::Grant { .. } => unreachable!("grants are sent by the authority"),
        };
        let message = Message { id, worker, sent_at: now, arrives_at, body, worker_index: w, seq };
        self.state.in_flight.insert(id, message);
        self.schedule(arrives_at, Pending::Deliver(id));
        event
    }

    fn schedule_expiry(&mut self, r: usize, at: Tick) {
        if let Some(old) = self.state.expiry[r].take() {
            self.state.agenda_remove(&old);
        }
        let key = self.schedule(at, Pending::Expire(r));
        self.state.expiry[r] = Some(key);
    }

    fn acquire(&mut self, w: usize, resource: &str) -> Event {
        let now = self.state.now;
        let name = self.state.workers[w].name.clone();
        let (rid, wid) = ids(resource, &name);
        let r = self.resource_index(resource);
        match self.state.authority.acquire(&rid, &wid, now) {
            Ok(lease) => {
                let ghost = &mut self.state.ghost;
                ghost.epochs[r] += 1;
                let epoch = ghost.epochs[r];
                let previous = ghost.max_issued[r];
                ghost.max_issued[r] = previous.max(Some(lease.generation));
                ghost.live[r] = Some((epoch, lease.valid_until));
                if let Some(prev) = previous.filter(|p| lease.generation <= *p) {
                    self.violation(
                        InvariantKind::GenerationReissued,
                        format!(
                            "the authority issued generation {} for {resource} after it had already issued {prev}",
                            lease.generation
                        ),
                        "authority",
                    );
                }
                self.schedule_expiry(r, lease.valid_until);
                let held = HeldLease {
                    generation: lease.generation,
                    valid_until: lease.valid_until,
                    epoch,
                    proof: proof(resource, lease.generation),
                };
                let id = self.state.next_message;
                self.state.next_message += 1;
                let arrives_at = now.after(self.scenario.network.latency);
                let body = MessageBody::Grant { resource: resource.to_string(), lease: held };
                let message = Message {
                    id,
                    worker: name.clone(),
                    sent_at: now,
                    arrives_at,
                    body,
                    worker_index: w,
                    seq: 0,
                };
                self.state.in_flight.insert(id, message);
                self.schedule(arrives_at, Pending::Deliver(id));
                let worker = Arc::make_mut(&mut self.state.workers[w]);
                worker.status = WorkerStatus::AwaitingGrant { resource: resource.to_string() };
                worker.awaiting_grant = Some(resource.to_string());
                Event::LeaseGranted {
                    worker: name,
                    resource: resource.to_string(),
                    generation: lease.generation,
                    valid_until: lease.valid_until,
                    arrives_at,
                    message: id,
                }
            }
            Err(LeaseError::Held { holder, valid_until, .. }) => {
                self.schedule_worker(w, valid_until, false);
                Arc::make_mut(&mut self.state.workers[w]).status = WorkerStatus::WaitingForLease {
                    resource: resource.to_string(),
                    until: valid_until,
                };
                Event::LeaseBusy {
                    worker: name,
                    resource: resource.to_string(),
                    holder: holder.to_string(),
                    valid_until,
                }
            }
            Err(e) => self.stop(w, format!("the authority refused a lease: {e}")),
        }
    }

    fn deliver(&mut self, id: u64) -> Event {
        let Some(message) = self.state.in_flight.remove(&id) else {
            return Event::WorkerStopped {
                worker: "network".into(),
                reason: format!("message {id} vanished"),
            };
        };
        let w = message.worker_index;
        match message.body.clone() {
            MessageBody::Grant { resource, lease } => {
                let worker = Arc::make_mut(&mut self.state.workers[w]);
                worker.leases.insert(resource.clone(), lease);
                worker.awaiting_grant = None;
                worker.pc += 1;
                let paused = matches!(worker.status, WorkerStatus::Paused { .. });
                if !paused {
                    worker.status = WorkerStatus::Running;
                    let now = self.state.now;
                    self.schedule_worker(w, now, false);
                }
                Event::GrantReceived {
                    worker: message.worker,
                    resource,
                    generation: lease.generation,
                    message: id,
                }
            }
            MessageBody::Write { store, path, request, token, ghost } => {
                self.arrive_write(message, store, path, request, token, ghost)
            }
            MessageBody::Effect { request, token, resource, ghost } => {
                self.arrive_effect(message, request, token, &resource, ghost)
            }
        }
    }

    /// Checks the authority's proof on a token, where the scenario asks for authenticated tokens.
    fn verify(
        &self,
        resource: &str,
        generation: Generation,
        token: TokenKind,
        ghost: &MessageGhost,
    ) -> Result<(), TokenError> {
        let authority = &self.scenario.authority;
        let verifies = !authority.authenticated
            || authority.token_source == TokenSource::WallClock
            || (token != TokenKind::Forged && ghost.proof == proof(resource, generation));
        if verifies {
            Ok(())
        } else {
            Err(TokenError::Forged { generation })
        }
    }

    fn arrive_write(
        &mut self,
        message: Message,
        s: usize,
        path: String,
        request: WriteRequest,
        token: TokenKind,
        ghost: MessageGhost,
    ) -> Event {
        let now = self.state.now;
        let resource = request.resource.to_string();
        let (data, enforcement) = self.route(s, &path);
        let key = (data.clone(), resource.clone());
        let verified = if enforcement == Enforcement::Unfenced {
            Ok(())
        } else {
            self.verify(&resource, request.generation, token, &ghost)
        };
        let cell = self.state.stores[s]
            .cells
            .get_mut(&key)
            .map(Arc::make_mut)
            .expect("cells exist for every data and resource");
        let highest_before = cell.resource.register.highest();
        let outcome = match (verified, enforcement) {
            (Err(error), _) => WriteOutcome::Rejected(WriteRejection::InvalidToken(error)),
            (Ok(()), Enforcement::Unfenced) => {
                WriteOutcome::Applied(cell.resource.register.write_unchecked(&request))
            }
            (Ok(()), Enforcement::CheckThenWrite) => match cell.resource.register.check(&request) {
                Err(rejection) => WriteOutcome::Rejected(rejection),
                Ok(()) => {
                    let highest_seen = cell.resource.register.highest();
                    let writes_at = now.after(self.scenario.stores[s].check_write_gap);
                    self.note_presented(s, &data, &resource, ghost.epoch, &message.worker);
                    let event = Event::CheckPassed {
                        worker: message.worker.clone(),
                        message: message.id,
                        store: self.scenario.stores[s].name.clone(),
                        path,
                        request,
                        highest_seen,
                        writes_at,
                    };
                    self.state.checked.insert(message.id, message.clone());
                    self.schedule(writes_at, Pending::Commit(message.id));
                    return event;
                }
            },
            (Ok(()), Enforcement::Fenced) => match cell.resource.register.write(&request) {
                Ok(applied) => WriteOutcome::Applied(applied),
                Err(rejection) => WriteOutcome::Rejected(rejection),
            },
            (Ok(()), Enforcement::FencedIdempotent) => cell.resource.write(&request, now),
        };
        let settled = Settled { enforcement, outcome, highest_before };
        self.settle_write(message, s, path, request, settled, ghost)
    }

    fn commit(&mut self, id: u64) -> Event {
        let Some(message) = self.state.checked.remove(&id) else {
            return Event::WorkerStopped {
                worker: "store".into(),
                reason: format!("checked write {id} vanished"),
            };
        };
        let MessageBody::Write { store: s, path, request, ghost, .. } = message.body.clone() else {
            return Event::WorkerStopped {
                worker: "store".into(),
                reason: format!("message {id} is not a write"),
            };
        };
        let (data, _) = self.route(s, &path);
        let key = (data, request.resource.to_string());
        let cell = self.state.stores[s]
            .cells
            .get_mut(&key)
            .map(Arc::make_mut)
            .expect("cells exist for every data and resource");
        let highest_before = cell.resource.register.highest();
        let outcome = WriteOutcome::Applied(cell.resource.register.write_unchecked(&request));
        let enforcement = Enforcement::CheckThenWrite;
        let settled = Settled { enforcement, outcome, highest_before };
        let settled = self.settle_write(message, s, path, request, settled, ghost);
        match settled {
            Event::WriteArrived { worker, message, store, path, request, outcome, .. } => {
                Event::WriteCommitted {
                    worker,
                    message,
                    store,
                    path,
                    request,
                    outcome,
                    highest_before,
                }
            }
            other => other,
        }
    }

    fn settle_write(
        &mut self,
        message: Message,
        s: usize,
        path: String,
        request: WriteRequest,
        settled: Settled,
        ghost: MessageGhost,
    ) -> Event {
        let Settled { enforcement, outcome, highest_before } = settled;
        let resource = request.resource.to_string();
        let (data, _) = self.route(s, &path);
        let misfenced = self.misfenced(s, &data, &resource, &outcome, ghost);
        // For the final value, a write counts as the latest owner's attempt when it applied, or
        // when the fence refused it although no newer lease had reached this data: then the
        // refusal wronged its writer (a forged, clock-made or reset generation). A refusal
        // because a newer lease did show up, a replay or a revision conflict is the store
        // working as designed and says nothing about whose value should win.
        let superseded = self
            .state
            .ghost
            .cells
            .get(&(s, data.clone(), resource.clone()))
            .and_then(|cell| cell.max_presented.as_ref())
            .is_some_and(|(epoch, _)| ghost.epoch < *epoch);
        let fenced_out = !superseded
            && matches!(
                outcome,
                WriteOutcome::Rejected(
                    WriteRejection::Stale { .. } | WriteRejection::InvalidToken(_)
                )
            );
        if outcome.is_applied() || fenced_out {
            self.note_attempt(s, &data, &resource, ghost.epoch, &message.worker);
        }
        if outcome.is_applied() {
            self.check_accepted_write(s, &path, &data, &request, &message, ghost);
        }
        self.note_presented(s, &data, &resource, ghost.epoch, &message.worker);
        let highest_after = self.state.stores[s].cells[&(data.clone(), resource.clone())]
            .resource
            .register
            .highest();
        if highest_after != highest_before && highest_after == Some(request.generation) {
            if let MessageBody::Write { token, .. } = &message.body {
                let key = (s, data.clone(), resource.clone());
                let cell = Arc::make_mut(self.state.ghost.cells.entry(key).or_default());
                cell.highest_token = Some(*token);
            }
        }
        let actor = validated(WorkerId::new(message.worker.clone()));
        if !self.replaying {
            self.log.record(
                self.state.now,
                actor,
                Attempt::Write(request.clone()),
                outcome.clone(),
            );
        }
        let register = &self.state.stores[s].cells[&(data, resource)].resource.register;
        Event::WriteArrived {
            worker: message.worker,
            message: message.id,
            store: self.scenario.stores[s].name.clone(),
            path,
            enforcement,
            request,
            outcome,
            value_after: register.value().map(str::to_string),
            highest_before,
            highest_after,
            misfenced,
        }
    }

    /// Where the generation came from that made the store refuse, as stale, a writer holding
    /// the newest lease to have reached this data; `None` when the refusal was right.
    fn misfenced(
        &self,
        s: usize,
        data: &str,
        resource: &str,
        outcome: &WriteOutcome,
        ghost: MessageGhost,
    ) -> Option<TokenKind> {
        // Only a generation below the highest is taken for a stale owner; "already written" under
        // the strict policy is the policy at work, not a misjudged owner.
        let below = matches!(
            outcome,
            WriteOutcome::Rejected(WriteRejection::Stale { presented, highest }) if presented < highest
        );
        if ghost.epoch == 0 || !below {
            return None;
        }
        let cell = self.state.ghost.cells.get(&(s, data.to_string(), resource.to_string()))?;
        let newest = cell.max_presented.as_ref().is_none_or(|(epoch, _)| ghost.epoch >= *epoch);
        newest.then(|| cell.highest_token.unwrap_or(TokenKind::Lease))
    }

    fn note_attempt(&mut self, s: usize, data: &str, resource: &str, epoch: u64, worker: &str) {
        let cell = Arc::make_mut(
            self.state.ghost.cells.entry((s, data.to_string(), resource.to_string())).or_default(),
        );
        if cell.max_attempted.as_ref().is_none_or(|(e, _)| epoch > *e) {
            cell.max_attempted = Some((epoch, worker.to_string()));
        }
    }

    /// Records that a request under lease `epoch` reached the boundary of `data`, whatever the
    /// boundary then did with it: from now on every older lease is superseded there.
    fn note_presented(&mut self, s: usize, data: &str, resource: &str, epoch: u64, worker: &str) {
        let cell = Arc::make_mut(
            self.state.ghost.cells.entry((s, data.to_string(), resource.to_string())).or_default(),
        );
        if cell.max_presented.as_ref().is_none_or(|(e, _)| epoch > *e) {
            cell.max_presented = Some((epoch, worker.to_string()));
        }
    }

    fn check_accepted_write(
        &mut self,
        s: usize,
        path: &str,
        data: &str,
        request: &WriteRequest,
        message: &Message,
        ghost: MessageGhost,
    ) {
        if !self.scenario.stores[s].critical {
            return;
        }
        let resource = request.resource.as_str();
        let (place, lane) = self.place(s, path, resource);
        let who = &message.worker;
        let cell = Arc::make_mut(
            self.state.ghost.cells.entry((s, data.to_string(), resource.to_string())).or_default(),
        );
        let mut found = Vec::new();
        if let Some((_, newer)) = cell.max_presented.as_ref().filter(|(e, _)| ghost.epoch < *e) {
            let detail = if ghost.epoch == 0 {
                format!("{place} accepted {who}'s write, which no lease backs, after {newer} presented one under a lease")
            } else {
                format!("{place} accepted {who}'s write from an older lease after {newer} presented a newer one")
            };
            found.push((InvariantKind::StaleWriteAccepted, detail));
        }
        if !cell.applied_ops.insert(request.operation.to_string()) {
            found.push((
                InvariantKind::OperationAppliedTwice,
                format!("{place} applied operation {} a second time", request.operation),
            ));
        }
        if !ghost.lease_valid_at_send {
            let when = if ghost.epoch == 0 {
                "sent without any lease"
            } else {
                "sent when its lease was no longer valid"
            };
            found.push((
                InvariantKind::WriteOutsideLease,
                format!("{place} accepted {who}'s write, {when}"),
            ));
        }
        if let Some((epoch, seq)) = cell.last_seq.get(who) {
            if *epoch == ghost.epoch && message.seq < *seq {
                found.push((
                    InvariantKind::WritesReordered,
                    format!(
                        "{place} applied {who}'s earlier write \"{}\" after a later one",
                        request.value
                    ),
                ));
            }
        }
        let newest = cell.last_seq.entry(who.clone()).or_insert((ghost.epoch, message.seq));
        if (ghost.epoch, message.seq) > *newest {
            *newest = (ghost.epoch, message.seq);
        }
        cell.last = Some((ghost.epoch, who.clone()));
        for (kind, detail) in found {
            self.violation(kind, detail, &lane);
        }
    }

    fn arrive_effect(
        &mut self,
        message: Message,
        request: EffectRequest,
        token: TokenKind,
        resource: &str,
        ghost: MessageGhost,
    ) -> Event {
        let now = self.state.now;
        let Some(gw) = self.state.gateway.as_ref() else {
            return Event::WorkerStopped {
                worker: message.worker,
                reason: "there is no gateway".into(),
            };
        };
        let enforcement = gw.enforcement;
        let verified = if enforcement == Enforcement::Unfenced {
            Ok(())
        } else {
            self.verify(resource, request.generation, token, &ghost)
        };
        let gw = self.state.gateway.as_mut().expect("checked above");
        let outcome = match verified {
            Err(rejection) => Err(rejection),
            Ok(()) if enforcement == Enforcement::Unfenced => {
                let delivery = crate::gateway::Delivery { request: request.clone(), at: now };
                Ok(GatewayOutcome::Delivered(delivery))
            }
            Ok(()) => Ok(gw.gateway.submit(request.clone(), now)),
        };
        let partner = gw.partner.clone();
        let actor = validated(WorkerId::new(message.worker.clone()));
        let attempt = Attempt::Effect(request.clone());
        let dropped = match outcome {
            Err(error) => {
                self.note_effect_presented(&request, ghost);
                let reason = crate::gateway::DropReason::InvalidToken { error };
                if !self.replaying {
                    self.log.record(now, actor, attempt, GatewayOutcome::Dropped(reason.clone()));
                }
                Some(reason)
            }
            Ok(outcome) => {
                if let GatewayOutcome::Delivered(delivery) = &outcome {
                    gw.received.push(delivery.clone());
                    self.check_delivered_effect(&request, &message.worker, ghost);
                }
                self.note_effect_presented(&request, ghost);
                let dropped = match &outcome {
                    GatewayOutcome::Dropped(reason) => Some(reason.clone()),
                    GatewayOutcome::Delivered(_) => None,
                };
                if !self.replaying {
                    self.log.record(now, actor, attempt, outcome);
                }
                dropped
            }
        };
        Event::EffectArrived {
            worker: message.worker,
            message: message.id,
            partner,
            request,
            enforcement,
            dropped,
        }
    }

    fn check_delivered_effect(&mut self, request: &EffectRequest, who: &str, ghost: MessageGhost) {
        let g = &mut self.state.ghost;
        let mut found = Vec::new();
        let workflow = request.workflow.to_string();
        let delivered = g.partner_ops.entry(workflow.clone()).or_default();
        if !delivered.insert(request.operation.to_string()) {
            found.push((
                InvariantKind::EffectDeliveredTwice,
                format!(
                    "the partner received operation {} ({}) of {workflow} a second time",
                    request.operation, request.effect
                ),
            ));
        }
        if g.effect_presented.get(&workflow).is_some_and(|newest| ghost.epoch < *newest) {
            let from =
                if ghost.epoch == 0 { "which no lease backs" } else { "from a superseded lease" };
            found.push((
                InvariantKind::EffectFromSupersededOwner,
                format!(
                    "the partner received {who}'s {}, {from}, after a newer lease's request for {workflow} reached the gateway",
                    request.effect
                ),
            ));
        }
        for (kind, detail) in found {
            self.violation(kind, detail, "partner");
        }
    }

    /// Records that an effect under lease `epoch` reached the gateway, whatever it then did.
    fn note_effect_presented(&mut self, request: &EffectRequest, ghost: MessageGhost) {
        let newest =
            self.state.ghost.effect_presented.entry(request.workflow.to_string()).or_insert(0);
        *newest = (*newest).max(ghost.epoch);
    }

    fn finish(&mut self) {
        self.state.finished = true;
        let mut found = Vec::new();
        for ((s, data, resource), cell) in &self.state.ghost.cells {
            if !self.scenario.stores[*s].critical {
                continue;
            }
            if let (Some((last, writer)), Some((latest, owner))) = (&cell.last, &cell.max_attempted)
            {
                if last < latest {
                    let (place, lane) = self.place(*s, data, resource);
                    found.push((
                        if *last == 0 {
                            format!("{place} ends with {writer}'s value, which no lease backs, though a write under {owner}'s lease reached it too")
                        } else {
                            format!("{place} ends with {writer}'s value, though a write under {owner}'s newer lease reached it too")
                        },
                        lane,
                    ));
                }
            }
        }
        for (detail, lane) in found {
            self.violation(InvariantKind::FinalValueNotFromLatestOwner, detail, &lane);
        }
    }
}

/// What a store did with a write: how the path is protected, the outcome, and the highest
/// generation before it.
struct Settled {
    enforcement: Enforcement,
    outcome: WriteOutcome,
    highest_before: Option<Generation>,
}

fn scenario_branches(scenario: &Scenario) -> bool {
    scenario.network.jitter > 0
        || scenario
            .workers
            .iter()
            .flat_map(|w| &w.script)
            .any(|s| matches!(s, Step::Pause { optional: true, .. }))
}

fn ids(resource: &str, worker: &str) -> (ResourceId, WorkerId) {
    (validated(ResourceId::new(resource)), validated(WorkerId::new(worker)))
}

fn initial_state(scenario: &Scenario) -> SimState {
    let ttl = NonZeroU64::new(scenario.authority.ttl).unwrap_or(NonZeroU64::MIN);
    let stores = scenario
        .stores
        .iter()
        .map(|spec| {
            // One cell per data and resource, so paths into the same data share its fence; a
            // cell shows the enforcement of the path that owns the data.
            let paths = spec.data_names().map(|d| {
                let enforcement = spec.route(d).map_or(spec.enforcement, |(_, e)| e);
                (d.to_string(), enforcement)
            });
            let mut cells = Vec::new();
            for (path, enforcement) in paths {
                for resource in &scenario.resources {
                    let id = validated(ResourceId::new(resource.clone()));
                    let register = FencedRegister::new(id, spec.policy);
                    let resource_state = FencedResource::new(register, spec.retention);
                    cells.push((
                        (path.clone(), resource.clone()),
                        Arc::new(Cell { enforcement, resource: resource_state }),
                    ));
                }
            }
            // Sorted first, the map is built by appending: inserting a thousand paths times a
            // thousand resources one by one into a sorted vector would take minutes.
            cells.sort_by(|a, b| a.0.cmp(&b.0));
            StoreState { name: spec.name.clone(), cells: cells.into_iter().collect() }
        })
        .collect();
    let gateway = scenario.gateway.as_ref().map(|g| GatewayState {
        partner: g.partner.clone(),
        enforcement: g.enforcement,
        gateway: SideEffectGateway::new(g.policy),
        received: Vec::new(),
    });
    let n = scenario.resources.len();
    let mut state = SimState {
        now: Tick::ZERO,
        position: 0,
        cursor: 0,
        authority: LeaseAuthority::new(ttl),
        workers: scenario
            .workers
            .iter()
            .map(|w| {
                Arc::new(WorkerState {
                    name: w.name.clone(),
                    status: WorkerStatus::NotStarted,
                    pc: 0,
                    leases: LiteMap::new(),
                    clock_offset: w.clock_offset,
                    last_read: LiteMap::new(),
                    sent: LiteMap::new(),
                    send_seq: 0,
                    pending: None,
                    slowed: (0, 0),
                    awaiting_grant: None,
                })
            })
            .collect(),
        stores,
        gateway,
        in_flight: BTreeMap::new(),
        checked: BTreeMap::new(),
        violations: Vec::new(),
        finished: false,
        agenda: BTreeMap::new(),
        due: (Tick::ZERO, 0),
        expiry: vec![None; n],
        next_message: 0,
        ghost: Ghost {
            epochs: vec![0; n],
            max_issued: vec![None; n],
            live: vec![None; n],
            ..Ghost::default()
        },
    };
    for (i, fault) in scenario.faults.iter().enumerate() {
        let key = AgendaKey { at: Tick(fault.at), rank: Pending::Fault(i).rank(), id: i as u64 };
        state.agenda_insert(key, Pending::Fault(i));
    }
    for (w, spec) in scenario.workers.iter().enumerate() {
        let key =
            AgendaKey { at: Tick(spec.start), rank: Pending::WorkerStep(w).rank(), id: w as u64 };
        state.agenda_insert(key, Pending::WorkerStep(w));
        Arc::make_mut(&mut state.workers[w]).pending = Some(key);
    }
    if state.agenda.is_empty() {
        state.finished = true;
    }
    state
}

/// Unwraps a name the scenario's validation has already accepted. A failure is a bug in
/// validation; the message uses `Display`, so the page's wasm needs no `Debug` for names.
fn validated<T>(name: Result<T, IdError>) -> T {
    name.unwrap_or_else(|e| unreachable!("validated by Scenario::validate, yet {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::library;

    /// Plays `name/fenced` up to the step after the newer owner's request reached the boundary,
    /// lets `forget` undo what that request raised (the boundary as it was before requests that
    /// passed the fence raised it), and plays on.
    fn with_a_forgetful_boundary(name: &str, forget: impl FnOnce(&mut SimState)) -> Verdict {
        let mut engine = Engine::new(library::scenario(name, Some("fenced")).unwrap()).unwrap();
        while engine.state.now < Tick(13) {
            engine.step().unwrap();
        }
        let mut state = engine.state.clone();
        forget(&mut state);
        engine.set_state(state);
        engine.run().unwrap()
    }

    fn broken(verdict: &Verdict) -> Vec<InvariantKind> {
        verdict.violations.iter().map(|v| v.invariant).collect()
    }

    #[test]
    fn the_checker_flags_an_effect_let_through_after_a_newer_duplicate_was_dropped() {
        let verdict = with_a_forgetful_boundary("duplicate-capture", |state| {
            let gateway = state.gateway.as_mut().unwrap();
            let mut old = SideEffectGateway::new(gateway.gateway.policy());
            let first = gateway.received[0].clone();
            old.submit(first.request, first.at);
            gateway.gateway = old;
        });
        assert_eq!(broken(&verdict), [InvariantKind::EffectFromSupersededOwner]);
    }

    #[test]
    fn the_checker_flags_a_write_let_through_after_a_newer_replay() {
        let verdict = with_a_forgetful_boundary("newer-owner-retry", |state| {
            let key = state.stores[0].cells.iter().next().map(|(k, _)| k.clone()).unwrap();
            let cell = Arc::make_mut(state.stores[0].cells.get_mut(&key).unwrap());
            let mut register = cell.resource.register.clone();
            register.forget_highest();
            let mut old = FencedResource::new(register, cell.resource.idempotency.retention());
            old.idempotency = cell.resource.idempotency.clone();
            cell.resource = old;
        });
        assert!(broken(&verdict).contains(&InvariantKind::StaleWriteAccepted), "{verdict:?}");
    }
}
