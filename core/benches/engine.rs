//! Engine throughput, seek latency and the memory budget. Prints figures; asserts nothing about
//! time.
//!
//! Run with `cargo bench -p fencelab-core --bench engine`. Machines here are shared and noisy, so
//! read the ratios printed at the end rather than any single absolute number.

mod common;

use common::{mib, peak_rss, reset_peak, rss};
use fencelab_core::memory::{Bytes, DEFAULT_MEMORY_BUDGET};
use fencelab_core::scenario::library;
use fencelab_core::{Engine, EngineError};
use std::time::{Duration, Instant};

fn main() {
    // First, while the process is small, so that its resident memory is this case's alone.
    let stampede_per_second = stampede();

    // Events per second on a generated scenario with 10,000 workers.
    let scenario = library::generated(10_000, 1_000, 1);
    let mut engine = Engine::new(scenario.clone()).expect("valid");
    let started = Instant::now();
    engine.run().expect("runs");
    let elapsed = started.elapsed();
    let events = engine.records().len();
    let per_second = events as f64 / elapsed.as_secs_f64();
    println!(
        "run: 10,000 workers, {events} events in {:.1} ms = {:.0} events/s; estimate {}",
        ms(elapsed),
        per_second,
        Bytes(engine.memory_estimate())
    );
    drop(engine);

    // A run of at least 100,000 steps, then seeks to pseudo-random steps in it.
    let mut long = Engine::new(library::generated(500, 100, 22)).expect("valid");
    let started = Instant::now();
    long.run().expect("runs");
    let full_run = started.elapsed();
    let total = long.records().len();
    println!(
        "long run: {total} steps in {:.1} ms; estimate {}",
        ms(full_run),
        Bytes(long.memory_estimate())
    );
    assert!(
        total >= 100_000,
        "the seek benchmark needs a run of at least 100,000 steps, got {total}"
    );

    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut times = Vec::new();
    for _ in 0..200 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let target = (seed % total as u64) as usize;
        let started = Instant::now();
        long.seek(target).expect("seeks");
        times.push(started.elapsed());
        assert_eq!(long.position(), target);
    }
    times.sort();
    let median = times[times.len() / 2];
    let worst = times[times.len() - 1];
    println!(
        "seek to a random step of {total}: median {:.3} ms, worst {:.3} ms over {} seeks",
        ms(median),
        ms(worst),
        times.len()
    );
    println!(
        "ratio: median seek / full replay from step 0 = {:.5}",
        median.as_secs_f64() / full_run.as_secs_f64()
    );
    println!(
        "ratio: stampede steps/s (under its budget) / generated events/s = {:.2}",
        stampede_per_second / per_second
    );
}

/// 10,000 workers rushing for a one-tick lease: millions of steps if nothing stopped it, so the
/// default memory budget ends it. Its baseline is the resident memory before it starts. Returns
/// its steps per second.
fn stampede() -> f64 {
    let before = rss();
    let fresh_peak = reset_peak();
    let mut rush = Engine::new(library::stampede(10_000)).expect("valid");
    let started = Instant::now();
    let outcome = rush.run();
    let elapsed = started.elapsed();
    let steps = rush.records().len();
    let stop = match outcome {
        Err(EngineError::MemoryBudget { step, estimate, .. }) => {
            format!("stopped before step {step} (it would have needed {})", Bytes(estimate))
        }
        Err(other) => format!("stopped: {other}"),
        Ok(_) => "ended within the budget".to_string(),
    };
    println!(
        "stampede: 10,000 workers on a one-tick lease, budget {}: {stop} after {:.2} s = {:.0} steps/s; estimate {} at the stop; peak RSS {}{} (RSS before the run {})",
        Bytes(DEFAULT_MEMORY_BUDGET),
        elapsed.as_secs_f64(),
        steps as f64 / elapsed.as_secs_f64(),
        Bytes(rush.memory_estimate()),
        mib(peak_rss()),
        if fresh_peak { "" } else { " (process peak: could not reset it)" },
        mib(before),
    );
    steps as f64 / elapsed.as_secs_f64()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
