//! A zoo of deliberately wrong fenced stores, each caught by the conformance kit with the rule
//! it breaks named. A test here fails if the kit stops catching its store, or names another
//! rule.

use fencelab_core::format::model::StoreSpec;
use fencelab_core::stories::library;
use fencelab_core::*;
use fencelab_core::{
    drive::conformance::check_cases, drive::conformance::factory,
    drive::conformance::find_divergences, drive::conformance::rule_cases, drive::conformance::Case,
    drive::conformance::Divergence, drive::conformance::Rule, drive::conformance::StoreFactory,
};
use fencelab_core::{
    fence::boundary::FencedResource, fence::idempotency::Retention,
    fence::idempotency::StoredResult, fence::register::FencedRegister,
    fence::register::SameGenerationPolicy, fence::register::WriteRejection,
    fence::store::MemoryStore, fence::store::StoredValue,
};
use fencelab_kit::{articles_race, check_concurrent, races, ConcurrencyError, ConcurrentOptions};
use fencelab_kit::{check_all, Check, KitOptions, KitReport};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

type Resources = BTreeMap<ResourceId, FencedResource>;

/// The resource a request names, created with the store's policy and retention.
fn entry<'a>(
    resources: &'a mut Resources,
    spec: &StoreSpec,
    resource: &ResourceId,
) -> &'a mut FencedResource {
    resources.entry(resource.clone()).or_insert_with(|| {
        FencedResource::new(FencedRegister::new(resource.clone(), spec.policy), spec.retention)
    })
}

fn read(resources: &Resources, resource: &ResourceId) -> Option<StoredValue> {
    resources.get(resource).filter(|r| r.register.highest().is_some()).map(|r| StoredValue {
        highest: r.register.highest(),
        value: r.register.value().map(str::to_string),
        revision: r.register.revision(),
    })
}

fn lookup(
    resources: &Resources,
    resource: &ResourceId,
    operation: &OperationId,
) -> Option<StoredResult> {
    resources.get(resource).and_then(|r| r.idempotency.lookup(operation)).copied()
}

/// Implements `read` and `lookup` the right way for a store whose `resources` field is a map.
macro_rules! honest_reads {
    () => {
        fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Infallible> {
            Ok(read(&self.resources, resource))
        }

        fn lookup(
            &mut self,
            resource: &ResourceId,
            operation: &OperationId,
        ) -> Result<Option<StoredResult>, Infallible> {
            Ok(lookup(&self.resources, resource, operation))
        }
    };
}

/// Wrong: keeps the highest generation as text and compares it so ("10" < "9"), as a store that
/// puts tokens in a TEXT column, a JSON string or a key name does.
struct TextGenerations {
    spec: StoreSpec,
    resources: Resources,
}

impl FencedStore for TextGenerations {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let resource = entry(&mut self.resources, &self.spec, &request.resource);
        if let Some(highest) = resource.register.highest() {
            if request.generation.to_string() < highest.to_string() {
                let stale = WriteRejection::Stale { presented: request.generation, highest };
                return Ok(WriteOutcome::Rejected(stale));
            }
        }
        Ok(resource.write(request, now))
    }

    honest_reads!();
}

/// Wrong: remembers operation ids but never checks the generation.
struct NoFence {
    spec: StoreSpec,
    resources: Resources,
}

impl FencedStore for NoFence {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let resource = entry(&mut self.resources, &self.spec, &request.resource);
        if let Some(stored) = resource.idempotency.lookup(&request.operation) {
            return Ok(WriteOutcome::Replayed(*stored));
        }
        let applied = resource.register.write_unchecked(request);
        let stored = StoredResult { generation: request.generation, applied, recorded_at: now };
        resource.idempotency.record(request.operation.clone(), stored);
        Ok(WriteOutcome::Applied(applied))
    }

    honest_reads!();
}

/// Wrong: answers a remembered operation id without raising the fence to the request's
/// generation, so a newer owner's retry leaves the older owner admitted.
struct ReplayWithoutRaise {
    spec: StoreSpec,
    resources: Resources,
}

impl FencedStore for ReplayWithoutRaise {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let resource = entry(&mut self.resources, &self.spec, &request.resource);
        if resource.register.check_generation(request.generation).is_ok() {
            if let Some(stored) = resource.idempotency.lookup(&request.operation) {
                return Ok(WriteOutcome::Replayed(*stored));
            }
        }
        Ok(resource.write(request, now))
    }

    honest_reads!();
}

/// Wrong: looks the operation id up before checking the generation, so a stale owner's retry
/// of a remembered id is answered instead of refused.
struct OperationBeforeGeneration {
    spec: StoreSpec,
    resources: Resources,
}

impl FencedStore for OperationBeforeGeneration {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let resource = entry(&mut self.resources, &self.spec, &request.resource);
        if let Some(stored) = resource.idempotency.lookup(&request.operation).copied() {
            // It does raise the fence for a generation that passes, as the rules say.
            if resource.register.check_generation(request.generation).is_ok() {
                resource.register.pass_fence(request.generation);
            }
            return Ok(WriteOutcome::Replayed(stored));
        }
        Ok(resource.write(request, now))
    }

    honest_reads!();
}

/// Wrong: checks the expected revision before the operation id, so a retry of an applied
/// conditional write is refused instead of answered.
struct RevisionBeforeOperation {
    spec: StoreSpec,
    resources: Resources,
}

impl FencedStore for RevisionBeforeOperation {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let resource = entry(&mut self.resources, &self.spec, &request.resource);
        if resource.register.check_generation(request.generation).is_ok() {
            if let Err(conflict) = resource.register.check_revision(request) {
                resource.register.pass_fence(request.generation);
                return Ok(WriteOutcome::Rejected(conflict));
            }
        }
        Ok(resource.write(request, now))
    }

    honest_reads!();
}

/// Wrong: remembers every operation id forever, whatever the retention says.
struct RetentionIgnored {
    spec: StoreSpec,
    resources: Resources,
}

impl FencedStore for RetentionIgnored {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let spec = StoreSpec { retention: Retention::FOREVER, ..self.spec.clone() };
        Ok(entry(&mut self.resources, &spec, &request.resource).write(request, now))
    }

    honest_reads!();
}

/// Wrong: writes correctly but `lookup` never finds anything.
struct LookupBroken(MemoryStore);

impl FencedStore for LookupBroken {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        self.0.write(request, now)
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Infallible> {
        self.0.read(resource)
    }

    fn lookup(
        &mut self,
        _: &ResourceId,
        _: &OperationId,
    ) -> Result<Option<StoredResult>, Infallible> {
        Ok(None)
    }
}

/// Wrong: keeps the highest generation beside its rows, not with them, so a reopened store has
/// the values and operation ids but not the fence.
struct HighestInMemory {
    spec: StoreSpec,
    disk: Arc<Mutex<Resources>>,
}

impl HighestInMemory {
    fn reopen(self) -> HighestInMemory {
        for resource in self.disk.lock().unwrap().values_mut() {
            resource.register.forget_highest();
        }
        self
    }

    /// A new handle to the same disk: a new process, which starts without the fence.
    fn open(spec: &StoreSpec) -> impl FnMut() -> Result<HighestInMemory, Infallible> {
        let (spec, disk) = (spec.clone(), Arc::<Mutex<Resources>>::default());
        move || Ok(HighestInMemory { spec: spec.clone(), disk: disk.clone() }.reopen())
    }
}

impl FencedStore for HighestInMemory {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let mut disk = self.disk.lock().unwrap();
        Ok(entry(&mut disk, &self.spec, &request.resource).write(request, now))
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Infallible> {
        Ok(read(&self.disk.lock().unwrap(), resource))
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, Infallible> {
        Ok(lookup(&self.disk.lock().unwrap(), resource, operation))
    }
}

/// Wrong: counts the retention's capacity across the whole store, not per resource, so a write
/// to one resource forgets another's ids and a retry there applies twice.
struct RetentionAcrossResources {
    spec: StoreSpec,
    resources: Resources,
    /// Every id recorded, oldest first, with its resource.
    recorded: std::collections::VecDeque<(ResourceId, OperationId)>,
}

impl FencedStore for RetentionAcrossResources {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let outcome = entry(&mut self.resources, &self.spec, &request.resource).write(request, now);
        if outcome.is_applied() {
            self.recorded.push_back((request.resource.clone(), request.operation.clone()));
        }
        let capacity = self.spec.retention.max_entries.map_or(usize::MAX, |n| n.get());
        while self.recorded.len() > capacity {
            let Some((resource, operation)) = self.recorded.pop_front() else { break };
            if let Some(r) = self.resources.get_mut(&resource) {
                r.idempotency.forget(&operation, now);
            }
        }
        Ok(outcome)
    }

    honest_reads!();
}

/// Wrong under the strict policy: refuses every generation at or below the highest unless its
/// operation id is remembered, as if the highest had always acted, so a generation that raised
/// the fence with a refused write can never write at all.
struct StrictWithoutActed {
    spec: StoreSpec,
    resources: Resources,
}

impl FencedStore for StrictWithoutActed {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let strict = self.spec.policy == SameGenerationPolicy::StrictlyNewer;
        let resource = entry(&mut self.resources, &self.spec, &request.resource);
        if let Some(highest) = resource.register.highest().filter(|_| strict) {
            let remembered = resource.idempotency.lookup(&request.operation).is_some();
            if request.generation <= highest && !remembered {
                let stale = WriteRejection::Stale { presented: request.generation, highest };
                return Ok(WriteOutcome::Rejected(stale));
            }
        }
        Ok(resource.write(request, now))
    }

    honest_reads!();
}

/// Wrong: keeps the fence in each connection's memory, so a write through one handle is checked
/// only against the generations that handle has seen.
struct FencePerHandle {
    store: Shared<NoFence>,
    seen: BTreeMap<ResourceId, Generation>,
}

impl FencePerHandle {
    fn open(spec: &StoreSpec) -> impl FnMut() -> Result<FencePerHandle, Infallible> {
        let (spec, resources) = fresh(spec);
        let rows = Arc::new(Mutex::new(NoFence { spec, resources }));
        move || Ok(FencePerHandle { store: Shared(rows.clone()), seen: BTreeMap::new() })
    }
}

/// The handle's own fence in front of the shared, unfenced rows.
impl FencedStore for FencePerHandle {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        if let Some(&highest) = self.seen.get(&request.resource) {
            if request.generation < highest {
                let stale = WriteRejection::Stale { presented: request.generation, highest };
                return Ok(WriteOutcome::Rejected(stale));
            }
        }
        self.seen.insert(request.resource.clone(), request.generation);
        self.store.write(request, now)
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Infallible> {
        self.store.read(resource)
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, Infallible> {
        self.store.lookup(resource, operation)
    }
}

/// Wrong under concurrency: checks under one lock, lets go, and writes what it computed under a
/// second lock, with a round trip's gap between them. One at a time it behaves.
struct CheckThenWrite {
    spec: StoreSpec,
    shared: Arc<Mutex<Resources>>,
}

impl FencedStore for CheckThenWrite {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let mut checked = {
            let mut shared = self.shared.lock().unwrap();
            entry(&mut shared, &self.spec, &request.resource).clone()
        };
        let outcome = checked.write(request, now);
        fencelab_kit::gap();
        std::thread::yield_now();
        if !matches!(outcome, WriteOutcome::Rejected(WriteRejection::Stale { .. })) {
            self.shared.lock().unwrap().insert(request.resource.clone(), checked);
        }
        Ok(outcome)
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Infallible> {
        Ok(read(&self.shared.lock().unwrap(), resource))
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, Infallible> {
        Ok(lookup(&self.shared.lock().unwrap(), resource, operation))
    }
}

/// The kit's own cases first, so the rule named is the one a case targets, then every story.
fn everything() -> Vec<Case> {
    let mut cases = rule_cases();
    cases.extend(library::all().iter().map(Case::of));
    cases
}

/// What the kit reports for stores from `stores`; it must report something.
fn caught<S: FencedStore<Error = Infallible>>(
    stores: impl StoreFactory<S>,
) -> Divergence<Infallible> {
    check_cases(&everything(), stores).expect_err("the kit must catch this store")
}

fn fresh(spec: &StoreSpec) -> (StoreSpec, Resources) {
    (spec.clone(), Resources::new())
}

#[test]
fn the_kit_catches_a_store_without_a_fence() {
    let divergence = caught(factory(|spec| {
        let (spec, resources) = fresh(spec);
        Ok(NoFence { spec, resources })
    }));
    assert_eq!(divergence.rule(), Some(Rule::Fence), "{divergence}");
    let message = divergence.to_string();
    assert!(message.contains("fence: a stale owner is refused"), "{message}");
    assert!(message.contains("write 3 to case0/r"), "{message}");
    assert!(message.contains("the reference says rejected (stale generation)"), "{message}");
}

#[test]
fn the_kit_catches_a_store_that_compares_generations_as_text() {
    let divergence = caught(factory(|spec| {
        let (spec, resources) = fresh(spec);
        Ok(TextGenerations { spec, resources })
    }));
    assert_eq!(divergence.rule(), Some(Rule::Fence), "{divergence}");
    let message = divergence.to_string();
    assert!(message.contains("compared as numbers, across digit counts"), "{message}");
    assert!(message.contains("write 2 to case1/r"), "{message}");
}

#[test]
fn the_kit_catches_a_replay_that_does_not_raise_the_fence() {
    let divergence = caught(factory(|spec| {
        let (spec, resources) = fresh(spec);
        Ok(ReplayWithoutRaise { spec, resources })
    }));
    assert_eq!(divergence.rule(), Some(Rule::FenceRaise), "{divergence}");
    assert!(divergence.to_string().contains("state after"), "{divergence}");
}

#[test]
fn the_kit_catches_an_operation_id_checked_before_the_generation() {
    let divergence = caught(factory(|spec| {
        let (spec, resources) = fresh(spec);
        Ok(OperationBeforeGeneration { spec, resources })
    }));
    assert_eq!(divergence.rule(), Some(Rule::CheckOrder), "{divergence}");
    assert!(divergence.to_string().contains("stale owner retries"), "{divergence}");
}

#[test]
fn the_kit_catches_an_expected_revision_checked_before_the_operation_id() {
    let divergence = caught(factory(|spec| {
        let (spec, resources) = fresh(spec);
        Ok(RevisionBeforeOperation { spec, resources })
    }));
    assert_eq!(divergence.rule(), Some(Rule::CheckOrder), "{divergence}");
    assert!(
        divergence.to_string().contains("answered before its expected revision"),
        "{divergence}"
    );
}

#[test]
fn the_kit_catches_a_store_that_ignores_retention() {
    let divergence = caught(factory(|spec| {
        let (spec, resources) = fresh(spec);
        Ok(RetentionIgnored { spec, resources })
    }));
    assert_eq!(divergence.rule(), Some(Rule::Retention), "{divergence}");
    assert!(divergence.to_string().contains("past its age"), "{divergence}");
}

#[test]
fn the_kit_catches_a_broken_lookup() {
    let divergence =
        caught(factory(|spec| Ok(LookupBroken(MemoryStore::new(spec.policy, spec.retention)))));
    assert_eq!(divergence.rule(), Some(Rule::Lookup), "{divergence}");
    let message = divergence.to_string();
    assert!(
        message.contains("lookup after: the reference says the result recorded at t=0"),
        "{message}"
    );
    assert!(message.contains("the store says nothing remembered"), "{message}");
}

#[test]
fn the_kit_catches_a_highest_generation_lost_on_reopen() {
    let stores = factory(|spec: &StoreSpec| {
        Ok(HighestInMemory { spec: spec.clone(), disk: Arc::default() })
    })
    .reopen(|_: &StoreSpec, store: HighestInMemory| Ok(store.reopen()));
    let divergence = caught(stores);
    assert_eq!(divergence.rule(), Some(Rule::Durability), "{divergence}");
    assert!(divergence.to_string().contains("state after reopen"), "{divergence}");
}

#[test]
fn without_a_reopen_the_kit_cannot_see_a_highest_generation_kept_in_memory() {
    // The same store passes when the factory cannot reopen: the reopen step is what catches it.
    let stores = factory(|spec: &StoreSpec| {
        Ok(HighestInMemory { spec: spec.clone(), disk: Arc::default() })
    });
    let report = check_cases(&everything(), stores).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(report.reopens, 0);
}

fn check_then_write(
    spec: &StoreSpec,
) -> Result<impl FnMut() -> Result<CheckThenWrite, Infallible>, Infallible> {
    let (spec, shared) = (spec.clone(), Arc::new(Mutex::new(Resources::new())));
    Ok(move || Ok(CheckThenWrite { spec: spec.clone(), shared: shared.clone() }))
}

#[test]
fn one_at_a_time_a_check_then_write_store_passes_the_kit() {
    let stores = factory(|spec: &StoreSpec| {
        let mut handle = check_then_write(spec)?;
        handle()
    });
    check_cases(&everything(), stores).unwrap_or_else(|d| panic!("{d}"));
}

#[test]
fn the_concurrency_check_catches_a_check_then_write_store_in_the_articles_race() {
    let error = check_concurrent(&races(), check_then_write, &ConcurrentOptions::default())
        .expect_err("the check must catch it");
    let ConcurrencyError::NotLinearizable(lost) = &error else { panic!("{error}") };
    assert_eq!(lost.rule(), Rule::Linearizable);
    // The first held round of the first race: deterministic, whatever the machine's load.
    assert_eq!((lost.race.name.as_str(), lost.round), (articles_race().name.as_str(), 1));
    let message = error.to_string();
    assert!(message.contains("writer 1 held in its gap until the others wrote"), "{message}");
    assert!(
        message.contains("A's write \"A late\" under generation 1 (operation a-2) was applied (as r2) after B's write \"B\" under generation 2 (operation b-1) had landed (as r2)"),
        "{message}"
    );
    assert!(message.contains("in the order B, A: B applied as revision r2 under generation 2; A rejected (stale generation)"), "{message}");
    assert!(message.contains("final state: \"A late\" at revision r2"), "{message}");
}

#[test]
fn barrier_rounds_alone_catch_a_check_then_write_store() {
    // No writer is held: the writers only start together, many times.
    let options = ConcurrentOptions { held_rounds: 0, barrier_rounds: 2000, ..Default::default() };
    let error = check_concurrent(&[articles_race()], check_then_write, &options)
        .expect_err("the check must catch it");
    assert!(matches!(error, ConcurrencyError::NotLinearizable(_)), "{error}");
}

#[test]
fn find_divergences_reports_every_case_a_store_gets_wrong() {
    // Ignoring retention breaks exactly the cases about forgetting.
    let findings = find_divergences(
        &everything(),
        factory(|spec| {
            let (spec, resources) = fresh(spec);
            Ok(RetentionIgnored { spec, resources })
        }),
    );
    let broken: Vec<(String, Option<Rule>)> = findings
        .divergences
        .iter()
        .map(|d| match d {
            Divergence::Outcome { scenario, rule, .. } => (scenario.clone(), Some(*rule)),
            Divergence::Store { scenario, .. } => (scenario.clone(), None),
        })
        .collect();
    let names: Vec<&str> = broken.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "retention: an id past its age is forgotten and applies again",
            "retention: an id exactly its age old is forgotten",
            "retention: an id past the capacity is forgotten and applies again",
            "strict policy: an own retry past its retention is refused",
            "retention-window/expected-revision",
            "retention-window/unconditional",
        ]
    );
    assert!(broken.iter().all(|(_, rule)| *rule == Some(Rule::Retention)), "{broken:?}");
    assert!(findings.report.scenarios + findings.divergences.len() == everything().len());
}

/// Handles to one store behind a lock, as an in-memory store is shared by [`check_all`]'s
/// writers.
struct Shared<T>(Arc<Mutex<T>>);

impl<T: FencedStore<Error = Infallible>> FencedStore for Shared<T> {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        self.0.lock().unwrap().write(request, now)
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Infallible> {
        self.0.lock().unwrap().read(resource)
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, Infallible> {
        self.0.lock().unwrap().lookup(resource, operation)
    }
}

/// Opens one more handle to a shared store.
type OpenHandle<T> = Box<dyn FnMut() -> Result<Shared<T>, Infallible>>;

/// An opener of shared handles to stores `make` makes.
fn shared<T: FencedStore<Error = Infallible> + 'static>(
    make: impl Fn(&StoreSpec) -> T,
) -> impl FnMut(&StoreSpec) -> Result<OpenHandle<T>, Infallible> {
    move |spec| {
        let store = Arc::new(Mutex::new(make(spec)));
        Ok(Box::new(move || Ok(Shared(store.clone()))))
    }
}

/// What the one entry point reports on a store, with a fixed seed.
fn kit<S: FencedStore<Error = Infallible> + Send, H: FnMut() -> Result<S, Infallible>>(
    open: impl FnMut(&StoreSpec) -> Result<H, Infallible>,
) -> KitReport<Infallible> {
    check_all(open, &KitOptions { seed: Some(7), ..KitOptions::default() })
}

/// The checks that found something, and the rules each named.
fn found_by(report: &KitReport<Infallible>) -> Vec<(Check, Option<Rule>)> {
    let mut found: Vec<_> = report.found.iter().map(|f| (f.check(), f.rule())).collect();
    found.dedup();
    found
}

#[test]
fn the_one_entry_point_passes_the_reference_and_says_what_it_ran() {
    let report = kit(shared(|spec| MemoryStore::new(spec.policy, spec.retention)));
    assert!(report.passed(), "{report}");
    let ran: Vec<Check> = report.ran.iter().map(|r| r.check).collect();
    use Check::*;
    assert_eq!(ran, [Rules, Stories, Schedules, Sequences, Concurrent]);
    let text = report.to_string();
    assert!(text.starts_with("fencelab-kit: passed every check (seed 7: FENCELAB_KIT_SEED=7 plays the same random sequences and races)"), "{text}");
    assert!(text.contains("  rules      13 of 13 cases passed"), "{text}");
    assert!(
        text.contains(
            "  sequences  64 random sequences of up to 9 writes played, each call on a new handle"
        ),
        "{text}"
    );
    assert!(text.contains("built-in races and 16 random ones"), "{text}");
    assert!(text.contains(" reopens"), "{text}");
}

#[test]
fn the_one_entry_point_catches_a_store_that_compares_generations_as_text() {
    let report =
        kit(shared(|spec| TextGenerations { spec: spec.clone(), resources: Resources::new() }));
    assert_eq!(report.rules_broken(), [Rule::Fence], "{report}");
    let checks: Vec<Check> = found_by(&report).iter().map(|(c, _)| *c).collect();
    // Every check catches it, the races with the sequential explanation.
    for check in [Check::Rules, Check::Sequences, Check::Concurrent] {
        assert!(checks.contains(&check), "{check}: {report}");
    }
    let text = report.to_string();
    assert!(text.contains("the store breaks a rule with one writer at a time too"), "{text}");
    // The shrunk sequence names its seed, and the place is in the store's terms too.
    assert!(text.contains("random sequence"), "{text}");
    assert!(text.contains("of seed 7"), "{text}");
}

#[test]
fn the_one_entry_point_names_the_rule_each_store_of_the_zoo_breaks() {
    fn resources(spec: &StoreSpec) -> (StoreSpec, Resources) {
        fresh(spec)
    }
    let broken = |report: KitReport<Infallible>| report.rules_broken();
    let no_fence = broken(kit(shared(|spec| {
        let (spec, resources) = resources(spec);
        NoFence { spec, resources }
    })));
    assert!(no_fence.contains(&Rule::Fence), "{no_fence:?}");
    let replay = broken(kit(shared(|spec| {
        let (spec, resources) = resources(spec);
        ReplayWithoutRaise { spec, resources }
    })));
    assert!(replay.contains(&Rule::FenceRaise), "{replay:?}");
    let operation_first = broken(kit(shared(|spec| {
        let (spec, resources) = resources(spec);
        OperationBeforeGeneration { spec, resources }
    })));
    assert!(operation_first.contains(&Rule::CheckOrder), "{operation_first:?}");
    let revision_first = broken(kit(shared(|spec| {
        let (spec, resources) = resources(spec);
        RevisionBeforeOperation { spec, resources }
    })));
    assert!(revision_first.contains(&Rule::CheckOrder), "{revision_first:?}");
    let retention = broken(kit(shared(|spec| {
        let (spec, resources) = resources(spec);
        RetentionIgnored { spec, resources }
    })));
    assert!(retention.contains(&Rule::Retention), "{retention:?}");
    let lookup =
        broken(kit(shared(|spec| LookupBroken(MemoryStore::new(spec.policy, spec.retention)))));
    assert!(lookup.contains(&Rule::Lookup), "{lookup:?}");
    // The fence kept in memory is lost by a new handle: the one opener is also the reopen.
    let memory = broken(kit(|spec: &StoreSpec| Ok(HighestInMemory::open(spec))));
    assert!(memory.contains(&Rule::Durability), "{memory:?}");
    let across = broken(kit(shared(|spec| {
        let (spec, resources) = resources(spec);
        RetentionAcrossResources { spec, resources, recorded: Default::default() }
    })));
    assert!(across.contains(&Rule::Idempotency), "{across:?}");
    let strict = broken(kit(shared(|spec| {
        let (spec, resources) = resources(spec);
        StrictWithoutActed { spec, resources }
    })));
    assert!(strict.contains(&Rule::Fence), "{strict:?}");
    // A fence each connection keeps to itself shows one writer at a time, each call on a new
    // handle, as the fence failing.
    let per_handle = broken(kit(|spec: &StoreSpec| Ok(FencePerHandle::open(spec))));
    assert!(per_handle.contains(&Rule::Fence), "{per_handle:?}");
    // None of these is a concurrency bug, and none is reported as one.
    let all =
        [no_fence, replay, operation_first, revision_first, retention, lookup, memory, per_handle];
    for rules in all {
        assert!(!rules.contains(&Rule::Linearizable), "{rules:?}");
    }
}

#[test]
fn the_one_entry_point_catches_a_check_then_write_store_only_in_the_races() {
    let report = kit(check_then_write);
    assert_eq!(found_by(&report), [(Check::Concurrent, Some(Rule::Linearizable))], "{report}");
}

#[test]
fn a_divergence_in_a_story_names_the_place_and_the_store_s_resource() {
    let findings = find_divergences(
        &library::all().iter().map(Case::of).collect::<Vec<_>>(),
        factory(|spec| {
            let (spec, resources) = fresh(spec);
            Ok(NoFence { spec, resources })
        }),
    );
    let message = findings.divergences[0].to_string();
    assert!(message.contains("(resource s0/p0/r0 in the store)"), "{message}");
}

#[test]
fn the_rule_cases_catch_a_strict_store_that_forgets_whether_its_highest_acted() {
    let stores = factory(|spec| {
        let (spec, resources) = fresh(spec);
        Ok(StrictWithoutActed { spec, resources })
    });
    let divergence = check_cases(&rule_cases(), stores).expect_err("the rule cases catch it");
    assert_eq!(divergence.rule(), Some(Rule::Fence), "{divergence}");
    let message = divergence.to_string();
    assert!(message.contains("raised the fence without acting may still write once"), "{message}");
}
