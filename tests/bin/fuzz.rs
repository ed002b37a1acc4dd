//! Fuzzes the scenario reader and the share-link parser with seeded inputs:
//! `cargo run --release -p fencelab-tests --bin fuzz -- --execs 1000000`. Prints, per target,
//! the inputs run, accepted, engine steps, broken promises, panics, slow inputs (the first one
//! is written to a file) and the most time one input took. Exits 0 when nothing broke or
//! panicked, 1 otherwise (the first such input written to a file), 2 for bad arguments. The
//! release profile aborts on a panic; the panic hook writes the input first.

use fencelab_tests::capture;
use fencelab_tests::fuzz::{self, Target};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

const USAGE: &str =
    "usage: fuzz [--execs N (per target)] [--seed S] [--threads T] [--target NAME]... [--out FILE]";

struct Args {
    execs: u64,
    seed: u64,
    threads: usize,
    targets: Vec<Target>,
    out: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        execs: 1_000_000,
        seed: 1,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        targets: Vec::new(),
        out: PathBuf::from("fuzz-failure.txt"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number =
            |v: String| v.parse::<u64>().map_err(|_| format!("{flag}: \"{v}\" is not a number"));
        match flag.as_str() {
            "--execs" => a.execs = number(value()?)?,
            "--seed" => a.seed = number(value()?)?,
            "--threads" => a.threads = number(value()?)?.max(1) as usize,
            "--target" => {
                let name = value()?;
                let target =
                    Target::ALL.into_iter().find(|t| t.name() == name).ok_or_else(|| {
                        let names: Vec<_> = Target::ALL.iter().map(|t| t.name()).collect();
                        format!("unknown target {name} (use {})", names.join(", "))
                    })?;
                a.targets.push(target);
            }
            "--out" => a.out = PathBuf::from(value()?),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if a.targets.is_empty() {
        a.targets = Target::ALL.to_vec();
    }
    Ok(a)
}

fn main() -> ExitCode {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    capture::install(a.out.clone(), capture::current);
    let seeds = fuzz::seeds();
    println!(
        "fuzz: seed {}, {} inputs per target on {} threads{}",
        a.seed,
        a.execs,
        a.threads,
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
        let r = fuzz::run(*target, &seeds, a.execs, a.seed, a.threads, &stop);
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
