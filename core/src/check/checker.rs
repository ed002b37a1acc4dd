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
use crate::fence::generation::Generation;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::WriteRejection;
use crate::history::event::{Event, TokenKind};
use crate::history::{Entry, Setup};
use crate::maps::StringSet;
use litemap::LiteMap;
use std::collections::BTreeMap;
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
    setup: Arc<Setup>,
    state: CheckState,
}

impl std::hash::Hash for Checker {
    /// Hashes what the checker has learnt; the setup is the same for every state of a run.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.state.hash(h);
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

/// The checker's ghost state, derived from the events seen so far.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct CheckState {
    /// Grants so far, per resource.
    pub epochs: BTreeMap<String, u64>,
    /// The highest generation ever issued, per resource, across restarts.
    pub max_issued: BTreeMap<String, Generation>,
    /// The lease the authority currently honours, per resource: (epoch, valid until).
    pub live: BTreeMap<String, (u64, Tick)>,
    /// Grants on their way, by message: their epochs.
    pub grants: BTreeMap<u64, u64>,
    /// The lease each worker believes it holds, per (worker, resource): its epoch.
    pub held: BTreeMap<(String, String), u64>,
    /// Per worker: the requests it has sent.
    pub senders: BTreeMap<String, Sender>,
    /// Requests on their way or waiting to commit, by message.
    pub messages: BTreeMap<u64, Sent>,
    /// Per (store, data, resource).
    pub cells: LiteMap<(String, String, String), Arc<CellCheck>>,
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

/// What the checker knows about one piece of data in one store.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct CellCheck {
    /// The newest lease epoch whose write reached this data's boundary, and whose it was,
    /// whatever the boundary then did with it (applied, refused, replayed, waiting to commit).
    pub max_presented: Option<(u64, String)>,
    /// The epoch and writer of the last applied write.
    pub last: Option<(u64, String)>,
    /// Where the store's highest generation came from: the token of the request that last
    /// raised it.
    pub highest_token: Option<TokenKind>,
    /// Operations applied here.
    pub applied_ops: StringSet,
    /// The newest lease whose write applied, or was fenced out although no newer lease had
    /// reached this data.
    pub max_attempted: Option<(u64, String)>,
    /// Per writer, the (epoch, order) of its newest applied write.
    pub last_seq: BTreeMap<String, (u64, u64)>,
}

impl Checker {
    /// A checker for histories of `setup`.
    pub fn new(setup: Setup) -> Checker {
        Checker { setup: Arc::new(setup), state: CheckState::default() }
    }

    /// The setup it checks against.
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// The kinds broken so far.
    pub fn broken(&self) -> impl Iterator<Item = InvariantKind> + '_ {
        InvariantKind::ALL.into_iter().zip(self.state.broken).filter_map(|(k, b)| b.then_some(k))
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
        let mut found = Vec::new();
        // Stores in the order the setup lists them, so reports read in the system's own order.
        let order = |store: &str| self.setup.stores.iter().position(|s| s.name == store);
        let mut cells: Vec<_> = self.state.cells.iter().collect();
        cells.sort_by_key(|((store, data, resource), _)| (order(store), data, resource));
        for ((store, data, resource), cell) in cells {
            if !self.critical(store) {
                continue;
            }
            let (Some((last_epoch, writer)), Some((latest, owner))) =
                (&cell.last, &cell.max_attempted)
            else {
                continue;
            };
            if last_epoch >= latest {
                continue;
            }
            let place = store_place(store, data, data, resource);
            let text = place_text(store, data, resource);
            let detail = if *last_epoch == 0 {
                format!("{text} ends with {writer}'s value, which no lease backs, though a write under {owner}'s lease reached it too")
            } else {
                format!("{text} ends with {writer}'s value, though a write under {owner}'s newer lease reached it too")
            };
            found.push(Violation {
                invariant: InvariantKind::FinalValueNotFromLatestOwner,
                step: last,
                detail,
                place: Some(place),
            });
        }
        for v in &found {
            self.state.broken[v.invariant as usize] = true;
        }
        found
    }

    fn critical(&self, store: &str) -> bool {
        self.setup.store(store).is_none_or(|s| s.critical)
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
        self.out.violations.push(Violation { invariant, step, detail, place: Some(place) });
    }

    fn event(&mut self, event: &Event) {
        match event {
            Event::LeaseGranted { resource, generation, valid_until, message, .. } => {
                self.granted(resource, *generation, *valid_until, *message)
            }
            Event::GrantReceived { worker, resource, message, .. } => {
                let state = self.state();
                if let Some(epoch) = state.grants.remove(message) {
                    state.held.insert((worker.clone(), resource.clone()), epoch);
                }
            }
            Event::Renewed { worker, resource, valid_until, .. } => {
                let state = self.state();
                let epoch = state.held.get(&(worker.clone(), resource.clone())).copied();
                state.live.insert(resource.clone(), (epoch.unwrap_or(0), *valid_until));
            }
            Event::RenewFailed { worker, resource, .. } => {
                self.state().held.remove(&(worker.clone(), resource.clone()));
            }
            Event::Released { worker, resource, .. } => {
                let state = self.state();
                let held = state.held.remove(&(worker.clone(), resource.clone()));
                // The authority honours the release only from the lease it currently holds.
                if held.is_some() && state.live.get(resource).map(|l| l.0) == held {
                    state.live.remove(resource);
                }
            }
            Event::LeaseExpired { resource, .. } => {
                self.state().live.remove(resource);
            }
            Event::AuthorityRestarted { counter_kept: false } => self.state().live.clear(),
            Event::WriteSent { worker, message, request, token, retry, .. } => self.sent(
                worker,
                *message,
                request.resource.as_str(),
                request.operation.as_str(),
                *token,
                *retry,
            ),
            Event::EffectSent { worker, message, request, token, retry, resource, .. } => {
                self.sent(worker, *message, resource, request.operation.as_str(), *token, *retry)
            }
            Event::CheckPassed { worker, message, store, data, request, .. } => {
                if let Some(sent) = self.state().messages.get(message).copied() {
                    self.presented(store, data, request.resource.as_str(), sent.epoch, worker);
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
                let newest =
                    self.state().effect_presented.entry(request.workflow.to_string()).or_insert(0);
                *newest = (*newest).max(sent.epoch);
            }
            _ => {}
        }
    }

    fn granted(&mut self, resource: &str, generation: Generation, until: Tick, message: u64) {
        let state = self.state();
        let epoch = state.epochs.entry(resource.to_string()).or_insert(0);
        *epoch += 1;
        let epoch = *epoch;
        let previous = state.max_issued.get(resource).copied();
        state
            .max_issued
            .insert(resource.to_string(), previous.max(Some(generation)).unwrap_or(generation));
        state.live.insert(resource.to_string(), (epoch, until));
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
        let state = self.state();
        let held = state.held.get(&(worker.to_string(), resource.to_string())).copied();
        let sender = state.senders.entry(worker.to_string()).or_default();
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
            && state.live.get(resource).is_some_and(|(e, until)| *e == epoch && now < *until);
        state.messages.insert(message, Sent { epoch, valid, seq, token });
    }

    fn cell(&mut self, store: &str, data: &str, resource: &str) -> &mut CellCheck {
        let key = (store.to_string(), data.to_string(), resource.to_string());
        Arc::make_mut(self.state().cells.entry(key).or_default())
    }

    /// Records that a request under lease `epoch` reached the boundary of `data`, whatever the
    /// boundary then did with it: from now on every older lease is superseded there.
    fn presented(&mut self, store: &str, data: &str, resource: &str, epoch: u64, worker: &str) {
        let cell = self.cell(store, data, resource);
        if cell.max_presented.as_ref().is_none_or(|(e, _)| epoch > *e) {
            cell.max_presented = Some((epoch, worker.to_string()));
        }
    }

    /// A write reached its boundary and the boundary answered it.
    fn settle(&mut self, write: Write, before: Option<Generation>, after: Option<Generation>) {
        let Write { worker, store, path, data, request, outcome, sent } = write;
        let resource = request.resource.as_str();
        let cell = self.cell(store, data, resource).clone();
        let newest = cell.max_presented.as_ref().is_none_or(|(e, _)| sent.epoch >= *e);
        // Only a generation below the highest is taken for a stale owner; "already written"
        // under the strict policy is the policy at work, not a misjudged owner.
        let below = matches!(
            outcome,
            WriteOutcome::Rejected(WriteRejection::Stale { presented, highest }) if presented < highest
        );
        if sent.epoch != 0 && below && newest {
            self.out.misfenced = Some(cell.highest_token.unwrap_or(TokenKind::Lease));
        }
        // For the final value, a write counts as the latest owner's attempt when it applied, or
        // when the fence refused it although no newer lease had reached this data: then the
        // refusal wronged its writer (a forged, clock-made or reset generation). A refusal
        // because a newer lease did show up, a replay or a revision conflict is the store
        // working as designed and says nothing about whose value should win.
        let superseded = cell.max_presented.as_ref().is_some_and(|(e, _)| sent.epoch < *e);
        let fenced_out = !superseded
            && matches!(
                outcome,
                WriteOutcome::Rejected(
                    WriteRejection::Stale { .. } | WriteRejection::InvalidToken(_)
                )
            );
        if outcome.is_applied() || fenced_out {
            let cell = self.cell(store, data, resource);
            if cell.max_attempted.as_ref().is_none_or(|(e, _)| sent.epoch > *e) {
                cell.max_attempted = Some((sent.epoch, worker.to_string()));
            }
        }
        if outcome.is_applied() && self.checker.critical(store) {
            self.accepted(worker, store, path, data, request, sent);
        }
        self.presented(store, data, resource, sent.epoch, worker);
        if after != before && after == Some(request.generation) {
            self.cell(store, data, resource).highest_token = Some(sent.token);
        }
    }

    /// A critical store applied a write.
    fn accepted(
        &mut self,
        who: &str,
        store: &str,
        path: &str,
        data: &str,
        request: &crate::fence::register::WriteRequest,
        sent: Sent,
    ) {
        let resource = request.resource.as_str();
        let text = place_text(store, path, resource);
        let cell = self.cell(store, data, resource);
        let mut found = Vec::new();
        if let Some((_, newer)) = cell.max_presented.as_ref().filter(|(e, _)| sent.epoch < *e) {
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
        if let Some((epoch, seq)) = cell.last_seq.get(who) {
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
        let newest = cell.last_seq.entry(who.to_string()).or_insert((sent.epoch, sent.seq));
        if (sent.epoch, sent.seq) > *newest {
            *newest = (sent.epoch, sent.seq);
        }
        cell.last = Some((sent.epoch, who.to_string()));
        let place = store_place(store, path, data, resource);
        for (kind, detail) in found {
            self.violation(kind, detail, place.clone());
        }
    }

    /// The partner received an effect.
    fn delivered(&mut self, who: &str, request: &crate::fence::gateway::EffectRequest, sent: Sent) {
        let workflow = request.workflow.to_string();
        let state = self.state();
        let mut found = Vec::new();
        if !state
            .partner_ops
            .entry(workflow.clone())
            .or_default()
            .insert(request.operation.to_string())
        {
            found.push((
                InvariantKind::EffectDeliveredTwice,
                format!(
                    "the partner received operation {} ({}) of {workflow} a second time",
                    request.operation, request.effect
                ),
            ));
        }
        if state.effect_presented.get(&workflow).is_some_and(|newest| sent.epoch < *newest) {
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
    request: &'a crate::fence::register::WriteRequest,
    outcome: &'a WriteOutcome,
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
    if path == "primary" {
        format!("{resource} in {store}")
    } else {
        format!("{resource} in {store}/{path}")
    }
}
