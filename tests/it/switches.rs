//! "Break the protocol" switches: flipping the one protection a broken story lacks makes the
//! explorer find the same kind of failure in the fenced story. Also the whole-scenario
//! transforms beside them: one policy, or one enforcement mode, everywhere.

use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::library;
use fencelab_core::*;
use fencelab_core::{
    drive::explore::ExploreConfig, drive::explore::ExploreResult, drive::explore::Explorer,
    fence::register::SameGenerationPolicy, names::Named,
};
use fencelab_core::{invariant::InvariantKind, invariant::InvariantKind::*};
use fencelab_core::{
    stories::switches::broken, stories::switches::with_enforcement, stories::switches::with_policy,
    stories::switches::Switch,
};

const FLIPS: &[(&str, &str, Switch, InvariantKind)] = &[
    ("paused-worker", "fenced", Switch::UnfencedStore, StaleWriteAccepted),
    ("check-then-write", "atomic", Switch::CheckThenWrite, StaleWriteAccepted),
    ("secondary-path", "fenced", Switch::UnfencedSecondaryPath, StaleWriteAccepted),
    ("wall-clock-tokens", "fenced", Switch::WallClockTokens, StaleWriteAccepted),
    ("authority-restart", "fenced", Switch::VolatileCounter, GenerationReissued),
    ("store-restart", "fenced", Switch::HighestNotPersisted, StaleWriteAccepted),
    ("forged-token", "authenticated", Switch::UnauthenticatedTokens, StaleWriteAccepted),
    ("payment-capture", "fenced", Switch::UnfencedGateway, EffectDeliveredTwice),
    ("admin-path", "fenced", Switch::UnfencedSecondaryPath, StaleWriteAccepted),
    ("duplicate-capture", "fenced", Switch::UnfencedGateway, EffectDeliveredTwice),
    ("newer-owner-retry", "fenced", Switch::UnfencedStore, OperationAppliedTwice),
];

#[test]
fn each_switch_breaks_the_story_that_depends_on_it() {
    for (name, variant, switch, invariant) in FLIPS {
        let fenced = library::scenario(name, Some(variant)).unwrap();
        assert!(switch.applies_to(&fenced), "{switch:?} applies to {name}");
        assert!(!switch.is_on(&fenced), "{name}/{variant} starts protected");
        let safe = Explorer::new(fenced.clone(), ExploreConfig::default()).unwrap().run();
        assert!(matches!(safe, ExploreResult::NoViolation { .. }), "{name}/{variant}: {safe:?}");
        let flipped = broken(&fenced, &[*switch]);
        assert!(switch.is_on(&flipped));
        let result = Explorer::new(flipped, ExploreConfig::default()).unwrap().run();
        let ExploreResult::Violation { violation, .. } = result else {
            panic!("{name} with {switch:?}: {result:?}")
        };
        assert_eq!(violation.invariant, *invariant, "{name} with {switch:?}");
    }
}

#[test]
fn switches_only_apply_where_they_change_something() {
    let paused = library::scenario("paused-worker", Some("fenced")).unwrap();
    let applicable: Vec<Switch> =
        Switch::ALL.into_iter().filter(|s| s.applies_to(&paused)).collect();
    assert_eq!(
        applicable,
        [
            Switch::UnfencedStore,
            Switch::CheckThenWrite,
            Switch::StrictlyNewer,
            Switch::WallClockTokens
        ]
    );
    for switch in Switch::ALL {
        assert!(!switch.label().is_empty());
    }
}

/// A switched story keeps its set-up but no longer claims the protected ending.
#[test]
fn a_switched_story_says_which_protections_are_off_instead_of_how_the_fenced_run_ends() {
    let fenced = library::scenario("paused-worker", Some("fenced")).unwrap();
    let setup = library::setup("paused-worker").unwrap();
    let switched = broken(&fenced, &[Switch::UnfencedStore]);
    assert!(switched.intro.starts_with(setup), "{}", switched.intro);
    assert!(
        switched.intro.contains("turns protections off (unfenced store)"),
        "{}",
        switched.intro
    );
    let fenced_line = fenced.intro.strip_prefix(setup).unwrap();
    assert!(!switched.intro.contains(fenced_line.trim()), "{}", switched.intro);
    assert!(switched.outcome.is_empty(), "{}", switched.outcome);
    assert_eq!(broken(&fenced, &[]).intro, fenced.intro);
    assert_eq!(broken(&fenced, &[]).outcome, fenced.outcome);
}

/// A forced policy reaches every store and the gateway, and nothing else changes: not the
/// enforcement, not the expectations.
#[test]
fn with_policy_forces_one_policy_on_every_store_and_the_gateway() {
    let mut gateways = 0;
    for scenario in library::all() {
        for policy in SameGenerationPolicy::VARIANTS.iter().copied() {
            let forced = with_policy(&scenario, policy);
            assert!(forced.stores.iter().all(|s| s.policy == policy), "{}", scenario.name);
            let mut restored = forced.clone();
            for (store, original) in restored.stores.iter_mut().zip(&scenario.stores) {
                store.policy = original.policy;
            }
            if let (Some(gateway), Some(original)) = (&mut restored.gateway, &scenario.gateway) {
                assert_eq!(gateway.policy, policy, "{}", scenario.name);
                gateway.policy = original.policy;
                gateways += 1;
            }
            assert_eq!(restored, scenario, "{} under {policy:?}", scenario.name);
        }
    }
    assert!(gateways > 0, "some story has a gateway");
    let strict = with_policy(
        &library::scenario("paused-worker", Some("fenced")).unwrap(),
        SameGenerationPolicy::StrictlyNewer,
    );
    assert!(Switch::StrictlyNewer.is_on(&strict));
}

/// Compare mode's transform sets every store and write path to the mode, and the gateway to
/// fenced exactly when the mode is fenced; nothing else changes.
#[test]
fn with_enforcement_sets_every_store_path_and_the_gateway() {
    let mut paths = 0;
    for scenario in library::all() {
        for mode in Enforcement::VARIANTS.iter().copied() {
            let forced = with_enforcement(&scenario, mode);
            let mut restored = forced.clone();
            for (store, original) in restored.stores.iter_mut().zip(&scenario.stores) {
                assert_eq!(store.enforcement, mode, "{}", scenario.name);
                store.enforcement = original.enforcement;
                for (path, original) in store.paths.iter_mut().zip(&original.paths) {
                    assert_eq!(path.enforcement, mode, "{}", scenario.name);
                    path.enforcement = original.enforcement;
                    paths += 1;
                }
            }
            if let (Some(gateway), Some(original)) = (&mut restored.gateway, &scenario.gateway) {
                let want =
                    if mode.is_fenced() { Enforcement::Fenced } else { Enforcement::Unfenced };
                assert_eq!(gateway.enforcement, want, "{} under {mode:?}", scenario.name);
                gateway.enforcement = original.enforcement;
            }
            assert_eq!(restored, scenario, "{} under {mode:?}", scenario.name);
        }
    }
    assert!(paths > 0, "some story has a secondary write path");
}

/// The two sides of compare mode on one story: unfenced, the paused worker's stale write lands;
/// fenced, it is refused.
#[test]
fn compare_modes_applied_to_a_story_decide_its_run() {
    let story = library::scenario("paused-worker", Some("broken")).unwrap();
    let run = |mode| {
        let verdict = Engine::new(with_enforcement(&story, mode)).unwrap().run().unwrap();
        verdict.violations.iter().any(|v| v.invariant == StaleWriteAccepted)
    };
    assert!(run(Enforcement::Unfenced));
    assert!(!run(Enforcement::Fenced));
}
