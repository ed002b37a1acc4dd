//! Engine throughput and seek latency. Prints figures; asserts nothing about time.
//!
//! Run with `cargo bench -p fencelab-core --bench engine`. Machines here are shared and noisy, so
//! read the ratios printed at the end rather than any single absolute number.

use fencelab_core::scenario::library;
use fencelab_core::Engine;
use std::time::{Duration, Instant};

fn main() {
    // Events per second on a generated scenario with 10,000 workers.
    let scenario = library::generated(10_000, 1_000, 1);
    let mut engine = Engine::new(scenario.clone()).expect("valid");
    let started = Instant::now();
    engine.run().expect("runs");
    let elapsed = started.elapsed();
    let events = engine.records().len();
    let per_second = events as f64 / elapsed.as_secs_f64();
    println!(
        "run: 10,000 workers, {events} events in {:.1} ms = {:.0} events/s",
        ms(elapsed),
        per_second
    );

    // A run of at least 100,000 steps, then seeks to pseudo-random steps in it.
    let mut long = Engine::new(library::generated(500, 100, 22)).expect("valid");
    let started = Instant::now();
    long.run().expect("runs");
    let full_run = started.elapsed();
    let total = long.records().len();
    println!("long run: {total} steps in {:.1} ms", ms(full_run));
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
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
