//! Everything a run holds at one moment: what a UI draws, and what seeking restores.

use crate::clock::Tick;
use crate::fence::authority::LeaseAuthority;
use crate::fence::boundary::FencedResource;
use crate::fence::gateway::{Delivery, EffectRequest, SideEffectGateway};
use crate::fence::generation::Generation;
use crate::fence::register::{Revision, WriteRequest};
use crate::format::model::{Enforcement, PauseReason};
use crate::history::event::TokenKind;
use crate::ids::{ResourceId, WorkerId};
use crate::memory::{buffer, freed, no_heap, shared_map, HeapSize};
use litemap::LiteMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The state of a run between two steps.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SimState {
    /// Logical time of the last step.
    pub now: Tick,
    /// How many steps have run.
    pub position: usize,
    /// How many schedule entries have been used.
    pub cursor: usize,
    /// The lease authority.
    pub authority: LeaseAuthority,
    /// Each worker, in scenario order. Shared with snapshots until changed, so keeping a
    /// snapshot costs little even with thousands of workers.
    pub workers: Vec<Arc<WorkerState>>,
    /// Each store, in scenario order.
    pub stores: Vec<StoreState>,
    /// The gateway and its partner, if the scenario has one.
    pub gateway: Option<GatewayState>,
    /// Messages travelling between actors, by id.
    pub in_flight: BTreeMap<u64, Message>,
    /// Writes that passed a check-then-write check and wait for their separate write step.
    pub checked: BTreeMap<u64, Message>,
    /// Whether nothing is left to happen.
    pub finished: bool,
    pub(crate) agenda: BTreeMap<AgendaKey, Pending>,
    /// How many agenda entries fall on the earliest pending tick, so the number of enabled events
    /// is known without walking them (thousands can be tied in large scenarios). Recounted only
    /// when that tick runs out, so each entry is counted about once.
    pub(crate) due: (Tick, usize),
    pub(crate) expiry: Vec<Option<AgendaKey>>,
    pub(crate) next_message: u64,
    /// How many of the scenario's injected faults have run.
    pub(crate) injected: usize,
    /// After how many steps the next injected fault runs, if one is left.
    pub(crate) next_injection: Option<usize>,
}

/// A worker as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WorkerState {
    /// Its name.
    pub name: WorkerId,
    /// What it is doing.
    pub status: WorkerStatus,
    /// The index of its next script step.
    pub pc: usize,
    /// The leases it *believes* it holds, by resource. Compare with the authority's view.
    #[serde(serialize_with = "crate::maps::as_object")]
    pub leases: LiteMap<ResourceId, HeldLease>,
    /// How far its clock is off.
    pub clock_offset: i64,
    pub(crate) last_read: LiteMap<(usize, String, ResourceId), Revision>,
    #[serde(serialize_with = "crate::maps::as_object")]
    pub(crate) sent: LiteMap<String, MessageBody>,
    pub(crate) pending: Option<AgendaKey>,
    /// Extra delay for the next messages this worker sends, and how many are left.
    pub(crate) slowed: (u64, u32),
    /// The resource whose grant is on its way to this worker, if any.
    pub(crate) awaiting_grant: Option<ResourceId>,
}

/// A lease as its holder sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HeldLease {
    /// Its generation.
    pub generation: Generation,
    /// When the holder was told it ends.
    pub valid_until: Tick,
    /// The authority's proof on the token, for scenarios with authenticated tokens.
    pub(crate) proof: u64,
    /// The resource's index in the scenario.
    pub(crate) resource: usize,
}

/// What a worker is doing.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum WorkerStatus {
    /// Its start time has not come.
    NotStarted,
    /// Running its script.
    Running,
    /// Computing until a tick.
    Busy {
        /// Until when.
        until: Tick,
    },
    /// Frozen until a tick.
    Paused {
        /// Until when.
        until: Tick,
        /// Why.
        reason: PauseReason,
    },
    /// Waiting for someone else's lease to end.
    WaitingForLease {
        /// The resource.
        resource: ResourceId,
        /// When it will ask again.
        until: Tick,
    },
    /// Waiting for a grant to arrive.
    AwaitingGrant {
        /// The resource.
        resource: ResourceId,
    },
    /// Stopped early.
    Stopped {
        /// Why.
        reason: String,
    },
    /// Done with its script.
    Finished,
}

/// A store and its cells, one per (write path, resource).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StoreState {
    /// Its name.
    pub name: String,
    /// The protected state, by (path, resource).
    pub cells: LiteMap<(String, ResourceId), Arc<Cell>>,
}

/// One protected cell of a store.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cell {
    /// How this path is protected.
    pub enforcement: Enforcement,
    /// The register and its remembered operation ids.
    pub resource: FencedResource,
}

/// The gateway and what its partner has received.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GatewayState {
    /// The partner's name.
    pub partner: String,
    /// Whether it checks tokens.
    pub enforcement: Enforcement,
    /// The fence, used when enforcement is fenced.
    pub gateway: SideEffectGateway,
    /// Everything the partner received, in order: what can no longer be undone.
    pub received: Vec<Delivery>,
}

/// A message between actors.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    /// Its id, in sending order.
    pub id: u64,
    /// The worker it belongs to.
    pub worker: WorkerId,
    /// When it was sent.
    pub sent_at: Tick,
    /// When it arrives.
    pub arrives_at: Tick,
    /// What it carries.
    pub body: MessageBody,
    pub(crate) worker_index: usize,
}

/// What a message carries.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MessageBody {
    /// A lease grant travelling from the authority to the worker.
    Grant {
        /// The resource.
        resource: ResourceId,
        /// The lease as the worker will hold it.
        lease: HeldLease,
    },
    /// A write travelling to a store.
    Write {
        /// The store's index.
        store: usize,
        /// The write path, by its index among the store's paths (0 is `primary`).
        path: usize,
        /// The request.
        request: WriteRequest,
        /// Where the token came from.
        token: TokenKind,
        /// The authority's proof on the token (0 when there is none).
        #[serde(skip)]
        proof: u64,
    },
    /// An effect travelling to the gateway.
    Effect {
        /// The request.
        request: EffectRequest,
        /// Where the token came from.
        token: TokenKind,
        /// The resource whose lease backs it.
        resource: ResourceId,
        /// The authority's proof on the token (0 when there is none).
        #[serde(skip)]
        proof: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct AgendaKey {
    pub at: Tick,
    pub rank: u8,
    pub id: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum Pending {
    Fault(usize),
    Expire(usize),
    Deliver(u64),
    Commit(u64),
    Resume(usize),
    WorkerStep(usize),
}

impl Pending {
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Pending::Fault(_) => 0,
            Pending::Expire(_) => 1,
            Pending::Deliver(_) => 2,
            Pending::Commit(_) => 3,
            Pending::Resume(_) => 4,
            Pending::WorkerStep(_) => 5,
        }
    }
}

impl SimState {
    pub(crate) fn agenda_insert(&mut self, key: AgendaKey, pending: Pending) {
        if self.agenda.insert(key, pending).is_none() {
            if self.due.1 == 0 || key.at < self.due.0 {
                self.due = (key.at, 1);
            } else if key.at == self.due.0 {
                self.due.1 += 1;
            }
        }
    }

    pub(crate) fn agenda_remove(&mut self, key: &AgendaKey) -> Option<Pending> {
        let pending = self.agenda.remove(key)?;
        if key.at == self.due.0 {
            self.due.1 -= 1;
            if self.due.1 == 0 {
                self.due = match self.agenda.keys().next() {
                    Some(first) => {
                        let at = first.at;
                        (at, self.agenda.keys().take_while(|k| k.at == at).count())
                    }
                    None => (Tick::ZERO, 0),
                };
            }
        }
        Some(pending)
    }

    /// How many events are enabled now: those due at the earliest pending tick.
    pub(crate) fn enabled_count(&self) -> usize {
        self.due.1
    }

    /// The `n`-th enabled event's key, in schedule order.
    pub(crate) fn enabled_key(&self, n: usize) -> Option<AgendaKey> {
        self.agenda.keys().take(self.enabled_count()).nth(n).copied()
    }

    /// A hash of everything that decides what can happen next, for the explorer's "seen" set.
    /// The step count and the schedule cursor are left out, so two paths to the same situation
    /// count as one state. Together with the [`Checker`](crate::Checker)'s own `Hash`, it is what
    /// tells two of the explorer's states apart, so another search over the
    /// [`Simulator`](crate::Simulator) can count states the same way. The same on every run.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{BuildHasher, Hash, Hasher};
        let mut h = crate::fingerprint::FINGERPRINTS.build_hasher();
        self.now.hash(&mut h);
        self.authority.hash(&mut h);
        self.workers.hash(&mut h);
        self.stores.hash(&mut h);
        self.gateway.hash(&mut h);
        self.in_flight.hash(&mut h);
        self.checked.hash(&mut h);
        self.finished.hash(&mut h);
        self.agenda.hash(&mut h);
        // The step count is left out, but an injected fault comes after a number of steps, so
        // how many steps remain before the next one is part of what happens next.
        self.injected.hash(&mut h);
        self.next_injection.map(|after| after.saturating_sub(self.position)).hash(&mut h);
        h.finish()
    }

    /// Whether `worker` holds a lease on `resource` in the authority's eyes right now, as opposed
    /// to what the worker believes.
    pub fn authority_says_holds(&self, worker: &str, resource: &str) -> bool {
        let Ok(resource) = crate::ids::ResourceId::new(resource) else { return false };
        self.authority.holder(&resource, self.now).is_some_and(|h| h.as_str() == worker)
    }
}

no_heap!(HeldLease, AgendaKey, Pending);

impl HeapSize for WorkerStatus {
    fn heap_bytes(&self) -> usize {
        match self {
            WorkerStatus::WaitingForLease { resource, .. }
            | WorkerStatus::AwaitingGrant { resource } => resource.heap_bytes(),
            WorkerStatus::Stopped { reason } => reason.heap_bytes(),
            WorkerStatus::NotStarted
            | WorkerStatus::Running
            | WorkerStatus::Busy { .. }
            | WorkerStatus::Paused { .. }
            | WorkerStatus::Finished => 0,
        }
    }
}

impl HeapSize for MessageBody {
    fn heap_bytes(&self) -> usize {
        match self {
            MessageBody::Grant { resource, .. } => resource.heap_bytes(),
            MessageBody::Write { path, request, .. } => path.heap_bytes() + request.heap_bytes(),
            MessageBody::Effect { request, resource, .. } => {
                request.heap_bytes() + resource.heap_bytes()
            }
        }
    }
}

impl HeapSize for Message {
    fn heap_bytes(&self) -> usize {
        self.worker.heap_bytes() + self.body.heap_bytes()
    }
}

impl HeapSize for WorkerState {
    fn heap_bytes(&self) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let WorkerState {
            name,
            status,
            pc: _,
            leases,
            clock_offset: _,
            last_read,
            sent,
            pending: _,
            slowed: _,
            awaiting_grant,
        } = self;
        name.heap_bytes()
            + status.heap_bytes()
            + leases.heap_bytes()
            + last_read.heap_bytes()
            + sent.heap_bytes()
            + awaiting_grant.heap_bytes()
    }
}

impl HeapSize for Cell {
    fn heap_bytes(&self) -> usize {
        self.resource.heap_bytes()
    }
}

impl HeapSize for GatewayState {
    fn heap_bytes(&self) -> usize {
        self.partner.heap_bytes() + self.gateway.heap_bytes() + self.received.heap_bytes()
    }
}

impl SimState {
    /// Drops the state and returns the heap bytes of the workers and cells that it was the last
    /// to hold (those [`SimState::heap_bytes_beyond`] counts apart).
    pub(crate) fn drop_shared(self) -> usize {
        let workers: usize = self.workers.into_iter().map(freed).sum();
        let cells = self.stores.into_iter().flat_map(|store| store.cells.into_iter());
        workers + cells.map(|(_, cell)| freed(cell)).sum::<usize>()
    }
}

impl SimState {
    /// The heap bytes this state holds that `base` does not share with it: its own maps and
    /// lists in full (a clone copies them), and only those workers and cells that are not the
    /// very same `Arc` as in `base`. With `base` a state it was cloned from (a snapshot, the
    /// explorer's parent), that is what keeping this state costs on top of keeping `base`; with
    /// no `base`, it is everything.
    pub(crate) fn heap_bytes_beyond(&self, base: Option<&SimState>) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let SimState {
            now: _,
            position: _,
            cursor: _,
            authority,
            workers,
            stores,
            gateway,
            in_flight,
            checked,
            finished: _,
            agenda,
            due: _,
            expiry,
            next_message: _,
            injected: _,
            next_injection: _,
        } = self;
        let workers_bytes: usize = workers
            .iter()
            .enumerate()
            .map(|(i, worker)| {
                let theirs = base.and_then(|b| b.workers.get(i));
                if theirs.is_some_and(|b| Arc::ptr_eq(b, worker)) {
                    0
                } else {
                    worker.heap_bytes()
                }
            })
            .sum();
        let stores_bytes: usize = stores
            .iter()
            .enumerate()
            .map(|(s, store)| {
                let theirs = base.and_then(|b| b.stores.get(s)).map(|b| &b.cells);
                store.name.heap_bytes() + shared_map(&store.cells, theirs)
            })
            .sum();
        authority.heap_bytes()
            + buffer::<Arc<WorkerState>>(workers.len())
            + workers_bytes
            + buffer::<StoreState>(stores.len())
            + stores_bytes
            + gateway.heap_bytes()
            + in_flight.heap_bytes()
            + checked.heap_bytes()
            + agenda.heap_bytes()
            + expiry.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Engine;
    use crate::stories::library;
    use proptest::prelude::*;

    fn empty_state() -> SimState {
        let engine = Engine::new(library::scenario("paused-worker", None).unwrap()).unwrap();
        let mut state = engine.state().clone();
        let keys: Vec<AgendaKey> = state.agenda.keys().copied().collect();
        for key in keys {
            state.agenda_remove(&key);
        }
        state
    }

    proptest! {
        /// The cached count of events due at the earliest tick always equals a full count.
        #[test]
        fn the_due_count_matches_a_recount(ops in prop::collection::vec((any::<bool>(), 0u64..6, 0u64..4), 0..200)) {
            let mut state = empty_state();
            prop_assert_eq!(state.enabled_count(), 0);
            for (insert, at, id) in ops {
                let key = AgendaKey { at: Tick(at), rank: 0, id };
                if insert {
                    state.agenda_insert(key, Pending::Deliver(id));
                } else {
                    state.agenda_remove(&key);
                }
                let first = state.agenda.keys().next().map(|k| k.at);
                let recount = state.agenda.keys().filter(|k| Some(k.at) == first).count();
                prop_assert_eq!(state.enabled_count(), recount);
            }
        }
    }
}
