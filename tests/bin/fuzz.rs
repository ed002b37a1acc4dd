//! Fuzzes the scenario reader and the history readers with seeded inputs:
//! `cargo run --release -p fencelab-tests --bin fuzz -- --execs 1000000`. Prints, per target,
//! the inputs run, accepted, engine steps, broken promises, panics, slow inputs (the first one
//! is written to a file) and the most time one input took. Exits 0 when nothing broke or
//! panicked, 1 otherwise (the first such input written to a file), 2 for bad arguments. The
//! release profile aborts on a panic; the panic hook writes the input first.

use clap::Parser;
use fencelab_tests::capture;
use fencelab_tests::fuzz::{self, Target};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

/// Fuzzes the scenario reader and the history readers with seeded inputs.
#[derive(Parser)]
struct Args {
    /// Inputs per target.
    #[arg(long, default_value_t = 1_000_000)]
    execs: u64,
    /// The seed; the same seed gives the same inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: the machine's cores).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    threads: Option<u64>,
    /// Only these targets (repeat the option for several); all of them by default.
    #[arg(long = "target", value_parser = target)]
    targets: Vec<Target>,
    /// Where the first failing input is written.
    #[arg(long, default_value = "fuzz-failure.txt")]
    out: PathBuf,
}

fn target(name: &str) -> Result<Target, String> {
    Target::ALL.into_iter().find(|t| t.name() == name).ok_or_else(|| {
        let names: Vec<_> = Target::ALL.iter().map(|t| t.name()).collect();
        format!("unknown target {name} (use {})", names.join(", "))
    })
}

fn main() -> ExitCode {
    // Bad arguments exit 2, as the module documentation says.
    let mut a = Args::try_parse().unwrap_or_else(|e| {
        let _ = e.print();
        std::process::exit(if e.use_stderr() { 2 } else { 0 })
    });
    if a.targets.is_empty() {
        a.targets = Target::ALL.to_vec();
    }
    let threads = a.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    capture::install(a.out.clone(), capture::current);
    let seeds = fuzz::seeds();
    println!(
        "fuzz: seed {}, {} inputs per target on {} threads{}",
        a.seed,
        a.execs,
        threads,
        if capture::unwinds() { "" } else { " (panics abort; the hook saves the input)" }
    );
    println!(
        "{:<18} {:>10} {:>10} {:>12} {:>7} {:>7} {:>6} {:>9} {:>9}",
        "target",
        "execs",
        "accepted",
        "engine steps",
        "broken",
        "panics",
        "slow",
        "slowest",
        "seconds"
    );
    let stop = AtomicBool::new(false);
    let mut failure = None;
    let (mut total, mut seconds) = (0, 0.0);
    for target in &a.targets {
        let r = fuzz::run(*target, &seeds, a.execs, a.seed, threads, &stop);
        println!(
            "{:<18} {:>10} {:>10} {:>12} {:>7} {:>7} {:>6} {:>8.3}s {:>9.1}",
            r.target.name(),
            r.execs,
            r.accepted,
            r.steps,
            r.broken,
            r.panics,
            r.slow,
            r.slowest,
            r.seconds
        );
        if let Some(f) = &r.first_slow {
            let path = a.out.with_extension(format!("slow-{}.txt", r.target.name()));
            match std::fs::write(&path, &f.input) {
                Ok(()) => println!(
                    "  the first slow input (input {}, {}) is in {}",
                    f.index,
                    f.problem,
                    path.display()
                ),
                Err(e) => println!("  could not write {}: {e}", path.display()),
            }
        }
        total += r.execs;
        seconds += r.seconds;
        if failure.is_none() {
            failure = r.first_panic.or(r.first_broken).map(|f| (r.target, f));
        }
    }
    println!("{total} inputs in {seconds:.1} s ({:.0}/s)", total as f64 / seconds);
    let Some((target, f)) = failure else { return ExitCode::SUCCESS };
    println!("\n{} input {} (seed {}): {}", target.name(), f.index, a.seed, f.problem);
    match std::fs::write(&a.out, &f.input) {
        Ok(()) => println!("the input is in {}", a.out.display()),
        Err(e) => println!("could not write {}: {e}\n{}", a.out.display(), f.input),
    }
    ExitCode::FAILURE
}
