//! Fenced writes per second on SQLite (WAL, `synchronous=FULL`: every commit is synced before
//! it is acknowledged), against the same writes without the fence, with one and two writer
//! threads. Each commit waits for the disk, so figures swing with the machine's other work: the
//! two are measured in alternating rounds and compared by their medians. Prints figures; asserts
//! nothing about time.
//! Run with `cargo bench -p fencelab-sqlite --bench writes`.

use fencelab_core::{FencedStore, Generation, OperationId, ResourceId, Tick, WriteRequest};
use fencelab_sqlite::{Options, SqliteStore};
use rusqlite::params;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

const WRITES_PER_THREAD: u64 = 1_000;

/// Alternating rounds of unfenced and fenced writes per thread count.
const ROUNDS: usize = 5;

/// SQLite's busy handler is not fair: while one connection commits back to back, the other can
/// wait for most of its run, longer than the store's default 5 s. The bench measures throughput,
/// not fairness, so both sides wait as long as it takes.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// Each thread writes its own resource through its own connection, with increasing generations.
fn fenced(path: &Path, thread: usize) {
    let options = Options { busy_timeout: BUSY_TIMEOUT, ..Options::default() };
    let mut store = SqliteStore::open(path, options).expect("opens");
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

/// The same transaction shape without the fence: no read of the fence record, no raising it,
/// no operation id check and no condition on the UPDATE.
fn unfenced(path: &Path, thread: usize) {
    let conn = rusqlite::Connection::open(path).expect("opens");
    conn.busy_timeout(BUSY_TIMEOUT).expect("sets");
    // The same durability setting as the store's own connections, so only the fence differs.
    conn.pragma_update(None, "synchronous", "FULL").expect("sets");
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
    println!("WAL mode, synchronous={}, {WRITES_PER_THREAD} writes per thread", synchronous());
    for threads in [1, 2] {
        let (mut plain, mut fenced_rates) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            plain.push(measure("unfenced", threads, unfenced));
            fenced_rates.push(measure("fenced", threads, fenced));
        }
        let (plain, fenced_rate) = (median(plain), median(fenced_rates));
        println!(
            "  medians with {threads} thread(s): unfenced {plain:.0}, fenced {fenced_rate:.0} \
             writes/s; fenced takes {:.2}x the time of unfenced",
            plain / fenced_rate
        );
    }
}

fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}
