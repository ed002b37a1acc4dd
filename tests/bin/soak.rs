//! Plays random, fully fenced scenarios under random schedules and reports every safety
//! violation: `cargo run --release -p fencelab-tests --bin soak -- --scenarios 100000 --seed 1`.
//! Exits 0 when none broke; 1 when one did, with the first counterexample of each broken
//! invariant written to files as found and minimised (`--out` names them); 2 for bad arguments.

use fencelab_core::{Engine, InvariantKind};
use fencelab_tests::{capture, soak};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

const USAGE: &str =
    "usage: soak [--scenarios N] [--seed S] [--threads T] [--max-steps M] [--out FILE]";

struct Args {
    config: soak::Config,
    out: PathBuf,
}

fn args() -> Result<Args, String> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut config =
        soak::Config { scenarios: 100_000, seed: 1, threads, max_steps: soak::MAX_STEPS };
    let mut out = PathBuf::from("soak-counterexample.json");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number =
            |v: String| v.parse::<u64>().map_err(|_| format!("{flag}: \"{v}\" is not a number"));
        match flag.as_str() {
            "--scenarios" => config.scenarios = number(value()?)?,
            "--seed" => config.seed = number(value()?)?,
            "--threads" => config.threads = number(value()?)?.max(1) as usize,
            "--max-steps" => config.max_steps = number(value()?)? as usize,
            "--out" => out = PathBuf::from(value()?),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    Ok(Args { config, out })
}

fn main() -> ExitCode {
    let Args { config, out } = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
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
            println!("  step {}: {}: {}", v.step, v.invariant, v.detail);
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
            println!("  step {}: {}: {}", v.step, v.invariant, v.detail);
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
