//! "Break the protocol" switches: flipping the one protection a broken story lacks makes the
//! explorer find the same kind of failure in the fenced story.

use fencelab_core::stories::library;
use fencelab_core::stories::switches::{broken, Switch};
use fencelab_core::InvariantKind::{self, *};
use fencelab_core::*;

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
    assert_eq!(broken(&fenced, &[]).intro, fenced.intro);
}
