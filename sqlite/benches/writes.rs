//! Fenced writes per second on SQLite (WAL), against the same writes without the fence
//! condition, with one and two writer threads. Prints figures; asserts nothing about time.
//! Run with `cargo bench -p fencelab-sqlite --bench writes`.

use fencelab_core::{FencedStore, Generation, OperationId, ResourceId, Tick, WriteRequest};
use fencelab_sqlite::{Options, SqliteStore};
use rusqlite::params;
use std::path::Path;
use std::thread;
use std::time::Instant;

const WRITES_PER_THREAD: u64 = 4_000;

/// Each thread writes its own resource through its own connection, with increasing generations.
fn fenced(path: &Path, thread: usize) {
    let mut store = SqliteStore::open(path, Options::default()).expect("opens");
    let resource = ResourceId::new(format!("r{thread}")).expect("valid");
    for i in 1..=WRITES_PER_THREAD {
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

/// The same transaction shape without the fence: no read of the highest generation and no
/// condition on the UPDATE.
fn unfenced(path: &Path, thread: usize) {
    let conn = rusqlite::Connection::open(path).expect("opens");
    conn.busy_timeout(std::time::Duration::from_secs(5)).expect("sets");
    // The same durability settings as the store's own connections.
    conn.pragma_update(None, "synchronous", "NORMAL").expect("sets");
    let resource = format!("r{thread}");
    for i in 1..=WRITES_PER_THREAD as i64 {
        let tx =
            rusqlite::Transaction::new_unchecked(&conn, rusqlite::TransactionBehavior::Immediate)
                .expect("begins");
        let changed = tx
            .execute("UPDATE fenced SET highest = ?2, value = ?3, revision = revision + 1 WHERE resource = ?1", params![resource, i, format!("value {i}")])
            .expect("updates");
        if changed == 0 {
            tx.execute(
                "INSERT INTO fenced (resource, highest, value, revision) VALUES (?1, ?2, ?3, 1)",
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

fn measure(name: &str, threads: usize, write: fn(&Path, usize)) -> f64 {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bench.db");
    drop(SqliteStore::open(&path, Options::default()).expect("creates the schema"));
    let started = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let path = path.clone();
            thread::spawn(move || write(&path, t))
        })
        .collect();
    for h in handles {
        h.join().expect("writer thread");
    }
    let rate = (WRITES_PER_THREAD as usize * threads) as f64 / started.elapsed().as_secs_f64();
    println!("{name:>9}, {threads} writer thread(s): {rate:>8.0} writes/s");
    rate
}

fn main() {
    for threads in [1, 2] {
        let plain = measure("unfenced", threads, unfenced);
        let fenced_rate = measure("fenced", threads, fenced);
        println!(
            "  fence overhead with {threads} thread(s): fenced takes {:.2}x the time of unfenced",
            plain / fenced_rate
        );
    }
}
