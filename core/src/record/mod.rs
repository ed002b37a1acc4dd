//! The recorder: plays a scenario with the [`Simulator`], has the [`Checker`] judge every event,
//! and keeps what a reader can go back to: the step records with their captions, the operation
//! log, the violations and snapshots for seeking.

mod assert;
mod caption;
pub mod export;

use crate::check::Checker;
use crate::clock::{RunStep, Tick};
use crate::fence::log::{Attempt, LogEntry, LoggedOutcome, OperationLog};
use crate::fence::register::RejectionReason;
use crate::format::error::ScenarioError;
use crate::format::limits::MAX_RUN_STEPS;
use crate::format::model::{Fault, Injection, Scenario};
use crate::history::event::Event;
use crate::history::{Entry, History, Setup};
use crate::ids::WorkerId;
use crate::invariant::{InvariantKind, Violation};
use crate::memory::{buffer, Bytes, HeapSize, DEFAULT_MEMORY_BUDGET};
use crate::sim::state::SimState;
use crate::sim::{next_time, Choice, SimError, Simulator};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::mem::size_of;

/// Why the engine could not go on: the simulator's reasons, and the recorder's own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum EngineError {
    /// A choice was asked for that the step does not offer (see
    /// [`Engine::choices`](crate::Engine::choices)).
    #[error("step {step}: there is no choice {choice}; the choices there are 0 to {}", enabled - 1)]
    NoSuchChoice {
        /// The choice asked for.
        choice: usize,
        /// How many choices the step offers.
        enabled: usize,
        /// The step about to run.
        step: RunStep,
    },
    /// A fault to inject does not fit the scenario: it names a worker or store the scenario
    /// does not have, or a size out of range.
    #[error("cannot inject the fault: {0}")]
    BadFault(#[source] ScenarioError),
    /// The run went on for longer than [`MAX_RUN_STEPS`].
    #[error("the run exceeded {MAX_RUN_STEPS} steps")]
    TooLong,
    /// The next step would take the run's records, operation log and snapshots past the memory
    /// budget (see [`Engine::with_memory_budget`](crate::Engine::with_memory_budget)). The engine
    /// stays at the last step that fit.
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
        step: RunStep,
    },
    /// The simulator could not run the step: the schedule's choice does not exist, or the run
    /// has ended. Written as the simulator's error, without a wrapper.
    #[error(transparent)]
    #[serde(untagged)]
    Sim(#[from] SimError),
}

/// Runs the `choice`-th enabled event of `state`, as [`Simulator::advance`] does, stopping a run
/// that reaches [`MAX_RUN_STEPS`]. Every driver of the simulator (the engine, the explorer, the
/// conformance kit's search) steps through here, so none runs on forever.
pub(crate) fn advance(
    sim: &Simulator,
    state: &mut SimState,
    choice: usize,
) -> Result<(usize, Tick, Event), EngineError> {
    if state.position >= MAX_RUN_STEPS && sim.enabled_count(state) > 0 {
        return Err(EngineError::TooLong);
    }
    Ok(sim.advance(state, choice)?)
}

/// How often the engine keeps a copy of the state, in steps: seeking backwards restores the
/// nearest copy and replays from there. When a state's own maps and lists (the agenda, the list
/// of workers) weigh more than this many steps' records, copies are kept a multiple of this
/// apart instead, so that they never cost much more than the records between them.
pub const SNAPSHOT_EVERY: usize = 1024;
/// One executed step: when, what, and which choice produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Position in the run, from 0.
    pub index: usize,
    /// Logical time.
    pub at: Tick,
    /// What happened.
    pub event: Event,
    /// The learner's caption.
    pub caption: String,
    /// How many events were enabled at this point.
    pub enabled: usize,
    /// Which of them ran.
    pub chosen: usize,
}

impl HeapSize for StepRecord {
    fn heap_bytes(&self) -> usize {
        self.event.heap_bytes() + self.caption.heap_bytes()
    }
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
    checker: Checker,
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
///
/// ```
/// use fencelab_core::prelude::*;
///
/// let mut engine = Engine::new(library::scenario("paused-worker", Some("broken"))?)?;
/// // One step at a time, as the page's player does: each record has its learner's caption.
/// let first = engine.step()?.expect("the story has a first step");
/// assert_eq!(first.index, 0);
/// let verdict = engine.run()?;
/// assert_eq!(verdict.assert_violation(InvariantKind::StaleWriteAccepted).step.index(), 18);
/// println!("{}", engine.records()[18].caption);
///
/// // Back to just after step 18, then the same choices replay the same run.
/// engine.seek(18)?;
/// assert_eq!(engine.position(), 18);
/// assert_eq!(engine.run()?, verdict);
/// # Ok::<(), fencelab_core::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Engine {
    sim: Simulator,
    mode: ScheduleMode,
    state: SimState,
    checker: Checker,
    /// Every step computed so far, including those after the current position that a
    /// backwards seek left behind: the timeline. Replaying the same choices recomputes the
    /// state but keeps these.
    records: Vec<StepRecord>,
    /// The operation log of the whole computed timeline.
    log: OperationLog,
    /// The log's length after each computed step.
    log_lens: Vec<usize>,
    /// The violations of the whole computed timeline, in step order.
    violations: Vec<Violation>,
    /// Copies of the state every [`SNAPSHOT_EVERY`] steps along the timeline.
    snapshots: Vec<Snapshot>,
    /// Whether the step being executed was computed before (so its records exist).
    replaying: bool,
    /// The most the bookkeeping may take, in estimated bytes.
    budget: usize,
    usage: Usage,
}

impl Engine {
    /// Checks the scenario and sets up its initial state.
    pub fn new(scenario: Scenario) -> Result<Engine, ScenarioError> {
        let sim = Simulator::new(scenario)?;
        let state = sim.initial_state();
        let checker = Checker::new(Setup::of(sim.scenario()));
        let snapshot = Snapshot {
            bytes: state.heap_bytes_beyond(None) + checker.heap_bytes_beyond(None),
            state: state.clone(),
            checker: checker.clone(),
        };
        let usage = Usage {
            fixed: size_of::<Engine>() + sim.scenario().heap_bytes() + sim.compiled().heap_bytes(),
            snapshots: snapshot.bytes,
            live: state.heap_bytes_beyond(Some(&snapshot.state))
                + checker.heap_bytes_beyond(Some(&snapshot.checker)),
            ..Usage::default()
        };
        Ok(Engine {
            sim,
            mode: ScheduleMode::Strict,
            state,
            checker,
            records: Vec::new(),
            log: OperationLog::new(),
            snapshots: vec![snapshot],
            log_lens: Vec::new(),
            violations: Vec::new(),
            replaying: false,
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
            + buffer::<Violation>(self.violations.capacity())
            + buffer::<Snapshot>(self.snapshots.capacity())
    }

    /// The scenario being played.
    pub fn scenario(&self) -> &Scenario {
        self.sim.scenario()
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
        crate::fence::log::rejections_by_reason(self.log())
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

    /// The invariants broken up to the current position, in step order.
    pub fn violations(&self) -> &[Violation] {
        let position = self.state.position;
        &self.violations[..self.violations.partition_point(|v| v.step.index() < position)]
    }

    /// The history up to the current position: what the checker judged and the diagram draws.
    pub fn history(&self) -> History {
        let entries = self.records().iter().map(|r| Entry::new(r.at, r.event.clone()));
        History { setup: self.checker.setup().clone(), entries: entries.collect() }
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
        self.sim.enabled(&self.state)
    }

    /// How many choices there are now: the alternatives of every event due at the earliest tick.
    pub fn enabled_count(&self) -> usize {
        self.sim.enabled_count(&self.state)
    }

    /// The events that could run next, as data, in the order choice indices refer to: what a
    /// front offers a reader who decides what happens next.
    pub fn choices(&self) -> Vec<Choice> {
        self.sim.choices(&self.state)
    }

    /// The faults a reader could inject now (see [`Simulator::possible_faults`]).
    pub fn possible_faults(&self) -> Vec<Fault> {
        self.sim.possible_faults(&self.state)
    }

    /// Runs `fault` as the next step, wherever the run is: "what if A paused now?". The fault
    /// joins the scenario's `injected` list at this step, so [`Engine::scenario`] with
    /// [`Engine::schedule_so_far`] replays the run, fault included. What was computed beyond
    /// this step, and the faults injected beyond it, are dropped: the run takes a new branch.
    pub fn inject(&mut self, fault: Fault) -> Result<&StepRecord, EngineError> {
        if self.state.finished {
            return Err(SimError::Finished { steps: self.state.position }.into());
        }
        let mut scenario = self.scenario().clone();
        scenario.injected.truncate(self.state.injected);
        scenario.injected.push(Injection { after: self.state.position, fault });
        let sim = Simulator::new(scenario).map_err(EngineError::BadFault)?;
        self.forget_from(self.state.position);
        self.replace_simulator(sim);
        self.step_choice(0)
    }

    /// Goes back to just after step `n` and forgets everything after it, the faults injected
    /// after it included, so that the next step can go another way: a reader's undo. Like
    /// [`Engine::seek`], it plays on to step `n` if the engine is not that far yet, so a front
    /// that keeps an engine as a cache can branch at any step.
    pub fn rewind(&mut self, n: usize) -> Result<(), EngineError> {
        self.seek(n)?;
        let position = self.state.position;
        self.forget_from(position);
        if self.scenario().injected.len() > self.state.injected {
            let mut scenario = self.scenario().clone();
            scenario.injected.truncate(self.state.injected);
            // The scenario was valid with the longer list, so it is with a prefix of it.
            let sim = Simulator::new(scenario).map_err(EngineError::BadFault)?;
            self.replace_simulator(sim);
        }
        Ok(())
    }

    /// Plays on with `sim`, whose scenario differs from the current one only in the injected
    /// faults that have not run yet, so the steps so far and the snapshots still hold; only
    /// where each state expects the next injected fault changes.
    fn replace_simulator(&mut self, sim: Simulator) {
        sim.settle(&mut self.state);
        for snapshot in &mut self.snapshots {
            sim.settle(&mut snapshot.state);
        }
        self.usage.fixed =
            self.usage.fixed - self.sim.scenario().heap_bytes() - self.sim.compiled().heap_bytes()
                + sim.scenario().heap_bytes()
                + sim.compiled().heap_bytes();
        self.sim = sim;
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
            return match self.sim.ended(&self.state) {
                SimError::Finished { .. } => Ok(None),
                unreached => Err(unreached.into()),
            };
        }
        let choice = if enabled > 1 {
            let index = self.state.cursor;
            let wanted = self.scenario().schedule.get(index).copied().unwrap_or(0);
            match self.mode {
                ScheduleMode::Strict if wanted >= enabled => {
                    return Err(EngineError::Sim(SimError::BadChoice {
                        index,
                        choice: wanted,
                        enabled,
                        step: RunStep::new(self.state.position),
                        at: next_time(&self.state).unwrap_or(self.state.now),
                    }))
                }
                _ => wanted % enabled,
            }
        } else {
            0
        };
        self.step_choice(choice).map(Some)
    }

    /// Runs the `choice`-th enabled event, whatever the schedule says. The choice must be below
    /// the number of enabled events.
    pub fn step_choice(&mut self, choice: usize) -> Result<&StepRecord, EngineError> {
        let enabled = self.enabled_count();
        if enabled == 0 {
            return Err(self.sim.ended(&self.state).into());
        }
        if choice >= enabled {
            return Err(EngineError::NoSuchChoice {
                choice,
                enabled,
                step: RunStep::new(self.state.position),
            });
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
        let injections = self.state.injected;
        let (enabled, at, event) = advance(&self.sim, &mut self.state, choice)?;
        // A reader's own fault is told apart from the story's, which it would otherwise read as.
        let injected = self.state.injected > injections;
        let index = position;
        let mut entry = Entry::new(at, event);
        let judgement = self.checker.feed(index, &entry);
        let mut broken = judgement.violations;
        if self.state.finished {
            broken.extend(self.checker.finish(index));
        }
        if !self.replaying {
            if let Event::WriteArrived { misfenced, .. } = &mut entry.event {
                *misfenced = judgement.misfenced;
            }
            let entries_before = self.log.len();
            log_entry(&mut self.log, &entry);
            let told = entry.event.caption();
            let told = if injected { format!("Injected by hand: {told}") } else { told };
            let mut caption = crate::invariant::narrate(told, &broken);
            // Kept for the whole run, so without the spare room formatting leaves.
            caption.shrink_to_fit();
            let record =
                StepRecord { index, at, event: entry.event, caption, enabled, chosen: choice };
            let entries = &self.log.entries()[entries_before..];
            let added = record.heap_bytes()
                + entries.iter().map(LogEntry::heap_bytes).sum::<usize>()
                + broken.iter().map(HeapSize::heap_bytes).sum::<usize>();
            let usage = &mut self.usage;
            usage.timeline += added;
            usage.largest_step = usage.largest_step.max(added);
            usage.most_entries = usage.most_entries.max(entries.len());
            self.records.push(record);
            self.log_lens.push(self.log.len());
            self.violations.extend(broken);
        }
        if self.snapshot_due(self.state.position) {
            let last = self.snapshots.last();
            let bytes = self.state.heap_bytes_beyond(last.map(|s| &s.state))
                + self.checker.heap_bytes_beyond(last.map(|s| &s.checker));
            let snapshot =
                Snapshot { state: self.state.clone(), checker: self.checker.clone(), bytes };
            self.snapshots.push(snapshot);
            self.usage.snapshots += bytes;
            self.usage.live = self.state.heap_bytes_beyond(Some(&self.state))
                + self.checker.heap_bytes_beyond(Some(&self.checker));
        }
        Ok(&self.records[index])
    }

    /// Drops the records, log entries, violations and snapshots after `position`, and what
    /// they counted.
    fn forget_from(&mut self, position: usize) {
        let log_len = self.log_len_at(position);
        let records: usize = self.records[position..].iter().map(StepRecord::heap_bytes).sum();
        let entries: usize = self.log.entries()[log_len..].iter().map(LogEntry::heap_bytes).sum();
        let kept = self.violations.partition_point(|v| v.step.index() < position);
        let dropped = &self.violations[kept..];
        let violations: usize = dropped.iter().map(HeapSize::heap_bytes).sum();
        self.usage.timeline -= records + entries + violations;
        self.records.truncate(position);
        self.log.rewind_to(log_len);
        self.log_lens.truncate(position);
        self.violations.truncate(kept);
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
    /// due after it), then grows the full lists. Lists grow by half: by less, each record is
    /// copied many times over as its list grows (an eighth cost a sixth of a large run's time);
    /// by doubling, the moment both buffers exist would need twice the list. The lists are a
    /// small part of a run's memory (a tenth), so the room kept for growth costs little.
    fn make_room(&mut self) -> Result<(), EngineError> {
        let grow = |len: usize| (len / 2).max(64);
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
            let last = self.snapshots.last();
            need += self.state.heap_bytes_beyond(last.map(|s| &s.state))
                + self.checker.heap_bytes_beyond(last.map(|s| &s.checker))
                + buffer::<Snapshot>(self.snapshots.len() + 1);
        }
        let estimate = self.memory_estimate() + need;
        if estimate > self.budget {
            return Err(EngineError::MemoryBudget {
                budget: self.budget,
                estimate,
                step: RunStep::new(self.state.position),
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
            self.checker = snapshot.checker.clone();
            self.usage.live = self.state.heap_bytes_beyond(Some(&snapshot.state))
                + self.checker.heap_bytes_beyond(Some(&snapshot.checker));
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
        let violations = self.violations();
        let scenario = self.scenario();
        // Sets of invariants are read off the fixed list, in report order, without sorting.
        let broken = |k: &InvariantKind| violations.iter().any(|v| v.invariant == *k);
        let expected = |k: &InvariantKind| scenario.expect.violations.contains(k);
        let kinds = || InvariantKind::ALL.into_iter();
        let rejections = self.rejections();
        let rejections_mismatch =
            scenario.expect.rejections.as_ref().is_some_and(|want| *want != rejections);
        let unexpected: Vec<_> = kinds().filter(|k| broken(k) && !expected(k)).collect();
        let missing: Vec<_> = kinds().filter(|k| expected(k) && !broken(k)).collect();
        Verdict {
            finished: self.state.finished,
            violations: violations.to_vec(),
            expected: kinds().filter(expected).collect(),
            met: unexpected.is_empty() && missing.is_empty() && !rejections_mismatch,
            unexpected,
            missing,
            rejections,
            rejections_mismatch,
        }
    }
}

/// Adds what a step did to the operation log: the outcome of a write or an effect that reached
/// its boundary. Other events attempt nothing.
fn log_entry(log: &mut OperationLog, entry: &Entry) {
    let (worker, attempt, outcome): (&str, Attempt, LoggedOutcome) = match &entry.event {
        Event::WriteArrived { worker, request, outcome, .. }
        | Event::WriteCommitted { worker, request, outcome, .. } => {
            (worker, Attempt::Write(request.clone()), outcome.clone().into())
        }
        Event::EffectArrived { worker, request, dropped, .. } => {
            let outcome = dropped.clone().map_or(LoggedOutcome::Delivered, LoggedOutcome::Dropped);
            (worker, Attempt::Effect(request.clone()), outcome)
        }
        _ => return,
    };
    // Workers are named by the validated scenario, so the name is always a valid id.
    if let Ok(actor) = WorkerId::new(worker) {
        log.record(entry.at, actor, attempt, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Tick;
    use crate::fence::boundary::FencedResource;
    use crate::fence::gateway::SideEffectGateway;
    use crate::stories::library;
    use std::sync::Arc;

    /// Plays `name/fenced` up to the step after the newer owner's request reached the boundary,
    /// lets `forget` undo what that request raised (the boundary as it was before requests that
    /// passed the fence raised it), and plays on.
    fn with_a_forgetful_boundary(name: &str, forget: impl FnOnce(&mut SimState)) -> Verdict {
        let mut engine = Engine::new(library::scenario(name, Some("fenced")).unwrap()).unwrap();
        while engine.state.now < Tick(13) {
            engine.step().unwrap();
        }
        forget(&mut engine.state);
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

    /// The simulator's reasons are written as they were before they had an enum of their own,
    /// so a saved result still reads.
    #[test]
    fn a_simulator_error_is_written_without_a_wrapper() {
        let error = EngineError::from(SimError::Finished { steps: 3 });
        let json = serde_json::to_value(&error).unwrap();
        assert_eq!(json, serde_json::json!({ "Finished": { "steps": 3 } }));
        assert_eq!(serde_json::from_value::<EngineError>(json).unwrap(), error);
        assert_eq!(error.to_string(), "the run has ended after 3 steps: no event is left to run");
        let own = serde_json::to_value(EngineError::TooLong).unwrap();
        assert_eq!(serde_json::from_value::<EngineError>(own).unwrap(), EngineError::TooLong);
    }
}
