//! The parallel search finds what the sequential one finds: the same result, field for field
//! (counts, first violation and its schedule, bound), on every built-in story and on contention,
//! except the memory it estimates it held, which is more. Under a memory bound it stops no later
//! than the sequential search, and always at the same point.

use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::library;
use fencelab_core::{
    drive::explore::Bound, drive::explore::ExploreConfig, drive::explore::ExploreResult,
    drive::explore::Explorer, Scenario,
};
use proptest::prelude::*;

fn sequential(scenario: &Scenario, config: &ExploreConfig) -> ExploreResult {
    Explorer::new(scenario.clone(), config.clone()).expect("valid").run()
}

fn parallel(scenario: &Scenario, config: &ExploreConfig, threads: usize) -> ExploreResult {
    Explorer::new(scenario.clone(), config.clone()).expect("valid").run_parallel(threads)
}

/// The result with its memory estimate left out, which the parallel search has its own of.
fn found(mut result: ExploreResult) -> ExploreResult {
    match &mut result {
        ExploreResult::NoViolation { stats }
        | ExploreResult::Violation { stats, .. }
        | ExploreResult::Error { stats, .. } => stats.peak_memory = 0,
    }
    result
}

/// Runs the search on one thread and on 2 and 3 threads, checks they agree, and returns the
/// sequential result.
fn agree(label: &str, scenario: &Scenario, config: &ExploreConfig) -> ExploreResult {
    let one = sequential(scenario, config);
    for threads in [2, 3] {
        let many = parallel(scenario, config, threads);
        assert_eq!(found(many), found(one.clone()), "{label}, {threads} threads");
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
fn a_search_continued_on_threads_gives_the_same_result() {
    let scenario = library::contention(3, Enforcement::Fenced);
    let whole = sequential(&scenario, &ExploreConfig::default());
    for slice in [1, 10, 100] {
        let mut explorer = Explorer::new(scenario.clone(), ExploreConfig::default()).unwrap();
        assert!(explorer.run_for(slice).is_none());
        assert_eq!(found(explorer.run_parallel(2)), found(whole.clone()), "after {slice} steps");
    }
}

#[test]
fn threads_zero_means_one_per_core() {
    let scenario = library::contention(3, Enforcement::Fenced);
    let config = ExploreConfig::default();
    assert_eq!(found(parallel(&scenario, &config, 0)), found(sequential(&scenario, &config)));
}

#[test]
fn the_state_and_depth_bounds_stop_both_searches_at_the_same_point() {
    let scenario = library::contention(4, Enforcement::Fenced);
    for (config, bound) in [
        (ExploreConfig { max_states: 1_000, ..ExploreConfig::default() }, Bound::States),
        (ExploreConfig { max_states: 2, ..ExploreConfig::default() }, Bound::States),
        (ExploreConfig { max_depth: 12, ..ExploreConfig::default() }, Bound::Depth),
    ] {
        let result = agree(&format!("{bound:?}"), &scenario, &config);
        assert!(result.is_inconclusive(), "{result:?}");
        assert_eq!(result.stats().cut_by, Some(bound), "{result:?}");
    }
}

#[test]
fn the_memory_bound_stops_the_parallel_search_no_later_and_always_at_the_same_point() {
    let scenario = library::contention(4, Enforcement::Fenced);
    let whole = sequential(&scenario, &ExploreConfig::default());
    let held = parallel(&scenario, &ExploreConfig::default(), 2).stats().peak_memory;
    for budget in [whole.stats().peak_memory / 2, whole.stats().peak_memory - 1, held - 1] {
        let config = ExploreConfig { max_memory: budget, ..ExploreConfig::default() };
        let result = parallel(&scenario, &config, 2);
        assert_eq!(result.stats().cut_by, Some(Bound::Memory), "{budget} bytes: {result:?}");
        assert!(result.is_inconclusive());
        assert!(result.stats().peak_memory <= budget, "{budget} bytes: {result:?}");
        assert!(
            result.stats().unique_states <= sequential(&scenario, &config).stats().unique_states
        );
        assert_eq!(parallel(&scenario, &config, 2), result, "{budget} bytes, again");
    }
    // With the memory it needs, it is not cut.
    let config = ExploreConfig { max_memory: held, ..ExploreConfig::default() };
    assert_eq!(found(parallel(&scenario, &config, 2)), found(whole));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any mix of bounds, any number of threads: the same result unless the memory bound cuts
    /// the parallel search, which then cuts it no later than the sequential one, and the same
    /// way every time.
    #[test]
    fn any_bounds_and_threads_give_the_same_result(
        workers in 2..=3usize,
        unfenced in any::<bool>(),
        max_states in 2..2_000usize,
        max_depth in 1..40usize,
        memory_share in 0.0..2.5f64,
        threads in 2..=4usize,
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
        let (one, many) = (sequential(&scenario, &config), parallel(&scenario, &config, threads));
        // What a search holds before its first step may be more than a tiny bound: a search
        // with no memory at all holds just that.
        let nothing = ExploreConfig { max_memory: 0, ..config.clone() };
        let start = parallel(&scenario, &nothing, threads).stats().peak_memory;
        if many.stats().cut_by == Some(Bound::Memory) {
            prop_assert!(many.stats().unique_states <= one.stats().unique_states);
            prop_assert!(many.stats().peak_memory <= config.max_memory.max(start));
            prop_assert_eq!(parallel(&scenario, &config, threads), many);
        } else {
            prop_assert_eq!(found(many), found(one));
        }
    }
}
