//! The conformance kit: plays the writes of fencing stories against any [`FencedStore`] and
//! compares every outcome with the in-memory reference, reporting the first divergence.
//!
//! After every write the kit compares the outcome, the resource's state ([`FencedStore::read`])
//! and, for the write's operation id, what the store remembers ([`FencedStore::lookup`]). A
//! factory that can reopen a store on the same state ([`Factory::reopen`]) is asked to, once a
//! case has been played, and the reopened store must hold the same state and still refuse a
//! stale generation. Every divergence names the [`Rule`] it breaks.
//!
//! - [`check_store`] plays each scenario's default schedule; [`check_cases`] plays any list of
//!   [`Case`]s, such as [`rule_cases`], one small case per rule.
//! - [`find_divergences`] goes on past the first divergence: the first of every case.
//! - [`explore_store`] plays the writes of every schedule of each scenario, within bounds.
//!
//! All of these play writes one at a time, so they cannot see a store whose `write` is not
//! atomic (a check, then the write, with a gap between). The `fencelab-kit` crate's
//! `check_concurrent` races several handles to one store for that; a store that passes here
//! and has not been through it is only known to be right one writer at a time.
//!
//! # What a store must make durable before it answers
//!
//! A store may acknowledge a write, or a refusal that raised the fence, only once the fence
//! record and the value are durable together: a crash that loses an acknowledged generation
//! re-admits every older owner it had fenced out, and nothing in the protocol can notice. So the
//! fence record commits in the same transaction as the value, and the commit is flushed to
//! stable storage before the answer (SQLite: WAL with `synchronous=FULL`; PostgreSQL:
//! `synchronous_commit` on for the commit, `fsync` and `full_page_writes` on for the server).
//! The reopen check ([`Rule::Durability`]) sees a store that keeps its fence in memory; only a
//! real crash shows a store that answers before its commit is on disk, so the SQLite and
//! PostgreSQL stores' own tests kill the writer or the server right after an acknowledgement.
//!
//! ```
//! use fencelab_core::{drive::conformance::check_store, drive::conformance::Conformance};
//! use fencelab_core::fence::store::MemoryStore;
//!
//! // Point `make` at your own store; here the reference is checked against itself.
//! let report = check_store(&fencelab_core::stories::library::all(), |spec| {
//!     Ok::<_, std::convert::Infallible>(MemoryStore::new(spec.policy, spec.retention))
//! });
//! assert!(matches!(report, Ok(Conformance { .. })));
//! ```

// A divergence is returned at most once per check, where it ends the check, so its size costs
// nothing; boxing it would only make it harder to match on.
#![allow(clippy::result_large_err)]

mod cases;
mod schedules;

/// The store's part of a scenario, which every factory is given.
use crate::format::model::StoreSpec;
pub use cases::rule_cases;
pub use schedules::{explore_store, Exploration, ScheduleOptions};

use crate::clock::Tick;
use crate::fence::generation::Generation;
use crate::fence::idempotency::{StoredResult, WriteOutcome};
use crate::fence::register::{WriteRejection, WriteRequest};
use crate::fence::store::{FencedStore, MemoryStore, StoredValue};
use crate::format::model::Scenario;
use crate::history::event::Event;
use crate::ids::{OperationId, ResourceId};
use crate::record::Engine;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fmt;

/// What a passing check covered.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Conformance {
    /// Scenarios (or cases) played.
    pub scenarios: usize,
    /// Writes compared.
    pub writes: usize,
    /// How many writes the reference answered each way, by [`outcome_kind`], e.g. `applied`,
    /// `replayed`, `rejected: stale generation`: what the check exercised.
    pub outcomes: BTreeMap<String, usize>,
    /// How many writes exercised each rule, by what the reference answered: an applied write
    /// [`Rule::Apply`], a replay [`Rule::Idempotency`], a stale generation [`Rule::Fence`], a
    /// revision conflict [`Rule::ExpectedRevision`]; reopens count [`Rule::Durability`], reads
    /// of a resource nothing wrote [`Rule::Read`] and lookups [`Rule::Lookup`].
    pub rules: BTreeMap<Rule, usize>,
    /// Operation ids looked up and compared.
    pub lookups: usize,
    /// Stores reopened and compared after the reopen.
    pub reopens: usize,
}

impl Conformance {
    fn count(&mut self, outcome: &WriteOutcome) {
        *self.outcomes.entry(outcome_kind(outcome)).or_default() += 1;
        self.writes += 1;
        let rule = match outcome {
            WriteOutcome::Applied(_) => Rule::Apply,
            WriteOutcome::Replayed(_) => Rule::Idempotency,
            WriteOutcome::Rejected(WriteRejection::RevisionConflict { .. }) => {
                Rule::ExpectedRevision
            }
            WriteOutcome::Rejected(_) => Rule::Fence,
        };
        self.exercised(rule);
    }

    fn exercised(&mut self, rule: Rule) {
        *self.rules.entry(rule).or_default() += 1;
    }
}

/// The rule of a fenced store that a divergence breaks.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// A superseded generation is refused and a current one admitted.
    Fence,
    /// A request that passes the generation check raises the fence, even when it is then
    /// replayed or refused for its expected revision.
    FenceRaise,
    /// The generation is checked before the operation id, and the operation id before the
    /// expected revision.
    CheckOrder,
    /// A remembered operation id is answered with its stored result and applied once.
    Idempotency,
    /// An operation id past its retention is forgotten.
    Retention,
    /// A write that expects another revision is refused.
    ExpectedRevision,
    /// An applied write sets the value and the next revision.
    Apply,
    /// `lookup` answers what the store remembers of an operation id.
    Lookup,
    /// A reopened store holds the same state and the same fence.
    Durability,
    /// A resource no request has passed reads as never written.
    Read,
    /// Overlapping writes end as some sequential order of them would.
    Linearizable,
}

impl Rule {
    /// The rule in one sentence.
    pub fn statement(self) -> &'static str {
        match self {
            Rule::Fence => "a superseded generation is refused and a current one admitted",
            Rule::FenceRaise => {
                "a request that passes the generation check raises the fence, even when replayed or refused"
            }
            Rule::CheckOrder => {
                "the generation is checked before the operation id, the operation id before the expected revision"
            }
            Rule::Idempotency => "a remembered operation id is answered from its record, not applied again",
            Rule::Retention => "an operation id past its retention is forgotten",
            Rule::ExpectedRevision => "a write that expects another revision is refused",
            Rule::Apply => "an applied write sets the value and the next revision",
            Rule::Lookup => "lookup answers what the store remembers of an operation id",
            Rule::Durability => "a reopened store keeps the state and the highest generation",
            Rule::Read => "a resource no request has passed reads as never written",
            Rule::Linearizable => "overlapping writes end as some order of them, one at a time, would",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.statement())
    }
}

/// The first place a store disagreed with the reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Divergence<E: std::error::Error> {
    /// The store returned a different outcome, state or lookup.
    #[error("{scenario}{}: write {} to {}, at {at} ({}): {what}: the reference says {expected}, the store says {actual} (rule: {rule})", show_schedule(schedule), index + 1, show_place(place, request), request)]
    Outcome {
        /// `name/variant` of the scenario, or the case's name.
        scenario: String,
        /// The choices that replay the run the writes came from, in the scenario `schedule`
        /// format (see [`Engine::schedule_so_far`]).
        schedule: Vec<usize>,
        /// Which write of that run, from 0; messages count from 1.
        index: usize,
        /// When it was made.
        at: Tick,
        /// `store/path/resource` by name.
        place: String,
        /// The write, with its resource renamed per store path.
        request: Box<WriteRequest>,
        /// What was compared: `outcome`, `state after`, `lookup after`, `state after reopen`.
        what: String,
        /// What the in-memory reference did.
        expected: String,
        /// What the store did.
        actual: String,
        /// The rule the store broke.
        rule: Rule,
    },
    /// The store failed.
    #[error("{scenario}: {}the store failed: {error}", show_write(*write))]
    Store {
        /// `name/variant` of the scenario.
        scenario: String,
        /// Which write of the case it failed on, from 0 (messages count from 1), when it
        /// failed on one.
        write: Option<usize>,
        /// Its error.
        error: E,
    },
}

impl<E: std::error::Error> Divergence<E> {
    /// The rule broken, unless the store failed.
    pub fn rule(&self) -> Option<Rule> {
        match self {
            Divergence::Outcome { rule, .. } => Some(*rule),
            Divergence::Store { .. } => None,
        }
    }
}

/// Where a write went, by name, and by the resource the store was given when that differs
/// (the kit renames each store path's resource so that every one is a resource of its own).
fn show_place(place: &str, request: &WriteRequest) -> String {
    match request.resource.as_str() {
        resource if resource == place => place.to_string(),
        resource => format!("{place} (resource {resource} in the store)"),
    }
}

/// The divergence of a store that failed in `case`, on write `write` (from 0) if on one.
fn failed<E: std::error::Error>(
    case: &Case,
    write: Option<usize>,
) -> impl Fn(E) -> Divergence<E> + '_ {
    move |error| Divergence::Store { scenario: case.name.clone(), write, error }
}

fn show_write(write: Option<usize>) -> String {
    write.map_or_else(String::new, |index| format!("write {}: ", index + 1))
}

fn show_schedule(schedule: &[usize]) -> String {
    if schedule.is_empty() {
        String::new()
    } else {
        let choices: Vec<String> = schedule.iter().map(usize::to_string).collect();
        format!(" (schedule [{}])", choices.join(", "))
    }
}

/// One write of a story, as the conformance kit replays it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoryWrite {
    /// When it reached the store.
    pub at: Tick,
    /// The request, its resource renamed `s<store>/p<path>/r<resource>` (indices) so that every
    /// store path is a resource of its own and names never grow too long.
    pub request: WriteRequest,
    /// The store it reached.
    pub spec: StoreSpec,
    /// `store/path/resource` by name, for messages.
    pub place: String,
}

/// A list of writes to play against a store: a story's run, or one of [`rule_cases`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// `name/variant` of the scenario, or what the case shows.
    pub name: String,
    /// The choices that replay the run the writes come from (empty for a hand-written case).
    pub schedule: Vec<usize>,
    /// The writes, in order.
    pub writes: Vec<StoryWrite>,
}

impl Case {
    /// The writes of `scenario`'s own schedule.
    pub fn of(scenario: &Scenario) -> Case {
        Case {
            name: format!("{}/{}", scenario.name, scenario.variant),
            schedule: scenario.schedule.clone(),
            writes: writes_of(scenario),
        }
    }
}

/// The writes that reached stores in a scenario's default run, in order.
pub fn writes_of(scenario: &Scenario) -> Vec<StoryWrite> {
    let Ok(mut engine) = Engine::new(scenario.clone()) else { return Vec::new() };
    // A schedule that does not fit is played as far as it goes.
    while let Ok(Some(_)) = engine.step() {}
    engine
        .records()
        .iter()
        .filter_map(|record| write_of(scenario, record.at, &record.event))
        .collect()
}

/// The write an event brings to a store, if it brings one.
pub(crate) fn write_of(scenario: &Scenario, at: Tick, event: &Event) -> Option<StoryWrite> {
    match event {
        Event::WriteArrived { store, path, request, .. }
        | Event::CheckPassed { store, path, request, .. } => {
            let s = scenario.stores.iter().position(|s| &s.name == store)?;
            let spec = scenario.stores[s].clone();
            let p = spec.paths.iter().position(|p| &p.name == path).map_or(0, |p| p + 1);
            let r = scenario.resources.iter().position(|r| *r == request.resource.as_str())?;
            let place = format!("{store}/{path}/{}", request.resource);
            let mut request = request.clone();
            request.resource = ResourceId::new(format!("s{s}/p{p}/r{r}")).ok()?;
            Some(StoryWrite { at, request, spec, place })
        }
        _ => None,
    }
}

/// Where a check gets its stores: [`factory`] wraps a closure that makes a fresh store for a
/// store spec, and [`Factory::reopen`] adds the optional capability of reopening a store on the
/// same state (a new connection to the same file, a restarted process).
pub trait StoreFactory<S: FencedStore> {
    /// A fresh, empty store for `spec` (its policy and retention).
    fn make(&mut self, spec: &StoreSpec) -> Result<S, S::Error>;

    /// `store` closed and opened again on the same state, or `None` if this factory cannot
    /// reopen stores.
    fn reopen(&mut self, spec: &StoreSpec, store: S) -> Option<Result<S, S::Error>> {
        let _ = (spec, store);
        None
    }
}

/// A factory lent to a check is a factory.
impl<S: FencedStore, F: StoreFactory<S>> StoreFactory<S> for &mut F {
    fn make(&mut self, spec: &StoreSpec) -> Result<S, S::Error> {
        (**self).make(spec)
    }

    fn reopen(&mut self, spec: &StoreSpec, store: S) -> Option<Result<S, S::Error>> {
        (**self).reopen(spec, store)
    }
}

/// A [`StoreFactory`] made of closures; see [`factory`].
pub struct Factory<M, R> {
    make: M,
    reopen: R,
}

/// The factory of a store that cannot be reopened.
pub struct NoReopen;

/// A factory from a closure that makes a fresh store for a store spec.
///
/// ```
/// use fencelab_core::{drive::conformance::check_cases, drive::conformance::factory, drive::conformance::rule_cases};
/// use fencelab_core::fence::store::MemoryStore;
///
/// let fresh = factory(|spec| Ok(MemoryStore::new(spec.policy, spec.retention)));
/// // A reopened store here is the same store; a database would open a new connection.
/// let report = check_cases(&rule_cases(), fresh.reopen(|_, store| Ok(store))).unwrap();
/// assert!(report.reopens > 0 && report.lookups > 0);
/// ```
pub fn factory<S, M>(make: M) -> Factory<M, NoReopen>
where
    S: FencedStore,
    M: FnMut(&StoreSpec) -> Result<S, S::Error>,
{
    Factory { make, reopen: NoReopen }
}

impl<M> Factory<M, NoReopen> {
    /// Adds the capability to reopen a store: `reopen(spec, store)` closes `store` and opens it
    /// again on the same state.
    pub fn reopen<S, R>(self, reopen: R) -> Factory<M, R>
    where
        S: FencedStore,
        R: FnMut(&StoreSpec, S) -> Result<S, S::Error>,
    {
        Factory { make: self.make, reopen }
    }
}

impl<S, M> StoreFactory<S> for Factory<M, NoReopen>
where
    S: FencedStore,
    M: FnMut(&StoreSpec) -> Result<S, S::Error>,
{
    fn make(&mut self, spec: &StoreSpec) -> Result<S, S::Error> {
        (self.make)(spec)
    }
}

impl<S, M, R> StoreFactory<S> for Factory<M, R>
where
    S: FencedStore,
    M: FnMut(&StoreSpec) -> Result<S, S::Error>,
    R: FnMut(&StoreSpec, S) -> Result<S, S::Error>,
{
    fn make(&mut self, spec: &StoreSpec) -> Result<S, S::Error> {
        (self.make)(spec)
    }

    fn reopen(&mut self, spec: &StoreSpec, store: S) -> Option<Result<S, S::Error>> {
        Some((self.reopen)(spec, store))
    }
}

/// Plays the writes of each scenario against a fresh store from `make` (given the spec of the
/// scenario's store, for its policy and retention) and against the reference, comparing every
/// outcome, the state and lookup after every write, and the final state of every resource.
pub fn check_store<S: FencedStore>(
    scenarios: &[Scenario],
    make: impl FnMut(&StoreSpec) -> Result<S, S::Error>,
) -> Result<Conformance, Divergence<S::Error>> {
    let cases: Vec<Case> = scenarios.iter().map(Case::of).collect();
    check_cases(&cases, factory(make))
}

/// Plays each case against fresh stores from `stores` and the reference, as [`check_store`]
/// does, and reopens every store at the end of a case if the factory can.
///
/// ```
/// use fencelab_core::{drive::conformance::check_cases, drive::conformance::factory, drive::conformance::rule_cases};
/// use fencelab_core::fence::store::MemoryStore;
///
/// let report =
///     check_cases(&rule_cases(), factory(|spec| Ok(MemoryStore::new(spec.policy, spec.retention))))
///         .unwrap();
/// assert!(report.outcomes["replayed"] > 0);
/// ```
pub fn check_cases<S: FencedStore>(
    cases: &[Case],
    mut stores: impl StoreFactory<S>,
) -> Result<Conformance, Divergence<S::Error>> {
    let mut report = Conformance::default();
    for case in cases {
        check_case(case, &mut stores, &mut report)?;
    }
    Ok(report)
}

/// Every divergence of a check that went on past the first: one per case at most, since a
/// store that diverged holds another state than the reference from then on.
#[derive(Debug)]
pub struct Findings<E: std::error::Error> {
    /// What the cases played, up to where each diverged.
    pub report: Conformance,
    /// The first divergence of each case that had one, in the order of the cases.
    pub divergences: Vec<Divergence<E>>,
}

/// Plays every case as [`check_cases`] does, but goes on to the next case after a divergence
/// (or a store error) and collects them all.
///
/// ```
/// use fencelab_core::{drive::conformance::factory, drive::conformance::find_divergences, drive::conformance::rule_cases};
/// use fencelab_core::fence::store::MemoryStore;
///
/// let fresh = factory(|spec| Ok(MemoryStore::new(spec.policy, spec.retention)));
/// let findings = find_divergences(&rule_cases(), fresh);
/// assert!(findings.divergences.is_empty());
/// assert_eq!(findings.report.scenarios, rule_cases().len());
/// ```
pub fn find_divergences<S: FencedStore>(
    cases: &[Case],
    mut stores: impl StoreFactory<S>,
) -> Findings<S::Error> {
    let mut findings = Findings { report: Conformance::default(), divergences: Vec::new() };
    for case in cases {
        if let Err(divergence) = check_case(case, &mut stores, &mut findings.report) {
            findings.divergences.push(divergence);
        }
    }
    findings
}

/// Plays one case against fresh stores, reads a resource nothing wrote, and reopens the stores
/// if the factory can.
fn check_case<S: FencedStore>(
    case: &Case,
    stores: &mut impl StoreFactory<S>,
    report: &mut Conformance,
) -> Result<(), Divergence<S::Error>> {
    let mut open = Stores::default();
    play(case, &case.writes, stores, &mut open, report)?;
    let last = case.writes.iter().map(|w| w.at).max().unwrap_or_default();
    never_written(case, &mut open)?;
    report.exercised(Rule::Read);
    for (spec, store, reference) in std::mem::take(&mut open.0) {
        let Some(reopened) = stores.reopen(&spec, store) else { continue };
        let mut pair = (reopened.map_err(failed(case, None))?, reference);
        after_reopen(case, &spec, &mut pair, Tick(last.0 + 1))?;
        report.reopens += 1;
        report.exercised(Rule::Durability);
    }
    report.scenarios += 1;
    Ok(())
}

/// The stores of one case (or one story), each beside its reference.
pub(crate) struct Stores<S>(pub(crate) Vec<(StoreSpec, S, MemoryStore)>);

impl<S> Default for Stores<S> {
    fn default() -> Self {
        Stores(Vec::new())
    }
}

/// Plays `writes` (those of `case`, perhaps renamed) against the stores, making those it lacks.
pub(crate) fn play<S: FencedStore>(
    case: &Case,
    writes: &[StoryWrite],
    factory: &mut impl StoreFactory<S>,
    stores: &mut Stores<S>,
    report: &mut Conformance,
) -> Result<(), Divergence<S::Error>> {
    // The operations the reference has applied, so a retry it applies again is known to be
    // one whose id it forgot.
    let mut applied: HashSet<(ResourceId, OperationId)> = HashSet::new();
    for (index, write) in writes.iter().enumerate() {
        let spec = &write.spec;
        let position = match stores.0.iter().position(|(s, _, _)| s.name == spec.name) {
            Some(position) => position,
            None => {
                let store = factory.make(spec).map_err(failed(case, None))?;
                let reference = MemoryStore::new(spec.policy, spec.retention);
                stores.0.push((spec.clone(), store, reference));
                stores.0.len() - 1
            }
        };
        let (_, store, reference) = &mut stores.0[position];
        let (request, at) = (&write.request, write.at);
        let diverge =
            |what: &str, expected: String, actual: String, rule: Rule| Divergence::Outcome {
                scenario: case.name.clone(),
                schedule: case.schedule.clone(),
                index,
                at,
                place: write.place.clone(),
                request: Box::new(request.clone()),
                what: what.into(),
                expected,
                actual,
                rule,
            };
        let expected = infallible(reference.write(request, at));
        let key = (request.resource.clone(), request.operation.clone());
        let applied_before = applied.contains(&key);
        if expected.is_applied() {
            applied.insert(key);
        }
        let actual = store.write(request, at).map_err(failed(case, Some(index)))?;
        if actual != expected {
            let rule = outcome_rule(&expected, &actual, applied_before);
            return Err(diverge("outcome", expected.to_string(), actual.to_string(), rule));
        }
        report.count(&expected);
        let want = infallible(reference.read(&request.resource));
        let got = store.read(&request.resource).map_err(failed(case, Some(index)))?;
        if got != want {
            let rule = state_rule(&expected, &want, &got);
            return Err(diverge("state after", show_value(&want), show_value(&got), rule));
        }
        let want = infallible(reference.lookup(&request.resource, &request.operation));
        let got = store
            .lookup(&request.resource, &request.operation)
            .map_err(failed(case, Some(index)))?;
        if got != want {
            let (want, got) = (show_lookup(&want), show_lookup(&got));
            return Err(diverge("lookup after", want, got, Rule::Lookup));
        }
        report.lookups += 1;
        report.exercised(Rule::Lookup);
    }
    Ok(())
}

/// Compares a read of a resource nothing wrote, in every store of the case.
fn never_written<S: FencedStore>(
    case: &Case,
    stores: &mut Stores<S>,
) -> Result<(), Divergence<S::Error>> {
    let resource = ResourceId::new("kit/never-written").expect("a valid id");
    for (spec, store, _) in &mut stores.0 {
        let got = store.read(&resource).map_err(failed(case, None))?;
        if got.is_some() {
            let request = WriteRequest::new(
                resource.clone(),
                Generation::FIRST,
                OperationId::new("kit-read").expect("a valid id"),
                None,
                "",
            );
            return Err(Divergence::Outcome {
                scenario: case.name.clone(),
                schedule: case.schedule.clone(),
                index: case.writes.len(),
                at: case.writes.last().map_or(Tick(0), |w| w.at),
                place: format!("{}/kit/never-written", spec.name),
                request: Box::new(request),
                what: "read of a resource nothing wrote".into(),
                expected: show_value(&None),
                actual: show_value(&got),
                rule: Rule::Read,
            });
        }
    }
    Ok(())
}

/// Compares a reopened store with the reference: the state of every resource the case wrote,
/// then a write under the first generation, which must be refused wherever a newer one passed.
/// A state that differs breaks durability; a probe answered otherwise by a store whose state
/// came back whole breaks the rule its outcome names (a policy compared wrongly, say), and the
/// probe counts as the write after the case's last.
fn after_reopen<S: FencedStore>(
    case: &Case,
    spec: &StoreSpec,
    (store, reference): &mut (S, MemoryStore),
    at: Tick,
) -> Result<(), Divergence<S::Error>> {
    let mut seen: Vec<&ResourceId> = Vec::new();
    for (index, write) in case.writes.iter().enumerate() {
        let resource = &write.request.resource;
        if write.spec.name != spec.name || seen.contains(&resource) {
            continue;
        }
        seen.push(resource);
        let probe = WriteRequest {
            generation: Generation::FIRST,
            operation: OperationId::new("kit-probe-after-reopen").expect("a valid id"),
            expected_revision: None,
            value: "probe after reopen".into(),
            ..write.request.clone()
        };
        let diverge = |index, what: &str, (expected, actual), request: &WriteRequest, rule| {
            Divergence::Outcome {
                scenario: case.name.clone(),
                schedule: case.schedule.clone(),
                index,
                at,
                place: write.place.clone(),
                request: Box::new(request.clone()),
                what: what.into(),
                expected,
                actual,
                rule,
            }
        };
        let want = infallible(reference.read(resource));
        let got = store.read(resource).map_err(failed(case, None))?;
        if got != want {
            let shown = (show_value(&want), show_value(&got));
            let what = "state after reopen";
            return Err(diverge(index, what, shown, &write.request, Rule::Durability));
        }
        let expected = infallible(reference.write(&probe, at));
        let actual = store.write(&probe, at).map_err(failed(case, None))?;
        if actual != expected {
            let rule = outcome_rule(&expected, &actual, false);
            let shown = (expected.to_string(), actual.to_string());
            let probe_index = case.writes.len();
            return Err(diverge(probe_index, "outcome after reopen", shown, &probe, rule));
        }
    }
    Ok(())
}

fn infallible<T>(result: Result<T, std::convert::Infallible>) -> T {
    result.unwrap_or_else(|never| match never {})
}

/// Which rule a different outcome breaks. `applied_before` says whether the reference had
/// applied this operation before, so a replay the reference does not give is one of an id it
/// forgot.
fn outcome_rule(expected: &WriteOutcome, actual: &WriteOutcome, applied_before: bool) -> Rule {
    use WriteOutcome::{Applied, Rejected, Replayed};
    let stale = |o: &WriteOutcome| matches!(o, Rejected(WriteRejection::Stale { .. }));
    let conflict =
        |o: &WriteOutcome| matches!(o, Rejected(WriteRejection::RevisionConflict { .. }));
    match (expected, actual) {
        (Rejected(WriteRejection::Stale { presented, highest }), Replayed(_))
            if presented < highest =>
        {
            Rule::CheckOrder
        }
        (e, Replayed(_)) if applied_before && !matches!(e, Replayed(_)) => Rule::Retention,
        (e, _) | (_, e) if stale(e) => Rule::Fence,
        (e, Replayed(_)) | (Replayed(_), e) if conflict(e) => Rule::CheckOrder,
        (e, _) | (_, e) if conflict(e) => Rule::ExpectedRevision,
        (Applied(_), Replayed(_)) | (Replayed(_), _) => Rule::Idempotency,
        _ => Rule::Apply,
    }
}

/// Which rule a different state after a write with the right outcome breaks.
fn state_rule(
    outcome: &WriteOutcome,
    want: &Option<StoredValue>,
    got: &Option<StoredValue>,
) -> Rule {
    let highest = |v: &Option<StoredValue>| v.as_ref().and_then(|v| v.highest);
    if highest(want) == highest(got) {
        Rule::Apply
    } else if outcome.is_applied() {
        Rule::Fence
    } else {
        Rule::FenceRaise
    }
}

/// The kind of an outcome, for counting: `applied`, `replayed` or `rejected: <reason>`.
pub fn outcome_kind(outcome: &WriteOutcome) -> String {
    match outcome {
        WriteOutcome::Applied(_) => "applied".into(),
        WriteOutcome::Replayed(_) => "replayed".into(),
        WriteOutcome::Rejected(rejection) => format!("rejected: {}", rejection.reason()),
    }
}

fn show_lookup(stored: &Option<StoredResult>) -> String {
    match stored {
        Some(stored) => stored.to_string(),
        None => "nothing remembered".into(),
    }
}

/// A resource's state in words: its [`StoredValue`], or `never written`.
pub fn show_value(value: &Option<StoredValue>) -> String {
    value.as_ref().map_or_else(|| "never written".into(), StoredValue::to_string)
}
