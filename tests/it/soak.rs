//! A small soak run: random fully fenced scenarios under random schedules break no safety
//! invariant. The `soak` binary plays 100,000 and more with the same generator.

use fencelab_core::{
    format::model::Enforcement, format::model::Scenario, format::model::Step,
    format::model::TokenSource,
};
use fencelab_core::{invariant::InvariantKind, Engine};
use fencelab_core::{stories::switches::broken, stories::switches::Switch};
use fencelab_tests::soak;
use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

#[test]
fn random_fenced_scenarios_under_random_schedules_break_no_safety_invariant() {
    let config = soak::Config { scenarios: 300, seed: 1, threads: 2, max_steps: soak::MAX_STEPS };
    let report = soak::run(config, &AtomicBool::new(false));
    assert_eq!(report.scenarios, 300);
    assert_eq!(report.error, None);
    assert_eq!(report.cut_short, 0);
    assert!(report.choice_points > 0);
    let shown: Vec<String> = report
        .first
        .values()
        .map(|c| format!("{:#?}\n{}", c.violations, c.scenario.to_json()))
        .collect();
    assert!(report.first.is_empty(), "{}", shown.join("\n"));
}

#[test]
fn the_generator_keeps_every_protection_on_and_covers_every_kind_of_step_and_fault() {
    let mut kinds = HashSet::new();
    let mut faults = HashSet::new();
    let (mut jitter, mut long_pause, mut shared_data, mut nonzero_choice) =
        (false, false, false, false);
    for index in 0..300 {
        let mut rng = soak::rng_for(1, index);
        let s = soak::fenced_scenario(&mut rng);
        assert_eq!(s.authority.token_source, TokenSource::DurableCounter);
        assert!(s.gateway.as_ref().is_none_or(|g| g.enforcement == Enforcement::Fenced));
        for store in &s.stores {
            assert!(store.enforcement.is_fenced() && store.persist_highest && store.critical);
            assert!(store.paths.iter().all(|p| p.enforcement.is_fenced()));
            shared_data |= store.paths.iter().any(|p| p.data.is_some());
        }
        jitter |= s.network.jitter > 0;
        for step in s.workers.iter().flat_map(|w| &w.script) {
            if let Step::Write(w) = step {
                assert_eq!(w.forge, None);
            }
            long_pause |= matches!(step, Step::Pause { ticks, .. } if *ticks > s.authority.ttl);
            kinds.insert(std::mem::discriminant(step));
        }
        for fault in &s.faults {
            faults.insert(std::mem::discriminant(&fault.fault));
        }
        let play = soak::play(s, &mut rng, soak::MAX_STEPS).expect("generated scenarios run");
        nonzero_choice |= play.schedule.iter().any(|&c| c > 0);
    }
    assert_eq!(kinds.len(), 10, "every kind of script step");
    assert_eq!(faults.len(), 4, "every kind of fault");
    assert!(jitter && long_pause && shared_data && nonzero_choice);
}

#[test]
fn with_the_fence_off_the_soak_finds_stale_writes_and_shrinks_them() {
    let found = (0..200)
        .find_map(|index| {
            let mut rng = soak::rng_for(7, index);
            let s = broken(&soak::fenced_scenario(&mut rng), &[Switch::UnfencedStore]);
            let play = soak::play(s.clone(), &mut rng, soak::MAX_STEPS).expect("runs");
            let stale = play.violations.first()?.invariant == InvariantKind::StaleWriteAccepted;
            stale.then_some(Scenario { schedule: play.schedule, ..s })
        })
        .expect("unfenced stores accept stale writes in some of 200 random scenarios");
    let small = soak::minimise(&found);
    let steps = |s: &Scenario| s.workers.iter().map(|w| w.script.len()).sum::<usize>();
    assert!(small.workers.len() <= found.workers.len() && steps(&small) <= steps(&found));
    assert!(small.workers.len() >= 2, "a stale write needs two owners");
    // The minimised schedule replays strictly, not only leniently.
    let verdict = Engine::new(small.clone()).unwrap().run().unwrap();
    let kinds: Vec<_> = verdict.violations.iter().map(|v| v.invariant).collect();
    assert!(kinds.contains(&InvariantKind::StaleWriteAccepted), "{kinds:?}\n{}", small.to_json());
}
