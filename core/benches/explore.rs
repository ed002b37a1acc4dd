//! Explorer cost as the number of contending workers grows, and a search that the memory bound
//! stops, timed with divan. Prints figures; asserts nothing about time.
//!
//! Run with `cargo bench -p fencelab-core --bench explore`. First it runs each search once and
//! prints what it found, with its peak resident memory beside the explorer's own estimate. Then
//! divan's table, where each search's states per second (`item/s`) has a baseline beside it,
//! measured in the same run: cloning the scenario's starting state as many times as the search
//! finds states. `cargo test --benches` runs each bench once instead, as a smoke test.

mod common;

use common::{is_bench_run, mib, peak_rss, reset_peak, rss};
use divan::counter::ItemsCount;
use divan::Bencher;
use fencelab_core::format::model::Enforcement;
use fencelab_core::memory::Bytes;
use fencelab_core::stories::library;
use fencelab_core::{
    drive::explore::ExploreConfig, drive::explore::ExploreResult, drive::explore::ExploreStats,
    drive::explore::Explorer, Engine, Scenario,
};

fn main() {
    if is_bench_run() {
        figures();
    }
    divan::main();
}

/// The paused worker with `workers` contending for one lease.
fn contention(workers: usize) -> (Scenario, ExploreConfig) {
    let config = ExploreConfig { max_states: 2_000_000, ..ExploreConfig::default() };
    (library::contention(workers, Enforcement::Fenced), config)
}

/// 1,000 workers rushing for a one-tick lease: a thousand choices at every step, so the default
/// memory bound stops the search.
fn stampede() -> (Scenario, ExploreConfig) {
    (library::stampede(1_000), ExploreConfig::default())
}

/// Times one search (not building the explorer, nor dropping its result) per state found.
fn time_search(bencher: Bencher, (scenario, config): (Scenario, ExploreConfig)) {
    let explore = || Explorer::new(scenario.clone(), config.clone()).expect("valid");
    let states = explore().run().stats().unique_states;
    bencher.counter(ItemsCount::new(states)).with_inputs(explore).bench_local_values(|e| e.run());
}

/// The baseline: cloning the scenario's starting state as many times as the search finds states,
/// keeping the clones as the explorer keeps its states.
fn time_clone(bencher: Bencher, (scenario, config): (Scenario, ExploreConfig)) {
    let states =
        Explorer::new(scenario.clone(), config).expect("valid").run().stats().unique_states;
    let engine = Engine::new(scenario).expect("valid");
    let state = engine.state();
    bencher
        .counter(ItemsCount::new(states))
        .bench_local(|| (0..states).map(|_| state.clone()).collect::<Vec<_>>());
}

#[divan::bench(args = [2, 3, 4], sample_count = 20, sample_size = 1)]
fn contention_workers(bencher: Bencher, workers: usize) {
    time_search(bencher, contention(workers));
}

/// Baseline for `contention_workers`.
#[divan::bench(args = [2, 3, 4], sample_count = 20, sample_size = 1)]
fn contention_workers_baseline_clone(bencher: Bencher, workers: usize) {
    time_clone(bencher, contention(workers));
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn stampede_1000_workers(bencher: Bencher) {
    time_search(bencher, stampede());
}

/// Baseline for `stampede_1000_workers`.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn stampede_1000_workers_baseline_clone(bencher: Bencher) {
    time_clone(bencher, stampede());
}

/// Runs each search once and prints what it found and what it held in memory.
fn figures() {
    let mut previous: Option<usize> = None;
    for workers in [2, 3, 4] {
        let stats = search(&format!("{workers} workers"), contention(workers), previous);
        previous = Some(stats.unique_states);
    }
    search("stampede, 1,000 workers", stampede(), None);
}

/// Runs one search and prints its figures; `previous` is the state count of the case before.
fn search(
    label: &str,
    (scenario, config): (Scenario, ExploreConfig),
    previous: Option<usize>,
) -> ExploreStats {
    let before = rss();
    let fresh_peak = reset_peak();
    let result = Explorer::new(scenario, config).expect("valid").run();
    let peak = peak_rss();
    let stats = *result.stats();
    let verdict = match &result {
        ExploreResult::NoViolation { .. } if result.is_inconclusive() => {
            "no violation found, inconclusive".to_string()
        }
        ExploreResult::NoViolation { .. } => "no violation".to_string(),
        ExploreResult::Violation { violation, .. } => format!("violation: {}", violation.invariant),
        ExploreResult::Error { error, .. } => format!("error: {error}"),
    };
    let growth = previous.map_or(String::new(), |p| {
        format!(", x{:.1} the states of one fewer worker", stats.unique_states as f64 / p as f64)
    });
    let cut = stats.cut_by.map_or(String::new(), |b| format!(" (cut by {})", b.describe()));
    let grew = match (peak, before) {
        (Some(peak), Some(before)) if fresh_peak => format!("{:.0} MiB", peak - before),
        _ => "n/a".into(),
    };
    println!(
        "{label}: {} unique states, {} transitions, max depth {}{cut}; peak RSS {} (grew {grew} from {}), estimate {}; {verdict}{growth}",
        stats.unique_states,
        stats.transitions,
        stats.max_depth,
        mib(peak),
        mib(before),
        Bytes(stats.peak_memory),
    );
    stats
}
