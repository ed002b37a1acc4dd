//! What can happen next, as data: the choices a reader can pick from and the faults they can
//! inject. Fronts list these rather than inventing their own, so a page that lets a reader
//! decide offers exactly what the engine can run.

use super::compiled::Op;
use super::state::{MessageBody, Pending, SimState, WorkerStatus};
use super::Simulator;
use crate::format::model::{Fault, PauseReason};
use serde::Serialize;

/// One event that can run next, as [`Simulator::choices`] lists them: the `n`-th is choice `n`
/// of [`Simulator::advance`] and [`Engine::step_choice`](crate::Engine::step_choice).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// The event.
    pub what: Next,
    /// Which of its ways to go, when it has several.
    pub way: Way,
}

/// An event that is due.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Next {
    /// A fault from the scenario's `faults`, due at this tick.
    Fault {
        /// Its position in the list.
        index: usize,
        /// What it does.
        fault: Fault,
    },
    /// A fault from the scenario's `injected`, due at this step. Nothing else can run first.
    Injected {
        /// Its position in the list.
        index: usize,
        /// What it does.
        fault: Fault,
    },
    /// A lease runs out.
    Expire {
        /// The resource.
        resource: String,
    },
    /// A message arrives.
    Deliver {
        /// The message.
        message: u64,
        /// The worker it belongs to (the grant's receiver, or the sender of a request).
        worker: String,
        /// What it carries: `grant`, `write` or `effect`.
        carries: &'static str,
    },
    /// A write that passed a check-then-write check is written.
    Commit {
        /// The message that carried it.
        message: u64,
        /// Its sender.
        worker: String,
    },
    /// A paused worker wakes up.
    Resume {
        /// The worker.
        worker: String,
    },
    /// A worker runs the next step of its script.
    WorkerStep {
        /// The worker.
        worker: String,
    },
}

/// How an event with several possible outcomes goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "way", rename_all = "snake_case")]
pub enum Way {
    /// It has only one.
    Only,
    /// An optional pause happens.
    PauseTaken,
    /// An optional pause does not happen this time.
    PauseSkipped,
    /// The message the step sends takes this much longer than the network's latency.
    Jitter {
        /// Extra ticks.
        ticks: u64,
    },
}

impl Simulator {
    /// The events that can run next in `state`, in the order choice indices refer to.
    pub fn choices(&self, state: &SimState) -> Vec<Choice> {
        if let Some((index, fault)) = self.injection_spec(state) {
            return vec![Choice { what: Next::Injected { index, fault }, way: Way::Only }];
        }
        let due = state.agenda.values().take(state.enabled_count());
        due.flat_map(|pending| {
            let what = self.next(state, pending);
            let ways = if self.compiled.branching { self.alternatives(state, pending) } else { 1 };
            (0..ways).map(move |alternative| Choice {
                what: what.clone(),
                way: self.way(state, pending, ways, alternative),
            })
        })
        .collect()
    }

    /// The faults a reader can inject into `state`, each with a suggested size: pauses and
    /// delays one tick longer than a lease, so that they outlast it, which is the case fencing
    /// is for, and a clock set back by as much, so its owner believes in its lease for that
    /// long after it ended, or ahead by as much, so it gives its lease up early. A front may
    /// change the sizes. Pauses, delays and clock jumps are offered for workers that have not
    /// stopped; losing a message, for each one in flight.
    pub fn possible_faults(&self, state: &SimState) -> Vec<Fault> {
        // A run that has ended takes no more steps, so nothing can be injected into it.
        if state.finished {
            return Vec::new();
        }
        let ticks = self.scenario.authority.ttl + 1;
        let slower = -i64::try_from(ticks).unwrap_or(i64::MAX);
        let live = state
            .workers
            .iter()
            .filter(|w| !matches!(w.status, WorkerStatus::Finished | WorkerStatus::Stopped { .. }));
        let mut faults: Vec<Fault> = live
            .flat_map(|w| {
                [
                    Fault::PauseWorker {
                        worker: w.name.to_string(),
                        ticks,
                        reason: PauseReason::default(),
                    },
                    Fault::DelayMessages { worker: w.name.to_string(), ticks, count: 1 },
                    Fault::SkewClock { worker: w.name.to_string(), by: slower },
                    Fault::SkewClock { worker: w.name.to_string(), by: -slower },
                ]
            })
            .collect();
        faults.extend(state.in_flight.keys().map(|&message| Fault::LoseMessage { message }));
        faults.push(Fault::RestartAuthority);
        let stores = self.scenario.stores.iter();
        faults.extend(stores.map(|s| Fault::RestartStore { store: s.name.clone() }));
        faults
    }

    /// The injected fault due in `state`, as the scenario spells it, with its position.
    fn injection_spec(&self, state: &SimState) -> Option<(usize, Fault)> {
        self.injection_due(state)?;
        let spec = self.scenario.injected.get(state.injected)?;
        Some((state.injected, spec.fault.clone()))
    }

    fn next(&self, state: &SimState, pending: &Pending) -> Next {
        let worker = |w: usize| state.workers[w].name.to_string();
        match *pending {
            Pending::Fault(index) => {
                Next::Fault { index, fault: self.scenario.faults[index].fault.clone() }
            }
            Pending::Expire(r) => Next::Expire { resource: self.scenario.resources[r].clone() },
            Pending::Deliver(message) => {
                let sent = state.in_flight.get(&message);
                Next::Deliver {
                    message,
                    worker: sent.map(|m| m.worker.to_string()).unwrap_or_default(),
                    carries: match sent.map(|m| &m.body) {
                        Some(MessageBody::Grant { .. }) => "grant",
                        Some(MessageBody::Effect { .. }) => "effect",
                        _ => "write",
                    },
                }
            }
            Pending::Commit(message) => Next::Commit {
                message,
                worker: state
                    .checked
                    .get(&message)
                    .map(|m| m.worker.to_string())
                    .unwrap_or_default(),
            },
            Pending::Resume(w) => Next::Resume { worker: worker(w) },
            Pending::WorkerStep(w) => Next::WorkerStep { worker: worker(w) },
        }
    }

    fn way(&self, state: &SimState, pending: &Pending, ways: usize, alternative: usize) -> Way {
        if ways == 1 {
            return Way::Only;
        }
        let Pending::WorkerStep(w) = *pending else { return Way::Only };
        match self.compiled.workers[w].script.get(state.workers[w].pc) {
            Some(Op::Pause { .. }) if alternative == 0 => Way::PauseTaken,
            Some(Op::Pause { .. }) => Way::PauseSkipped,
            _ => Way::Jitter { ticks: alternative as u64 },
        }
    }
}
