//! The simulator: a scenario's world as a pure transition. [`Simulator::advance`] takes a state
//! and the index of one enabled choice and moves the state on by exactly one event, which it
//! returns. It records nothing and judges nothing: the recorder ([`Engine`](crate::Engine))
//! and the explorer drive it, and the checker ([`Checker`](crate::check::Checker)) judges the
//! events it returns.

mod choice;
pub(crate) mod compiled;
pub mod state;

pub use choice::{Choice, Next, Way};

use crate::clock::{RunStep, Tick};
use crate::fence::authority::{LeaseAuthority, LeaseError};
use crate::fence::boundary::FencedResource;
use crate::fence::gateway::{
    Delivery, DropReason, EffectRequest, GatewayOutcome, SideEffectGateway,
};
use crate::fence::generation::{Generation, TokenError};
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::{FencedRegister, Revision, WriteRejection, WriteRequest};
use crate::format::error::ScenarioError;
use crate::format::model::{Enforcement, ExpectedRevision, Scenario, TokenSource};
use crate::history::event::{Event, TokenKind};
use crate::ids::{ResourceId, WorkerId};
use crate::sim::state::*;
use compiled::{Compiled, CompiledFault, Op, Route, Target};
use litemap::LiteMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::num::NonZeroU64;
use std::sync::Arc;

/// Why the simulator cannot run the step asked for. The recorder adds its own reasons (its
/// memory budget, the longest run, a fault that does not fit) in
/// [`EngineError`](crate::record::EngineError).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum SimError {
    /// The schedule names a choice that does not exist at that point of the run.
    #[error("schedule[{index}]: choice {choice}, but only {enabled} events were enabled at step {step} ({at})")]
    BadChoice {
        /// The position in the schedule.
        index: usize,
        /// The choice it names.
        choice: usize,
        /// How many events were enabled.
        enabled: usize,
        /// The step about to run.
        step: RunStep,
        /// Its time.
        at: Tick,
    },
    /// A step was asked for after the run had ended: no event is left to run.
    #[error("the run has ended after {steps} steps: no event is left to run")]
    Finished {
        /// How many steps the run took.
        steps: usize,
    },
    /// The run ended before an injected fault was due: nothing was left to happen after
    /// `steps` steps, and the fault waits for more.
    #[error("injected[{index}].after: is {after}, but the run ends after {steps} steps, so the fault never runs (it may wait for 0 to {steps} steps)")]
    InjectionNotReached {
        /// The injection's position in the scenario's list.
        index: usize,
        /// How many steps it waits for.
        after: usize,
        /// How many steps the run took.
        steps: usize,
    },
}

/// Stands in for the authority's signing key. A teaching model: real systems use a MAC or a
/// signature with a secret key; what matters here is that callers cannot compute it.
const AUTHORITY_KEY: u64 = 0x5eed_f00d_cafe_d00d;

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

/// A checked scenario, ready to be played from any state.
#[derive(Debug, Clone)]
pub struct Simulator {
    scenario: Scenario,
    compiled: Compiled,
}

impl Simulator {
    /// Checks the scenario.
    pub fn new(scenario: Scenario) -> Result<Simulator, ScenarioError> {
        scenario.validate()?;
        let compiled = Compiled::new(&scenario)?;
        Ok(Simulator { scenario, compiled })
    }

    /// The scenario it plays.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    pub(crate) fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    /// The state before anything has happened.
    pub fn initial_state(&self) -> SimState {
        initial_state(&self.scenario, &self.compiled)
    }

    /// Runs the `choice`-th enabled event on `state` and returns how many were enabled, when it
    /// ran and what happened.
    pub fn advance(
        &self,
        state: &mut SimState,
        choice: usize,
    ) -> Result<(usize, Tick, Event), SimError> {
        let enabled = self.enabled_count(state);
        if enabled == 0 {
            return Err(self.ended(state));
        }
        let event = if let Some(fault) = self.injection_due(state) {
            if choice != 0 {
                return Err(self.bad_choice(state, choice));
            }
            state.injected += 1;
            Run { scenario: &self.scenario, sim: self, state: &mut *state }.fault(fault)
        } else {
            let Some((key, alternative)) = self.enabled_choice(state, choice) else {
                return Err(self.bad_choice(state, choice));
            };
            if enabled > 1 {
                state.cursor += 1;
            }
            let pending = state.agenda_remove(&key).expect("enabled keys come from the agenda");
            state.now = key.at;
            Run { scenario: &self.scenario, sim: self, state: &mut *state }
                .execute(pending, alternative)
        };
        self.settle(state);
        state.position += 1;
        Ok((enabled, state.now, event))
    }

    /// Brings what `state` derives from the scenario's injected faults up to date: after how
    /// many steps the next one runs, and so whether the run has ended (nothing on the agenda
    /// and no injected fault left).
    pub(crate) fn settle(&self, state: &mut SimState) {
        settle(&self.compiled, state);
    }

    /// The injected fault that runs as the next step, if one is due: it goes before any
    /// scheduled event, and is the only thing that can happen then.
    fn injection_due(&self, state: &SimState) -> Option<&CompiledFault> {
        let (after, fault) = self.compiled.injected.get(state.injected)?;
        (*after <= state.position).then_some(fault)
    }

    /// Why nothing can run in `state`: the run has ended, or it ended before an injected fault
    /// was due.
    pub(crate) fn ended(&self, state: &SimState) -> SimError {
        match self.compiled.injected.get(state.injected) {
            Some((after, _)) => SimError::InjectionNotReached {
                index: state.injected,
                after: *after,
                steps: state.position,
            },
            None => SimError::Finished { steps: state.position },
        }
    }

    /// The pure form of [`Simulator::advance`]: the state after the `choice`-th enabled event,
    /// and that event, leaving `state` as it was. Workers and cells the event does not touch are
    /// shared with `state` (they sit behind `Arc`), so the copy is cheap.
    pub fn step(&self, state: &SimState, choice: usize) -> Result<(SimState, Event), SimError> {
        let mut next = state.clone();
        let (_, _, event) = self.advance(&mut next, choice)?;
        Ok((next, event))
    }

    /// The error for a choice that is not enabled in `state`.
    pub(crate) fn bad_choice(&self, state: &SimState, choice: usize) -> SimError {
        SimError::BadChoice {
            index: state.cursor,
            choice,
            enabled: self.enabled_count(state),
            step: RunStep::new(state.position),
            at: next_time(state).unwrap_or(state.now),
        }
    }

    /// How many ways the event `pending` can go: an optional pause is taken or skipped; a message
    /// on a jittery network takes any of its possible latencies. Everything else has one way.
    fn alternatives(&self, state: &SimState, pending: &Pending) -> usize {
        let Pending::WorkerStep(w) = pending else { return 1 };
        match self.compiled.workers[*w].script.get(state.workers[*w].pc) {
            Some(Op::Pause { optional: true, .. }) => 2,
            Some(Op::Write(_) | Op::Effect(_) | Op::Retry(_)) => {
                self.scenario.network.jitter as usize + 1
            }
            _ => 1,
        }
    }

    /// How many choices there are in `state`: the alternatives of every event due at the
    /// earliest tick.
    pub fn enabled_count(&self, state: &SimState) -> usize {
        if self.injection_due(state).is_some() {
            return 1;
        }
        if !self.compiled.branching {
            return state.enabled_count();
        }
        let due = state.agenda.values().take(state.enabled_count());
        due.map(|p| self.alternatives(state, p)).sum()
    }

    fn enabled_choice(&self, state: &SimState, choice: usize) -> Option<(AgendaKey, usize)> {
        if !self.compiled.branching {
            return state.enabled_key(choice).map(|k| (k, 0));
        }
        let mut rest = choice;
        for (key, pending) in state.agenda.iter().take(state.enabled_count()) {
            let n = self.alternatives(state, pending);
            if rest < n {
                return Some((*key, rest));
            }
            rest -= n;
        }
        None
    }

    /// The events that could run next in `state`, in the order choice indices refer to.
    pub fn enabled(&self, state: &SimState) -> Vec<String> {
        if self.injection_due(state).is_some() {
            return vec![format!("injected fault {}", state.injected)];
        }
        let due = state.agenda.values().take(state.enabled_count());
        due.flat_map(|pending| {
            let what = self.describe_pending(state, pending);
            let n = if self.compiled.branching { self.alternatives(state, pending) } else { 1 };
            (0..n).map(move |alt| if n == 1 { what.clone() } else { format!("{what} (way {alt})") })
        })
        .collect()
    }

    fn describe_pending(&self, s: &SimState, pending: &Pending) -> String {
        match pending {
            Pending::Fault(i) => format!("fault {i}"),
            Pending::Expire(r) => format!("lease on {} expires", self.compiled.resources[*r]),
            Pending::Deliver(id) => format!("message {id} arrives"),
            Pending::Commit(id) => format!("checked write {id} commits"),
            Pending::Resume(w) => format!("{} resumes", s.workers[*w].name),
            Pending::WorkerStep(w) => format!("{} takes its next step", s.workers[*w].name),
        }
    }
}

/// When the next event is due.
pub(crate) fn next_time(state: &SimState) -> Option<Tick> {
    state.agenda.keys().next().map(|k| k.at)
}

/// One event being played on a state.
struct Run<'a> {
    scenario: &'a Scenario,
    sim: &'a Simulator,
    state: &'a mut SimState,
}

impl Run<'_> {
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

    /// The cell of store `s` that holds `key` (data, resource), to change it. The initial state
    /// builds a cell for every data and resource, and cells are never removed.
    fn cell_mut(&mut self, s: usize, key: &(String, ResourceId)) -> &mut Cell {
        let cell = self.state.stores[s].cells.get_mut(key);
        Arc::make_mut(cell.expect("cells exist for every data and resource"))
    }

    /// A write path of store `s`: the data it writes and how it is protected.
    fn route(&self, s: usize, path: usize) -> &Route {
        &self.sim.compiled.stores[s][path]
    }

    fn execute(&mut self, pending: Pending, alternative: usize) -> Event {
        match pending {
            Pending::Fault(i) => {
                let sim = self.sim;
                self.fault(&sim.compiled.faults[i])
            }
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

    fn fault(&mut self, fault: &CompiledFault) -> Event {
        match *fault {
            CompiledFault::PauseWorker { worker: w, ticks, reason } => {
                let worker = self.state.workers[w].name.clone();
                let until = self.state.now.after(ticks);
                if matches!(
                    self.state.workers[w].status,
                    WorkerStatus::Finished | WorkerStatus::Stopped { .. }
                ) {
                    return Event::PauseIgnored { worker, ticks };
                }
                // A worker already frozen for at least as long is not frozen any further.
                if let WorkerStatus::Paused { until: already, .. } = self.state.workers[w].status {
                    if already >= until {
                        return Event::PauseIgnored { worker, ticks };
                    }
                }
                Arc::make_mut(&mut self.state.workers[w]).status =
                    WorkerStatus::Paused { until, reason };
                let later = self.state.workers[w].pending.map_or(until, |k| k.at.max(until));
                self.schedule_worker(w, later, true);
                Event::Paused { worker, ticks, reason, believes: self.believed(w) }
            }
            CompiledFault::DelayMessages { worker: w, ticks, count } => {
                Arc::make_mut(&mut self.state.workers[w]).slowed = (ticks, count);
                let worker = self.state.workers[w].name.clone();
                Event::MessagesDelayed { worker, ticks, count }
            }
            CompiledFault::SkewClock { worker: w, by } => {
                let state = Arc::make_mut(&mut self.state.workers[w]);
                state.clock_offset = state.clock_offset.saturating_add(by);
                Event::ClockSkewed { worker: state.name.clone(), by, offset: state.clock_offset }
            }
            CompiledFault::LoseMessage(id) => {
                let Some(message) = self.state.in_flight.remove(&id) else {
                    return Event::LossIgnored { message: id };
                };
                let pending = Pending::Deliver(id);
                let key = AgendaKey { at: message.arrives_at, rank: pending.rank(), id };
                let removed = self.state.agenda_remove(&key);
                debug_assert!(removed.is_some(), "a message in flight is due for delivery");
                Event::MessageLost { worker: message.worker, message: id }
            }
            CompiledFault::RestartAuthority => {
                let kept = self.scenario.authority.token_source != TokenSource::VolatileCounter;
                if !kept {
                    self.state.authority.restart_losing_counter();
                    for r in 0..self.scenario.resources.len() {
                        if let Some(key) = self.state.expiry[r].take() {
                            self.state.agenda_remove(&key);
                        }
                    }
                }
                Event::AuthorityRestarted { counter_kept: kept }
            }
            CompiledFault::RestartStore(s) => {
                let kept = self.scenario.stores[s].persist_highest;
                if !kept {
                    for (_, cell) in self.state.stores[s].cells.iter_mut() {
                        Arc::make_mut(cell).resource.register.forget_highest();
                    }
                }
                Event::StoreRestarted {
                    store: self.scenario.stores[s].name.clone(),
                    highest_kept: kept,
                }
            }
        }
    }

    fn believed(&self, w: usize) -> Option<Generation> {
        self.state.workers[w].leases.values().next().map(|l| l.generation)
    }

    fn expire(&mut self, r: usize) -> Event {
        self.state.expiry[r] = None;
        let resource = self.sim.compiled.resources[r].clone();
        let id = self.sim.compiled.resources[r].clone();
        // The expiry agenda is kept in step with grants, renewals and releases, so the lease is
        // there; the fallback only keeps a corrupted state from panicking.
        let (worker, generation) = self
            .state
            .authority
            .expire_resource(&id, self.state.now)
            .map_or((WorkerId::fixed("nobody"), Generation::FIRST), |l| {
                (l.holder.clone(), l.generation)
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
        let held = worker.leases.iter().next().map(|(r, l)| (r.clone(), *l));
        let believes = held.as_ref().map(|(_, l)| l.generation);
        let name = worker.name.clone();
        let (still_owner, current) = match &held {
            Some((_, lease)) => {
                let id = &self.sim.compiled.resources[lease.resource];
                let current = self.state.authority.generation(id);
                let holder = self.state.authority.lease(id, now);
                let owner =
                    holder.is_some_and(|l| l.holder == name && Some(l.generation) == believes);
                (owner, current)
            }
            None => (false, None),
        };
        let resource = held.map(|(r, _)| r);
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
        let sim = self.sim;
        let name = self.state.workers[w].name.clone();
        let pc = self.state.workers[w].pc;
        let Some(step) = sim.compiled.workers[w].script.get(pc) else {
            Arc::make_mut(&mut self.state.workers[w]).status = WorkerStatus::Finished;
            return Event::WorkerFinished { worker: name };
        };
        Arc::make_mut(&mut self.state.workers[w]).status = WorkerStatus::Running;
        let advance = |engine: &mut Run<'_>, at: Tick| {
            Arc::make_mut(&mut engine.state.workers[w]).pc += 1;
            engine.schedule_worker(w, at, false);
        };
        let wid = &sim.compiled.workers[w].id;
        match step {
            Op::Acquire(r) => self.acquire(w, *r),
            Op::Renew(r) => {
                let (r, resource) = (*r, sim.compiled.resources[*r].clone());
                let Some(held) = self.state.workers[w].leases.get(&resource).copied() else {
                    return self.stop(w, format!("it holds no lease on {resource} to renew"));
                };
                let rid = &sim.compiled.resources[r];
                match self.state.authority.renew(rid, wid, held.generation, now) {
                    Ok(lease) => {
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
            Op::Release(r) => {
                let (r, resource) = (*r, sim.compiled.resources[*r].clone());
                let held = Arc::make_mut(&mut self.state.workers[w]).leases.remove(&resource);
                advance(self, now);
                let Some(held) = held else {
                    return Event::WorkerStopped {
                        worker: name,
                        reason: format!("it holds no lease on {resource} to release"),
                    };
                };
                let rid = &sim.compiled.resources[r];
                if self.state.authority.release(rid, wid, held.generation).is_ok() {
                    if let Some(key) = self.state.expiry[r].take() {
                        self.state.agenda_remove(&key);
                    }
                }
                Event::Released { worker: name, resource, generation: held.generation }
            }
            Op::Read(target) => {
                let Target { store: s, path, resource: r } = *target;
                let resource = sim.compiled.resources[r].clone();
                let route = self.route(s, path);
                let (data, path) = (route.data.clone(), route.name.clone());
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
                    store: sim.scenario.stores[s].name.clone(),
                    path,
                    resource,
                    value,
                    revision,
                }
            }
            Op::Compute(ticks) => {
                let (ticks, until) = (*ticks, now.after(*ticks));
                advance(self, until);
                Arc::make_mut(&mut self.state.workers[w]).status = WorkerStatus::Busy { until };
                Event::Computing { worker: name, ticks }
            }
            Op::Pause { ticks, optional: true, .. } if alternative == 1 => {
                advance(self, now);
                Event::PauseSkipped { worker: name, ticks: *ticks }
            }
            Op::Pause { ticks, reason, .. } => {
                let (ticks, reason, until) = (*ticks, *reason, now.after(*ticks));
                Arc::make_mut(&mut self.state.workers[w]).pc += 1;
                self.schedule_worker(w, until, true);
                Arc::make_mut(&mut self.state.workers[w]).status =
                    WorkerStatus::Paused { until, reason };
                Event::Paused { worker: name, ticks, reason, believes: self.believed(w) }
            }
            Op::CheckLease(r) => {
                let resource = sim.compiled.resources[*r].clone();
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
            Op::Write(write) => {
                let Target { store: s, path, resource: r } = write.target;
                let (token, generation, proof) = match self.token_for(w, r, write.forge) {
                    Ok(t) => t,
                    Err(reason) => return self.stop(w, reason),
                };
                let data = &self.route(s, path).data;
                let expected_revision = write.expected_revision.map(|e| match e {
                    ExpectedRevision::Exactly(n) => Revision(n),
                    ExpectedRevision::LastRead => self.state.workers[w]
                        .last_read
                        .get(&(s, data.clone(), sim.compiled.resources[r].clone()))
                        .copied()
                        .unwrap_or_default(),
                });
                let request = WriteRequest {
                    resource: sim.compiled.resources[r].clone(),
                    generation,
                    operation: write.operation.clone(),
                    expected_revision,
                    value: write.value.clone(),
                };
                let body = MessageBody::Write { store: s, path, request, token, proof };
                advance(self, now);
                let operation = write.operation.to_string();
                self.send(w, operation, body, write.delay + alternative, false)
            }
            Op::Effect(effect) => {
                let (token, generation, proof) = match self.token_for(w, effect.resource, None) {
                    Ok(t) => t,
                    Err(reason) => return self.stop(w, reason),
                };
                let request = EffectRequest {
                    workflow: effect.workflow.clone(),
                    generation,
                    operation: effect.operation.clone(),
                    effect: effect.effect.clone(),
                };
                let body = MessageBody::Effect {
                    request,
                    token,
                    resource: sim.compiled.resources[effect.resource].clone(),
                    proof,
                };
                advance(self, now);
                let operation = effect.operation.to_string();
                self.send(w, operation, body, effect.delay + alternative, false)
            }
            Op::Retry(operation) => {
                let Some(body) = self.state.workers[w].sent.get(operation).cloned() else {
                    return self.stop(w, format!("it never sent operation {operation}"));
                };
                if let MessageBody::Grant { .. } = body {
                    return self.stop(w, format!("operation {operation} is not a request"));
                }
                advance(self, now);
                self.send(w, operation.clone(), body, alternative, true)
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
        r: usize,
        forge: Option<u64>,
    ) -> Result<(TokenKind, Generation, u64), String> {
        let resource = &self.sim.compiled.resources[r];
        let held = self.state.workers[w].leases.get(resource).copied();
        if let Some(forged) = forge {
            let g = Generation::new(forged).map_err(|e| e.to_string())?;
            return Ok((TokenKind::Forged, g, 0));
        }
        let Some(held) = held else {
            return Err(format!("it holds no lease on {resource} to write under"));
        };
        if self.scenario.authority.token_source == TokenSource::WallClock {
            let g = Generation::new(self.local_time(w).max(1)).map_err(|e| e.to_string())?;
            return Ok((TokenKind::WallClock, g, 0));
        }
        Ok((TokenKind::Lease, held.generation, held.proof))
    }

    /// Puts a write or effect on the network; a retry sends an earlier request again.
    fn send(
        &mut self,
        w: usize,
        operation: String,
        body: MessageBody,
        delay: u64,
        retry: bool,
    ) -> Event {
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
        Arc::make_mut(&mut self.state.workers[w]).sent.insert(operation, body.clone());
        let event = match &body {
            MessageBody::Write { store, path, request, token, .. } => Event::WriteSent {
                worker: worker.clone(),
                message: id,
                store: self.scenario.stores[*store].name.clone(),
                path: self.route(*store, *path).name.clone(),
                request: request.clone(),
                token: *token,
                arrives_at,
                retry,
            },
            MessageBody::Effect { request, token, resource, .. } => Event::EffectSent {
                worker: worker.clone(),
                message: id,
                request: request.clone(),
                resource: resource.clone(),
                token: *token,
                arrives_at,
                retry,
            },
            MessageBody::Grant { .. } => unreachable!("grants are sent by the authority"),
        };
        let message = Message { id, worker, sent_at: now, arrives_at, body, worker_index: w };
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

    fn acquire(&mut self, w: usize, r: usize) -> Event {
        let now = self.state.now;
        let sim = self.sim;
        let name = self.state.workers[w].name.clone();
        let resource = &sim.compiled.resources[r];
        let (rid, wid) = (resource, &sim.compiled.workers[w].id);
        match self.state.authority.acquire(rid, wid, now) {
            Ok(lease) => {
                self.schedule_expiry(r, lease.valid_until);
                let held = HeldLease {
                    generation: lease.generation,
                    valid_until: lease.valid_until,
                    proof: proof(resource, lease.generation),
                    resource: r,
                };
                let id = self.state.next_message;
                self.state.next_message += 1;
                let arrives_at = now.after(self.scenario.network.latency);
                let body = MessageBody::Grant { resource: resource.clone(), lease: held };
                let message = Message {
                    id,
                    worker: name.clone(),
                    sent_at: now,
                    arrives_at,
                    body,
                    worker_index: w,
                };
                self.state.in_flight.insert(id, message);
                self.schedule(arrives_at, Pending::Deliver(id));
                let worker = Arc::make_mut(&mut self.state.workers[w]);
                worker.status = WorkerStatus::AwaitingGrant { resource: resource.clone() };
                worker.awaiting_grant = Some(resource.clone());
                Event::LeaseGranted {
                    worker: name,
                    resource: resource.clone(),
                    generation: lease.generation,
                    valid_until: lease.valid_until,
                    arrives_at,
                    message: id,
                }
            }
            Err(LeaseError::Held { holder, valid_until, .. }) => {
                self.schedule_worker(w, valid_until, false);
                Arc::make_mut(&mut self.state.workers[w]).status = WorkerStatus::WaitingForLease {
                    resource: resource.clone(),
                    until: valid_until,
                };
                Event::LeaseBusy {
                    worker: name,
                    resource: resource.clone(),
                    holder: holder.clone(),
                    valid_until,
                }
            }
            Err(e) => self.stop(w, format!("the authority refused a lease: {e}")),
        }
    }

    fn deliver(&mut self, id: u64) -> Event {
        let Some(message) = self.state.in_flight.remove(&id) else {
            return Event::WorkerStopped {
                worker: WorkerId::fixed("network"),
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
            MessageBody::Write { store, path, request, token, proof } => {
                self.arrive_write(message, store, path, request, token, proof)
            }
            MessageBody::Effect { request, token, resource, proof } => {
                self.arrive_effect(message, request, token, &resource, proof)
            }
        }
    }

    /// Checks the authority's proof on a token, where the scenario asks for authenticated tokens.
    fn verify(
        &self,
        resource: &str,
        generation: Generation,
        token: TokenKind,
        presented_proof: u64,
    ) -> Result<(), TokenError> {
        let authority = &self.scenario.authority;
        let verifies = !authority.authenticated
            || authority.token_source == TokenSource::WallClock
            || (token != TokenKind::Forged && presented_proof == proof(resource, generation));
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
        path: usize,
        request: WriteRequest,
        token: TokenKind,
        proof: u64,
    ) -> Event {
        let now = self.state.now;
        let resource = request.resource.clone();
        let route = self.route(s, path);
        let (data, enforcement) = (route.data.clone(), route.enforcement);
        let key = (data.clone(), resource.clone());
        let verified = if enforcement == Enforcement::Unfenced {
            Ok(())
        } else {
            self.verify(&resource, request.generation, token, proof)
        };
        let cell = self.cell_mut(s, &key);
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
                    let event = Event::CheckPassed {
                        worker: message.worker.clone(),
                        message: message.id,
                        store: self.scenario.stores[s].name.clone(),
                        path: self.route(s, path).name.clone(),
                        data: data.clone(),
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
        self.settle_write(message, s, path, request, settled)
    }

    fn commit(&mut self, id: u64) -> Event {
        let Some(message) = self.state.checked.remove(&id) else {
            return Event::WorkerStopped {
                worker: WorkerId::fixed("store"),
                reason: format!("checked write {id} vanished"),
            };
        };
        let MessageBody::Write { store: s, path, request, .. } = message.body.clone() else {
            return Event::WorkerStopped {
                worker: WorkerId::fixed("store"),
                reason: format!("message {id} is not a write"),
            };
        };
        let key = (self.route(s, path).data.clone(), request.resource.clone());
        let cell = self.cell_mut(s, &key);
        let highest_before = cell.resource.register.highest();
        let outcome = WriteOutcome::Applied(cell.resource.register.write_unchecked(&request));
        let enforcement = Enforcement::CheckThenWrite;
        let settled = Settled { enforcement, outcome, highest_before };
        let settled = self.settle_write(message, s, path, request, settled);
        match settled {
            Event::WriteArrived {
                worker, message, store, path, data, request, outcome, ..
            } => Event::WriteCommitted {
                worker,
                message,
                store,
                path,
                data,
                request,
                outcome,
                highest_before,
            },
            other => other,
        }
    }

    fn settle_write(
        &mut self,
        message: Message,
        s: usize,
        path: usize,
        request: WriteRequest,
        settled: Settled,
    ) -> Event {
        let Settled { enforcement, outcome, highest_before } = settled;
        let route = self.route(s, path);
        let (data, path) = (route.data.clone(), route.name.clone());
        let key = (data.clone(), request.resource.clone());
        let register = &self.state.stores[s].cells[&key].resource.register;
        Event::WriteArrived {
            worker: message.worker,
            message: message.id,
            store: self.scenario.stores[s].name.clone(),
            path,
            data,
            enforcement,
            value_after: register.value().map(str::to_string),
            highest_after: register.highest(),
            request,
            outcome,
            highest_before,
            // Only the checker can tell a rightful owner refused; the recorder adds its verdict.
            misfenced: None,
        }
    }

    fn arrive_effect(
        &mut self,
        message: Message,
        request: EffectRequest,
        token: TokenKind,
        resource: &str,
        proof: u64,
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
            self.verify(resource, request.generation, token, proof)
        };
        let gw = self.state.gateway.as_mut().expect("checked above");
        let outcome = match verified {
            Err(error) => GatewayOutcome::Dropped(DropReason::InvalidToken { error }),
            Ok(()) if enforcement == Enforcement::Unfenced => {
                GatewayOutcome::Delivered(Delivery { request: request.clone(), at: now })
            }
            Ok(()) => gw.gateway.submit(request.clone(), now),
        };
        let partner = gw.partner.clone();
        let dropped = match outcome {
            GatewayOutcome::Dropped(reason) => Some(reason),
            GatewayOutcome::Delivered(delivery) => {
                gw.received.push(delivery);
                None
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
}

/// What a store did with a write: how the path is protected, the outcome, and the highest
/// generation before it.
struct Settled {
    enforcement: Enforcement,
    outcome: WriteOutcome,
    highest_before: Option<Generation>,
}

fn initial_state(scenario: &Scenario, compiled: &Compiled) -> SimState {
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
                for id in &compiled.resources {
                    let register = FencedRegister::new(id.clone(), spec.policy);
                    let resource_state = FencedResource::new(register, spec.retention);
                    cells.push((
                        (path.clone(), id.clone()),
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
            .zip(&compiled.workers)
            .map(|(w, compiled)| {
                Arc::new(WorkerState {
                    name: compiled.id.clone(),
                    status: WorkerStatus::NotStarted,
                    pc: 0,
                    leases: LiteMap::new(),
                    clock_offset: w.clock_offset,
                    last_read: LiteMap::new(),
                    sent: LiteMap::new(),
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
        finished: false,
        agenda: BTreeMap::new(),
        due: (Tick::ZERO, 0),
        expiry: vec![None; n],
        next_message: 0,
        injected: 0,
        next_injection: None,
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
    settle(compiled, &mut state);
    state
}

/// See [`Simulator::settle`].
fn settle(compiled: &Compiled, state: &mut SimState) {
    state.next_injection = compiled.injected.get(state.injected).map(|(after, _)| *after);
    state.finished = state.agenda.is_empty() && state.next_injection.is_none();
}
