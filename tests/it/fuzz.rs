//! A small fuzz run of the scenario reader and the history readers: whatever the input, each
//! refuses it with an error or accepts something that reads back as itself, holds together and
//! is judged. The `fuzz` binary runs millions of
//! inputs from the same generators; the share-link parser has its own run in the links crate.

use fencelab_core::Scenario;
use fencelab_tests::fuzz::{self, Target};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::LazyLock;

static SEEDS: LazyLock<fuzz::Seeds> = LazyLock::new(fuzz::seeds);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_scenario_reader_survives_any_text(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let text = String::from_utf8_lossy(&bytes);
        let result = fuzz::exercise(Target::ScenarioText, &text);
        prop_assert!(result.is_ok(), "{result:?}");
    }

    #[test]
    fn the_scenario_reader_survives_mutated_scenarios(seed in any::<u64>(), index in 0u64..1 << 20) {
        let input = fuzz::input_at(Target::ScenarioMutated, &SEEDS, seed, index);
        let result = fuzz::exercise(Target::ScenarioMutated, &input);
        prop_assert!(result.is_ok(), "{result:?}\n{input}");
    }
}

/// Mutations that all fail at the first field would test little: a fair share must still be
/// accepted (and so reach the engine), and the rest must fail at many different fields.
#[test]
fn mutated_scenarios_reach_past_the_first_field() {
    let mut accepted = 0;
    let mut paths = BTreeSet::new();
    for index in 0..400 {
        match Scenario::from_json(&fuzz::input_at(Target::ScenarioMutated, &SEEDS, 1, index)) {
            Ok(_) => accepted += 1,
            Err(e) => {
                paths.insert(e.path);
            }
        }
    }
    assert!(accepted >= 40, "only {accepted} of 400 mutated scenarios were accepted");
    assert!(paths.len() >= 40, "errors at only {} different fields", paths.len());
}

/// The history readers (JSON Lines, Jepsen, OpenTelemetry, logs) on mutated recorded
/// histories: each input is refused or read into a history that holds together and is judged,
/// and a fair share is still accepted, so the mutations reach past the first line. The `fuzz`
/// binary runs a million of each.
#[test]
fn the_history_readers_survive_mutated_histories() {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let readers = Target::ALL
        .into_iter()
        .filter(|t| !matches!(t, Target::ScenarioText | Target::ScenarioMutated));
    for target in readers {
        let report = fuzz::run(target, &SEEDS, 300, 7, 1, &stop);
        assert_eq!(report.panics, 0, "{:?}", report.first_panic);
        assert_eq!(report.broken, 0, "{:?}", report.first_broken);
        assert!(
            report.accepted >= 20,
            "{}: only {} of 300 accepted",
            target.name(),
            report.accepted
        );
    }
}
