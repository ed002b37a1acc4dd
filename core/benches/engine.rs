//! Engine throughput, seek latency and the memory budget, timed with divan. Prints figures;
//! asserts nothing about time.
//!
//! Run with `cargo bench -p fencelab-core --bench engine` (divan's options after `--`, e.g.
//! `-- seek` for the matching benches only). First it prints each case's memory: the engine's
//! estimate and, for the stampede, the peak resident memory. Then divan's table, where each
//! throughput (`item/s`: events or steps per second) has a baseline beside it, measured in the
//! same run: cloning the same number of step records. `curve` runs the first 1,000 to 1,000,000
//! steps of one run, to show that the rate holds as a run grows. Machines here are shared and
//! noisy, so read a throughput against its baseline rather than alone. `cargo test --benches`
//! runs each bench once instead, as a smoke test.

mod common;

use common::{is_bench_run, mib, peak_rss, reset_peak, rss};
use divan::counter::ItemsCount;
use divan::Bencher;
use fencelab_core::stories::library;
use fencelab_core::{memory::Bytes, memory::DEFAULT_MEMORY_BUDGET};
use fencelab_core::{record::EngineError, Engine, Scenario};

fn main() {
    if is_bench_run() {
        memory();
    }
    divan::main();
}

/// A generated scenario with 10,000 workers: about 100,000 events.
fn generated() -> Scenario {
    library::generated(10_000, 1_000, 1)
}

/// 500 workers taking 22 turns each: a run of at least 100,000 steps to seek in.
fn long() -> Scenario {
    library::generated(500, 100, 22)
}

/// 10,000 workers rushing for a one-tick lease: millions of steps if nothing stopped it, so the
/// default memory budget ends it.
fn stampede() -> Scenario {
    library::stampede(10_000)
}

/// The scenario run to its end, or to where the memory budget stopped it.
fn finished(scenario: Scenario) -> Engine {
    let mut engine = Engine::new(scenario).expect("valid");
    let _ = engine.run();
    engine
}

/// Times `scenario`'s run (not building the engine, nor dropping it) per event.
fn time_run(bencher: Bencher, scenario: Scenario) {
    let events = finished(scenario.clone()).records().len();
    bencher
        .counter(ItemsCount::new(events))
        .with_inputs(|| Engine::new(scenario.clone()).expect("valid"))
        .bench_local_values(|mut engine| {
            let _ = engine.run();
            engine
        });
}

/// The baseline: cloning the step records that `scenario`'s run makes, the same number of items.
fn time_clone(bencher: Bencher, scenario: Scenario) {
    let engine = finished(scenario);
    let records = engine.records();
    bencher.counter(ItemsCount::new(records.len())).bench_local(|| records.to_vec());
}

/// Events per second on the generated 10,000-worker scenario.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn run_10000_workers(bencher: Bencher) {
    time_run(bencher, generated());
}

/// Baseline for `run_10000_workers`.
#[divan::bench(sample_count = 20)]
fn run_10000_workers_baseline_clone(bencher: Bencher) {
    time_clone(bencher, generated());
}

/// Events per second on the long run, and the time a full replay from step 0 takes, which
/// `seek_random_step` is compared with.
#[divan::bench(sample_count = 10, sample_size = 1)]
fn run_long(bencher: Bencher) {
    time_run(bencher, long());
}

/// Baseline for `run_long`.
#[divan::bench(sample_count = 20)]
fn run_long_baseline_clone(bencher: Bencher) {
    time_clone(bencher, long());
}

/// Steps per second of the stampede until the default memory budget stops it.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn run_stampede_10000_workers(bencher: Bencher) {
    time_run(bencher, stampede());
}

/// Baseline for `run_stampede_10000_workers`.
#[divan::bench(sample_count = 5)]
fn run_stampede_10000_workers_baseline_clone(bencher: Bencher) {
    time_clone(bencher, stampede());
}

/// Room for a million steps of the stampede (it takes about 1.1 GiB).
const CURVE_BUDGET: usize = 4 << 30;

/// The stampede, its first `steps` steps run, with room for a million.
fn stampede_prefix(steps: usize) -> Engine {
    let mut engine = Engine::new(stampede()).expect("valid").with_memory_budget(CURVE_BUDGET);
    for _ in 0..steps {
        if engine.step().expect("within the budget").is_none() {
            break;
        }
    }
    engine
}

/// Steps per second over the first 1,000 to 1,000,000 steps of one run (the stampede, with a
/// budget large enough for all of them). The rate should hold as the run grows: nothing the
/// engine does per step may cost more the longer the run is.
#[divan::bench(args = [1_000, 10_000, 100_000, 1_000_000], sample_count = 5, sample_size = 1)]
fn curve(bencher: Bencher, steps: usize) {
    let ran = stampede_prefix(steps).records().len();
    assert_eq!(ran, steps, "the stampede should run at least {steps} steps");
    bencher
        .counter(ItemsCount::new(steps))
        .with_inputs(|| Engine::new(stampede()).expect("valid").with_memory_budget(CURVE_BUDGET))
        .bench_local_values(|mut engine| {
            for _ in 0..steps {
                let _ = engine.step();
            }
            engine
        });
}

/// Baseline for `curve`: cloning the same number of the stampede's step records.
#[divan::bench(args = [1_000, 10_000, 100_000, 1_000_000], sample_count = 5)]
fn curve_baseline_clone(bencher: Bencher, steps: usize) {
    let engine = stampede_prefix(steps);
    let records = engine.records();
    bencher.counter(ItemsCount::new(records.len())).bench_local(|| records.to_vec());
}

/// Seeks to pseudo-random steps of the long run: each sample is one seek, so the slowest is the
/// worst seek.
#[divan::bench(sample_count = 200, sample_size = 1)]
fn seek_random_step(bencher: Bencher) {
    let mut engine = finished(long());
    let total = engine.records().len();
    assert!(total >= 100_000, "the seek bench needs a run of at least 100,000 steps, got {total}");
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    bencher
        .with_inputs(|| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % total as u64) as usize
        })
        .bench_local_values(|target| engine.seek(target).expect("seeks"));
}

/// Prints what each case holds in memory. The stampede comes first, while the process is small,
/// so that its peak resident memory is its own; the resident memory before it is its baseline.
fn memory() {
    let before = rss();
    let fresh_peak = reset_peak();
    let mut rush = Engine::new(stampede()).expect("valid");
    let stop = match rush.run() {
        Err(EngineError::MemoryBudget { step, estimate, .. }) => {
            format!("stopped before step {step} (it would have needed {})", Bytes(estimate))
        }
        Err(other) => format!("stopped: {other}"),
        Ok(_) => "ended within the budget".to_string(),
    };
    println!(
        "stampede: 10,000 workers on a one-tick lease, budget {}: {stop} after {} steps; estimate {} at the stop; peak RSS {}{} (RSS before the run {})",
        Bytes(DEFAULT_MEMORY_BUDGET),
        rush.records().len(),
        Bytes(rush.memory_estimate()),
        mib(peak_rss()),
        if fresh_peak { "" } else { " (process peak: could not reset it)" },
        mib(before),
    );
    drop(rush);
    let run = finished(generated());
    println!(
        "run: 10,000 workers, {} events; estimate {}",
        run.records().len(),
        Bytes(run.memory_estimate())
    );
    drop(run);
    let long = finished(long());
    println!(
        "long run: 500 workers, 22 turns each, {} steps; estimate {}",
        long.records().len(),
        Bytes(long.memory_estimate())
    );
}
