//! A small fuzz run of the scenario reader and the share-link parser: whatever the input, they
//! refuse it with an error or accept something that reads back as itself and runs. The `fuzz`
//! binary runs millions of inputs from the same generators.

use fencelab_core::Scenario;
use fencelab_tests::fuzz::{self, Target, LINK_PARAMS};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::LazyLock;

static SEEDS: LazyLock<fuzz::Seeds> = LazyLock::new(fuzz::seeds);

fn link_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_,0-9=+#%-]{0,16}",
        prop::sample::select(vec![
            "paused-worker",
            "fenced",
            "broken",
            "generated",
            "1",
            "0",
            "400",
            "unfenced,fenced",
            "fenced_idempotent,check_then_write",
            "unfenced_store,wall_clock_tokens",
            "controls,caption,log",
            "diagram",
            "allow-same",
            "strict",
            "18446744073709551616",
        ])
        .prop_map(str::to_string),
    ]
}

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

    #[test]
    fn share_links_survive_any_parameters(
        pairs in prop::collection::vec((prop::sample::select(LINK_PARAMS), link_value()), 0..6),
        hash in any::<bool>(),
    ) {
        let pairs: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let fragment = format!("{}{}", if hash { "#" } else { "" }, pairs.join("&"));
        let result = fuzz::exercise(Target::ShareLink, &fragment);
        prop_assert!(result.is_ok(), "{result:?}\n{fragment}");
    }

    #[test]
    fn share_links_survive_generated_fragments(seed in any::<u64>(), index in 0u64..1 << 20) {
        let input = fuzz::input_at(Target::ShareLink, &SEEDS, seed, index);
        let result = fuzz::exercise(Target::ShareLink, &input);
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

/// Generated links name real stories and parameters often enough to get past the first check.
#[test]
fn generated_links_are_often_accepted() {
    let accepted = (0..400)
        .filter(|&index| {
            let input = fuzz::input_at(Target::ShareLink, &SEEDS, 1, index);
            fuzz::exercise(Target::ShareLink, &input).is_ok_and(|e| e.accepted)
        })
        .count();
    assert!(accepted >= 40, "only {accepted} of 400 generated links were accepted");
}
