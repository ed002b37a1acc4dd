//! The built-in library, pinned: every scenario's violations (with the step that caused each)
//! and rejection counts. A change to the engine or a story that moves any of these shows up here.

use fencelab_core::sim::SimError;
use fencelab_core::stories::library;
use fencelab_core::*;
use fencelab_core::{fence::register::RejectionReason, fence::register::RejectionReason::*};
use fencelab_core::{invariant::InvariantKind, invariant::InvariantKind::*};
use fencelab_core::{record::EngineError, record::ScheduleMode};

type Pinned = (
    &'static str,
    &'static str,
    &'static [(InvariantKind, usize)],
    &'static [(RejectionReason, u64)],
    usize,
);

/// (case, variant, violations with their step, rejections by reason, number of steps).
const PINNED: &[Pinned] = &[
    ("paused-worker", "fenced", &[], &[(StaleGeneration, 1)], 20),
    (
        "paused-worker",
        "broken",
        &[(StaleWriteAccepted, 18), (WriteOutsideLease, 18), (FinalValueNotFromLatestOwner, 19)],
        &[],
        20,
    ),
    ("longer-lease", "fenced", &[], &[(StaleGeneration, 1)], 20),
    (
        "longer-lease",
        "broken",
        &[(StaleWriteAccepted, 18), (WriteOutsideLease, 18), (FinalValueNotFromLatestOwner, 19)],
        &[],
        20,
    ),
    ("same-owner-updates", "expected-revision", &[], &[(RevisionConflict, 1)], 13),
    ("same-owner-updates", "allow-same", &[(WritesReordered, 6)], &[], 11),
    ("same-owner-updates", "strict", &[], &[(StaleGeneration, 2)], 11),
    ("fresh-register", "fenced", &[(WriteOutsideLease, 11)], &[(StaleGeneration, 1)], 19),
    ("check-then-write", "atomic", &[], &[(StaleGeneration, 1)], 17),
    (
        "check-then-write",
        "check-then-write",
        &[(StaleWriteAccepted, 18), (WriteOutsideLease, 18), (FinalValueNotFromLatestOwner, 19)],
        &[],
        20,
    ),
    ("idempotent-retry", "fenced", &[], &[], 9),
    ("idempotent-retry", "broken", &[(OperationAppliedTwice, 7)], &[], 9),
    ("newer-owner-retry", "fenced", &[], &[(StaleGeneration, 1)], 17),
    (
        "newer-owner-retry",
        "broken",
        &[
            (OperationAppliedTwice, 11),
            (StaleWriteAccepted, 15),
            (WriteOutsideLease, 15),
            (FinalValueNotFromLatestOwner, 16),
        ],
        &[],
        17,
    ),
    ("retention-window", "expected-revision", &[], &[(RevisionConflict, 1)], 10),
    ("retention-window", "unconditional", &[(OperationAppliedTwice, 8)], &[], 10),
    ("payment-capture", "fenced", &[], &[(StaleGeneration, 1)], 15),
    (
        "payment-capture",
        "broken",
        &[(EffectDeliveredTwice, 13), (EffectFromSupersededOwner, 13)],
        &[],
        15,
    ),
    ("duplicate-capture", "fenced", &[], &[(StaleGeneration, 1), (DuplicateEffect, 1)], 17),
    (
        "duplicate-capture",
        "broken",
        &[(EffectDeliveredTwice, 11), (EffectFromSupersededOwner, 15)],
        &[],
        17,
    ),
    ("email-webhook", "fenced", &[], &[(StaleGeneration, 2)], 19),
    (
        "email-webhook",
        "broken",
        &[(EffectFromSupersededOwner, 16), (EffectFromSupersededOwner, 17)],
        &[],
        19,
    ),
    ("secondary-path", "fenced", &[], &[(StaleGeneration, 2)], 19),
    (
        "secondary-path",
        "broken",
        &[(StaleWriteAccepted, 17), (WriteOutsideLease, 17), (FinalValueNotFromLatestOwner, 18)],
        &[(StaleGeneration, 1)],
        19,
    ),
    ("admin-path", "fenced", &[], &[(StaleGeneration, 1)], 17),
    (
        "admin-path",
        "broken",
        &[(StaleWriteAccepted, 15), (WriteOutsideLease, 15), (FinalValueNotFromLatestOwner, 16)],
        &[],
        17,
    ),
    ("wall-clock-tokens", "fenced", &[], &[(StaleGeneration, 1)], 17),
    (
        "wall-clock-tokens",
        "broken",
        &[
            (TokenNeverIssued, 4),
            (StaleWriteAccepted, 15),
            (WriteOutsideLease, 15),
            (TokenNeverIssued, 15),
            (FinalValueNotFromLatestOwner, 16),
        ],
        &[(StaleGeneration, 1)],
        17,
    ),
    ("authority-restart", "fenced", &[], &[], 19),
    (
        "authority-restart",
        "broken",
        &[(GenerationReissued, 13), (FinalValueNotFromLatestOwner, 18)],
        &[(StaleGeneration, 1)],
        19,
    ),
    ("store-restart", "fenced", &[], &[(StaleGeneration, 1)], 18),
    (
        "store-restart",
        "broken",
        &[(StaleWriteAccepted, 17), (WriteOutsideLease, 17), (FinalValueNotFromLatestOwner, 17)],
        &[],
        18,
    ),
    ("forged-token", "authenticated", &[], &[(InvalidToken, 1)], 12),
    (
        "forged-token",
        "unauthenticated",
        &[
            (StaleWriteAccepted, 7),
            (WriteOutsideLease, 7),
            (TokenNeverIssued, 7),
            (FinalValueNotFromLatestOwner, 11),
        ],
        &[(StaleGeneration, 1)],
        12,
    ),
    ("network-delay", "fenced", &[], &[(StaleGeneration, 1)], 14),
    (
        "network-delay",
        "broken",
        &[(StaleWriteAccepted, 12), (FinalValueNotFromLatestOwner, 13)],
        &[],
        14,
    ),
    ("monitoring", "fenced", &[], &[(StaleGeneration, 3)], 19),
    (
        "monitoring",
        "broken",
        &[
            (StaleWriteAccepted, 15),
            (WriteOutsideLease, 15),
            (StaleWriteAccepted, 16),
            (WriteOutsideLease, 16),
            (StaleWriteAccepted, 17),
            (WriteOutsideLease, 17),
            (FinalValueNotFromLatestOwner, 18),
        ],
        &[],
        19,
    ),
    ("lease-check-gap", "fenced", &[], &[(StaleGeneration, 1)], 15),
    (
        "lease-check-gap",
        "broken",
        &[(StaleWriteAccepted, 13), (WriteOutsideLease, 13), (FinalValueNotFromLatestOwner, 14)],
        &[],
        15,
    ),
    ("queued-mutations", "fenced", &[], &[(StaleGeneration, 2)], 20),
    (
        "queued-mutations",
        "broken",
        &[
            (StaleWriteAccepted, 18),
            (WriteOutsideLease, 18),
            (StaleWriteAccepted, 19),
            (WriteOutsideLease, 19),
            (FinalValueNotFromLatestOwner, 19),
        ],
        &[],
        20,
    ),
    ("fencing-unnecessary", "unfenced", &[], &[], 17),
];

fn run(name: &str, variant: &str) -> Engine {
    let scenario = library::scenario(name, Some(variant)).unwrap_or_else(|e| panic!("{e}"));
    let mut engine = Engine::new(scenario).expect("built-in scenarios are valid");
    let verdict = engine.run().expect("built-in schedules fit");
    assert!(verdict.finished);
    assert!(verdict.met, "{name}/{variant} did not meet its expectations: {verdict:#?}");
    engine
}

#[test]
fn every_built_in_scenario_is_pinned_and_meets_its_expectations() {
    let all = library::all();
    assert_eq!(all.len(), PINNED.len(), "a scenario was added or removed: pin it here");
    for (name, variant, violations, rejections, steps) in PINNED {
        let engine = run(name, variant);
        let got: Vec<_> =
            engine.violations().iter().map(|v| (v.invariant, v.step.index())).collect();
        assert_eq!(got, *violations, "{name}/{variant}: violations");
        let counts: Vec<_> = engine.rejections().into_iter().collect();
        assert_eq!(counts, *rejections, "{name}/{variant}: rejections");
        assert_eq!(engine.records().len(), *steps, "{name}/{variant}: steps");
    }
}

#[test]
fn fenced_variants_break_none_of_the_safety_invariants() {
    let safety = InvariantKind::SAFETY;
    for scenario in library::all() {
        if !matches!(
            scenario.variant.as_str(),
            "fenced" | "atomic" | "authenticated" | "expected-revision"
        ) {
            continue;
        }
        let label = format!("{}/{}", scenario.name, scenario.variant);
        let mut engine = Engine::new(scenario).unwrap();
        let verdict = engine.run().unwrap();
        assert!(
            verdict.violations.iter().all(|v| !safety.contains(&v.invariant)),
            "{label}: {:?}",
            verdict.violations
        );
    }
}

#[test]
fn the_paused_worker_story_reads_as_the_article_tells_it() {
    let engine = run("paused-worker", "fenced");
    let captions: Vec<&str> = engine.records().iter().map(|r| r.caption.as_str()).collect();
    let find = |needle: &str| {
        captions
            .iter()
            .position(|c| c.contains(needle))
            .unwrap_or_else(|| panic!("no caption with {needle:?}: {captions:#?}"))
    };
    let paused = find("A freezes for 15 ticks because of a stop-the-world GC pause");
    let expired = find("A's lease on totals (generation 1) expires");
    let b_grant = find("grants B the lease on totals with generation 2");
    let resumed = find("A resumes after its pause, still believing generation 1 is current");
    let rejected = find("rejects A's write \"A: total=90 (from stale inputs)\": stale owner: generation 1 < highest accepted 2");
    assert!(paused < expired && expired < b_grant && b_grant < resumed && resumed < rejected);
    let cell = &engine.state().stores[0].cells[&("primary".to_string(), "totals".parse().unwrap())];
    assert_eq!(cell.resource.register.value(), Some("B: total=120"));
}

#[test]
fn the_unfenced_paused_worker_corrupts_the_value() {
    let engine = run("paused-worker", "broken");
    let cell = &engine.state().stores[0].cells[&("primary".to_string(), "totals".parse().unwrap())];
    assert_eq!(cell.resource.register.value(), Some("A: total=90 (from stale inputs)"));
    let v = &engine.violations()[0];
    assert_eq!(
        v.detail,
        "totals in db accepted A's write from an older lease after B presented a newer one"
    );
}

#[test]
fn every_built_in_scenario_round_trips_through_json() {
    for scenario in library::all() {
        let json = scenario.to_json();
        let back = Scenario::from_json(&json).unwrap_or_else(|e| panic!("{}: {e}", scenario.name));
        assert_eq!(back, scenario);
    }
}

#[test]
fn the_same_scenario_and_schedule_give_the_identical_log() {
    for scenario in library::all() {
        let mut a = Engine::new(scenario.clone()).unwrap();
        let mut b = Engine::new(scenario).unwrap();
        a.run().unwrap();
        b.run().unwrap();
        assert_eq!(a.records(), b.records());
        assert_eq!(a.log(), b.log());
        // The schedule actually taken replays the run exactly.
        let mut replay = a.scenario().clone();
        replay.schedule = a.schedule_so_far();
        let mut c = Engine::new(replay).unwrap();
        c.run().unwrap();
        assert_eq!(c.records(), a.records());
    }
}

#[test]
fn seeking_backwards_and_forwards_reproduces_every_state() {
    let scenario = library::scenario("check-then-write", Some("check-then-write")).unwrap();
    let mut reference = Engine::new(scenario.clone()).unwrap();
    let mut states = vec![(reference.state().clone(), reference.log().to_vec())];
    while reference.step().unwrap().is_some() {
        states.push((reference.state().clone(), reference.log().to_vec()));
    }
    let mut engine = Engine::new(scenario).unwrap();
    for target in [5, 2, 19, 0, 20, 7, 7, 100, 3, 18] {
        engine.seek(target).unwrap();
        let expected = target.min(states.len() - 1);
        assert_eq!(engine.position(), expected);
        assert_eq!(engine.state(), &states[expected].0, "after seeking to {target}");
        assert_eq!(engine.log(), &states[expected].1[..], "log after seeking to {target}");
        assert_eq!(engine.records(), &reference.records()[..expected]);
    }
}

#[test]
fn stepping_a_different_choice_after_seeking_back_forgets_the_old_future() {
    let scenario = library::scenario("check-then-write", Some("check-then-write")).unwrap();
    let mut engine = Engine::new(scenario.clone()).unwrap();
    engine.run().unwrap();
    assert!(engine
        .verdict()
        .violations
        .iter()
        .any(|v| v.invariant == FinalValueNotFromLatestOwner));
    // Go back to the choice at t=13 (B's deferred write first) and take the other branch.
    let branch = engine.timeline().iter().position(|r| r.at == Tick(13) && r.enabled == 2).unwrap();
    engine.seek(branch).unwrap();
    assert_eq!(engine.timeline()[branch].chosen, 1);
    engine.step_choice(0).unwrap();
    while engine.step().unwrap().is_some() {}
    assert!(engine
        .verdict()
        .violations
        .iter()
        .all(|v| v.invariant != FinalValueNotFromLatestOwner));
    assert_eq!(engine.timeline().len(), engine.position());
    // The same branch from a fresh engine gives the same log.
    let mut fresh = Engine::new(scenario).unwrap();
    fresh.seek(branch).unwrap();
    fresh.step_choice(0).unwrap();
    while fresh.step().unwrap().is_some() {}
    assert_eq!(fresh.log(), engine.log());
    assert_eq!(fresh.records(), engine.records());
}

#[test]
fn seeking_in_a_long_generated_run_matches_a_straight_run() {
    let scenario = library::generated(300, 30, 2);
    let mut straight = Engine::new(scenario.clone()).unwrap();
    straight.run().unwrap();
    let total = straight.records().len();
    assert!(total > 2 * fencelab_core::record::SNAPSHOT_EVERY, "{total} steps");
    let mut engine = Engine::new(scenario).unwrap();
    for target in [total - 1, 10, total / 2, total / 3 + 7, 0, total] {
        engine.seek(target).unwrap();
        assert_eq!(engine.position(), target);
        assert_eq!(engine.records(), &straight.records()[..target]);
    }
    assert_eq!(engine.log(), straight.log());
}

#[test]
fn a_lenient_schedule_replays_on_another_variant() {
    let broken = library::scenario("check-then-write", Some("check-then-write")).unwrap();
    let mut fenced = library::scenario("check-then-write", Some("atomic")).unwrap();
    fenced.schedule = vec![9; 12];
    assert!(matches!(
        Engine::new(fenced.clone()).unwrap().run(),
        Err(EngineError::Sim(SimError::BadChoice { index: 0, choice: 9, .. }))
    ));
    let mut lenient = Engine::new(fenced).unwrap().with_schedule_mode(ScheduleMode::Lenient);
    assert!(lenient.run().unwrap().finished);
    assert!(Engine::new(broken).unwrap().run().unwrap().met);
}

/// The owner each story treats as the rightful one (the last to be granted a lease) writes
/// inside its lease: a story about stale owners must not flag its new owner too.
#[test]
fn the_newest_owner_of_every_story_writes_inside_its_lease() {
    for scenario in library::all() {
        let label = format!("{}/{}", scenario.name, scenario.variant);
        let mut engine = Engine::new(scenario).unwrap();
        let verdict = engine.run().unwrap();
        let newest = engine.records().iter().rev().find_map(|r| match &r.event {
            Event::LeaseGranted { worker, .. } => Some(worker.clone()),
            _ => None,
        });
        let Some(newest) = newest else { continue };
        let own = format!("accepted {newest}'s write");
        for v in verdict.violations.iter().filter(|v| v.invariant == WriteOutsideLease) {
            assert!(!v.detail.contains(&own), "{label}: {}", v.detail);
        }
    }
}

fn captions(name: &str, variant: &str) -> Vec<String> {
    let mut engine = Engine::new(library::scenario(name, Some(variant)).unwrap()).unwrap();
    engine.run().unwrap();
    engine.records().iter().map(|r| r.caption.clone()).collect()
}

/// A rightful owner refused because of a forged, clock-made or reset generation is not called
/// a stale owner, and a writer with no lease is not said to have held an older one.
#[test]
fn captions_say_what_really_happened_to_each_writer() {
    let forged = captions("forged-token", "unauthenticated").join("\n");
    assert!(
        forged.contains("M's write, which no lease backs, after A presented one under a lease"),
        "{forged}"
    );
    assert!(forged.contains("M's write, sent without any lease"), "{forged}");
    assert!(
        forged.contains("yet A holds the newest lease: the 1000 came from a forged token"),
        "{forged}"
    );
    assert!(!forged.contains("stale owner"), "{forged}");
    let clock = captions("wall-clock-tokens", "broken").join("\n");
    assert!(
        clock.contains("yet B holds the newest lease: the 31 was a wall-clock reading"),
        "{clock}"
    );
    let reset = captions("authority-restart", "broken").join("\n");
    assert!(
        reset.contains(
            "yet C holds the newest lease: the authority issued 2 before it lost its counter"
        ),
        "{reset}"
    );
    let strict = captions("same-owner-updates", "strict").join("\n");
    assert!(
        strict.contains("already written with generation 1 (strictly-newer policy)"),
        "{strict}"
    );
    assert!(!strict.contains("holds the newest lease"), "{strict}");
    for scenario in library::all() {
        let all = captions(&scenario.name, &scenario.variant).join("\n");
        let label = format!("{}/{}", scenario.name, scenario.variant);
        for wrong in ["for 0 ticks", " 1 ticks", "highest was no newer", "had written in between"] {
            assert!(!all.contains(wrong), "{label}: {wrong}");
        }
    }
}

/// The step that breaks an invariant says so in its own caption, which is what the live region
/// and the transcript read.
#[test]
fn the_breaking_step_narrates_what_broke() {
    for scenario in library::all() {
        let mut engine = Engine::new(scenario).unwrap();
        let verdict = engine.run().unwrap();
        for violation in &verdict.violations {
            let caption = &engine.records()[violation.step.index()].caption;
            let at_step: Vec<_> =
                verdict.violations.iter().filter(|v| v.step == violation.step).cloned().collect();
            let said = format!("Broken: {}: {}.", violation.headline(&at_step), violation.detail);
            assert!(caption.contains(&said), "{caption}");
        }
    }
}

/// A write accepted outside its lease is explained by what the store does: a store that checks
/// no tokens is said to have no fencing, and "a limit of fencing" is kept for a fenced store
/// that accepted it because no newer lease had reached it yet. A write with a forged token is
/// named for its token, not as a stale write.
#[test]
fn captions_name_why_a_write_got_through() {
    let caption_of = |name: &str, variant: &str, worker: &str, value: &str| {
        let mut engine = Engine::new(library::scenario(name, Some(variant)).unwrap()).unwrap();
        engine.run().unwrap();
        let record = engine.records().iter().find(|r| {
            matches!(&r.event, Event::WriteArrived { worker: w, request, .. } if w == worker && request.value == value)
        });
        record.unwrap_or_else(|| panic!("{name}/{variant}: no write {value}")).caption.clone()
    };
    let unfenced = caption_of("paused-worker", "broken", "A", "A: total=90 (from stale inputs)");
    assert!(unfenced.contains("(no fencing here)"), "{unfenced}");
    assert!(!unfenced.contains("limit of fencing"), "{unfenced}");
    let first = caption_of("fresh-register", "fenced", "A", "A: stale but first");
    assert!(first.contains("(a limit of fencing: no newer lease had reached it yet)"), "{first}");
    let forged = caption_of("forged-token", "unauthenticated", "M", "M: hijacked");
    assert!(
        forged.contains("Broken: a write with a token the authority never issued was accepted over a newer lease's write"),
        "{forged}"
    );
    assert!(!forged.contains("stale write"), "{forged}");
    for scenario in library::all() {
        let mut engine = Engine::new(scenario.clone()).unwrap();
        engine.run().unwrap();
        for record in engine.records() {
            let unfenced_path = matches!(&record.event, Event::WriteArrived { enforcement, .. } if *enforcement == fencelab_core::format::model::Enforcement::Unfenced);
            if record.caption.contains("limit of fencing") {
                assert!(
                    !unfenced_path,
                    "{}/{}: {}",
                    scenario.name, scenario.variant, record.caption
                );
            }
        }
    }
}
