//! `fencelab audit` at scale: a generated history of 1,000,000 and of 10,000,000 events piped
//! into the real command, with its events per second and its peak memory (the child's maximum
//! resident set, from `wait4`). Prints figures; asserts nothing about time or memory.
//!
//! Run with `cargo bench -p fencelab-cli --bench audit_scale` (add `-- 100000` for other sizes,
//! or `-- --write 100000` to print such a history).
//! The history is 200 workers taking turns on 10 resources, each turn a grant, its receipt, a
//! fenced write, its answer and a release, so what is open at any moment stays the same however
//! long the history runs. Two baselines are measured in the same run: the same stream piped into
//! `cat` (what making and piping it costs), and parsing its lines into `serde_json::Value`s
//! in this process (reading JSON at all).

// The bench reads a child's peak memory with `wait4` from the C library.
#![allow(unsafe_code)]

use std::io::{BufWriter, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WORKERS: usize = 200;
const RESOURCES: usize = 10;

fn main() {
    // `-- --write N` prints the generated history instead, to profile or to try by hand.
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--write") {
        let events = args.get(at + 1).and_then(|n| n.replace('_', "").parse().ok());
        let mut out = BufWriter::new(std::io::stdout().lock());
        generate(events.unwrap_or(1_000_000), &mut out).and_then(|()| out.flush()).expect("writes");
        return;
    }
    let sizes: Vec<usize> =
        std::env::args().skip(1).filter_map(|a| a.replace('_', "").parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![1_000_000, 10_000_000] } else { sizes };
    let parse_rate = baseline_parse(200_000);
    println!("baseline: serde_json::Value parse of the same lines: {:.0} lines/s", parse_rate);
    println!(
        "{:>12} {:>10} {:>14} {:>12} {:>14} {:>8}",
        "events", "audit s", "events/s", "peak MiB", "cat events/s", "ratio"
    );
    for events in sizes {
        let (audit, peak) = pipe(env!("CARGO_BIN_EXE_fencelab"), &["audit", "-"], events);
        let (cat, _) = pipe("cat", &[], events);
        let rate = events as f64 / audit.as_secs_f64();
        let cat_rate = events as f64 / cat.as_secs_f64();
        println!(
            "{events:>12} {:>10.2} {rate:>14.0} {:>12.1} {cat_rate:>14.0} {:>8.2}",
            audit.as_secs_f64(),
            peak as f64 / 1024.0,
            rate / parse_rate
        );
    }
    println!("ratio: audit events/s over the in-process JSON parse baseline");
}

/// Writes a history of `events` entries (after its header) to `out`.
fn generate(events: usize, out: &mut impl Write) -> std::io::Result<()> {
    let workers: Vec<String> = (0..WORKERS).map(|w| format!("\"w{w}\"")).collect();
    let resources: Vec<String> = (0..RESOURCES).map(|r| format!("\"r{r}\"")).collect();
    writeln!(
        out,
        r#"{{"fencelab_history":2,"setup":{{"workers":[{}],"resources":[{}],"stores":[{{"name":"db","paths":[{{"name":"primary","data":"primary","enforcement":"fenced"}}]}}]}}}}"#,
        workers.join(","),
        resources.join(",")
    )?;
    let mut written = 0;
    let mut turn: u64 = 0;
    while written < events {
        let (w, r) = (turn as usize % WORKERS, turn as usize % RESOURCES);
        let (generation, at, message) = (turn / RESOURCES as u64 + 1, turn, turn * 2);
        let until = at + 10;
        let before = if generation > 1 { (generation - 1).to_string() } else { "null".into() };
        let request = format!(
            r#"{{"resource":"r{r}","generation":{generation},"operation":"w{w}-{turn}","value":"v{turn}"}}"#
        );
        let lines = [
            format!(
                r#"{{"at":{at},"event":{{"lease_granted":{{"worker":"w{w}","resource":"r{r}","generation":{generation},"valid_until":{until},"arrives_at":{at},"message":{message}}}}}}}"#
            ),
            format!(
                r#"{{"at":{at},"event":{{"grant_received":{{"worker":"w{w}","resource":"r{r}","generation":{generation},"message":{message}}}}}}}"#
            ),
            format!(
                r#"{{"at":{at},"event":{{"write_sent":{{"worker":"w{w}","message":{},"store":"db","path":"primary","request":{request},"token":"lease","arrives_at":{at},"retry":false}}}}}}"#,
                message + 1
            ),
            format!(
                r#"{{"at":{at},"event":{{"write_arrived":{{"worker":"w{w}","message":{},"store":"db","path":"primary","data":"primary","enforcement":"fenced","request":{request},"outcome":{{"outcome":"applied","generation":{generation},"revision":{}}},"value_after":"v{turn}","highest_before":{},"highest_after":{generation}}}}}}}"#,
                message + 1,
                generation,
                before
            ),
            format!(
                r#"{{"at":{at},"event":{{"released":{{"worker":"w{w}","resource":"r{r}","generation":{generation}}}}}}}"#
            ),
        ];
        for line in lines.iter().take(events - written) {
            writeln!(out, "{line}")?;
            written += 1;
        }
        turn += 1;
    }
    Ok(())
}

/// Pipes a generated history of `events` entries into `program args`; its wall time and peak
/// resident memory in KiB.
// The child is reaped by `wait4`, which also reports its peak memory; `Child::wait` would not.
#[allow(clippy::zombie_processes)]
fn pipe(program: &str, args: &[&str], events: usize) -> (Duration, i64) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let stdin = child.stdin.take().expect("a pipe");
    let start = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut out = BufWriter::with_capacity(1 << 20, stdin);
        generate(events, &mut out).and_then(|()| out.flush())
    });
    let (status, peak) = wait4(child.id());
    let elapsed = start.elapsed();
    writer.join().expect("the writer ends").expect("the child reads everything");
    assert_eq!(status, 0, "{program} failed on the generated history");
    (elapsed, peak)
}

/// Waits for process `pid`: its exit status and its peak resident set in KiB.
fn wait4(pid: u32) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills in; pid is our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = libc::pid_t::try_from(pid).expect("a pid");
    // SAFETY: the pointers are to live locals for the duration of the call.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

/// Lines per second parsing `events` generated lines into `serde_json::Value`s.
fn baseline_parse(events: usize) -> f64 {
    let mut text = Vec::new();
    generate(events, &mut text).expect("writes to memory");
    let text = String::from_utf8(text).expect("UTF-8");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    let start = Instant::now();
    let fields: usize = lines
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .map_or(0, |v| v.as_object().map_or(0, |o| o.len()))
        })
        .sum();
    let elapsed = start.elapsed();
    assert!(fields > 0);
    lines.len() as f64 / elapsed.as_secs_f64()
}
