//! The conformance kit over every schedule of a story, and what its reports count.

use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::library;
use fencelab_core::*;
use fencelab_core::{
    drive::conformance::check_cases, drive::conformance::check_store,
    drive::conformance::explore_store, drive::conformance::factory, drive::conformance::rule_cases,
    drive::conformance::writes_of, drive::conformance::Divergence, drive::conformance::Rule,
    drive::conformance::ScheduleOptions,
};
use fencelab_core::{
    drive::explore::Bound, fence::idempotency::StoredResult, fence::store::MemoryStore,
    fence::store::StoredValue,
};
use std::convert::Infallible;

/// Wrong: uses the generation as the operation id, with a cache of one: a request under the
/// same generation as the request before it is answered with that request's result. Only a
/// schedule in which one owner writes twice in a row shows it; in the default run of the story
/// a refused request always comes between.
struct GenerationAsOperation {
    store: MemoryStore,
    /// The last request's resource, generation and outcome.
    last: Option<(ResourceId, Generation, WriteOutcome)>,
}

impl FencedStore for GenerationAsOperation {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        if let Some((resource, generation, WriteOutcome::Applied(applied))) = &self.last {
            if *resource == request.resource && *generation == request.generation {
                let stored =
                    StoredResult { generation: *generation, applied: *applied, recorded_at: now };
                return Ok(WriteOutcome::Replayed(stored));
            }
        }
        let outcome = self.store.write(request, now)?;
        self.last = Some((request.resource.clone(), request.generation, outcome.clone()));
        Ok(outcome)
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

fn broken(spec: &format::model::StoreSpec) -> Result<GenerationAsOperation, Infallible> {
    Ok(GenerationAsOperation { store: MemoryStore::new(spec.policy, spec.retention), last: None })
}

#[test]
fn a_divergence_only_another_schedule_reaches_is_found_with_a_schedule_that_replays_it() {
    let story = library::contention(2, Enforcement::Fenced);
    // The default schedule never shows it.
    check_store(std::slice::from_ref(&story), broken).unwrap_or_else(|d| panic!("{d}"));
    let divergence =
        explore_store(std::slice::from_ref(&story), factory(broken), &ScheduleOptions::default())
            .expect_err("some schedule has an owner write twice in a row");
    assert_eq!(divergence.rule(), Some(Rule::Idempotency), "{divergence}");
    let Divergence::Outcome { schedule, index, request, at, .. } = &divergence else {
        panic!("{divergence}")
    };
    assert!(!schedule.is_empty(), "{divergence}");
    // The engine replays the schedule, and its run makes the write the kit reported.
    let mut replay = story;
    replay.schedule = schedule.clone();
    let writes = writes_of(&replay);
    let write = &writes[*index];
    assert_eq!(
        (write.at, write.request.generation, &write.request.operation, &write.request.value),
        (*at, request.generation, &request.operation, &request.value)
    );
    let mut engine = Engine::new(replay).unwrap();
    engine.run().unwrap();
    assert_eq!(&engine.schedule_so_far()[..schedule.len()], &schedule[..]);
}

#[test]
fn explore_store_plays_each_distinct_write_sequence_once_and_says_when_a_bound_cut_it() {
    let story = library::contention(3, Enforcement::Fenced);
    let reference = || factory(|spec| Ok(MemoryStore::new(spec.policy, spec.retention)));
    let all = explore_store(std::slice::from_ref(&story), reference(), &ScheduleOptions::default())
        .unwrap();
    let everything = ScheduleOptions { max_schedules: usize::MAX, ..ScheduleOptions::default() };
    let all_of_them =
        explore_store(std::slice::from_ref(&story), reference(), &everything).unwrap();
    assert!(all.bound_hit() && all.schedule_bound == ["contention/3-workers"], "{all:?}");
    assert_eq!(all.schedules, ScheduleOptions::default().max_schedules);
    assert!(!all_of_them.bound_hit(), "{all_of_them:?}");
    assert!(all_of_them.schedules > all.schedules);
    assert_eq!(all_of_them.runs, all_of_them.schedules + all_of_them.duplicates);
    // The check-then-write story's schedules repeat write sequences: those are played once.
    let gap = library::scenario("check-then-write", Some("check-then-write")).unwrap();
    let report = explore_store(&[gap], reference(), &everything).unwrap();
    assert!(report.duplicates > 0, "{report:?}");
    let few = ScheduleOptions { max_states: 10, ..everything };
    let cut = explore_store(&[story], reference(), &few).unwrap();
    assert_eq!(cut.cut, [("contention/3-workers".to_string(), Bound::States)]);
}

#[test]
fn the_report_counts_what_the_kit_exercised() {
    let fresh = factory(|spec| Ok(MemoryStore::new(spec.policy, spec.retention)));
    let report = check_cases(&rule_cases(), fresh.reopen(|_, store| Ok(store))).unwrap();
    for kind in ["applied", "replayed", "rejected: stale generation", "rejected: revision conflict"]
    {
        assert!(report.outcomes.get(kind).is_some_and(|&n| n > 0), "{kind}: {report:?}");
    }
    for rule in [Rule::Apply, Rule::Idempotency, Rule::Fence, Rule::ExpectedRevision] {
        assert!(report.rules.get(&rule).is_some_and(|&n| n > 0), "{rule:?}: {report:?}");
    }
    let cases = rule_cases().len();
    assert_eq!((report.scenarios, report.reopens), (cases, cases));
    assert_eq!(report.lookups, report.writes);
}
