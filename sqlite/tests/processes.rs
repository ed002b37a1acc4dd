//! The SQLite store used by several processes: opening one fresh file from many processes at
//! once, and a writer process killed right after (or while) its write is acknowledged.
//!
//! The processes are this test program run again with `FENCELAB_SQLITE_CHILD` set, so the file
//! has its own `main` (no test harness). `FENCELAB_OPEN_ROUNDS` and `FENCELAB_CRASH_ROUNDS`
//! set how many rounds each part runs (40 and 60 by default).

use fencelab_core::{
    fence::register::WriteRejection, FencedStore, Generation, OperationId, ResourceId, Tick,
    WriteOutcome, WriteRequest,
};
use fencelab_sqlite::{Options, SqliteStore};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Instant;

const ROLE: &str = "FENCELAB_SQLITE_CHILD";
const PROCESSES: usize = 8;

fn request(resource: &str, generation: u64, operation: &str, value: &str) -> WriteRequest {
    WriteRequest::new(
        ResourceId::new(resource).unwrap(),
        Generation::new(generation).unwrap(),
        OperationId::new(operation).unwrap(),
        None,
        value,
    )
}

fn rounds(variable: &str, default: usize) -> usize {
    std::env::var(variable).ok().and_then(|n| n.parse().ok()).unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match std::env::var(ROLE).ok().as_deref() {
        Some("open") => open_and_write(&args[1], args[2].parse().expect("an index")),
        Some("writer") => write_until_killed(&args[1]),
        Some(other) => panic!("unknown role {other}"),
        None => {
            // `cargo test -- NAME` passes filters; this program runs both parts regardless.
            eight_processes_open_one_fresh_file_at_once();
            an_acknowledged_write_survives_its_killed_writer_process();
        }
    }
}

/// A child: says it is ready, waits for the go, opens the file and makes one fenced write
/// under generation `index + 1`, and reports `ok` or the error.
fn open_and_write(path: &str, index: u64) {
    println!("ready");
    std::io::stdout().flush().unwrap();
    let mut go = String::new();
    std::io::stdin().read_line(&mut go).unwrap();
    let result = SqliteStore::open(path, Options::default()).and_then(|mut store| {
        store.write(&request("ledger", index + 1, &format!("w-{index}"), "value"), Tick(index))
    });
    match result {
        Ok(WriteOutcome::Applied(_) | WriteOutcome::Rejected(WriteRejection::Stale { .. })) => {
            println!("ok")
        }
        Ok(other) => println!("unexpected outcome {other:?}"),
        Err(error) => println!("error: {error}"),
    }
}

/// A child: writes generations 2, 3, ... to `ledger`, saying `acked N` after each, until it is
/// killed.
fn write_until_killed(path: &str) {
    let mut store = SqliteStore::open(path, Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut out = std::io::stdout();
    for generation in 2.. {
        let write = request("ledger", generation, &format!("b-{generation}"), &value(generation));
        let outcome = store.write(&write, Tick(generation)).unwrap_or_else(|e| panic!("{e}"));
        assert!(outcome.is_applied(), "{outcome:?}");
        writeln!(out, "acked {generation}").unwrap();
        out.flush().unwrap();
    }
}

fn value(generation: u64) -> String {
    format!("B's write under generation {generation}")
}

fn child(role: &str, args: &[&str]) -> (Child, BufReader<ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(args)
        .env(ROLE, role)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdout)
}

fn line(reader: &mut BufReader<ChildStdout>) -> String {
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    line.trim_end().to_string()
}

/// Eight processes open one fresh file together, a few hundred opens in all: the first
/// open's set-up (the journal mode, the tables and the options row) must never give up on a
/// lock that waiting would pass.
fn eight_processes_open_one_fresh_file_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let rounds = rounds("FENCELAB_OPEN_ROUNDS", 40);
    let began = Instant::now();
    let mut failures = Vec::new();
    for round in 0..rounds {
        let path = dir.path().join(format!("together-{round}.db"));
        let path = path.to_str().unwrap();
        let mut children: Vec<_> =
            (0..PROCESSES).map(|i| child("open", &[path, &i.to_string()])).collect();
        for (_, out) in &mut children {
            assert_eq!(line(out), "ready");
        }
        for (child, _) in &mut children {
            writeln!(child.stdin.as_mut().unwrap(), "go").unwrap();
        }
        for (mut child, mut out) in children {
            let said = line(&mut out);
            if said != "ok" {
                failures.push(format!("round {round}: {said}"));
            }
            assert!(child.wait().unwrap().success());
        }
        let mut store = SqliteStore::open(path, Options::default()).unwrap();
        let state = store.read(&ResourceId::new("ledger").unwrap()).unwrap().expect("written");
        assert_eq!(state.highest, Some(Generation::new(PROCESSES as u64).unwrap()));
    }
    println!(
        "{} opens of a fresh file by {PROCESSES} processes at once ({rounds} rounds, {:.1} s): \
         {} failed",
        rounds * PROCESSES,
        began.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A writer process is killed the moment one of its writes is acknowledged (and often while its
/// next write is under way). Every acknowledged generation survives, the file is intact, and the
/// stale owner's generation 1 is refused.
fn an_acknowledged_write_survives_its_killed_writer_process() {
    let dir = tempfile::tempdir().unwrap();
    let rounds = rounds("FENCELAB_CRASH_ROUNDS", 60);
    let began = Instant::now();
    for round in 0..rounds {
        let path = dir.path().join(format!("crash-{round}.db"));
        let path_text = path.to_str().unwrap();
        let (mut writer, mut out) = child("writer", &[path_text]);
        // Kill after the first to fourth acknowledgement, so some kills land mid-write.
        let mut acked = 0;
        for _ in 0..=(round % 4) {
            let said = line(&mut out);
            acked = said
                .strip_prefix("acked ")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("the writer said {said:?}"));
        }
        writer.kill().unwrap();
        writer.wait().unwrap();
        check_after_crash(&path, acked, round);
    }
    println!(
        "{rounds} writer processes killed right after an acknowledged write ({:.1} s): every \
         acknowledged generation kept, every stale write refused",
        began.elapsed().as_secs_f64()
    );
}

fn check_after_crash(path: &Path, acked: u64, round: usize) {
    let mut store = SqliteStore::open(path, Options::default()).unwrap();
    let integrity: String =
        store.connection().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(integrity, "ok", "round {round}");
    let ledger = ResourceId::new("ledger").unwrap();
    let state = store.read(&ledger).unwrap().expect("the acknowledged write is there");
    let highest = state.highest.expect("a fence").get();
    assert!(highest >= acked, "round {round}: generation {acked} was acknowledged, {highest} kept");
    assert_eq!(state.value.as_deref(), Some(value(highest).as_str()), "round {round}");
    let stale = store.write(&request("ledger", 1, "a-1", "A's stale write"), Tick(0)).unwrap();
    assert!(
        matches!(stale, WriteOutcome::Rejected(WriteRejection::Stale { .. })),
        "round {round}: {stale:?}"
    );
}
