//! The checker: the invariants of [`InvariantKind`] as a pure streaming function over a
//! [`History`](crate::history::History).
//!
//! It keeps ghost state that the system under test cannot see (lease epochs that count every
//! grant and never reset, the newest lease whose request reached each boundary) and derives it
//! from the events alone, so it judges any history the same way: a simulated run, an explorer
//! branch or one recorded elsewhere. Feed it every entry in order ([`Checker::feed`]), then call
//! [`Checker::finish`] once the history has ended.
//!
//! ```
//! use fencelab_core::{stories::library, Checker, Engine, History, InvariantKind};
//!
//! // A history written by one run (or by any other tool) ...
//! let mut engine = Engine::new(library::scenario("paused-worker", Some("broken")).unwrap()).unwrap();
//! engine.run().unwrap();
//! let history = History::from_jsonl(&engine.history().to_jsonl()).unwrap();
//!
//! // ... is judged from its events alone.
//! let mut checker = Checker::new(history.setup.clone());
//! let mut found = Vec::new();
//! for (step, entry) in history.entries.iter().enumerate() {
//!     found.extend(checker.feed(step, entry).violations);
//! }
//! found.extend(checker.finish(history.entries.len() - 1));
//! assert_eq!(found[0].invariant, InvariantKind::StaleWriteAccepted);
//! ```

use crate::check::invariant::{InvariantKind, Place, Violation};
use crate::clock::Tick;
use crate::fence::gateway::EffectRequest;
use crate::fence::generation::Generation;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::{WriteRejection, WriteRequest};
use crate::history::event::{Event, TokenKind};
use crate::history::{place_name, Entry, Setup};
use crate::maps::StringSet;
use litemap::LiteMap;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;

/// Names to indices. The hasher has fixed keys, so the core draws no random numbers.
type Index = HashMap<String, usize, BuildHasherDefault<DefaultHasher>>;
use std::sync::Arc;

/// What the checker concluded from one entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Judgement {
    /// The invariants the entry broke.
    pub violations: Vec<Violation>,
    /// For a write the fence refused as stale although its writer held the newest lease to
    /// have reached that data: where the generation came from that made the store refuse it.
    pub misfenced: Option<TokenKind>,
}

/// The invariant checker over a history. It is a plain value: clone it to branch, compare or
/// hash it to tell two checking states apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checker {
    names: Arc<Names>,
    state: CheckState,
}

impl std::hash::Hash for Checker {
    /// Hashes what the checker has learnt; the names are the same for every state of a run.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.state.hash(h);
    }
}

/// The setup's names by index, so that judging an event looks names up without allocating and
/// the ghost state is kept in vectors and small maps of indices.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Names {
    setup: Setup,
    workers: Index,
    resources: Index,
    stores: Index,
    /// Per store: its data by name.
    data: Vec<Index>,
    /// Per store: the data names, by index.
    data_names: Vec<Vec<String>>,
}

impl Names {
    fn new(setup: Setup) -> Names {
        let index = |names: &mut dyn Iterator<Item = &String>| {
            let mut map = Index::default();
            for name in names {
                let next = map.len();
                map.entry(name.clone()).or_insert(next);
            }
            map
        };
        let workers = index(&mut setup.workers.iter());
        let resources = index(&mut setup.resources.iter());
        let stores = index(&mut setup.stores.iter().map(|s| &s.name));
        let data_names: Vec<Vec<String>> = setup
            .stores
            .iter()
            .map(|s| {
                let mut names: Vec<String> = Vec::new();
                for p in &s.paths {
                    if !names.contains(&p.data) {
                        names.push(p.data.clone());
                    }
                }
                names
            })
            .collect();
        let data = data_names.iter().map(|names| index(&mut names.iter())).collect();
        Names { setup, workers, resources, stores, data, data_names }
    }

    fn worker_name(&self, w: usize) -> &str {
        self.setup.workers.get(w).map_or("", String::as_str)
    }
}

/// What a request carried that only the checker knows: the true order of the lease behind it
/// (its grant count, 0 for none), whether that lease was valid when it was sent, its place in
/// its sender's order of requests, and where its token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Sent {
    pub epoch: u64,
    pub valid: bool,
    pub seq: u64,
    pub token: TokenKind,
}

/// The checker's ghost state, derived from the events seen so far. Workers, resources, stores
/// and data are indices into the setup's lists.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct CheckState {
    /// Grants so far, per resource.
    pub epochs: Vec<u64>,
    /// The highest generation ever issued, per resource, across restarts.
    pub max_issued: Vec<Option<Generation>>,
    /// The lease the authority currently honours, per resource: (epoch, valid until).
    pub live: Vec<Option<(u64, Tick)>>,
    /// Grants on their way, by message: their epochs.
    pub grants: BTreeMap<u64, u64>,
    /// The lease each worker believes it holds, per (worker, resource): its epoch. A B-tree,
    /// as it grows with the workers (thousands in a large run).
    pub held: BTreeMap<(usize, usize), u64>,
    /// Per worker: the requests it has sent. Shared between copies until changed, like the
    /// simulator's workers, so a snapshot or a search state copies only what a step touched.
    pub senders: Vec<Arc<Sender>>,
    /// Requests on their way or waiting to commit, by message.
    pub messages: BTreeMap<u64, Sent>,
    /// Per (store, data, resource).
    pub cells: LiteMap<(usize, usize, usize), Arc<CellCheck>>,
    /// Operations the partner received, per workflow.
    pub partner_ops: BTreeMap<String, StringSet>,
    /// The newest lease epoch whose effect reached the gateway, per workflow, whatever the
    /// gateway then did with it.
    pub effect_presented: BTreeMap<String, u64>,
    /// Kinds broken so far: the explorer tells states apart by them.
    pub broken: [bool; InvariantKind::ALL.len()],
}

/// What a worker has sent: how many requests, and each operation's lease epoch and order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct Sender {
    pub count: u64,
    pub ops: BTreeMap<String, (u64, u64)>,
}

/// What the checker knows about one piece of data in one store. Writers are worker indices.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct CellCheck {
    /// The newest lease epoch whose write reached this data's boundary, and whose it was,
    /// whatever the boundary then did with it (applied, refused, replayed, waiting to commit).
    pub max_presented: Option<(u64, usize)>,
    /// The epoch and writer of the last applied write.
    pub last: Option<(u64, usize)>,
    /// Where the store's highest generation came from: the token of the request that last
    /// raised it.
    pub highest_token: Option<TokenKind>,
    /// Operations applied here.
    pub applied_ops: StringSet,
    /// The newest lease whose write applied, or was fenced out although no newer lease had
    /// reached this data.
    pub max_attempted: Option<(u64, usize)>,
    /// Per writer, the (epoch, order) of its newest applied write.
    pub last_seq: LiteMap<usize, (u64, u64)>,
}

impl Checker {
    /// A checker for histories of `setup`.
    pub fn new(setup: Setup) -> Checker {
        let names = Names::new(setup);
        let (r, w) = (names.resources.len(), names.workers.len());
        let state = CheckState {
            epochs: vec![0; r],
            max_issued: vec![None; r],
            live: vec![None; r],
            senders: vec![Arc::default(); w],
            ..CheckState::default()
        };
        Checker { names: Arc::new(names), state }
    }

    /// Judges a whole history: every entry in order, then its end.
    pub fn judge(history: &crate::history::History) -> Vec<Violation> {
        let mut checker = Checker::new(history.setup.clone());
        let mut found = Vec::new();
        for (step, entry) in history.entries.iter().enumerate() {
            found.extend(checker.feed(step, entry).violations);
        }
        if let Some(last) = history.entries.len().checked_sub(1) {
            found.extend(checker.finish(last));
        }
        found
    }

    /// The setup it checks against.
    pub fn setup(&self) -> &Setup {
        &self.names.setup
    }

    pub(crate) fn state(&self) -> &CheckState {
        &self.state
    }

    /// Judges entry `step` of the history (entries must come in order, from 0).
    pub fn feed(&mut self, step: usize, entry: &Entry) -> Judgement {
        let mut judge = Judge { checker: self, step, now: entry.at, out: Judgement::default() };
        judge.event(&entry.event);
        let out = judge.out;
        for v in &out.violations {
            self.state.broken[v.invariant as usize] = true;
        }
        out
    }

    /// Judges the end of the history, `last` being the index of its last entry: the final value
    /// of every critical store's data.
    pub fn finish(&mut self, last: usize) -> Vec<Violation> {
        let names = &self.names;
        let mut found = Vec::new();
        // By store in the setup's order, then by data and resource name.
        let mut cells: Vec<_> = self.state.cells.iter().collect();
        let data = |s: usize, d: usize| names.data_names[s][d].as_str();
        let resource = |r: usize| names.setup.resources[r].as_str();
        cells.sort_by_key(|((s, d, r), _)| (*s, data(*s, *d), resource(*r)));
        for ((s, d, r), cell) in cells {
            let store = &names.setup.stores[*s];
            if !store.critical {
                continue;
            }
            let (Some((last_epoch, writer)), Some((latest, owner))) =
                (cell.last, cell.max_attempted)
            else {
                continue;
            };
            if last_epoch >= latest {
                continue;
            }
            let (data, resource) = (data(*s, *d), resource(*r));
            let (writer, owner) = (names.worker_name(writer), names.worker_name(owner));
            let text = place_text(&store.name, data, resource);
            let detail = if last_epoch == 0 {
                format!("{text} ends with {writer}'s value, which no lease backs, though a write under {owner}'s lease reached it too")
            } else {
                format!("{text} ends with {writer}'s value, though a write under {owner}'s newer lease reached it too")
            };
            found.push(Violation {
                invariant: InvariantKind::FinalValueNotFromLatestOwner,
                step: last,
                detail,
                place: Some(store_place(&store.name, data, data, resource)),
                possible: false,
                witness: Vec::new(),
            });
        }
        for v in &found {
            self.state.broken[v.invariant as usize] = true;
        }
        found
    }

    /// The index of worker `name`, adding it when the setup does not list it (a history from
    /// elsewhere may name more workers than its setup).
    fn worker(&mut self, name: &str) -> usize {
        if let Some(w) = self.names.workers.get(name) {
            return *w;
        }
        let names = Arc::make_mut(&mut self.names);
        names.setup.workers.push(name.to_string());
        let w = names.workers.len();
        names.workers.insert(name.to_string(), w);
        self.state.senders.push(Arc::default());
        w
    }

    /// The index of resource `name`, adding it when the setup does not list it.
    fn resource(&mut self, name: &str) -> usize {
        if let Some(r) = self.names.resources.get(name) {
            return *r;
        }
        let names = Arc::make_mut(&mut self.names);
        names.setup.resources.push(name.to_string());
        let r = names.resources.len();
        names.resources.insert(name.to_string(), r);
        self.state.epochs.push(0);
        self.state.max_issued.push(None);
        self.state.live.push(None);
        r
    }

    /// The indices of a store and of the data it holds, adding either when the setup does not
    /// list it (as a critical store).
    fn data(&mut self, store: &str, data: &str) -> (usize, usize) {
        if let Some(&s) = self.names.stores.get(store) {
            if let Some(&d) = self.names.data[s].get(data) {
                return (s, d);
            }
        }
        let names = Arc::make_mut(&mut self.names);
        let s = match names.stores.get(store) {
            Some(&s) => s,
            None => {
                let s = names.stores.len();
                names.stores.insert(store.to_string(), s);
                names.setup.stores.push(crate::history::StoreSetup {
                    name: store.to_string(),
                    critical: true,
                    paths: Vec::new(),
                });
                names.data.push(Index::default());
                names.data_names.push(Vec::new());
                s
            }
        };
        let d = names.data_names[s].len();
        names.data[s].insert(data.to_string(), d);
        names.data_names[s].push(data.to_string());
        (s, d)
    }
}

/// One entry being judged.
struct Judge<'a> {
    checker: &'a mut Checker,
    step: usize,
    now: Tick,
    out: Judgement,
}

impl Judge<'_> {
    fn state(&mut self) -> &mut CheckState {
        &mut self.checker.state
    }

    fn violation(&mut self, invariant: InvariantKind, detail: String, place: Place) {
        let step = self.step;
        let (possible, witness) = (false, Vec::new());
        self.out.violations.push(Violation {
            invariant,
            step,
            detail,
            place: Some(place),
            possible,
            witness,
        });
    }

    fn event(&mut self, event: &Event) {
        match event {
            Event::LeaseGranted { resource, generation, valid_until, message, .. } => {
                self.granted(resource, *generation, *valid_until, *message)
            }
            Event::GrantReceived { worker, resource, message, .. } => {
                let key = (self.checker.worker(worker), self.checker.resource(resource));
                let state = self.state();
                if let Some(epoch) = state.grants.remove(message) {
                    state.held.insert(key, epoch);
                }
            }
            Event::Renewed { worker, resource, valid_until, .. } => {
                let key = (self.checker.worker(worker), self.checker.resource(resource));
                let state = self.state();
                let epoch = state.held.get(&key).copied().unwrap_or(0);
                state.live[key.1] = Some((epoch, *valid_until));
            }
            Event::RenewFailed { worker, resource, .. } => {
                let key = (self.checker.worker(worker), self.checker.resource(resource));
                self.state().held.remove(&key);
            }
            Event::Released { worker, resource, .. } => {
                let key = (self.checker.worker(worker), self.checker.resource(resource));
                let state = self.state();
                let held = state.held.remove(&key);
                // The authority honours the release only from the lease it currently holds.
                if held.is_some() && state.live[key.1].map(|l| l.0) == held {
                    state.live[key.1] = None;
                }
            }
            Event::LeaseExpired { resource, .. } => {
                let r = self.checker.resource(resource);
                self.state().live[r] = None;
            }
            Event::AuthorityRestarted { counter_kept: false } => {
                self.state().live.iter_mut().for_each(|l| *l = None);
            }
            Event::WriteSent { worker, message, request, token, retry, .. } => {
                let (resource, operation) = (request.resource.as_str(), request.operation.as_str());
                self.sent(worker, *message, resource, operation, *token, *retry)
            }
            Event::EffectSent { worker, message, request, token, retry, resource, .. } => {
                self.sent(worker, *message, resource, request.operation.as_str(), *token, *retry)
            }
            Event::CheckPassed { worker, message, store, data, request, .. } => {
                if let Some(sent) = self.state().messages.get(message).copied() {
                    let cell = self.cell_key(store, data, request.resource.as_str());
                    let w = self.checker.worker(worker);
                    self.presented(cell, sent.epoch, w);
                }
            }
            Event::WriteArrived {
                worker,
                message,
                store,
                path,
                data,
                request,
                outcome,
                highest_before,
                highest_after,
                ..
            } => {
                let Some(sent) = self.state().messages.remove(message) else { return };
                let write = Write { worker, store, path, data, request, outcome, sent };
                self.settle(write, *highest_before, *highest_after);
            }
            Event::WriteCommitted {
                worker,
                message,
                store,
                path,
                data,
                request,
                outcome,
                highest_before,
                ..
            } => {
                let Some(sent) = self.state().messages.remove(message) else { return };
                let write = Write { worker, store, path, data, request, outcome, sent };
                // A committed write lands without looking: the highest generation becomes its own.
                self.settle(write, *highest_before, Some(request.generation));
            }
            Event::EffectArrived { worker, message, request, dropped, .. } => {
                let Some(sent) = self.state().messages.remove(message) else { return };
                if dropped.is_none() {
                    self.delivered(worker, request, sent);
                }
                let state = self.state();
                match state.effect_presented.get_mut(request.workflow.as_str()) {
                    Some(newest) => *newest = (*newest).max(sent.epoch),
                    None => {
                        state.effect_presented.insert(request.workflow.to_string(), sent.epoch);
                    }
                }
            }
            _ => {}
        }
    }

    fn granted(&mut self, resource: &str, generation: Generation, until: Tick, message: u64) {
        let r = self.checker.resource(resource);
        let state = self.state();
        state.epochs[r] += 1;
        let epoch = state.epochs[r];
        let previous = state.max_issued[r];
        state.max_issued[r] = previous.max(Some(generation));
        state.live[r] = Some((epoch, until));
        state.grants.insert(message, epoch);
        if let Some(prev) = previous.filter(|p| generation <= *p) {
            self.violation(
                InvariantKind::GenerationReissued,
                format!(
                    "the authority issued generation {generation} for {resource} after it had already issued {prev}"
                ),
                Place::Authority,
            );
        }
    }

    /// A worker put a request on the network. A retry is the same request sent again: it keeps
    /// the first send's lease and order, but whether that lease is valid is judged now.
    fn sent(
        &mut self,
        worker: &str,
        message: u64,
        resource: &str,
        operation: &str,
        token: TokenKind,
        retry: bool,
    ) {
        let now = self.now;
        let (w, r) = (self.checker.worker(worker), self.checker.resource(resource));
        let state = self.state();
        let held = state.held.get(&(w, r)).copied();
        let sender = Arc::make_mut(&mut state.senders[w]);
        let (epoch, seq) = match sender.ops.get(operation) {
            Some(first) if retry => *first,
            _ => {
                let fresh = (held.unwrap_or(0), sender.count);
                sender.count += 1;
                sender.ops.insert(operation.to_string(), fresh);
                fresh
            }
        };
        let valid = (retry || held.is_some())
            && state.live[r].is_some_and(|(e, until)| e == epoch && now < until);
        state.messages.insert(message, Sent { epoch, valid, seq, token });
    }

    fn cell_key(&mut self, store: &str, data: &str, resource: &str) -> (usize, usize, usize) {
        let (s, d) = self.checker.data(store, data);
        (s, d, self.checker.resource(resource))
    }

    fn cell(&mut self, key: (usize, usize, usize)) -> &mut CellCheck {
        Arc::make_mut(self.state().cells.entry(key).or_default())
    }

    /// Records that a request under lease `epoch` reached the boundary of a cell, whatever the
    /// boundary then did with it: from now on every older lease is superseded there.
    fn presented(&mut self, key: (usize, usize, usize), epoch: u64, worker: usize) {
        let cell = self.cell(key);
        if cell.max_presented.is_none_or(|(e, _)| epoch > e) {
            cell.max_presented = Some((epoch, worker));
        }
    }

    /// A write reached its boundary and the boundary answered it.
    fn settle(&mut self, write: Write, before: Option<Generation>, after: Option<Generation>) {
        let Write { worker, store, path, data, request, outcome, sent } = write;
        let key = self.cell_key(store, data, request.resource.as_str());
        let w = self.checker.worker(worker);
        // What the cell knew before this write; copied out so the cell itself is not.
        let (max_presented, highest_token) = match self.state().cells.get(&key) {
            Some(cell) => (cell.max_presented, cell.highest_token),
            None => (None, None),
        };
        let newest = max_presented.is_none_or(|(e, _)| sent.epoch >= e);
        // Only a generation below the highest is taken for a stale owner; "already written"
        // under the strict policy is the policy at work, not a misjudged owner.
        let below = matches!(
            outcome,
            WriteOutcome::Rejected(WriteRejection::Stale { presented, highest }) if presented < highest
        );
        if sent.epoch != 0 && below && newest {
            self.out.misfenced = Some(highest_token.unwrap_or(TokenKind::Lease));
        }
        // For the final value, a write counts as the latest owner's attempt when it applied, or
        // when the fence refused it although no newer lease had reached this data: then the
        // refusal wronged its writer (a forged, clock-made or reset generation). A refusal
        // because a newer lease did show up, a replay or a revision conflict is the store
        // working as designed and says nothing about whose value should win.
        let superseded = max_presented.is_some_and(|(e, _)| sent.epoch < e);
        let fenced_out = !superseded
            && matches!(
                outcome,
                WriteOutcome::Rejected(
                    WriteRejection::Stale { .. } | WriteRejection::InvalidToken(_)
                )
            );
        if outcome.is_applied() || fenced_out {
            let cell = self.cell(key);
            if cell.max_attempted.is_none_or(|(e, _)| sent.epoch > e) {
                cell.max_attempted = Some((sent.epoch, w));
            }
        }
        let critical = self.checker.names.setup.stores[key.0].critical;
        if outcome.is_applied() && critical {
            self.accepted(Applied { who: worker, w, store, path, data, request, sent }, key);
        }
        self.presented(key, sent.epoch, w);
        if after != before && after == Some(request.generation) {
            self.cell(key).highest_token = Some(sent.token);
        }
    }

    /// A critical store applied a write.
    fn accepted(&mut self, write: Applied, key: (usize, usize, usize)) {
        let Applied { who, w, store, path, data, request, sent } = write;
        let resource = request.resource.as_str();
        let text = place_text(store, path, resource);
        let names = Arc::clone(&self.checker.names);
        let cell = self.cell(key);
        let mut found = Vec::new();
        if let Some((_, newer)) = cell.max_presented.filter(|(e, _)| sent.epoch < *e) {
            let newer = names.worker_name(newer);
            let detail = if sent.epoch == 0 {
                format!("{text} accepted {who}'s write, which no lease backs, after {newer} presented one under a lease")
            } else {
                format!("{text} accepted {who}'s write from an older lease after {newer} presented a newer one")
            };
            found.push((InvariantKind::StaleWriteAccepted, detail));
        }
        if !cell.applied_ops.insert(request.operation.to_string()) {
            found.push((
                InvariantKind::OperationAppliedTwice,
                format!("{text} applied operation {} a second time", request.operation),
            ));
        }
        if !sent.valid {
            let when = if sent.epoch == 0 {
                "sent without any lease"
            } else {
                "sent when its lease was no longer valid"
            };
            found.push((
                InvariantKind::WriteOutsideLease,
                format!("{text} accepted {who}'s write, {when}"),
            ));
        }
        if let Some((epoch, seq)) = cell.last_seq.get(&w) {
            if *epoch == sent.epoch && sent.seq < *seq {
                found.push((
                    InvariantKind::WritesReordered,
                    format!(
                        "{text} applied {who}'s earlier write \"{}\" after a later one",
                        request.value
                    ),
                ));
            }
        }
        match cell.last_seq.get_mut(&w) {
            Some(newest) => *newest = (*newest).max((sent.epoch, sent.seq)),
            None => {
                cell.last_seq.insert(w, (sent.epoch, sent.seq));
            }
        }
        cell.last = Some((sent.epoch, w));
        let place = store_place(store, path, data, resource);
        for (kind, detail) in found {
            self.violation(kind, detail, place.clone());
        }
    }

    /// The partner received an effect.
    fn delivered(&mut self, who: &str, request: &EffectRequest, sent: Sent) {
        let workflow = request.workflow.as_str();
        let state = self.state();
        let mut found = Vec::new();
        let ops = match state.partner_ops.get_mut(workflow) {
            Some(ops) => ops,
            None => state.partner_ops.entry(workflow.to_string()).or_default(),
        };
        if !ops.insert(request.operation.to_string()) {
            found.push((
                InvariantKind::EffectDeliveredTwice,
                format!(
                    "the partner received operation {} ({}) of {workflow} a second time",
                    request.operation, request.effect
                ),
            ));
        }
        if state.effect_presented.get(workflow).is_some_and(|newest| sent.epoch < *newest) {
            let from =
                if sent.epoch == 0 { "which no lease backs" } else { "from a superseded lease" };
            found.push((
                InvariantKind::EffectFromSupersededOwner,
                format!(
                    "the partner received {who}'s {}, {from}, after a newer lease's request for {workflow} reached the gateway",
                    request.effect
                ),
            ));
        }
        for (kind, detail) in found {
            self.violation(kind, detail, Place::Partner);
        }
    }
}

/// A write as its boundary answered it.
struct Write<'a> {
    worker: &'a str,
    store: &'a str,
    path: &'a str,
    data: &'a str,
    request: &'a WriteRequest,
    outcome: &'a WriteOutcome,
    sent: Sent,
}

/// A write a critical store applied, and who sent it (by name and index).
struct Applied<'a> {
    who: &'a str,
    w: usize,
    store: &'a str,
    path: &'a str,
    data: &'a str,
    request: &'a WriteRequest,
    sent: Sent,
}

fn store_place(store: &str, path: &str, data: &str, resource: &str) -> Place {
    Place::Store {
        store: store.to_string(),
        path: path.to_string(),
        data: data.to_string(),
        resource: resource.to_string(),
    }
}

/// How a store's data is named in a violation: "ledger in db", "ledger in db/cache".
fn place_text(store: &str, path: &str, resource: &str) -> String {
    format!("{resource} in {}", place_name(store, path))
}
