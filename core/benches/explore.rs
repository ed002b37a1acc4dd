//! Explorer cost as the number of contending workers grows, and a search that the memory bound
//! stops. Prints figures, with each search's peak resident memory beside the explorer's own
//! estimate; asserts nothing about time. Run with `cargo bench -p fencelab-core --bench explore`.

mod common;

use common::{mib, peak_rss, reset_peak, rss};
use fencelab_core::memory::Bytes;
use fencelab_core::scenario::library;
use fencelab_core::scenario::model::Enforcement;
use fencelab_core::{ExploreConfig, ExploreResult, Explorer, Scenario};
use std::time::Instant;

fn main() {
    let mut previous: Option<usize> = None;
    for workers in [2, 3, 4] {
        let scenario = library::contention(workers, Enforcement::Fenced);
        let config = ExploreConfig { max_states: 2_000_000, ..ExploreConfig::default() };
        let stats = search(&format!("{workers} workers"), scenario, config, previous);
        previous = Some(stats.unique_states);
    }
    // 1,000 workers rushing for a one-tick lease: a thousand choices at every step, so the
    // default memory bound stops the search.
    search("stampede, 1,000 workers", library::stampede(1_000), ExploreConfig::default(), None);
}

/// Runs one search and prints its figures; `previous` is the state count of the case before.
fn search(
    label: &str,
    scenario: Scenario,
    config: ExploreConfig,
    previous: Option<usize>,
) -> fencelab_core::ExploreStats {
    let before = rss();
    let fresh_peak = reset_peak();
    let started = Instant::now();
    let result = Explorer::new(scenario, config).expect("valid").run();
    let elapsed = started.elapsed().as_secs_f64();
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
        "{label}: {} unique states, {} transitions, max depth {}{cut} in {:.2} s = {:.0} states/s; peak RSS {} (grew {grew} from {}), estimate {}; {verdict}{growth}",
        stats.unique_states,
        stats.transitions,
        stats.max_depth,
        elapsed,
        stats.unique_states as f64 / elapsed,
        mib(peak),
        mib(before),
        Bytes(stats.peak_memory),
    );
    stats
}
