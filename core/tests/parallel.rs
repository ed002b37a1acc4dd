//! The parallel search finds what the search on one thread finds: the same result, field for
//! field (counts, counterexample, bound, memory estimate), on every built-in story, on contention
//! and under every bound, whatever the number of threads.

use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::library;
use fencelab_core::{Bound, ExploreConfig, ExploreResult, Explorer, Scenario};
use proptest::prelude::*;

fn sequential(scenario: &Scenario, config: &ExploreConfig) -> ExploreResult {
    Explorer::new(scenario.clone(), config.clone()).expect("valid").run()
}

fn parallel(scenario: &Scenario, config: &ExploreConfig, threads: usize) -> ExploreResult {
    Explorer::new(scenario.clone(), config.clone()).expect("valid").run_parallel(threads)
}

/// Runs the search on one thread and on 2 and 3 threads, checks they agree, and returns the
/// result.
fn agree(label: &str, scenario: &Scenario, config: &ExploreConfig) -> ExploreResult {
    let one = sequential(scenario, config);
    for threads in [2, 3] {
        assert_eq!(parallel(scenario, config, threads), one, "{label}, {threads} threads");
    }
    one
}

#[test]
fn every_story_variant_gives_the_same_result() {
    let (mut safe, mut broken) = (0, 0);
    for case in library::cases() {
        for variant in &case.variants {
            let scenario = library::scenario(&case.name, Some(variant)).expect("listed");
            let label = format!("{}/{variant}", case.name);
            match agree(&label, &scenario, &ExploreConfig::default()) {
                ExploreResult::NoViolation { .. } => safe += 1,
                ExploreResult::Violation { .. } => broken += 1,
                ExploreResult::Error { error, .. } => panic!("{label}: {error}"),
            }
        }
    }
    // Both kinds of ending are covered.
    assert!(safe > 10 && broken > 10, "{safe} safe, {broken} broken");
}

#[test]
fn contention_gives_the_same_result() {
    for workers in 2..=4 {
        let scenario = library::contention(workers, Enforcement::Fenced);
        let result = agree(&format!("{workers} workers"), &scenario, &ExploreConfig::default());
        let ExploreResult::NoViolation { stats } = result else { panic!("{result:?}") };
        assert!(!stats.bound_hit && stats.unique_states > 200, "{stats:?}");
    }
    // Unprotected, the search stops at a shortest counterexample, the same one on every run.
    for enforcement in [Enforcement::Unfenced, Enforcement::CheckThenWrite] {
        for workers in 2..=3 {
            let scenario = library::contention(workers, enforcement);
            let result = agree(&format!("{workers} workers"), &scenario, &ExploreConfig::default());
            assert!(matches!(result, ExploreResult::Violation { .. }), "{result:?}");
        }
    }
}

#[test]
fn threads_zero_means_one_per_core() {
    let scenario = library::contention(3, Enforcement::Fenced);
    let config = ExploreConfig::default();
    assert_eq!(parallel(&scenario, &config, 0), sequential(&scenario, &config));
}

#[test]
fn each_bound_stops_both_searches_at_the_same_point() {
    let scenario = library::contention(4, Enforcement::Fenced);
    let whole = sequential(&scenario, &ExploreConfig::default());
    let peak = whole.stats().peak_memory;
    let cases = [
        (ExploreConfig { max_states: 1_000, ..ExploreConfig::default() }, Bound::States),
        (ExploreConfig { max_depth: 12, ..ExploreConfig::default() }, Bound::Depth),
        (ExploreConfig { max_memory: peak / 2, ..ExploreConfig::default() }, Bound::Memory),
        (ExploreConfig { max_memory: peak - 1, ..ExploreConfig::default() }, Bound::Memory),
    ];
    for (config, bound) in cases {
        let result = agree(&format!("{bound:?}"), &scenario, &config);
        assert!(result.is_inconclusive(), "{result:?}");
        assert_eq!(result.stats().cut_by, Some(bound), "{result:?}");
    }
    // With exactly the memory the whole search needs, neither search is cut.
    let config = ExploreConfig { max_memory: peak, ..ExploreConfig::default() };
    assert_eq!(agree("the peak", &scenario, &config), whole);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any mix of bounds, any number of threads: the same result. Tight memory bounds make the
    /// parallel search drop steps it worked out ahead and work them out again.
    #[test]
    fn any_bounds_and_threads_give_the_same_result(
        workers in 2..=3usize,
        unfenced in any::<bool>(),
        max_states in 2..2_000usize,
        max_depth in 1..40usize,
        memory_share in 0.0..1.2f64,
        threads in 1..=4usize,
    ) {
        let enforcement = if unfenced { Enforcement::Unfenced } else { Enforcement::Fenced };
        let scenario = library::contention(workers, enforcement);
        let peak = sequential(&scenario, &ExploreConfig::default()).stats().peak_memory;
        let config = ExploreConfig {
            max_states,
            max_depth,
            max_memory: (peak as f64 * memory_share) as usize,
            ..ExploreConfig::default()
        };
        prop_assert_eq!(parallel(&scenario, &config, threads), sequential(&scenario, &config));
    }
}
