//! The explorer: fenced stories are safe within bounds (state counts pinned), broken ones break
//! (shortest counterexample length pinned), and every counterexample replays in the engine.

use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::library;
use fencelab_core::*;
use fencelab_core::{
    drive::explore::ExploreConfig, drive::explore::ExploreResult, drive::explore::Explorer,
};
use fencelab_core::{invariant::InvariantKind, invariant::InvariantKind::*};

/// Stories with no safety violation within the default bounds, and their unique-state counts.
const SAFE: &[(&str, &str, usize)] = &[
    ("paused-worker", "fenced", 20),
    ("longer-lease", "fenced", 20),
    ("same-owner-updates", "expected-revision", 15),
    ("same-owner-updates", "allow-same", 11),
    ("same-owner-updates", "strict", 11),
    ("fresh-register", "fenced", 21),
    ("check-then-write", "atomic", 35),
    ("idempotent-retry", "fenced", 9),
    ("newer-owner-retry", "fenced", 18),
    ("duplicate-capture", "fenced", 18),
    ("admin-path", "fenced", 18),
    ("retention-window", "expected-revision", 10),
    ("payment-capture", "fenced", 15),
    ("email-webhook", "fenced", 29),
    ("secondary-path", "fenced", 21),
    ("wall-clock-tokens", "fenced", 18),
    ("authority-restart", "fenced", 19),
    ("store-restart", "fenced", 19),
    ("forged-token", "authenticated", 12),
    ("network-delay", "fenced", 28),
    ("monitoring", "fenced", 23),
    ("lease-check-gap", "fenced", 18),
    ("queued-mutations", "fenced", 25),
    ("fencing-unnecessary", "unfenced", 18),
];

/// Stories that break a safety invariant, which one first, and after how many steps.
const BROKEN: &[(&str, &str, InvariantKind, usize)] = &[
    ("paused-worker", "broken", StaleWriteAccepted, 18),
    ("longer-lease", "broken", StaleWriteAccepted, 18),
    ("check-then-write", "check-then-write", StaleWriteAccepted, 17),
    ("idempotent-retry", "broken", OperationAppliedTwice, 8),
    ("retention-window", "unconditional", OperationAppliedTwice, 9),
    ("payment-capture", "broken", EffectDeliveredTwice, 13),
    ("email-webhook", "broken", EffectFromSupersededOwner, 16),
    ("secondary-path", "broken", StaleWriteAccepted, 16),
    ("wall-clock-tokens", "broken", StaleWriteAccepted, 15),
    ("newer-owner-retry", "broken", OperationAppliedTwice, 11),
    ("duplicate-capture", "broken", EffectDeliveredTwice, 11),
    ("admin-path", "broken", StaleWriteAccepted, 15),
    ("authority-restart", "broken", GenerationReissued, 14),
    ("store-restart", "broken", StaleWriteAccepted, 17),
    ("forged-token", "unauthenticated", StaleWriteAccepted, 8),
    ("network-delay", "broken", StaleWriteAccepted, 12),
    ("monitoring", "broken", StaleWriteAccepted, 15),
    ("lease-check-gap", "broken", StaleWriteAccepted, 13),
    ("queued-mutations", "broken", StaleWriteAccepted, 17),
];

fn explore(scenario: Scenario) -> ExploreResult {
    Explorer::new(scenario, ExploreConfig::default()).expect("valid").run()
}

#[test]
fn every_built_in_story_is_covered_by_the_tables() {
    assert_eq!(SAFE.len() + BROKEN.len(), library::all().len());
}

#[test]
fn fenced_stories_have_no_violation_within_bounds() {
    for (name, variant, states) in SAFE {
        let result = explore(library::scenario(name, Some(variant)).unwrap());
        let ExploreResult::NoViolation { stats } = result else {
            panic!("{name}/{variant}: {result:#?}")
        };
        assert!(!stats.bound_hit, "{name}/{variant}: the search must be exhaustive");
        assert_eq!(stats.unique_states, *states, "{name}/{variant}");
    }
}

#[test]
fn broken_stories_break_and_the_counterexample_replays() {
    for (name, variant, invariant, steps) in BROKEN {
        let scenario = library::scenario(name, Some(variant)).unwrap();
        let result = explore(scenario.clone());
        let ExploreResult::Violation { violation, schedule, steps: found, .. } = result else {
            panic!("{name}/{variant}: {result:#?}")
        };
        assert_eq!((violation.invariant, found), (*invariant, *steps), "{name}/{variant}");
        assert!(scenario.expect.violations.contains(invariant), "{name}/{variant} expects it");
        // The schedule is in the engine's format: replaying it reaches the same violation.
        let mut replay = scenario;
        replay.schedule = schedule;
        let mut engine = Engine::new(replay).unwrap();
        engine.seek(*steps).unwrap();
        let first = engine.violations().iter().find(|v| v.invariant == *invariant).unwrap();
        assert_eq!(first, &violation, "{name}/{variant}");
    }
}

/// The hand-written schedule of the check-then-write story is what makes the stale value the
/// final one; the default order lets B's write land last, and the explorer still finds the race.
#[test]
fn the_explorer_finds_the_race_a_single_schedule_misses() {
    let mut scenario = library::scenario("check-then-write", Some("check-then-write")).unwrap();
    scenario.schedule.clear();
    scenario.expect.violations.clear();
    let verdict = Engine::new(scenario.clone()).unwrap().run().unwrap();
    assert!(verdict.violations.iter().all(|v| v.invariant != FinalValueNotFromLatestOwner));
    let config = ExploreConfig {
        invariants: vec![FinalValueNotFromLatestOwner],
        ..ExploreConfig::default()
    };
    let result = Explorer::new(scenario, config).unwrap().run();
    assert!(matches!(
        result,
        ExploreResult::Violation {
            violation: Violation { invariant: FinalValueNotFromLatestOwner, .. },
            ..
        }
    ));
}

#[test]
fn contention_with_optional_pauses_and_jitter() {
    for (workers, states) in [(2, 265), (3, 1072)] {
        let result = explore(library::contention(workers, Enforcement::Fenced));
        let ExploreResult::NoViolation { stats } = result else { panic!("{result:#?}") };
        assert_eq!(stats.unique_states, states, "{workers} workers");
    }
    let result = explore(library::contention(2, Enforcement::CheckThenWrite));
    let ExploreResult::Violation { violation, schedule, steps, .. } = result else {
        panic!("{result:#?}")
    };
    assert_eq!(violation.invariant, StaleWriteAccepted);
    let mut replay = library::contention(2, Enforcement::CheckThenWrite);
    replay.schedule = schedule;
    let mut engine = Engine::new(replay).unwrap();
    engine.seek(steps).unwrap();
    assert_eq!(engine.violations().first(), Some(&violation));
}

#[test]
fn cancelling_and_resuming_in_slices_gives_the_same_result() {
    for scenario in
        [library::contention(3, Enforcement::Fenced), library::contention(2, Enforcement::Unfenced)]
    {
        let whole = explore(scenario.clone());
        let mut sliced = Explorer::new(scenario, ExploreConfig::default()).unwrap();
        let mut slices = 0;
        let result = loop {
            slices += 1;
            let progress = sliced.stats();
            if let Some(result) = sliced.run_for(7) {
                break result.clone();
            }
            assert!(
                sliced.stats().transitions > progress.transitions,
                "every slice makes progress"
            );
        };
        assert!(slices > 3);
        assert_eq!(result, whole);
    }
}

#[test]
fn bounds_are_reported_when_hit() {
    let config = ExploreConfig { max_states: 50, ..ExploreConfig::default() };
    let result = Explorer::new(library::contention(3, Enforcement::Fenced), config).unwrap().run();
    let ExploreResult::NoViolation { stats } = result else { panic!("{result:#?}") };
    assert!(stats.bound_hit);
    assert_eq!(stats.unique_states, 50);
    let config = ExploreConfig { max_depth: 5, ..ExploreConfig::default() };
    let result = Explorer::new(library::contention(3, Enforcement::Fenced), config).unwrap().run();
    assert!(result.stats().bound_hit && result.stats().max_depth <= 5);
}
