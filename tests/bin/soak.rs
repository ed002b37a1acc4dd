//! Plays random, fully fenced scenarios under random schedules and reports every safety
//! violation: `cargo run --release -p fencelab-tests --bin soak -- --scenarios 100000 --seed 1`.
//! Exits 0 when none broke; 1 when one did, with the first counterexample of each broken
//! invariant written to files as found and minimised (`--out` names them); 2 for bad arguments.

use clap::Parser;
use fencelab_core::{invariant::InvariantKind, Engine};
use fencelab_tests::{capture, soak};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Plays random, fully fenced scenarios under random schedules.
#[derive(Parser)]
struct Args {
    /// How many scenarios to play.
    #[arg(long, default_value_t = 100_000)]
    scenarios: u64,
    /// The seed; the same seed plays the same scenarios with the same schedules.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: the machine's cores); the figures do not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    threads: Option<u64>,
    /// The step cap per scenario.
    #[arg(long, default_value_t = soak::MAX_STEPS)]
    max_steps: usize,
    /// Where the first counterexample of each broken invariant is written.
    #[arg(long, default_value = "soak-counterexample.json")]
    out: PathBuf,
}

fn main() -> ExitCode {
    // Bad arguments exit 2, as the module documentation says.
    let args = Args::try_parse().unwrap_or_else(|e| {
        let _ = e.print();
        std::process::exit(if e.use_stderr() { 2 } else { 0 })
    });
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    let config = soak::Config {
        scenarios: args.scenarios,
        seed: args.seed,
        threads,
        max_steps: args.max_steps,
    };
    let out = args.out;
    capture::install(out.with_extension("panic.json"), || soak::playing_now().map(|s| s.to_json()));
    println!(
        "soak: seed {}, {} scenarios on {} threads, at most {} steps each",
        config.seed, config.scenarios, config.threads, config.max_steps
    );
    let started = Instant::now();
    let stop = AtomicBool::new(false);
    let report = soak::run(config, &stop);
    let elapsed = started.elapsed().as_secs_f64();
    println!("scenarios played   {}", report.scenarios);
    println!("steps              {}", report.steps);
    println!("random choices     {}", report.choice_points);
    println!("cut short at cap   {}", report.cut_short);
    println!("safety violations  {} (in {} scenarios)", report.violation_count(), report.violating);
    for (kind, n) in &report.violations {
        println!("  {kind:<34} {n}");
    }
    println!(
        "elapsed            {elapsed:.1} s ({:.0} scenarios/s, {:.0} steps/s)",
        report.scenarios as f64 / elapsed,
        report.steps as f64 / elapsed
    );
    println!("seed               {}", config.seed);
    let mut failed = !report.first.is_empty();
    if capture::panicked() {
        println!("a run panicked; see the panic message above");
        failed = true;
    }
    if let Some((index, error)) = &report.error {
        println!("scenario {index}: {error}");
        failed = true;
    }
    for (kind, found) in &report.first {
        println!("\nfirst {kind}: scenario {} of seed {}", found.index, config.seed);
        for v in &found.violations {
            println!("  step {}: {}: {}", v.step.index(), v.invariant, v.detail);
        }
        let file = |suffix: &str| out.with_file_name(format!("{}-{kind}{suffix}", stem(&out)));
        write(&file(".json"), &found.scenario.to_json());
        let small = soak::minimise(&found.scenario);
        write(&file(".min.json"), &small.to_json());
        let replayed = Engine::new(small.clone()).ok().and_then(|mut e| e.run().ok());
        let Some(verdict) = replayed else {
            println!("the minimised scenario does not replay strictly; use the unminimised one");
            continue;
        };
        let steps: usize = small.workers.iter().map(|w| w.script.len()).sum();
        let (workers, faults) = (small.workers.len(), small.faults.len());
        println!(
            "minimised to {workers} workers, {steps} script steps, {faults} faults; it replays:"
        );
        let safety =
            verdict.violations.iter().filter(|v| InvariantKind::SAFETY.contains(&v.invariant));
        for v in safety {
            println!("  step {}: {}: {}", v.step.index(), v.invariant, v.detail);
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The file name of `path` without its extension.
fn stem(path: &Path) -> String {
    path.file_stem().map_or_else(|| "soak".into(), |s| s.to_string_lossy().into_owned())
}

fn write(path: &Path, text: &str) {
    match std::fs::write(path, text) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => println!("could not write {}: {e}", path.display()),
    }
}
