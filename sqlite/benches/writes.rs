//! Fenced writes per second on SQLite (WAL, `synchronous=FULL`: every commit is synced before
//! it is acknowledged), against the same writes without the fence as the baseline, with one and
//! two writer threads, timed with divan: the table's `item/s` is writes per second. Each commit
//! waits for the disk, so figures swing with the machine's other work: compare medians, and
//! rerun when the two were measured minutes apart under different load (divan runs one bench's
//! samples, then the next's, so they do not alternate). Prints figures; asserts nothing about
//! time.
//! Run with `cargo bench -p fencelab-sqlite --bench writes`. `cargo test --benches` runs each
//! bench once with a few writes instead, as a smoke test.

use divan::counter::ItemsCount;
use divan::Bencher;
use fencelab_core::{FencedStore, Generation, OperationId, ResourceId, Tick, WriteRequest};
use fencelab_sqlite::{Options, SqliteStore};
use rusqlite::params;
use std::path::Path;
use std::thread;
use std::time::Duration;

/// Writes per thread in each sample; a smoke test (`cargo test --benches`) writes a few.
fn writes_per_thread() -> u64 {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test") {
        1_000
    } else {
        10
    }
}

/// SQLite's busy handler is not fair: while one connection commits back to back, the other can
/// wait for most of its run, longer than the store's default 5 s. The bench measures throughput,
/// not fairness, so both sides wait as long as it takes.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// Each thread writes its own resource through its own connection, with increasing generations.
fn fenced(path: &Path, thread: usize) {
    let options = Options { busy_timeout: BUSY_TIMEOUT, ..Options::default() };
    let mut store = SqliteStore::open(path, options).expect("opens");
    let resource = ResourceId::new(format!("r{thread}")).expect("valid");
    for i in 1..=writes_per_thread() {
        let op = OperationId::new(format!("t{thread}-{i}")).expect("valid");
        let request = WriteRequest::new(
            resource.clone(),
            Generation::new(i).expect("positive"),
            op,
            None,
            format!("value {i}"),
        );
        assert!(store.write(&request, Tick(i)).expect("writes").is_applied());
    }
}

/// The same transaction shape without the fence: no read of the fence record, no raising it,
/// no operation id check and no condition on the UPDATE.
fn unfenced(path: &Path, thread: usize) {
    let conn = rusqlite::Connection::open(path).expect("opens");
    conn.busy_timeout(BUSY_TIMEOUT).expect("sets");
    // The same durability setting as the store's own connections, so only the fence differs.
    conn.pragma_update(None, "synchronous", "FULL").expect("sets");
    let resource = format!("r{thread}");
    for i in 1..=writes_per_thread() as i64 {
        let tx =
            rusqlite::Transaction::new_unchecked(&conn, rusqlite::TransactionBehavior::Immediate)
                .expect("begins");
        let changed = tx
            .execute("UPDATE fenced SET highest = ?2, value = ?3, revision = revision + 1 WHERE resource = ?1", params![resource, i, format!("value {i}")])
            .expect("updates");
        if changed == 0 {
            tx.execute(
                "INSERT INTO fenced (resource, highest, acted, value, revision) VALUES (?1, ?2, 1, ?3, 1)",
                params![resource, i, format!("value {i}")],
            )
            .expect("inserts");
        }
        tx.execute(
            "INSERT INTO fenced_ops (resource, operation, generation, revision, recorded_at) VALUES (?1, ?2, ?3, ?3, ?3)",
            params![resource, format!("t{thread}-{i}"), i],
        )
        .expect("records");
        tx.commit().expect("commits");
    }
}

/// Times `threads` writers, each with its own resource and connection, on a new database.
fn time_writes(bencher: Bencher, threads: usize, write: fn(&Path, usize)) {
    bencher
        .counter(ItemsCount::new(writes_per_thread() as usize * threads))
        .with_inputs(|| {
            let dir = tempfile::tempdir().expect("temp dir");
            drop(
                SqliteStore::open(dir.path().join("bench.db"), Options::default())
                    .expect("creates the schema"),
            );
            dir
        })
        .bench_local_values(|dir| {
            let path = dir.path().join("bench.db");
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let path = path.clone();
                    thread::spawn(move || write(&path, t))
                })
                .collect();
            for h in handles {
                h.join().expect("writer thread");
            }
            // Returned, so that removing the database is not timed.
            dir
        });
}

// Grouped by thread count, so that each pair runs back to back (divan runs the benches in
// order, each to the end) and the disk's pace has less time to change between the two.
// Five samples each: a sample of 1,000 synced writes per thread takes seconds.

mod one_writer {
    use super::*;

    #[divan::bench(sample_count = 5, sample_size = 1)]
    fn fenced(bencher: Bencher) {
        time_writes(bencher, 1, super::fenced);
    }

    /// The baseline for `fenced`.
    #[divan::bench(sample_count = 5, sample_size = 1)]
    fn unfenced(bencher: Bencher) {
        time_writes(bencher, 1, super::unfenced);
    }
}

mod two_writers {
    use super::*;

    #[divan::bench(sample_count = 5, sample_size = 1)]
    fn fenced(bencher: Bencher) {
        time_writes(bencher, 2, super::fenced);
    }

    /// The baseline for `fenced`.
    #[divan::bench(sample_count = 5, sample_size = 1)]
    fn unfenced(bencher: Bencher) {
        time_writes(bencher, 2, super::unfenced);
    }
}

/// The durability setting the store's connections run with, as SQLite reports it.
fn synchronous() -> &'static str {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteStore::open(dir.path().join("probe.db"), Options::default()).expect("opens");
    let level: i64 =
        store.connection().pragma_query_value(None, "synchronous", |r| r.get(0)).expect("reads");
    match level {
        0 => "OFF",
        1 => "NORMAL",
        2 => "FULL",
        _ => "EXTRA",
    }
}

fn main() {
    println!(
        "WAL mode, synchronous={}, {} writes per thread per sample",
        synchronous(),
        writes_per_thread()
    );
    divan::main();
}
