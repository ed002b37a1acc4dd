//! Explorer cost as the number of contending workers grows. Prints figures; asserts nothing about
//! time. Run with `cargo bench -p fencelab-core --bench explore`.

use fencelab_core::scenario::library;
use fencelab_core::scenario::model::Enforcement;
use fencelab_core::{ExploreConfig, ExploreResult, Explorer};
use std::time::Instant;

/// The process's peak resident memory so far, in MiB (Linux only; the bench, not the core,
/// reads /proc).
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn main() {
    let mut previous: Option<usize> = None;
    for workers in [2, 3, 4] {
        let scenario = library::contention(workers, Enforcement::Fenced);
        let config = ExploreConfig { max_states: 2_000_000, ..ExploreConfig::default() };
        let started = Instant::now();
        let result = Explorer::new(scenario, config).expect("valid").run();
        let elapsed = started.elapsed().as_secs_f64();
        let stats = result.stats();
        let verdict = match &result {
            ExploreResult::NoViolation { .. } => "no violation".to_string(),
            ExploreResult::Violation { violation, .. } => {
                format!("violation: {}", violation.invariant)
            }
            ExploreResult::Error { error, .. } => format!("error: {error}"),
        };
        let growth = previous.map_or(String::new(), |p| {
            format!(
                ", x{:.1} the states of one fewer worker",
                stats.unique_states as f64 / p as f64
            )
        });
        println!(
            "{workers} workers: {} unique states, {} transitions, max depth {}{} in {:.2} s = {:.0} states/s; peak RSS {:.0} MiB; {verdict}{growth}",
            stats.unique_states,
            stats.transitions,
            stats.max_depth,
            if stats.bound_hit { " (bound hit)" } else { "" },
            elapsed,
            stats.unique_states as f64 / elapsed,
            peak_rss_mib().unwrap_or(f64::NAN),
        );
        previous = Some(stats.unique_states);
    }
}
