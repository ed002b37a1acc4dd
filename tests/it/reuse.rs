//! What a test that reuses the core leans on: the verdict's assertions and their messages, ids
//! read from text, one error type for every entry point, and the prelude.

use fencelab_core::prelude::*;
use fencelab_core::Error;
use std::error::Error as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn run(name: &str, variant: &str) -> Verdict {
    Engine::new(library::scenario(name, Some(variant)).unwrap()).unwrap().run().unwrap()
}

/// The message `check` panicked with; fails the test if it did not panic.
fn panic_message(check: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(check)).expect_err("the assertion passed");
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => payload.downcast::<&str>().map(|m| m.to_string()).unwrap(),
    }
}

#[test]
fn the_assertions_pass_on_what_the_run_did() {
    let broken = run("paused-worker", "broken");
    broken.assert_met();
    assert_eq!(broken.assert_violation(InvariantKind::StaleWriteAccepted).step.index(), 18);
    assert_eq!(
        broken.assert_violation(InvariantKind::FinalValueNotFromLatestOwner).step.index(),
        19
    );

    let fenced = run("paused-worker", "fenced");
    fenced.assert_met();
    fenced.assert_no_violation();
}

#[test]
fn assert_met_sets_the_expectations_beside_each_violation_and_its_step() {
    let mut scenario = library::scenario("paused-worker", Some("broken")).unwrap();
    scenario.expect.violations = vec![InvariantKind::OperationAppliedTwice];
    let verdict = Engine::new(scenario).unwrap().run().unwrap();
    assert_eq!(
        panic_message(|| verdict.assert_met()),
        "the run did not meet its scenario's expectations
  expected broken: operation_applied_twice
  broken:          stale_write_accepted, final_value_not_from_latest_owner, write_outside_lease
  not expected:    stale_write_accepted, final_value_not_from_latest_owner, write_outside_lease
  not broken:      operation_applied_twice
  step 19: stale_write_accepted: totals in db accepted A's write from an older lease after B presented a newer one
  step 19: write_outside_lease: totals in db accepted A's write, sent when its lease was no longer valid (no fencing here)
  step 20: final_value_not_from_latest_owner: totals in db ends with A's value, though a write under B's newer lease reached it too"
    );
}

#[test]
fn assert_met_names_rejection_counts_that_differ_from_the_pinned_ones() {
    let mut scenario = library::scenario("paused-worker", Some("fenced")).unwrap();
    scenario.expect.rejections = Some(Default::default());
    let verdict = Engine::new(scenario).unwrap().run().unwrap();
    assert_eq!(
        panic_message(|| verdict.assert_met()),
        "the run did not meet its scenario's expectations
  expected broken: none
  broken:          none
  rejections:      stale generation: 1, not the counts the scenario expects"
    );
}

#[test]
fn assert_no_violation_counts_the_violations_and_lists_them() {
    let verdict = run("paused-worker", "broken");
    assert_eq!(
        panic_message(|| verdict.assert_no_violation()),
        "expected no violation, but the run has 3 violations, the first at step 19
  expected broken: stale_write_accepted, final_value_not_from_latest_owner, write_outside_lease
  broken:          stale_write_accepted, final_value_not_from_latest_owner, write_outside_lease
  step 19: stale_write_accepted: totals in db accepted A's write from an older lease after B presented a newer one
  step 19: write_outside_lease: totals in db accepted A's write, sent when its lease was no longer valid (no fencing here)
  step 20: final_value_not_from_latest_owner: totals in db ends with A's value, though a write under B's newer lease reached it too"
    );
}

#[test]
fn assert_violation_says_what_was_missing_and_when_the_run_had_not_ended() {
    let fenced = run("paused-worker", "fenced");
    assert_eq!(
        panic_message(|| {
            fenced.assert_violation(InvariantKind::StaleWriteAccepted);
        }),
        "expected stale_write_accepted (a stale write was accepted), but the run did not break it
  expected broken: none
  broken:          none"
    );

    let mut engine = Engine::new(library::scenario("paused-worker", Some("broken")).unwrap())
        .expect("a built-in scenario is valid");
    engine.seek(18).unwrap();
    let so_far = engine.verdict();
    let message = panic_message(|| {
        so_far.assert_violation(InvariantKind::StaleWriteAccepted);
    });
    assert_eq!(
        message.lines().next(),
        Some(
            "expected stale_write_accepted (a stale write was accepted), but the run did not \
             break it (the run has not ended: this is the verdict so far)"
        )
    );
}

#[test]
fn ids_read_from_text_with_the_checks_of_new() {
    let ledger: ResourceId = "ledger".parse().unwrap();
    assert_eq!(ledger, ResourceId::new("ledger").unwrap());
    assert_eq!(WorkerId::try_from("A").unwrap(), WorkerId::new("A").unwrap());
    assert_eq!(OperationId::try_from(String::from("op")).unwrap().as_str(), "op");
    assert_eq!(
        "".parse::<WorkflowKey>().unwrap_err().to_string(),
        "workflow key must not be empty"
    );
}

/// Every entry point's error goes through `?` into [`fencelab_core::Error`].
fn every_entry_point() -> Result<(), Error> {
    let scenario = library::scenario("paused-worker", Some("broken"))?;
    let mut engine = Engine::new(scenario.clone())?;
    engine.step()?;
    engine.seek(5)?;
    engine.run()?.assert_met();
    let history = History::from_jsonl(&engine.history().to_jsonl())?;
    assert!(!history.entries.is_empty());
    let explored = Explorer::new(scenario, ExploreConfig::default())?.run();
    assert!(matches!(explored, ExploreResult::Violation { .. }));

    let totals: ResourceId = "totals".parse()?;
    let mut store = MemoryStore::new(SameGenerationPolicy::AllowSame, Retention::FOREVER);
    let request = WriteRequest::new(totals, Generation::new(1)?, "op".parse()?, None, "v");
    assert!(store.write(&request, Tick(0))?.is_applied());
    Ok(())
}

#[test]
fn one_error_type_takes_every_entry_points_error() {
    every_entry_point().unwrap();

    let unknown: Result<Scenario, Error> =
        library::scenario("paused-worker", Some("sideways")).map_err(Into::into);
    let unknown = unknown.unwrap_err();
    assert!(matches!(unknown, Error::UnknownStory(UnknownStory::Variant { .. })));
    assert_eq!(
        unknown.to_string(),
        "paused-worker has no variant \"sideways\"; it has fenced, broken"
    );

    let invalid = Engine::from_json("{}").map_err(Error::from).unwrap_err();
    assert!(matches!(invalid, Error::Scenario(_)));
    let finished = {
        let mut engine = Engine::new(library::scenario("paused-worker", None).unwrap()).unwrap();
        engine.run().unwrap();
        engine.inject(Fault::RestartAuthority).map(|_| ()).map_err(Error::from).unwrap_err()
    };
    assert_eq!(finished.to_string(), "the run has ended after 20 steps: no event is left to run");
}

#[test]
fn wrapped_errors_are_their_wrappers_sources() {
    let mut engine = Engine::new(library::scenario("paused-worker", None).unwrap()).unwrap();
    let fault = Fault::RestartStore { store: "nowhere".into() };
    let bad_fault = engine.inject(fault).unwrap_err();
    assert!(matches!(bad_fault, EngineError::BadFault(_)));
    let source = bad_fault.source().expect("the scenario error is the source");
    assert!(source.downcast_ref::<ScenarioError>().is_some(), "{source:?}");

    let zero = fencelab_core::Generation::from_i128(0).unwrap_err();
    let rejection = WriteRejection::InvalidToken(zero.clone());
    let source = rejection.source().expect("the token error is the source");
    assert_eq!(source.to_string(), zero.to_string());
}

#[test]
fn the_joined_error_debugs_as_its_message_so_a_failing_test_prints_it() {
    let error = fencelab_core::Error::from(
        fencelab_core::stories::library::scenario("paused-wroker", None).unwrap_err(),
    );
    assert_eq!(format!("{error:?}"), error.to_string());
    assert!(format!("{error:?}").starts_with("there is no story \"paused-wroker\""), "{error:?}");
}
