//! A history built from observations: what a recorder or a reader saw (a lease granted, a write
//! sent, its answer, a lease that ran out, a pause), in the order it saw it. The builder hands
//! out message ids, keeps what the authority, the workers and the stores have said so far, and
//! fills in the fields an observer may not know from it (what a paused worker believes, whether
//! it still owns its lease, the store's highest generation before and after a write, the value
//! afterwards, where a token came from). A field the observer gives always wins. It also adds
//! every name an event uses to the setup, so a history built from a source that declares no
//! setup still holds together.
//!
//! The live lab's processes and the interop readers (Jepsen, OpenTelemetry, text logs) build
//! their histories here, so one observation becomes the same entries whoever made it.
//!
//! ```
//! use fencelab_core::{history::builder::WriteAnswer, history::builder::HistoryBuilder, history::builder::Sent};
//! use fencelab_core::{Checker, Generation, OperationId, ResourceId, history::Setup, Tick, WorkerId};
//! use fencelab_core::WriteRequest;
//! use fencelab_core::{WriteOutcome, fence::register::WriteRejection};
//!
//! let g = |n| Generation::new(n).unwrap();
//! let write = |worker: &str, n| {
//!     let op = OperationId::new(format!("{worker}-{n}")).unwrap();
//!     WriteRequest::new(ResourceId::new("ledger").unwrap(), g(n), op, None, worker)
//! };
//! let (a, b_, ledger): (WorkerId, WorkerId, ResourceId) =
//!     ("A".parse().unwrap(), "B".parse().unwrap(), "ledger".parse().unwrap());
//! let mut b = HistoryBuilder::new(Setup::default());
//! b.at(Tick(0), None);
//! b.granted(&a, &ledger, g(1), Tick(100));
//! b.at(Tick(100), None);
//! b.expire_due();
//! b.granted(&b_, &ledger, g(2), Tick(200));
//! let sent = b.write_sent(&b_, Sent::new("db", write("B", 2)));
//! b.write_answered(&b_, sent, WriteAnswer::applied());
//! let late = b.write_sent(&a, Sent::new("db", write("A", 1)));
//! let stale = WriteRejection::Stale { presented: g(1), highest: g(2) };
//! b.write_answered(&a, late, WriteAnswer::new(WriteOutcome::Rejected(stale)));
//! let history = b.finish();
//! assert!(history.validate().is_ok());
//! assert!(Checker::judge(&history).is_empty());
//! ```

use crate::clock::Tick;
use crate::fence::generation::Generation;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::{Applied, Fence, Revision, WriteRequest};
use crate::format::model::{Enforcement, PauseReason};
use crate::history::event::{Event, TokenKind};
use crate::history::{Entry, GatewaySetup, History, PathSetup, Setup, StoreSetup};
use crate::ids::{ResourceId, WorkerId};
use std::collections::BTreeMap;

/// The name of a store's main write path.
const PRIMARY: &str = "primary";

/// What the builder knows about one store's data for one resource, from the writes it has seen
/// answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stored {
    /// The value.
    pub value: Option<String>,
    /// The revision of the last write applied (0 before any).
    pub revision: u64,
    /// The highest generation the store has recorded.
    pub highest: Option<Generation>,
}

/// A write as its sender sent it, with what the observer knows beyond the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// The store.
    pub store: String,
    /// The write path; `primary` when not given.
    pub path: Option<String>,
    /// The request.
    pub request: WriteRequest,
    /// Where its token came from; inferred from the leases the worker holds when not given.
    pub token: Option<TokenKind>,
    /// When it arrives; the time it is sent when not given.
    pub arrives_at: Option<Tick>,
    /// Whether it re-sends an earlier request; not when not given.
    pub retry: Option<bool>,
    /// Its message id; the next free one when not given.
    pub message: Option<u64>,
}

impl Sent {
    /// A write of `request` to `store`'s primary path, nothing else known.
    pub fn new(store: impl Into<String>, request: WriteRequest) -> Sent {
        Sent {
            store: store.into(),
            path: None,
            request,
            token: None,
            arrives_at: None,
            retry: None,
            message: None,
        }
    }
}

/// A store's answer to a write, with what the observer knows beyond the outcome. What is not
/// given is inferred from the writes answered before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteAnswer {
    /// The store's decision; `None` for an applied write whose revision the builder counts.
    pub outcome: Option<WriteOutcome>,
    /// The data the path writes.
    pub data: Option<String>,
    /// How the path is protected.
    pub enforcement: Option<Enforcement>,
    /// The value afterwards.
    pub value_after: Option<Option<String>>,
    /// The highest generation before the request arrived.
    pub highest_before: Option<Option<Generation>>,
    /// The highest generation afterwards.
    pub highest_after: Option<Option<Generation>>,
    /// Where a generation that outranks a refused rightful owner came from.
    pub misfenced: Option<TokenKind>,
}

impl WriteAnswer {
    /// The store's decision, nothing else known.
    pub fn new(outcome: WriteOutcome) -> WriteAnswer {
        WriteAnswer { outcome: Some(outcome), ..WriteAnswer::applied() }
    }

    /// Applied, nothing else known: the revision is the one after the data's last.
    pub fn applied() -> WriteAnswer {
        WriteAnswer {
            outcome: None,
            data: None,
            enforcement: None,
            value_after: None,
            highest_before: None,
            highest_after: None,
            misfenced: None,
        }
    }
}

/// A pause or a resumption, with what the observer knows about the worker's beliefs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Beliefs {
    /// How long a pause lasts; when not given, the time until the worker resumes.
    pub ticks: Option<u64>,
    /// Why the worker froze; a GC pause when not given.
    pub reason: Option<PauseReason>,
    /// The generation it believes it holds; its first lease when not given.
    pub believes: Option<Option<Generation>>,
    /// The resource that generation is for.
    pub resource: Option<Option<ResourceId>>,
    /// Whether the authority still counts it as the owner.
    pub still_owner: Option<bool>,
    /// The authority's newest generation for that resource.
    pub current: Option<Option<Generation>>,
}

/// A history being built from observations, in the order they were made.
#[derive(Debug, Clone, Default)]
pub struct HistoryBuilder {
    setup: Setup,
    /// The entries, with places reserved for events known only later (a grant whose
    /// generation its completion reports).
    slots: Vec<Option<Entry>>,
    /// The wall-clock time of each slot's moment, when the observer gives one.
    walls: Vec<Option<u64>>,
    now: Tick,
    wall: Option<u64>,
    next_message: u64,
    /// The authority's newest generation, per resource.
    issued: BTreeMap<ResourceId, Generation>,
    /// The lease the authority honours, per resource: holder, generation, end.
    live: BTreeMap<ResourceId, (WorkerId, Generation, Tick)>,
    /// The leases each worker believes it holds.
    held: BTreeMap<WorkerId, BTreeMap<ResourceId, Generation>>,
    /// Per store, data and resource.
    cells: BTreeMap<(String, String, String), Stored>,
    /// Per worker: the slot of its pause whose length is known only when it resumes.
    pauses: BTreeMap<WorkerId, usize>,
}

/// The generation a worker believes it holds, as the simulator reports it: its first lease.
fn first(held: Option<&BTreeMap<ResourceId, Generation>>) -> Option<(ResourceId, Generation)> {
    held.and_then(|h| h.iter().next()).map(|(r, g)| (r.clone(), *g))
}

impl HistoryBuilder {
    /// A builder starting from `setup` (names the events use that it lacks are added), at time
    /// zero, whose first message id is 0.
    pub fn new(setup: Setup) -> HistoryBuilder {
        HistoryBuilder { setup, ..HistoryBuilder::default() }
    }

    /// The same builder, handing out message ids from `id`.
    pub fn first_message(mut self, id: u64) -> HistoryBuilder {
        self.next_message = id;
        self
    }

    /// The setup so far.
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// Replaces the setup (a source that declares it before its first event).
    pub fn set_setup(&mut self, setup: Setup) {
        self.setup = setup;
    }

    /// How many entries (and reserved places) there are.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether nothing has been observed yet.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Moves the clock to `at` (never backwards: an earlier time stays the current one), with
    /// the wall-clock time the observer gives, for the entries that follow.
    pub fn at(&mut self, at: Tick, wall_ns: Option<u64>) {
        self.now = self.now.max(at);
        self.wall = wall_ns;
    }

    /// The current time.
    pub fn now(&self) -> Tick {
        self.now
    }

    /// A message id: `given` when the observer names one (later ids follow it), else the next.
    pub fn message(&mut self, given: Option<u64>) -> u64 {
        match given {
            Some(id) => {
                self.next_message = self.next_message.max(id.saturating_add(1));
                id
            }
            None => {
                let id = self.next_message;
                self.next_message = self.next_message.saturating_add(1);
                id
            }
        }
    }

    /// Reserves the place of an event known only later, at the current moment; returns it for
    /// [`fill`](Self::fill). A place never filled adds nothing to the history.
    pub fn reserve(&mut self) -> usize {
        self.slots.push(None);
        self.walls.push(self.wall);
        self.slots.len() - 1
    }

    /// Puts an event in a place reserved earlier, at time `at`.
    pub fn fill(&mut self, slot: usize, at: Tick, event: Event) {
        self.register(&event);
        self.observe(&event);
        let wall_ns = self.walls.get(slot).copied().flatten();
        if let Some(place) = self.slots.get_mut(slot) {
            *place = Some(Entry { at, wall_ns, by: None, event });
        }
    }

    /// Gives up a reserved place (or removes the entry there).
    pub fn clear(&mut self, slot: usize) {
        if let Some(place) = self.slots.get_mut(slot) {
            *place = None;
        }
    }

    /// The entry at `slot`, if it is filled.
    pub fn entry(&self, slot: usize) -> Option<&Entry> {
        self.slots.get(slot).and_then(Option::as_ref)
    }

    /// The entry at `slot` to change a field learnt later (a write's arrival), if it is filled.
    pub fn entry_mut(&mut self, slot: usize) -> Option<&mut Entry> {
        self.slots.get_mut(slot).and_then(Option::as_mut)
    }

    /// Appends an event at the current time.
    pub fn push(&mut self, event: Event) {
        let slot = self.reserve();
        self.fill(slot, self.now, event);
    }

    /// The worker's lease on `resource`, or its first lease, as it believes.
    pub fn held(&self, worker: &str, resource: Option<&str>) -> Option<(ResourceId, Generation)> {
        let held = self.held.get(worker)?;
        match resource {
            Some(r) => held.get_key_value(r).map(|(r, g)| (r.clone(), *g)),
            None => first(Some(held)),
        }
    }

    /// The lease the authority honours on `resource`: holder, generation and end.
    pub fn live(&self, resource: &str) -> Option<(&str, Generation, Tick)> {
        self.live.get(resource).map(|(w, g, t)| (w.as_str(), *g, *t))
    }

    /// The authority's newest generation for `resource`.
    pub fn issued(&self, resource: &str) -> Option<Generation> {
        self.issued.get(resource).copied()
    }

    /// The token a request under `generation` carries: the worker's lease when the generation
    /// is the one it was granted, otherwise made up.
    pub fn token(&self, worker: &str, resource: &str, generation: Generation) -> TokenKind {
        match self.held(worker, Some(resource)) {
            Some((_, g)) if g == generation => TokenKind::Lease,
            // An observer that saw no grant for the resource cannot say where a token came
            // from: it is taken as the authority's, not as made up.
            _ if !self.issued.contains_key(resource) => TokenKind::Lease,
            _ => TokenKind::Forged,
        }
    }

    /// What the store's `data` holds for `resource`, from the writes seen answered.
    pub fn stored(&self, store: &str, data: &str, resource: &str) -> Stored {
        let key = (store.to_string(), data.to_string(), resource.to_string());
        self.cells.get(&key).cloned().unwrap_or_default()
    }

    /// The data a path writes, as the setup says, registering the path when it is new.
    pub fn data(&mut self, store: &str, path: &str) -> String {
        self.path(store, path, None, None);
        self.setup.store(store).map_or_else(|| path.to_string(), |s| s.data(path).to_string())
    }

    /// How a path is protected, as the setup says (fenced for a path it does not list).
    pub fn enforcement(&self, store: &str, path: &str) -> Enforcement {
        self.setup
            .store(store)
            .and_then(|s| s.paths.iter().find(|p| p.name == path))
            .map_or(Enforcement::Fenced, |p| p.enforcement)
    }

    /// The authority granted `worker` a lease and the grant reached it at once: the grant and
    /// its receipt, now. Returns the grant's message.
    pub fn granted(
        &mut self,
        worker: &WorkerId,
        resource: &ResourceId,
        generation: Generation,
        valid_until: Tick,
    ) -> u64 {
        let message = self.message(None);
        let (worker, resource) = (worker.clone(), resource.clone());
        self.push(Event::LeaseGranted {
            worker: worker.clone(),
            resource: resource.clone(),
            generation,
            valid_until,
            arrives_at: self.now,
            message,
        });
        self.push(Event::GrantReceived { worker, resource, generation, message });
        message
    }

    /// The authority told `worker` someone else holds `resource`; the holder and the end of its
    /// lease are the live lease's when not given.
    pub fn busy(
        &mut self,
        worker: &WorkerId,
        resource: &ResourceId,
        holder: Option<WorkerId>,
        valid_until: Option<Tick>,
    ) {
        let live = self.live.get(resource).cloned();
        self.push(Event::LeaseBusy {
            worker: worker.clone(),
            holder: holder
                .or(live.as_ref().map(|l| l.0.clone()))
                .unwrap_or_else(|| WorkerId::fixed("unknown")),
            valid_until: valid_until.or(live.map(|l| l.2)).unwrap_or(self.now),
            resource: resource.clone(),
        });
    }

    /// Every lease that has run out by now ends, in resource order.
    pub fn expire_due(&mut self) {
        let now = self.now;
        let due: Vec<(WorkerId, ResourceId, Generation)> = self
            .live
            .iter()
            .filter(|(_, (_, _, until))| *until <= now)
            .map(|(r, (w, g, _))| (w.clone(), r.clone(), *g))
            .collect();
        for (worker, resource, generation) in due {
            self.push(Event::LeaseExpired { worker, resource, generation });
        }
    }

    /// A worker froze. What it believes is its first lease when not given; a pause of unknown
    /// length lasts until it resumes.
    pub fn paused(&mut self, worker: &WorkerId, f: Beliefs) {
        let believes = f.believes.unwrap_or_else(|| first(self.held.get(worker)).map(|h| h.1));
        let event = Event::Paused {
            worker: worker.clone(),
            ticks: f.ticks.unwrap_or(0),
            reason: f.reason.unwrap_or_default(),
            believes,
        };
        self.push(event);
        if f.ticks.is_none() {
            self.pauses.insert(worker.clone(), self.slots.len() - 1);
        }
    }

    /// A worker woke up, with the beliefs it had; whether it still owns its lease and the
    /// newest generation are the authority's as seen so far, when not given.
    pub fn resumed(&mut self, worker: &WorkerId, f: Beliefs) {
        let now = self.now;
        if let Some(slot) = self.pauses.remove(worker) {
            if let Some(Some(Entry { at, event: Event::Paused { ticks, .. }, .. })) =
                self.slots.get_mut(slot)
            {
                *ticks = now.since(*at);
            }
        }
        let held = first(self.held.get(worker));
        let believes = f.believes.unwrap_or(held.as_ref().map(|h| h.1));
        let resource = f.resource.unwrap_or(held.as_ref().map(|h| h.0.clone()));
        let current = f
            .current
            .unwrap_or_else(|| resource.as_ref().and_then(|r| self.issued.get(r).copied()));
        let still_owner = f.still_owner.unwrap_or_else(|| {
            resource.as_ref().and_then(|r| self.live.get(r)).is_some_and(|(holder, g, until)| {
                holder == worker && Some(*g) == believes && now < *until
            })
        });
        self.push(Event::Resumed {
            worker: worker.clone(),
            believes,
            resource,
            still_owner,
            current,
        });
    }

    /// A write left `worker`, now; returns its message.
    pub fn write_sent(&mut self, worker: &WorkerId, sent: Sent) -> u64 {
        let slot = self.reserve();
        self.fill_sent(slot, worker, sent)
    }

    /// A write left `worker` at the moment of a reserved place; returns its message.
    pub fn fill_sent(&mut self, slot: usize, worker: &WorkerId, sent: Sent) -> u64 {
        let message = self.message(sent.message);
        let path = sent.path.unwrap_or_else(|| PRIMARY.into());
        self.path(&sent.store, &path, None, None);
        let resource = sent.request.resource.as_str();
        let token =
            sent.token.unwrap_or_else(|| self.token(worker, resource, sent.request.generation));
        let event = Event::WriteSent {
            worker: worker.clone(),
            message,
            store: sent.store,
            path,
            request: sent.request,
            token,
            arrives_at: sent.arrives_at.unwrap_or(self.now),
            retry: sent.retry.unwrap_or(false),
        };
        self.fill(slot, self.now, event);
        message
    }

    /// The write `message` of `worker`, as it was sent: store, path and request.
    fn sent(&self, worker: &str, message: u64) -> Option<(String, String, WriteRequest)> {
        self.slots.iter().rev().flatten().find_map(|e| match &e.event {
            Event::WriteSent { worker: w, message: m, store, path, request, .. }
                if w == worker && *m == message =>
            {
                Some((store.clone(), path.clone(), request.clone()))
            }
            _ => None,
        })
    }

    /// The store answered the write `message` of `worker`, sent earlier: its arrival, now.
    /// Returns false, adding nothing, when no such write was sent.
    pub fn write_answered(&mut self, worker: &WorkerId, message: u64, answer: WriteAnswer) -> bool {
        let Some((store, path, request)) = self.sent(worker, message) else { return false };
        self.arrived(worker, message, &store, &path, request, answer);
        true
    }

    /// `worker` never learned what became of its write `message` (a broken connection, a
    /// timeout), now. Returns false, adding nothing, when no such write was sent.
    pub fn write_unknown(&mut self, worker: &WorkerId, message: u64) -> bool {
        let Some((store, path, request)) = self.sent(worker, message) else { return false };
        let data = self.data(&store, &path);
        let worker = worker.clone();
        self.push(Event::WriteUnknown { worker, message, store, path, data, request });
        true
    }

    /// A write of `worker` reached `store`'s `path` and was decided, now. What the answer does
    /// not give is inferred: the data and the enforcement from the setup, the highest generation
    /// before from the writes seen answered, the highest after from the fence, the value after
    /// from the outcome.
    pub fn arrived(
        &mut self,
        worker: &WorkerId,
        message: u64,
        store: &str,
        path: &str,
        request: WriteRequest,
        answer: WriteAnswer,
    ) {
        let data = answer.data.unwrap_or_else(|| self.data(store, path));
        let generation = request.generation;
        let cell = self.stored(store, &data, request.resource.as_str());
        let before = cell.highest;
        let enforcement = answer.enforcement.unwrap_or_else(|| self.enforcement(store, path));
        let outcome = answer.outcome.unwrap_or_else(|| {
            let revision = Revision(cell.revision.saturating_add(1));
            WriteOutcome::Applied(Applied { generation, revision })
        });
        let value_after = answer.value_after.unwrap_or_else(|| {
            if outcome.is_applied() {
                Some(request.value.clone())
            } else {
                cell.value.clone()
            }
        });
        let highest_after = answer
            .highest_after
            .unwrap_or_else(|| highest_after(before, generation, &outcome, enforcement));
        self.push(Event::WriteArrived {
            worker: worker.clone(),
            message,
            store: store.to_string(),
            path: path.to_string(),
            data,
            enforcement,
            request,
            outcome,
            value_after,
            highest_before: answer.highest_before.unwrap_or(before),
            highest_after,
            misfenced: answer.misfenced,
        });
    }

    /// The history so far, with `incomplete` saying why it stops early, if it does.
    pub fn history(&self, incomplete: Option<String>) -> History {
        let mut setup = self.setup.clone();
        setup.incomplete = incomplete;
        History { setup, entries: self.slots.iter().flatten().cloned().collect() }
    }

    /// The history, with the index of each entry's place (for an observer that keeps where each
    /// came from). Places reserved and never filled add nothing.
    pub fn finish_with_places(self) -> (History, Vec<usize>) {
        let (entries, places) = self
            .slots
            .into_iter()
            .enumerate()
            .filter_map(|(place, entry)| entry.map(|entry| (entry, place)))
            .unzip();
        (History { setup: self.setup, entries }, places)
    }

    /// The history.
    pub fn finish(self) -> History {
        self.finish_with_places().0
    }

    /// Adds a store and a path to the setup when they are new: the primary path writes the data
    /// `primary`, any other path data of its own name unless `data` says; both are fenced unless
    /// `enforcement` says otherwise. A new store gets its primary path first.
    pub fn path(
        &mut self,
        store: &str,
        path: &str,
        data: Option<&str>,
        enforcement: Option<Enforcement>,
    ) {
        let stores = &mut self.setup.stores;
        let s = match stores.iter().position(|s| s.name == store) {
            Some(s) => s,
            None => {
                stores.push(StoreSetup {
                    name: store.to_string(),
                    critical: true,
                    paths: vec![PathSetup {
                        name: PRIMARY.into(),
                        data: PRIMARY.into(),
                        enforcement: if path == PRIMARY {
                            enforcement.unwrap_or(Enforcement::Fenced)
                        } else {
                            Enforcement::Fenced
                        },
                    }],
                });
                stores.len() - 1
            }
        };
        let paths = &mut stores[s].paths;
        if !paths.iter().any(|p| p.name == path) {
            let data = data.map_or_else(|| path.to_string(), str::to_string);
            paths.push(PathSetup {
                name: path.to_string(),
                data,
                enforcement: enforcement.unwrap_or(Enforcement::Fenced),
            });
        }
    }

    fn worker(&mut self, name: &str) {
        if !self.setup.workers.iter().any(|w| w == name) {
            self.setup.workers.push(name.to_string());
        }
    }

    fn resource(&mut self, name: &str) {
        if !self.setup.resources.iter().any(|r| r == name) {
            self.setup.resources.push(name.to_string());
        }
    }

    /// Adds every name the event uses that the setup must list (the same names a history file's
    /// reader checks).
    fn register(&mut self, event: &Event) {
        match event {
            Event::LeaseGranted { worker, resource, .. }
            | Event::GrantReceived { worker, resource, .. }
            | Event::LeaseBusy { worker, resource, .. }
            | Event::Renewed { worker, resource, .. }
            | Event::RenewFailed { worker, resource, .. }
            | Event::Released { worker, resource, .. }
            | Event::LeaseChecked { worker, resource, .. }
            | Event::EffectSent { worker, resource, .. } => {
                self.worker(worker);
                self.resource(resource);
            }
            Event::LeaseExpired { resource, .. } => self.resource(resource),
            Event::ReadValue { worker, store, path, resource, .. } => {
                self.worker(worker);
                self.path(store, path, None, None);
                self.resource(resource);
            }
            Event::WriteSent { worker, store, path, request, .. } => {
                self.worker(worker);
                self.path(store, path, None, None);
                self.resource(&request.resource);
            }
            Event::WriteArrived { worker, store, path, data, request, enforcement, .. } => {
                self.worker(worker);
                self.path(store, path, Some(data), Some(*enforcement));
                self.resource(&request.resource);
            }
            Event::CheckPassed { worker, store, path, data, request, .. }
            | Event::WriteCommitted { worker, store, path, data, request, .. }
            | Event::WriteUnknown { worker, store, path, data, request, .. } => {
                self.worker(worker);
                self.path(store, path, Some(data), None);
                self.resource(&request.resource);
            }
            Event::EffectArrived { worker, partner, enforcement, .. } => {
                self.worker(worker);
                if self.setup.gateway.is_none() {
                    self.setup.gateway =
                        Some(GatewaySetup { partner: partner.clone(), enforcement: *enforcement });
                }
            }
            Event::EffectUnknown { worker, partner, .. } => {
                self.worker(worker);
                if self.setup.gateway.is_none() {
                    self.setup.gateway = Some(GatewaySetup {
                        partner: partner.clone(),
                        enforcement: Enforcement::Fenced,
                    });
                }
            }
            Event::Paused { worker, .. }
            | Event::PauseIgnored { worker, .. }
            | Event::PauseSkipped { worker, .. }
            | Event::Resumed { worker, .. }
            | Event::Computing { worker, .. }
            | Event::MessagesDelayed { worker, .. }
            | Event::MessageLost { worker, .. }
            | Event::ClockSkewed { worker, .. }
            | Event::WorkerFinished { worker } => self.worker(worker),
            Event::StoreRestarted { store, .. } => {
                if self.setup.store(store).is_none() {
                    self.path(store, PRIMARY, None, None);
                }
            }
            Event::WorkerStopped { .. }
            | Event::AuthorityRestarted { .. }
            | Event::LossIgnored { .. } => {}
        }
    }

    /// Keeps what later inferences need: leases issued and held, each store's data.
    fn observe(&mut self, event: &Event) {
        match event {
            Event::LeaseGranted { worker, resource, generation, valid_until, .. } => {
                self.issued.insert(resource.clone(), *generation);
                self.live.insert(resource.clone(), (worker.clone(), *generation, *valid_until));
            }
            Event::GrantReceived { worker, resource, generation, .. } => {
                self.held.entry(worker.clone()).or_default().insert(resource.clone(), *generation);
            }
            Event::Renewed { worker, resource, generation, valid_until } => {
                self.live.insert(resource.clone(), (worker.clone(), *generation, *valid_until));
            }
            Event::RenewFailed { worker, resource, .. } => {
                if let Some(h) = self.held.get_mut(worker) {
                    h.remove(resource);
                }
            }
            Event::Released { worker, resource, generation } => {
                if let Some(h) = self.held.get_mut(worker) {
                    h.remove(resource);
                }
                if self.live.get(resource).is_some_and(|l| l.0 == *worker && l.1 == *generation) {
                    self.live.remove(resource);
                }
            }
            Event::LeaseExpired { resource, .. } => {
                self.live.remove(resource);
            }
            Event::AuthorityRestarted { counter_kept: false } => self.live.clear(),
            Event::StoreRestarted { store, highest_kept: false } => {
                for ((s, _, _), cell) in self.cells.iter_mut() {
                    if s == store {
                        cell.highest = None;
                    }
                }
            }
            Event::WriteArrived {
                store,
                data,
                request,
                outcome,
                value_after,
                highest_after,
                ..
            } => {
                let cell = self
                    .cells
                    .entry((store.clone(), data.clone(), request.resource.to_string()))
                    .or_default();
                cell.value = value_after.clone();
                cell.highest = *highest_after;
                if let WriteOutcome::Applied(a) = outcome {
                    cell.revision = a.revision.0;
                }
            }
            Event::WriteCommitted { store, data, request, outcome, .. } => {
                let cell = self
                    .cells
                    .entry((store.clone(), data.clone(), request.resource.to_string()))
                    .or_default();
                // The second half of a check-then-write writes without looking, as an
                // unchecked write does.
                cell.value = Some(request.value.clone());
                cell.highest = unchecked(request.generation).highest;
                if let WriteOutcome::Applied(a) = outcome {
                    cell.revision = a.revision.0;
                }
            }
            _ => {}
        }
    }
}

/// The fence after an unchecked write (an unfenced or check-then-write path): it records the
/// generation it was given, even when that moves it backwards, as
/// [`FencedRegister::write_unchecked`](crate::fence::register::FencedRegister::write_unchecked) does.
fn unchecked(generation: Generation) -> Fence {
    Fence { highest: Some(generation), acted: true }
}

/// The store's highest generation after it decided on a request under `generation`, when the
/// observer does not say: an unchecked write records its generation; a request that passed the
/// fence ([`WriteOutcome::passed_fence`]) raises it ([`Fence::pass`]); one refused by the fence
/// changes nothing.
fn highest_after(
    before: Option<Generation>,
    generation: Generation,
    outcome: &WriteOutcome,
    enforcement: Enforcement,
) -> Option<Generation> {
    match outcome {
        WriteOutcome::Applied(_) if !enforcement.is_fenced() => unchecked(generation).highest,
        outcome if outcome.passed_fence() => {
            let mut fence = Fence { highest: before, acted: false };
            fence.pass(generation);
            fence.highest
        }
        _ => before,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fence::register::WriteRejection;
    use crate::ids::OperationId;

    fn g(n: u64) -> Generation {
        Generation::new(n).unwrap()
    }

    fn w(name: &str) -> WorkerId {
        WorkerId::new(name).unwrap()
    }

    fn r(name: &str) -> ResourceId {
        ResourceId::new(name).unwrap()
    }

    fn write(worker: &str, n: u64) -> WriteRequest {
        let op = OperationId::new(format!("{worker}-{n}")).unwrap();
        WriteRequest::new(ResourceId::new("ledger").unwrap(), g(n), op, None, worker)
    }

    /// The fields an observer leaves out are inferred from what it said before: the token, the
    /// fence's raise, the value, what a paused worker believes and whether it still owns its
    /// lease.
    #[test]
    fn what_an_observer_leaves_out_is_inferred() {
        let mut b = HistoryBuilder::new(Setup::default());
        b.granted(&w("A"), &r("ledger"), g(1), Tick(10));
        b.paused(&w("A"), Beliefs::default());
        b.at(Tick(10), Some(7));
        b.expire_due();
        b.granted(&w("B"), &r("ledger"), g(2), Tick(30));
        let sent = b.write_sent(&w("B"), Sent::new("db", write("B", 2)));
        assert!(b.write_answered(&w("B"), sent, WriteAnswer::applied()));
        b.at(Tick(12), None);
        b.resumed(&w("A"), Beliefs::default());
        let late = b.write_sent(&w("A"), Sent::new("db", write("A", 1)));
        b.write_answered(
            &w("A"),
            late,
            WriteAnswer::new(WriteOutcome::Applied(Applied {
                generation: g(1),
                revision: Revision(2),
            })),
        );
        assert!(!b.write_answered(&w("A"), 99, WriteAnswer::applied()));
        let history = b.finish();
        assert!(history.validate().is_ok(), "{:?}", history.validate());
        assert_eq!(history.setup.workers, ["A", "B"]);
        let events: Vec<&Event> = history.entries.iter().map(|e| &e.event).collect();
        assert!(
            matches!(events[2], Event::Paused { ticks: 12, believes: Some(b), .. } if *b == g(1))
        );
        assert!(matches!(events[3], Event::LeaseExpired { worker, .. } if worker == "A"));
        assert_eq!(history.entries[3].wall_ns, Some(7));
        assert!(matches!(
            events[7],
            Event::WriteArrived { highest_before: None, highest_after: Some(h), value_after: Some(v), .. }
                if *h == g(2) && v == "B"
        ));
        assert!(matches!(
            events[8],
            Event::Resumed { still_owner: false, current: Some(c), .. } if *c == g(2)
        ));
        assert!(matches!(events[9], Event::WriteSent { token: TokenKind::Lease, .. }));
        // The fenced store applied a stale write (the observer says so): the fence records the
        // higher generation.
        assert!(matches!(
            events[10],
            Event::WriteArrived { highest_before: Some(b), highest_after: Some(a), .. }
                if *b == g(2) && *a == g(2)
        ));
    }

    #[test]
    fn the_fence_rises_only_for_requests_that_passed_it() {
        let before = Some(g(2));
        let applied = WriteOutcome::Applied(Applied { generation: g(3), revision: Revision(1) });
        assert_eq!(highest_after(before, g(3), &applied, Enforcement::Fenced), Some(g(3)));
        assert_eq!(highest_after(before, g(1), &applied, Enforcement::Unfenced), Some(g(1)));
        let stale =
            WriteOutcome::Rejected(WriteRejection::Stale { presented: g(1), highest: g(2) });
        assert_eq!(highest_after(before, g(1), &stale, Enforcement::Fenced), before);
        let conflict = WriteOutcome::Rejected(WriteRejection::RevisionConflict {
            expected: Revision(1),
            actual: Revision(2),
        });
        assert_eq!(highest_after(before, g(4), &conflict, Enforcement::Fenced), Some(g(4)));
    }
}
