//! Records a real two-worker run against the SQLite store and writes its history as JSON Lines.
//!
//! ```sh
//! cargo run -p fencelab-sqlite --example record -- --unfenced --out run.jsonl
//! ```
//!
//! The history goes to `--out` (or standard output); a summary of what the checker finds in it
//! goes to standard error, so the two can be redirected apart.

use fencelab_core::{names::Named, Checker};
use fencelab_sqlite::record::{record_run, Mode, Timings};
use std::process::ExitCode;

const USAGE: &str = "usage: record --fenced|--unfenced [--out FILE]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("record: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let (mut mode, mut out) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let chosen = match arg.as_str() {
            "--fenced" => Mode::Fenced,
            "--unfenced" => Mode::Unfenced,
            "--out" => {
                out = Some(args.next().ok_or_else(|| format!("--out needs a file\n{USAGE}"))?);
                continue;
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        };
        if mode.is_some_and(|m| m != chosen) {
            return Err(format!("choose one of --fenced and --unfenced\n{USAGE}"));
        }
        mode = Some(chosen);
    }
    let mode = mode.ok_or_else(|| format!("choose --fenced or --unfenced\n{USAGE}"))?;
    let history = record_run(mode, Timings::default()).map_err(|e| e.to_string())?;
    let jsonl = history.to_jsonl();
    match &out {
        Some(path) => {
            std::fs::write(path, &jsonl).map_err(|e| format!("cannot write {path}: {e}"))?
        }
        None => print!("{jsonl}"),
    }
    let found = Checker::judge(&history);
    let to = out.as_deref().unwrap_or("standard output");
    eprintln!("{mode} run: {} events to {to}, {} findings", history.entries.len(), found.len());
    for v in &found {
        eprintln!("  step {}: {}: {}", v.step, v.invariant.name(), v.detail);
    }
    Ok(())
}
