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
//! use fencelab_core::{stories::library, Checker, Engine, History, invariant::InvariantKind};
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

use crate::clock::{RunStep, Tick};
use crate::fence::gateway::EffectRequest;
use crate::fence::generation::Generation;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::{WriteRejection, WriteRequest};
use crate::format::model::Enforcement;
use crate::history::event::{Event, StoreWrite, TokenKind};
use crate::history::{place_name, Decisions, Entry, Setup};
use crate::invariant::{InvariantKind, Place, Violation};
use litemap::LiteMap;
use rustc_hash::FxBuildHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasher;

/// Names to indices. The hasher has no random keys, so the core draws no random numbers.
type Index = HashMap<String, usize, FxBuildHasher>;
use crate::memory::{block, buffer, freed, no_heap, shared_map, HeapSize};
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

/// Steps of the entries that taught the checker a fact, kept beside the fact so that a finding
/// can name the few entries that prove it. Two states that know the same facts are the same
/// state whatever steps taught them, so steps never take part in comparing or hashing (the
/// explorer tells states apart by what they know).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Steps {
    at: [u32; STEPS_KEPT],
    len: u8,
}

/// The most steps one fact needs: a lease's grant and receipt, a request's first send and
/// this send, its check, and what ended the lease it was sent under (up to three entries).
const STEPS_KEPT: usize = 10;

impl PartialEq for Steps {
    fn eq(&self, _: &Steps) -> bool {
        true
    }
}

impl Eq for Steps {}

impl std::hash::Hash for Steps {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl Steps {
    fn one(step: usize) -> Steps {
        Steps::default().with(step)
    }

    /// These steps and `step`.
    fn with(mut self, step: usize) -> Steps {
        let step = u32::try_from(step).unwrap_or(u32::MAX);
        if !self.iter().any(|s| s == step as usize) && usize::from(self.len) < STEPS_KEPT {
            self.at[usize::from(self.len)] = step;
            self.len += 1;
        }
        self
    }

    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.at[..usize::from(self.len)].iter().map(|s| *s as usize)
    }
}

/// Operation ids seen at one place, each with what the checker learnt there. The oldest are
/// forgotten beyond `CAP`, so a history of any length is judged in bounded memory, as a store
/// forgets its oldest replay records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recent<V, const CAP: usize> {
    pub seen: HashMap<Arc<str>, V, FxBuildHasher>,
    /// The ids in the order they were first seen, sharing the map's strings. Bookkeeping only:
    /// it does not change what the checker knows, so it does not tell states apart.
    order: Untracked<std::collections::VecDeque<Arc<str>>>,
}

impl<V: std::hash::Hash, const CAP: usize> std::hash::Hash for Recent<V, CAP> {
    /// Hashes the ids and what was learnt about them in any order, as equal sets are equal
    /// whatever order they were filled in.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let sum = self
            .seen
            .iter()
            .fold(0u64, |sum, entry| sum.wrapping_add(FxBuildHasher.hash_one(entry)));
        (self.seen.len(), sum).hash(h);
    }
}

/// How many operations the checker remembers per store data and per partner workflow: an
/// operation applied again after this many others were applied there is not reported.
pub const OPS_REMEMBERED: usize = 10_000;

/// How many of its operations the checker remembers per worker, to judge a retry by its first
/// send: a retry after this many newer operations counts as a fresh request.
pub const SENDS_REMEMBERED: usize = 256;

impl<V, const CAP: usize> Default for Recent<V, CAP> {
    fn default() -> Recent<V, CAP> {
        Recent { seen: HashMap::default(), order: Untracked::default() }
    }
}

impl<V, const CAP: usize> Recent<V, CAP> {
    /// The ids, oldest first.
    pub(crate) fn order(&self) -> &std::collections::VecDeque<Arc<str>> {
        &self.order.0
    }

    fn get(&self, op: &str) -> Option<&V> {
        self.seen.get(op)
    }

    fn get_mut(&mut self, op: &str) -> Option<&mut V> {
        self.seen.get_mut(op)
    }

    /// Remembers `op` (which must not be remembered yet), forgetting the oldest beyond the cap.
    fn insert(&mut self, op: &str, value: V) {
        let op: Arc<str> = Arc::from(op);
        self.seen.insert(Arc::clone(&op), value);
        self.order.0.push_back(op);
        if self.order.0.len() > CAP {
            if let Some(oldest) = self.order.0.pop_front() {
                self.seen.remove(&oldest);
            }
        }
    }
}

/// A value that takes no part in comparing or hashing its owner.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Untracked<T>(pub T);

impl<T> PartialEq for Untracked<T> {
    fn eq(&self, _: &Untracked<T>) -> bool {
        true
    }
}

impl<T> Eq for Untracked<T> {}

impl<T> std::hash::Hash for Untracked<T> {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// What a request carried that only the checker knows: the true order of the lease behind it
/// (its grant count, 0 for none), whether that lease was valid when it was sent, its place in
/// its sender's order of requests, and where its token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Sent {
    pub epoch: Rank,
    pub valid: bool,
    /// Valid in some order the windows allow and not in another: sent after the earliest
    /// moment its lease may have ended (a grant seen only as a call ends that much earlier).
    pub maybe_ended: bool,
    pub seq: u64,
    pub token: TokenKind,
    /// The resource whose lease backs it.
    pub resource: usize,
    /// The lease's grant and receipt, the request's first send and this send.
    pub steps: Steps,
    /// What had ended its lease when it was sent, if it had ended.
    pub ended: Steps,
    /// The step that sent it. Untracked, like the window of [`Reached`].
    pub step: Untracked<usize>,
}

/// How new the lease behind a request is: its epoch (the grant's count, 0 for no lease), and for
/// a request that no recorded lease backs, its generation. Leased requests are ordered by their
/// leases' true order, which survives counter resets and forged tokens; requests that no lease
/// backs (a history that does not record the authority's grants) can only be ordered by the
/// generations they carry, which is what a fence compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct Rank {
    pub epoch: u64,
    pub unleased: u64,
}

impl Rank {
    fn new(epoch: u64, generation: Generation) -> Rank {
        Rank { epoch, unleased: if epoch == 0 { generation.get() } else { 0 } }
    }

    /// Whether a recorded lease backs the request.
    fn leased(self) -> bool {
        self.epoch != 0
    }
}

/// A request that reached a boundary: its lease epoch, its sender, the steps that show it, and
/// the steps between which the boundary decided it (one step, unless the history shows only
/// when the sender asked and heard back).
///
/// The window takes no part in comparing states: where each decision is at its own step (the
/// only histories the explorer searches), one already judged never may precede a later one,
/// so states that differ only in windows judge every later entry alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Reached {
    pub epoch: Rank,
    pub worker: usize,
    pub steps: Steps,
    pub window: Untracked<(usize, usize)>,
}

impl Reached {
    /// Whether this request may have been decided before `other`: the history's order between
    /// two decisions is certain only where their windows do not overlap.
    fn may_precede(&self, other: &Reached) -> bool {
        let ((from, _), (_, to)) = (self.window.0, other.window.0);
        from < to
    }
}

/// A lease the authority honours for a resource, by its own record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Live {
    pub epoch: u64,
    /// When it ends unless renewed, counted from the earliest moment it may have been granted.
    pub until: Tick,
    /// When it ends at the latest: a grant seen only as a call may have happened as late as
    /// the call's answer, and its lease runs that much longer.
    pub until_latest: Tick,
    pub holder: usize,
    pub generation: Generation,
    /// A release seen only as a call: the lease ended at some moment up to this one.
    pub ending: Option<Tick>,
    /// The latest moment it may have been granted.
    pub granted_by: Tick,
    /// Its grant (and renewals).
    pub why: Steps,
}

/// A grant seen only as a call, whose window is still open: until `by` passes, a grant that
/// starts may have come before it or after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct OpenGrant {
    pub resource: usize,
    pub generation: Generation,
    pub by: Tick,
    pub steps: Steps,
}

/// Two leases of one resource whose grants were seen as calls in progress at once, each
/// granted while the other may have been valid: an overlap for certain unless the old lease's
/// end starts before the new grant's window closes (`by`), or the new lease's end starts before
/// the old grant's window closes (`old.granted_by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PendingOverlap {
    pub resource: usize,
    pub by: Tick,
    pub epoch: u64,
    pub worker: usize,
    pub generation: Generation,
    pub steps: Steps,
    pub old: Live,
}

impl PendingOverlap {
    /// When both grants have surely happened.
    fn decided_after(&self) -> Tick {
        self.by.max(self.old.granted_by)
    }

    /// Whether lease `epoch` of the pair ending at `at` leaves an order in which the two did
    /// not overlap: it ends before the other's grant surely happened.
    fn ends_in_window(&self, epoch: u64, at: Tick) -> bool {
        (self.old.epoch == epoch && at <= self.by)
            || (self.epoch == epoch && at <= self.old.granted_by)
    }
}

/// How many leases per resource, and open grant windows, the checker keeps: a correct authority
/// needs one lease per resource and as many windows as calls in progress at once, so only a
/// broken one or hostile input reaches this, and beyond it the oldest are forgotten (and can no
/// longer be reported).
const WINDOWS_KEPT: usize = 256;

/// How many undecided overlaps the checker keeps: pairs of calls in progress at once, which
/// grow with the square of the concurrent calls. Beyond it, a new one is reported at once as
/// possible, so the ones waiting longest are still decided and none is lost.
const PENDING_KEPT: usize = 4096;

/// Pushes `item`, forgetting the oldest beyond [`WINDOWS_KEPT`].
fn push_bounded<T>(list: &mut Vec<T>, item: T) {
    if list.len() >= WINDOWS_KEPT {
        list.remove(0);
    }
    list.push(item);
}

/// An operation that took effect at a place, and whether it surely did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Done {
    pub steps: Steps,
    pub certain: bool,
}

/// The checker's ghost state, derived from the events seen so far. Workers, resources, stores
/// and data are indices into the setup's lists.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct CheckState {
    /// Grants so far, per resource.
    pub epochs: Vec<u64>,
    /// The highest generation the authority may have issued so far, per resource, across
    /// restarts, and its grant.
    pub max_issued: Vec<Option<(Generation, Steps)>>,
    /// The highest generation it surely issued before now (grants whose windows have closed),
    /// per resource, and its grant.
    pub max_done: Vec<Option<(Generation, Steps)>>,
    /// Grants whose windows are still open.
    pub open_grants: Vec<OpenGrant>,
    /// The leases the authority honours, per resource: one, unless it granted a lease while
    /// another was valid.
    pub live: Vec<Vec<Live>>,
    /// Per resource: the entries that last changed its leases (a grant and a renewal, or what
    /// ended a lease).
    pub live_why: Vec<Steps>,
    /// Grants made while another lease was valid, not yet known to overlap it for certain.
    pub pending: Vec<PendingOverlap>,
    /// Grants on their way, by message: their epochs and their grant.
    pub grants: BTreeMap<u64, (u64, Steps)>,
    /// The lease each worker believes it holds, per (worker, resource): its epoch, with its
    /// grant and receipt. A B-tree, as it grows with the workers (thousands in a large run).
    pub held: BTreeMap<(usize, usize), (u64, Steps)>,
    /// Per (worker, resource) that holds no lease: the entries that show it let its last one
    /// go (its grant, receipt and release or refused renewal). Kept for witnesses only.
    pub let_go: Untracked<BTreeMap<(usize, usize), Steps>>,
    /// Per worker: the requests it has sent. Shared between copies until changed, like the
    /// simulator's workers, so a snapshot or a search state copies only what a step touched.
    pub senders: Vec<Arc<Sender>>,
    /// Requests on their way or waiting to commit, by message.
    pub messages: BTreeMap<u64, Sent>,
    /// Per (store, data, resource).
    pub cells: LiteMap<(usize, usize, usize), Arc<CellCheck>>,
    /// Operations the partner received (or may have), per workflow.
    pub partner_ops: BTreeMap<String, Recent<Done, OPS_REMEMBERED>>,
    /// The newest lease epoch whose effect reached the gateway, per workflow, whatever the
    /// gateway then did with it.
    pub effect_presented: BTreeMap<String, Reached>,
    /// The newest lease epoch whose effect may have reached the gateway (its outcome unknown),
    /// per workflow, when newer than every effect that surely did.
    pub effect_maybe: BTreeMap<String, Reached>,
    /// Kinds broken so far: the explorer tells states apart by them.
    pub broken: [bool; InvariantKind::ALL.len()],
}

/// What a worker has sent: how many requests, and each operation's lease epoch, order and
/// first send.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct Sender {
    pub count: u64,
    pub ops: Recent<(Rank, u64, Steps), SENDS_REMEMBERED>,
}

/// What the checker knows about one piece of data in one store. Writers are worker indices.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct CellCheck {
    /// The newest lease whose write reached this data's boundary, whatever the boundary then
    /// did with it (applied, refused, replayed, waiting to commit).
    pub max_presented: Option<Reached>,
    /// The newest lease whose write may have reached it (its outcome unknown), when newer than
    /// `max_presented`.
    pub maybe_presented: Option<Reached>,
    /// The last applied write.
    pub last: Option<Reached>,
    /// The newest write since the last applied one whose outcome nobody learned: it may be
    /// what the data holds now.
    pub maybe_last: Option<Reached>,
    /// Where the store's highest generation came from: the token of the request that last
    /// raised it.
    pub highest_token: Option<TokenKind>,
    /// Operations applied here (or that may have been).
    pub applied_ops: Recent<Done, OPS_REMEMBERED>,
    /// The newest lease whose write applied, or was fenced out although no newer lease had
    /// reached this data, and whether it applied.
    pub max_attempted: Option<(Reached, bool)>,
    /// Per writer, the (epoch, order) of its newest applied write and where it reached the data.
    pub last_seq: LiteMap<usize, (Rank, u64, Reached)>,
}

impl Checker {
    /// A checker for histories of `setup`.
    pub fn new(setup: Setup) -> Checker {
        let names = Names::new(setup);
        let (r, w) = (names.resources.len(), names.workers.len());
        let state = CheckState {
            epochs: vec![0; r],
            max_issued: vec![None; r],
            max_done: vec![None; r],
            live: vec![Vec::new(); r],
            live_why: vec![Steps::default(); r],
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

    pub(crate) fn into_state(self) -> CheckState {
        self.state
    }

    /// Judges entry `step` of the history (entries must come in order, from 0).
    pub fn feed(&mut self, step: usize, entry: &Entry) -> Judgement {
        let (now, by) = (entry.at, entry.by.map(|_| entry.latest()));
        let mut judge = Judge { checker: self, step, now, by, out: Judgement::default() };
        judge.settle_pending(&|p| p.decided_after() < now, true);
        judge.event(&entry.event);
        let out = judge.out;
        for v in &out.violations {
            self.state.broken[v.invariant as usize] = true;
        }
        out
    }

    /// Judges the end of the history, `last` being the index of its last entry: the final value
    /// of every critical store's data.
    pub fn finish(&mut self, last_step: usize) -> Vec<Violation> {
        let mut found = {
            let now = Tick(u64::MAX);
            let mut judge =
                Judge { checker: self, step: last_step, now, by: None, out: Judgement::default() };
            judge.settle_pending(&|_| true, true);
            judge.out.violations
        };
        let names = &self.names;
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
            let Some((latest, applied)) = cell.max_attempted else {
                continue;
            };
            // What the data ends with: the last applied write, unless a write whose outcome
            // nobody learned came after it and may have replaced it.
            let stale = |w: &Reached| w.epoch < latest.epoch;
            let (last, possible) = match (cell.last.filter(stale), cell.maybe_last.filter(stale)) {
                (Some(last), _) => (last, cell.maybe_last.is_some_and(|m| !stale(&m))),
                (None, Some(maybe)) => (maybe, true),
                (None, None) => continue,
            };
            // A newer write applied in a window the last one's overlaps may have come after it;
            // one the fence refused leaves the last value whatever the order.
            let possible = possible || (applied && last.may_precede(&latest));
            let (data, resource) = (data(*s, *d), resource(*r));
            let (writer, owner) =
                (names.worker_name(last.worker), names.worker_name(latest.worker));
            let text = place_text(&store.name, data, resource);
            let ends = if possible { "may end" } else { "ends" };
            let detail = if !latest.epoch.leased() {
                format!(
                    "{text} {ends} with {writer}'s value (generation {}), though {owner}'s write with generation {} reached it too (the history records no lease for either)",
                    last.epoch.unleased, latest.epoch.unleased
                )
            } else if !last.epoch.leased() {
                format!("{text} {ends} with {writer}'s value, which no lease backs, though a write under {owner}'s lease reached it too")
            } else {
                format!("{text} {ends} with {writer}'s value, though a write under {owner}'s newer lease reached it too")
            };
            found.push(Violation {
                invariant: InvariantKind::FinalValueNotFromLatestOwner,
                step: RunStep::new(last_step),
                detail,
                place: Some(store_place(&store.name, data, data, resource)),
                possible,
                witness: witness(&[last.steps, latest.steps], None),
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
        self.state.max_done.push(None);
        self.state.live.push(Vec::new());
        self.state.live_why.push(Steps::default());
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
    /// The latest moment the entry may have happened, when the source saw only its call.
    by: Option<Tick>,
    out: Judgement,
}

/// A finding about to be reported: what broke, in words, whether it is only possible, and the
/// steps (besides the current one) that prove it.
struct Found {
    kind: InvariantKind,
    detail: String,
    possible: bool,
    steps: Vec<Steps>,
}

impl Judge<'_> {
    fn state(&mut self) -> &mut CheckState {
        &mut self.checker.state
    }

    fn report(&mut self, found: Found, place: Place) {
        let Found { kind, detail, possible, steps } = found;
        let step = self.step;
        self.out.violations.push(Violation {
            invariant: kind,
            step: RunStep::new(step),
            detail,
            place: Some(place),
            possible,
            witness: witness(&steps, Some(step)),
        });
    }

    fn event(&mut self, event: &Event) {
        let step = self.step;
        // What the four events of a write at its store share.
        let at_store = event.store_write();
        match event {
            Event::LeaseGranted { worker, resource, generation, valid_until, message, .. } => {
                let grant =
                    Grant { worker, resource, generation: *generation, until: *valid_until };
                self.granted(grant, *message)
            }
            Event::GrantReceived { worker, resource, message, .. } => {
                let key = (self.checker.worker(worker), self.checker.resource(resource));
                let state = self.state();
                if let Some((epoch, steps)) = state.grants.remove(message) {
                    state.held.insert(key, (epoch, steps.with(step)));
                    state.let_go.0.remove(&key);
                }
            }
            Event::Renewed { worker, resource, valid_until, generation } => {
                let (w, r) = (self.checker.worker(worker), self.checker.resource(resource));
                let now = self.now;
                let state = self.state();
                let (epoch, steps) = state.held.get(&(w, r)).copied().unwrap_or_default();
                let (generation, until_latest) = (*generation, *valid_until);
                let until = surely_until(until_latest, now);
                let why = steps.with(step);
                let mut shortened = false;
                match state.live[r].iter_mut().find(|l| l.epoch == epoch && l.holder == w) {
                    Some(lease) => {
                        shortened = until < lease.until;
                        lease.until_latest = lease.until_latest.max(until_latest);
                        lease.until = until;
                        lease.why = why;
                    }
                    None => {
                        let lease = Live {
                            epoch,
                            until,
                            until_latest,
                            holder: w,
                            generation,
                            ending: None,
                            granted_by: now,
                            why,
                        };
                        push_bounded(&mut state.live[r], lease);
                    }
                }
                state.live_why[r] = why;
                // A renewal that ends the lease sooner may end it before a grant whose call was
                // in progress: the pair is no longer an overlap for certain.
                if shortened {
                    self.settle_pending(
                        &|p| p.resource == r && p.ends_in_window(epoch, until),
                        false,
                    );
                }
            }
            Event::RenewFailed { worker, resource, .. } => {
                let key = (self.checker.worker(worker), self.checker.resource(resource));
                let state = self.state();
                if let Some((_, steps)) = state.held.remove(&key) {
                    state.let_go.0.insert(key, steps.with(step));
                }
            }
            Event::Released { worker, resource, .. } => {
                let key = (self.checker.worker(worker), self.checker.resource(resource));
                let by = self.by;
                let state = self.state();
                let held = state.held.remove(&key);
                if let Some((_, steps)) = held {
                    state.let_go.0.insert(key, steps.with(step));
                }
                // The authority honours the release only from a lease it still holds: the one
                // the worker was granted, or, after a refused renewal made the worker stop
                // believing it holds one, the holder's own. Seen only as a call, the release
                // ended the lease at some moment up to `by`.
                let leases = &mut state.live[key.1];
                let found = match held {
                    Some((epoch, _)) => leases.iter().position(|l| l.epoch == epoch),
                    None => leases.iter().rposition(|l| l.holder == key.0),
                };
                if let Some(i) = found {
                    let (epoch, steps) = (leases[i].epoch, held.map_or(leases[i].why, |h| h.1));
                    match by {
                        Some(by) => leases[i].ending = Some(by),
                        None => drop(leases.remove(i)),
                    }
                    state.live_why[key.1] = steps.with(step);
                    // Either lease of a pair ending before the other's grant surely
                    // happened leaves an order in which they did not overlap.
                    let now = self.now;
                    self.settle_pending(
                        &|p| p.resource == key.1 && p.ends_in_window(epoch, now),
                        false,
                    );
                }
            }
            Event::LeaseExpired { worker, resource, .. } => {
                let (w, r) = (self.checker.worker(worker), self.checker.resource(resource));
                let state = self.state();
                state.live[r].retain(|l| l.holder != w);
                state.live_why[r] = Steps::one(step);
            }
            Event::AuthorityRestarted { counter_kept: false } => {
                let state = self.state();
                state.live.iter_mut().for_each(Vec::clear);
                state.live_why.iter_mut().for_each(|why| *why = Steps::one(step));
                self.settle_pending(&|_| true, false);
            }
            // A lost message reaches nothing, so nothing waits for it any more.
            Event::MessageLost { message, .. } => {
                let state = self.state();
                state.grants.remove(message);
                state.messages.remove(message);
            }
            Event::WriteSent { worker, message, request, token, retry, .. } => {
                let (resource, operation) = (request.resource.as_str(), request.operation.as_str());
                let what = (operation, request.generation, *token);
                self.sent(worker, *message, resource, what, *retry)
            }
            Event::EffectSent { worker, message, request, token, retry, resource, .. } => {
                let what = (request.operation.as_str(), request.generation, *token);
                self.sent(worker, *message, resource, what, *retry)
            }
            Event::CheckPassed { .. } => {
                let Some(at) = at_store else { return };
                if let Some(sent) = self.state().messages.get_mut(&at.message) {
                    sent.steps = sent.steps.with(step);
                    let sent = *sent;
                    let cell = self.cell_key(at.store, at.data, at.request.resource.as_str());
                    let reached = self.reached(at.worker, &sent);
                    self.presented(cell, reached, true);
                }
            }
            Event::WriteArrived { outcome, highest_before, highest_after, .. } => {
                let Some(at) = at_store else { return };
                let Some(sent) = self.state().messages.remove(&at.message) else { return };
                self.settle(Write { at, outcome, sent }, *highest_before, *highest_after);
            }
            Event::WriteCommitted { outcome, highest_before, .. } => {
                let Some(at) = at_store else { return };
                let Some(sent) = self.state().messages.remove(&at.message) else { return };
                // A committed write lands without looking: the highest generation becomes its own.
                let after = Some(at.request.generation);
                self.settle(Write { at, outcome, sent }, *highest_before, after);
            }
            Event::WriteUnknown { .. } => {
                let Some(at) = at_store else { return };
                let Some(sent) = self.state().messages.remove(&at.message) else { return };
                self.unknown_write(at, sent);
            }
            Event::EffectArrived { worker, message, request, dropped, .. } => {
                let Some(sent) = self.state().messages.remove(message) else { return };
                if dropped.is_none() {
                    self.delivered(worker, request, sent, true);
                }
                self.effect_reached(worker, request, sent, true);
            }
            Event::EffectUnknown { worker, message, request, .. } => {
                let Some(sent) = self.state().messages.remove(message) else { return };
                self.delivered(worker, request, sent, false);
                self.effect_reached(worker, request, sent, false);
            }
            _ => {}
        }
    }

    fn granted(&mut self, grant: Grant, message: u64) {
        let Grant { worker, resource, generation, until } = grant;
        let (w, r) = (self.checker.worker(worker), self.checker.resource(resource));
        let (now, step, by) = (self.now, self.step, self.by);
        let latest = by.unwrap_or(now);
        let unknown = until == Tick::UNKNOWN;
        let until = surely_until(until, now);
        let names = Arc::clone(&self.checker.names);
        let state = self.state();
        state.epochs[r] += 1;
        let epoch = state.epochs[r];
        if state.max_issued[r].is_none_or(|(p, _)| generation > p) {
            state.max_issued[r] = Some((generation, Steps::one(step)));
        }
        // Grants whose windows closed before this one opened surely came before it (and before
        // every later grant, whatever its resource).
        let (max_done, open_grants) = (&mut state.max_done, &mut state.open_grants);
        open_grants.retain(|g| {
            let closed = g.by < now;
            let done = &mut max_done[g.resource];
            if closed && done.is_none_or(|(p, _)| g.generation > p) {
                *done = Some((g.generation, g.steps));
            }
            !closed
        });
        let mut done = state.max_done[r];
        // At or below a generation surely issued before: certain. Below one whose grant may
        // have come after this one: possible. The same generation twice: certain, whatever
        // the order.
        let open = state.open_grants.iter().filter(|g| g.resource == r);
        let same = open.clone().find(|g| g.generation == generation);
        let reissued = match (done.filter(|(p, _)| generation <= *p), same) {
            (Some(done), _) => Some((done, false)),
            (None, Some(g)) => Some(((g.generation, g.steps), false)),
            (None, None) => open
                .filter(|g| g.generation > generation)
                .max_by_key(|g| g.generation)
                .map(|g| ((g.generation, g.steps), true)),
        };
        match by {
            Some(by) => {
                let open = OpenGrant { resource: r, generation, by, steps: Steps::one(step) };
                push_bounded(&mut state.open_grants, open);
            }
            None if done.is_none_or(|(p, _)| generation > p) => {
                done = Some((generation, Steps::one(step)));
            }
            None => {}
        }
        state.max_done[r] = done;
        // Every lease of another holder that may still be valid when this grant is made; the
        // holder's own earlier lease is replaced by this one.
        state.live[r]
            .retain(|l| l.holder != w && l.ending.is_none_or(|e| e >= now) && now < l.until_latest);
        let mut overlaps = Vec::new();
        for old in &state.live[r] {
            // Each lease surely valid while the other's grant may still be happening: certain,
            // once nothing ended either in time.
            let through = old.ending.is_none() && latest < old.until && until > old.granted_by;
            // A grant seen as a call waits for its window to close, even within one tick: what
            // else happens in that tick may come before it.
            if through && (by.is_some() || old.granted_by > now) {
                let pending = PendingOverlap {
                    resource: r,
                    by: latest,
                    epoch,
                    worker: w,
                    generation,
                    steps: Steps::one(step),
                    old: *old,
                };
                if state.pending.len() < PENDING_KEPT {
                    state.pending.push(pending);
                } else {
                    overlaps.push((*old, true));
                }
            } else {
                overlaps.push((*old, !through));
            }
        }
        let lease = Live {
            epoch,
            until,
            // A lease of no length is never valid, whenever it was granted.
            until_latest: match until {
                _ if unknown => Tick::UNKNOWN,
                until if until > now => until.after(latest.0 - now.0),
                until => until,
            },
            holder: w,
            generation,
            ending: None,
            granted_by: latest,
            why: Steps::one(step),
        };
        push_bounded(&mut state.live[r], lease);
        state.live_why[r] = Steps::one(step);
        state.grants.insert(message, (epoch, Steps::one(step)));
        if let Some(((prev, steps), possible)) = reissued {
            let detail = if possible {
                format!(
                    "the authority may have issued generation {generation} for {resource} after {prev}: the calls overlapped"
                )
            } else if prev == generation {
                format!("the authority issued generation {generation} for {resource} twice")
            } else {
                format!(
                    "the authority issued generation {generation} for {resource} after it had already issued {prev}"
                )
            };
            let found = Found {
                kind: InvariantKind::GenerationReissued,
                detail,
                possible,
                steps: vec![steps],
            };
            self.report(found, Place::Authority);
        }
        for (old, possible) in overlaps {
            let found = overlap(&names, resource, (worker, generation), old, possible);
            self.report(found, Place::Authority);
        }
    }

    /// The highest generation the authority may have issued for resource `r`, and its grant;
    /// none issued counts as generation 0 when every grant is in the history, and says nothing
    /// otherwise.
    fn issued(&self, r: usize) -> Option<(u64, Steps)> {
        let state = &self.checker.state;
        match state.max_issued[r] {
            Some((g, steps)) => Some((g.get(), steps)),
            None if self.checker.names.setup.authority.is_recorded() => Some((0, Steps::default())),
            None => None,
        }
    }

    /// Decides the grants made while another lease was valid that `which` picks: an overlap
    /// for certain when nothing ended that lease before the grant's window closed, possible
    /// when its end began inside the window.
    fn settle_pending(&mut self, which: &dyn Fn(&PendingOverlap) -> bool, certain: bool) {
        if self.state().pending.is_empty() {
            return;
        }
        let mut settled = Vec::new();
        self.state().pending.retain(|p| {
            let now = which(p);
            if now {
                settled.push(*p);
            }
            !now
        });
        let names = Arc::clone(&self.checker.names);
        for p in settled {
            let resource = names.setup.resources.get(p.resource).map_or("", String::as_str);
            let worker = names.worker_name(p.worker);
            let mut found = overlap(&names, resource, (worker, p.generation), p.old, !certain);
            found.steps.push(p.steps);
            self.report(found, Place::Authority);
        }
    }

    /// A worker put a request on the network. A retry is the same request sent again: it keeps
    /// the first send's lease and order, but whether that lease is valid is judged now.
    fn sent(
        &mut self,
        worker: &str,
        message: u64,
        resource: &str,
        (operation, generation, token): (&str, Generation, TokenKind),
        retry: bool,
    ) {
        let (now, step) = (self.now, self.step);
        let (w, r) = (self.checker.worker(worker), self.checker.resource(resource));
        let state = self.state();
        let held = state.held.get(&(w, r)).copied();
        let sender = Arc::make_mut(&mut state.senders[w]);
        let first = sender.ops.get(operation).copied().filter(|_| retry);
        let (epoch, seq, steps) = match first {
            Some(first) => first,
            None => {
                // Without a lease, what shows that the worker let its last one go.
                let let_go = state.let_go.0.get(&(w, r)).copied().unwrap_or_default();
                let (epoch, lease) = held.unwrap_or((0, let_go));
                let fresh = (Rank::new(epoch, generation), sender.count, lease.with(step));
                sender.count += 1;
                match sender.ops.get_mut(operation) {
                    Some(known) => *known = fresh,
                    None => sender.ops.insert(operation, fresh),
                }
                fresh
            }
        };
        let live = state.live[r].iter().find(|l| l.epoch == epoch.epoch);
        // A lease whose grant was seen only as a call may have been granted as late as the
        // call's answer, and last that much longer: a write before then is not judged outside.
        let valid = (retry || held.is_some())
            && live.is_some_and(|l| now < l.until_latest && l.ending.is_none());
        // A lease of unknown length is judged only by its release.
        let maybe_ended =
            valid && live.is_some_and(|l| now >= l.until && l.until_latest != Tick::UNKNOWN);
        // A lease that ran out by its own end shows that from its grant; one replaced or ended
        // early needs what replaced or ended it.
        let ended = if valid || live.is_some() { Steps::default() } else { state.live_why[r] };
        let steps = steps.with(step);
        let step = Untracked(step);
        let sent = Sent { epoch, valid, maybe_ended, seq, token, resource: r, steps, ended, step };
        state.messages.insert(message, sent);
    }

    /// `sent` reaching its boundary at this entry, sent by `worker`.
    fn reached(&mut self, worker: &str, sent: &Sent) -> Reached {
        let worker = self.checker.worker(worker);
        let step = self.step;
        let from = match self.checker.names.setup.decisions {
            Decisions::Exact => step,
            Decisions::Windowed => sent.step.0,
        };
        let window = Untracked((from, step));
        Reached { epoch: sent.epoch, worker, steps: sent.steps.with(step), window }
    }

    fn cell_key(&mut self, store: &str, data: &str, resource: &str) -> (usize, usize, usize) {
        let (s, d) = self.checker.data(store, data);
        (s, d, self.checker.resource(resource))
    }

    fn cell(&mut self, key: (usize, usize, usize)) -> &mut CellCheck {
        Arc::make_mut(self.state().cells.entry(key).or_default())
    }

    /// Records that a request reached the boundary of a cell (or, when not `certain`, may have),
    /// whatever the boundary then did with it: from now on every older lease is superseded there.
    fn presented(&mut self, key: (usize, usize, usize), reached: Reached, certain: bool) {
        let cell = self.cell(key);
        if certain {
            if cell.max_presented.is_none_or(|m| reached.epoch > m.epoch) {
                cell.max_presented = Some(reached);
            }
            if cell.maybe_presented.is_some_and(|m| m.epoch <= reached.epoch) {
                cell.maybe_presented = None;
            }
        } else if cell.max_presented.is_none_or(|m| reached.epoch > m.epoch)
            && cell.maybe_presented.is_none_or(|m| reached.epoch > m.epoch)
        {
            cell.maybe_presented = Some(reached);
        }
    }

    /// A write reached its boundary and the boundary answered it.
    fn settle(&mut self, write: Write, before: Option<Generation>, after: Option<Generation>) {
        let Write { at: StoreWrite { worker, store, path, data, request, .. }, outcome, sent } =
            write;
        let key = self.cell_key(store, data, request.resource.as_str());
        let reached = self.reached(worker, &sent);
        // What the cell knew before this write; copied out so the cell itself is not.
        let (max_presented, highest_token) = match self.state().cells.get(&key) {
            Some(cell) => (cell.max_presented, cell.highest_token),
            None => (None, None),
        };
        let newest = max_presented.is_none_or(|m| sent.epoch >= m.epoch);
        // Only a generation below the highest is taken for a stale owner; "already written"
        // under the strict policy is the policy at work, not a misjudged owner.
        let below = matches!(
            outcome,
            WriteOutcome::Rejected(WriteRejection::Stale { presented, highest }) if presented < highest
        );
        if sent.epoch.leased() && below && newest {
            self.out.misfenced = Some(highest_token.unwrap_or(TokenKind::Lease));
        }
        // For the final value, a write counts as the latest owner's attempt when it applied, or
        // when the fence refused it although no newer lease had reached this data: then the
        // refusal wronged its writer (a forged, clock-made or reset generation). A refusal
        // because a newer lease did show up, a replay or a revision conflict is the store
        // working as designed and says nothing about whose value should win.
        let superseded = max_presented.is_some_and(|m| sent.epoch < m.epoch);
        let fenced_out = !superseded
            && matches!(
                outcome,
                WriteOutcome::Rejected(
                    WriteRejection::Stale { .. } | WriteRejection::InvalidToken(_)
                )
            );
        if outcome.is_applied() || fenced_out {
            let cell = self.cell(key);
            if cell.max_attempted.is_none_or(|(m, _)| sent.epoch > m.epoch) {
                cell.max_attempted = Some((reached, outcome.is_applied()));
            }
        }
        let critical = self.checker.names.setup.stores[key.0].critical;
        if outcome.is_applied() && critical {
            let write = Accepted { who: worker, store, path, data, request, sent, reached };
            self.accepted(write, key, true);
        }
        self.presented(key, reached, true);
        if after != before && after == Some(request.generation) {
            self.cell(key).highest_token = Some(sent.token);
        }
    }

    /// A write whose outcome nobody learned: judged as if it applied, with what that would
    /// break reported as possible, and remembered as a write that may have reached its data.
    fn unknown_write(&mut self, at: StoreWrite, sent: Sent) {
        let StoreWrite { worker, store, path, data, request, .. } = at;
        let key = self.cell_key(store, data, request.resource.as_str());
        let reached = self.reached(worker, &sent);
        if self.checker.names.setup.stores[key.0].critical {
            let write = Accepted { who: worker, store, path, data, request, sent, reached };
            self.accepted(write, key, false);
        }
        let cell = self.cell(key);
        if cell.maybe_last.is_none_or(|m| reached.epoch >= m.epoch) {
            cell.maybe_last = Some(reached);
        }
        self.presented(key, reached, false);
    }

    /// A critical store applied a write, or (when not `certain`) may have.
    fn accepted(&mut self, write: Accepted, key: (usize, usize, usize), certain: bool) {
        let Accepted { who, store, path, data, request, sent, reached } = write;
        let w = reached.worker;
        let step = self.step;
        let resource = request.resource.as_str();
        let text = place_text(store, path, resource);
        let names = Arc::clone(&self.checker.names);
        let recorded = self.checker.names.setup.authority.is_recorded()
            || self.state().epochs[sent.resource] > 0;
        let issued = self.issued(sent.resource);
        let cell = self.cell(key);
        let mut found = Vec::new();
        let mut find = |kind, detail, possible: bool, steps: Vec<Steps>| {
            found.push(Found { kind, detail, possible: possible || !certain, steps });
        };
        let accepted = if certain { "accepted" } else { "may have accepted" };
        let older = |m: &Reached| sent.epoch < m.epoch;
        // A newer request decided in a window this write's overlaps may have come after it.
        let newer = cell.max_presented.filter(older).map(|m| (m, reached.may_precede(&m)));
        let stale = newer.is_some() || cell.maybe_presented.is_some_and(|m| older(&m));
        if let Some((m, possible)) =
            newer.or_else(|| cell.maybe_presented.filter(older).map(|m| (m, true)))
        {
            let newer = names.worker_name(m.worker);
            // What is only possible is said so: the write may not have applied, or the newer
            // one may never have arrived or have arrived after it.
            let presented = if possible { "may have presented" } else { "presented" };
            let detail = if !m.epoch.leased() {
                // No recorded lease on either side: the generations are all there is to compare.
                format!(
                    "{text} {accepted} {who}'s write with generation {} after {newer} {presented} generation {} (the history records no lease for either)",
                    request.generation, m.epoch.unleased
                )
            } else if !sent.epoch.leased() {
                format!("{text} {accepted} {who}'s write, which no lease backs, after {newer} {presented} one under a lease")
            } else {
                format!("{text} {accepted} {who}'s write from an older lease after {newer} {presented} a newer one")
            };
            find(InvariantKind::StaleWriteAccepted, detail, possible, vec![sent.steps, m.steps]);
        }
        let this = Done { steps: sent.steps.with(step), certain };
        match cell.applied_ops.get_mut(request.operation.as_str()) {
            Some(first) => {
                let applied = if certain && first.certain { "applied" } else { "may have applied" };
                let op = &request.operation;
                let detail = format!("{text} {applied} operation {op} a second time");
                let possible = !first.certain;
                let steps = vec![first.steps, sent.steps];
                if certain && !first.certain {
                    *first = this;
                }
                find(InvariantKind::OperationAppliedTwice, detail, possible, steps);
            }
            None => cell.applied_ops.insert(request.operation.as_str(), this),
        }
        // Whether a lease was valid can only be told from the authority's record: a history
        // that records no grant for the resource says nothing about its writers' leases.
        if !sent.valid && recorded {
            let when = if !sent.epoch.leased() {
                "sent without any lease"
            } else {
                "sent when its lease was no longer valid"
            };
            // Why nothing stopped it: no fence on this path, or a fence that had seen no newer
            // lease yet and so had nothing to compare against. A stale write accepted says
            // itself why the fence failed.
            let unfenced = names.setup.stores[key.0]
                .paths
                .iter()
                .any(|p| p.name == path && p.enforcement == Enforcement::Unfenced);
            let why = if unfenced {
                " (no fencing here)".to_string()
            } else if stale {
                String::new()
            } else {
                " (a limit of fencing: no newer lease had reached it yet)".to_string()
            };
            let detail = format!("{text} {accepted} {who}'s write, {when}{why}");
            find(InvariantKind::WriteOutsideLease, detail, false, vec![sent.steps, sent.ended]);
        } else if sent.maybe_ended && recorded {
            let detail = format!("{text} {accepted} {who}'s write, sent when its lease may have ended: the grant was seen as a call, and its lease ran out between the call's start and its answer plus the lease length");
            find(InvariantKind::WriteOutsideLease, detail, true, vec![sent.steps]);
        }
        if let Some((issued, grant)) = issued.filter(|(g, _)| request.generation.get() > *g) {
            let detail = format!(
                "{text} {accepted} {who}'s write with generation {}, which the authority never issued ({})",
                request.generation,
                issued_text(issued)
            );
            find(InvariantKind::TokenNeverIssued, detail, false, vec![grant, sent.steps]);
        }
        if certain {
            if let Some((epoch, seq, later)) = cell.last_seq.get(&w) {
                if *epoch == sent.epoch && sent.seq < *seq {
                    let possible = reached.may_precede(later);
                    let applied = if possible { "may have applied" } else { "applied" };
                    let detail = format!(
                        "{text} {applied} {who}'s earlier write \"{}\" after a later one",
                        request.value
                    );
                    let steps = vec![later.steps, sent.steps];
                    find(InvariantKind::WritesReordered, detail, possible, steps);
                }
            }
            let mine = (sent.epoch, sent.seq, reached);
            match cell.last_seq.get_mut(&w) {
                Some(newest) if (newest.0, newest.1) < (sent.epoch, sent.seq) => *newest = mine,
                Some(_) => {}
                None => {
                    cell.last_seq.insert(w, mine);
                }
            }
            cell.last = Some(reached);
            cell.maybe_last = None;
        }
        let place = store_place(store, path, data, resource);
        for found in found {
            self.report(found, place.clone());
        }
    }

    /// The partner received an effect, or (when not `certain`) may have.
    fn delivered(&mut self, who: &str, request: &EffectRequest, sent: Sent, certain: bool) {
        let workflow = request.workflow.as_str();
        let step = self.step;
        let issued = self.issued(sent.resource);
        let reached = self.reached(who, &sent);
        let state = self.state();
        let mut found = Vec::new();
        let this = Done { steps: sent.steps.with(step), certain };
        let received = if certain { "received" } else { "may have received" };
        let ops = match state.partner_ops.get_mut(workflow) {
            Some(ops) => ops,
            None => state.partner_ops.entry(workflow.to_string()).or_default(),
        };
        match ops.get_mut(request.operation.as_str()) {
            Some(first) => {
                let possible = !(certain && first.certain);
                let received = if possible { "may have received" } else { "received" };
                let detail = format!(
                    "the partner {received} operation {} ({}) of {workflow} a second time",
                    request.operation, request.effect
                );
                let steps = vec![first.steps, sent.steps];
                if certain && !first.certain {
                    *first = this;
                }
                found.push(Found {
                    kind: InvariantKind::EffectDeliveredTwice,
                    detail,
                    possible,
                    steps,
                });
            }
            None => ops.insert(request.operation.as_str(), this),
        }
        let older = |m: &Reached| sent.epoch < m.epoch;
        let newer = state.effect_presented.get(workflow).filter(|m| older(m));
        let newer = newer.map(|m| (*m, reached.may_precede(m)));
        let maybe = || state.effect_maybe.get(workflow).filter(|m| older(m)).map(|m| (*m, true));
        if let Some((m, possible)) = newer.or_else(maybe) {
            let from = if sent.epoch.leased() {
                "from a superseded lease"
            } else {
                "which no lease backs"
            };
            let reached = if possible { "may have reached" } else { "reached" };
            let detail = format!(
                "the partner {received} {who}'s {}, {from}, after a newer lease's request for {workflow} {reached} the gateway",
                request.effect
            );
            let possible = possible || !certain;
            let steps = vec![sent.steps, m.steps];
            found.push(Found {
                kind: InvariantKind::EffectFromSupersededOwner,
                detail,
                possible,
                steps,
            });
        }
        if let Some((issued, grant)) = issued.filter(|(g, _)| request.generation.get() > *g) {
            let detail = format!(
                "the partner {received} {who}'s {} with generation {}, which the authority never issued ({})",
                request.effect,
                request.generation,
                issued_text(issued)
            );
            let steps = vec![grant, sent.steps];
            found.push(Found {
                kind: InvariantKind::TokenNeverIssued,
                detail,
                possible: !certain,
                steps,
            });
        }
        for found in found {
            self.report(found, Place::Partner);
        }
    }

    /// An effect reached the gateway (or, when not `certain`, may have): from now on every
    /// older lease's effect for its workflow is superseded.
    fn effect_reached(&mut self, who: &str, request: &EffectRequest, sent: Sent, certain: bool) {
        let reached = self.reached(who, &sent);
        let workflow = request.workflow.as_str();
        let state = self.state();
        let newest = state.effect_presented.get(workflow).map(|m| m.epoch);
        if certain {
            if newest.is_none_or(|e| sent.epoch > e) {
                state.effect_presented.insert(workflow.to_string(), reached);
            }
            if state.effect_maybe.get(workflow).is_some_and(|m| m.epoch <= sent.epoch) {
                state.effect_maybe.remove(workflow);
            }
        } else if newest.is_none_or(|e| sent.epoch > e)
            && state.effect_maybe.get(workflow).is_none_or(|m| sent.epoch > m.epoch)
        {
            state.effect_maybe.insert(workflow.to_string(), reached);
        }
    }
}

/// A grant made while `old` was valid: two holders at once, or (when `possible`) maybe.
fn overlap(
    names: &Names,
    resource: &str,
    (worker, generation): (&str, Generation),
    old: Live,
    possible: bool,
) -> Found {
    let holder = names.worker_name(old.holder);
    let detail = if possible {
        let why = if old.until_latest == Tick::UNKNOWN {
            "the history does not say how long it lasted"
        } else {
            "the calls overlapped"
        };
        format!(
            "the authority may have granted {resource} to {worker} (generation {generation}) while {holder}'s lease (generation {}) was valid: {why}",
            old.generation
        )
    } else {
        format!(
            "the authority granted {resource} to {worker} (generation {generation}) while {holder}'s lease (generation {}) ran until {} by its own record",
            old.generation, old.until
        )
    };
    Found { kind: InvariantKind::LeasesOverlap, detail, possible, steps: vec![old.why] }
}

/// Until when a lease granted or renewed `now` to run until `valid_until` is surely valid: a
/// lease of unknown length only at that moment, though it may last until released.
fn surely_until(valid_until: Tick, now: Tick) -> Tick {
    if valid_until == Tick::UNKNOWN {
        now
    } else {
        valid_until
    }
}

/// What the authority had issued, for a message about a generation it never issued.
fn issued_text(issued: u64) -> String {
    if issued == 0 {
        "it had issued none".to_string()
    } else {
        format!("the highest it had issued was {issued}")
    }
}

/// A lease grant as the authority recorded it.
struct Grant<'a> {
    worker: &'a str,
    resource: &'a str,
    generation: Generation,
    until: Tick,
}

/// The entries that prove a finding: every step of `parts` and `last`, in order.
fn witness(parts: &[Steps], last: Option<usize>) -> Vec<usize> {
    let mut steps: Vec<usize> = parts.iter().flat_map(|p| p.iter().collect::<Vec<_>>()).collect();
    steps.extend(last);
    steps.sort_unstable();
    steps.dedup();
    steps
}

/// A write as its boundary answered it.
struct Write<'a> {
    at: StoreWrite<'a>,
    outcome: &'a WriteOutcome,
    sent: Sent,
}

/// A write a critical store applied (or may have), and who sent it (by name and index).
struct Accepted<'a> {
    who: &'a str,
    store: &'a str,
    path: &'a str,
    data: &'a str,
    request: &'a WriteRequest,
    sent: Sent,
    reached: Reached,
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

no_heap!(Sent, Steps, Rank, Reached, Live, Done, OpenGrant, PendingOverlap);

impl<V: HeapSize, const CAP: usize> HeapSize for Recent<V, CAP> {
    fn heap_bytes(&self) -> usize {
        // The hash table: a slot per bucket (with a control byte), buckets a power of two with
        // room to spare; each id once, shared by the table and the order it was seen in (its
        // two reference counts beside it).
        let slots = self.seen.capacity().next_power_of_two();
        let ids: usize = self.order().iter().map(|op| block(16 + op.len())).sum();
        block(slots * (size_of::<(std::sync::Arc<str>, V)>() + 1))
            + self.seen.values().map(HeapSize::heap_bytes).sum::<usize>()
            + buffer::<std::sync::Arc<str>>(self.order().capacity())
            + ids
    }
}

impl HeapSize for CellCheck {
    fn heap_bytes(&self) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let CellCheck {
            max_presented,
            maybe_presented,
            last,
            maybe_last,
            applied_ops,
            max_attempted,
            last_seq,
            highest_token: _,
        } = self;
        max_presented.heap_bytes()
            + maybe_presented.heap_bytes()
            + last.heap_bytes()
            + maybe_last.heap_bytes()
            + applied_ops.heap_bytes()
            + max_attempted.heap_bytes()
            + last_seq.heap_bytes()
    }
}

impl HeapSize for Sender {
    fn heap_bytes(&self) -> usize {
        self.ops.heap_bytes()
    }
}

impl Checker {
    /// What this checker holds that `base` (the checker it was cloned from, if any) does not
    /// share, in estimated bytes; like [`SimState::heap_bytes_beyond`].
    pub(crate) fn heap_bytes_beyond(&self, base: Option<&Checker>) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let CheckState {
            epochs,
            max_issued,
            max_done,
            open_grants,
            live,
            live_why,
            pending,
            grants,
            held,
            let_go,
            senders,
            messages,
            cells,
            partner_ops,
            effect_presented,
            effect_maybe,
            broken: _,
        } = self.state();
        epochs.heap_bytes()
            + max_issued.heap_bytes()
            + max_done.heap_bytes()
            + open_grants.heap_bytes()
            + live.heap_bytes()
            + live_why.heap_bytes()
            + pending.heap_bytes()
            + grants.heap_bytes()
            + held.heap_bytes()
            + let_go.0.heap_bytes()
            + buffer::<Arc<Sender>>(senders.len())
            + senders
                .iter()
                .enumerate()
                .filter(|(i, sender)| {
                    let theirs = base.and_then(|b| b.state().senders.get(*i));
                    !theirs.is_some_and(|b| Arc::ptr_eq(b, sender))
                })
                .map(|(_, sender)| sender.heap_bytes())
                .sum::<usize>()
            + messages.heap_bytes()
            + shared_map(cells, base.map(|b| &b.state().cells))
            + partner_ops.heap_bytes()
            + effect_presented.heap_bytes()
            + effect_maybe.heap_bytes()
    }
}

impl Checker {
    /// Drops the checker and returns the heap bytes of the shared per-worker and per-cell
    /// records that it was the last to hold (those [`Checker::heap_bytes_beyond`] counts apart).
    pub(crate) fn drop_shared(self) -> usize {
        let CheckState { senders, cells, .. } = self.into_state();
        let senders: usize = senders.into_iter().map(freed).sum();
        senders + cells.into_iter().map(|(_, cell)| freed(cell)).sum::<usize>()
    }
}
