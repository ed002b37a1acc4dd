//! The SQLite store against real database files in a temporary folder.

use fencelab_core::conformance::{check_store, Divergence};
use fencelab_core::scenario::library;
use fencelab_core::scenario::model::Enforcement;
use fencelab_core::*;
use fencelab_sqlite::{Options, SqliteStore, StoreError};
use rusqlite::Connection;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

fn g(token: u64) -> Generation {
    Generation::new(token).unwrap()
}

fn write(token: u64, op: &str, value: &str) -> WriteRequest {
    WriteRequest::new(
        ResourceId::new("ledger").unwrap(),
        g(token),
        OperationId::new(op).unwrap(),
        None,
        value,
    )
}

fn ledger() -> ResourceId {
    ResourceId::new("ledger").unwrap()
}

fn open(path: &Path) -> SqliteStore {
    SqliteStore::open(path, Options::default()).unwrap()
}

fn value_of(store: &mut SqliteStore) -> Option<StoredValue> {
    store.read(&ledger()).unwrap()
}

#[test]
fn conformance_sqlite_matches_the_reference_on_every_built_in_story() {
    let dir = tempfile::tempdir().unwrap();
    let files = AtomicUsize::new(0);
    let mut scenarios = library::all();
    scenarios.push(library::contention(3, Enforcement::Fenced));
    // A tiny capacity, so forgetting by count is compared too.
    let mut capacity = library::scenario("same-owner-updates", Some("expected-revision")).unwrap();
    capacity.stores[0].retention = Retention { max_entries: NonZeroUsize::new(1), max_age: None };
    scenarios.push(capacity);
    let report = check_store(&scenarios, |spec| {
        let n = files.fetch_add(1, Ordering::Relaxed);
        let options =
            Options { policy: spec.policy, retention: spec.retention, ..Options::default() };
        SqliteStore::open(dir.path().join(format!("conformance-{n}.db")), options)
    })
    .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(report.scenarios, scenarios.len());
    assert!(report.writes > 60, "{report:?}");
}

#[test]
fn the_kit_reports_the_first_divergence_of_a_store_that_gets_the_policy_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = [library::scenario("same-owner-updates", Some("allow-same")).unwrap()];
    let result = check_store(&scenarios, |spec| {
        // Wrong on purpose: ignores the scenario's same-generation policy.
        let options = Options {
            policy: SameGenerationPolicy::StrictlyNewer,
            retention: spec.retention,
            ..Options::default()
        };
        SqliteStore::open(dir.path().join("wrong.db"), options)
    });
    let Err(Divergence::Outcome { scenario, index, expected, actual, .. }) = result else {
        panic!("{result:?}")
    };
    assert_eq!((scenario.as_str(), index), ("same-owner-updates/allow-same", 1));
    assert!(expected.contains("applied") && actual.contains("stale"), "{expected} vs {actual}");
}

/// Where the old client stops: after its read, until the new client's write has committed.
struct Pause {
    read_done: Arc<Barrier>,
    committed: Arc<Barrier>,
}

impl Pause {
    fn after_read(&self) {
        self.read_done.wait();
        self.committed.wait();
    }
}

/// The article's forced interleaving on real connections: `old` runs in its own thread with its
/// own connection and calls `pause.after_read()` after reading; meanwhile the new client (this
/// thread, another connection) commits a fenced write with generation 8. Returns what `old`
/// returned and the new client's store.
fn race<R: Send + 'static>(
    path: &Path,
    old: impl FnOnce(PathBuf, Pause) -> R + Send + 'static,
) -> (R, SqliteStore) {
    open(path).write(&write(7, "a-0", "A started"), Tick(0)).unwrap();
    let (read_done, committed) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let pause = Pause { read_done: read_done.clone(), committed: committed.clone() };
    let path_for_old = path.to_path_buf();
    let old = thread::spawn(move || old(path_for_old, pause));
    read_done.wait();
    let mut new = open(path);
    assert!(new.write(&write(8, "b-1", "B completed"), Tick(2)).unwrap().is_applied());
    committed.wait();
    (old.join().unwrap(), new)
}

/// The old client's conditional write then affects zero rows and reports the stale owner.
#[test]
fn the_two_client_race_is_fenced_by_the_conditional_update() {
    let dir = tempfile::tempdir().unwrap();
    let ((rows, outcome), mut new) = race(&dir.path().join("race.db"), |path, pause| {
        let mut store = open(&path);
        let seen = value_of(&mut store).unwrap();
        pause.after_read();
        // The same conditional statement the store uses, run by hand: zero rows.
        let rows = store
            .connection()
            .execute(
                "UPDATE fenced SET highest = 7, value = 'A stale', revision = revision + 1
                 WHERE resource = 'ledger' AND (highest < 7 OR (highest = 7 AND NOT 0))",
                [],
            )
            .unwrap();
        let outcome =
            store.write(&write(7, "a-1", &format!("A from {:?}", seen.value)), Tick(3)).unwrap();
        (rows, outcome)
    });
    assert_eq!(rows, 0);
    assert_eq!(
        outcome,
        WriteOutcome::Rejected(WriteRejection::Stale { presented: g(7), highest: g(8) })
    );
    let state = value_of(&mut new).unwrap();
    assert_eq!((state.value.as_deref(), state.highest), (Some("B completed"), Some(g(8))));
}

/// The same interleaving against a read-then-write implementation: SELECT, check in the client,
/// then an unconditional UPDATE in a separate statement. The stale write lands.
#[test]
fn a_read_then_write_implementation_loses_the_same_race() {
    let dir = tempfile::tempdir().unwrap();
    let (allowed, mut new) = race(&dir.path().join("race.db"), |path, pause| {
        let conn = Connection::open(&path).unwrap();
        let highest: i64 = conn
            .query_row("SELECT highest FROM fenced WHERE resource = 'ledger'", [], |r| r.get(0))
            .unwrap();
        let allowed = 7 >= highest;
        pause.after_read();
        if allowed {
            conn.execute("UPDATE fenced SET highest = 7, value = 'A stale', revision = revision + 1 WHERE resource = 'ledger'", []).unwrap();
        }
        allowed
    });
    assert!(allowed, "the old client's check passed before the new write");
    let state = value_of(&mut new).unwrap();
    assert_eq!(
        (state.value.as_deref(), state.highest),
        (Some("A stale"), Some(g(7))),
        "the stale write overwrote the newer value"
    );
}

#[test]
fn a_reopened_database_still_fences_the_stale_worker() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("durable.db");
    {
        let mut store = open(&path);
        store.write(&write(8, "b-1", "B completed"), Tick(1)).unwrap();
    }
    let mut reopened = open(&path);
    let outcome = reopened.write(&write(7, "a-1", "A stale"), Tick(2)).unwrap();
    assert_eq!(
        outcome,
        WriteOutcome::Rejected(WriteRejection::Stale { presented: g(7), highest: g(8) })
    );
    assert_eq!(value_of(&mut reopened).unwrap().value.as_deref(), Some("B completed"));
}

/// The broken variant: the highest generation lives in the process, outside the transaction
/// that writes the value. A restart loses it and the stale worker is re-authorized.
struct HighestOutside {
    conn: Connection,
    highest: Option<u64>,
}

impl HighestOutside {
    fn write(&mut self, token: u64, value: &str) -> bool {
        if self.highest.is_some_and(|h| token < h) {
            return false;
        }
        self.conn
            .execute(
                "INSERT INTO fenced (resource, highest, value, revision) VALUES ('ledger', ?1, ?2, 1)
                 ON CONFLICT (resource) DO UPDATE SET value = excluded.value, revision = revision + 1",
                rusqlite::params![token as i64, value],
            )
            .unwrap();
        self.highest = Some(token);
        true
    }
}

#[test]
fn keeping_the_highest_generation_outside_the_transaction_re_authorizes_the_stale_worker() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("outside.db");
    open(&path); // Creates the schema.
    let mut before = HighestOutside { conn: Connection::open(&path).unwrap(), highest: None };
    assert!(before.write(8, "B completed"));
    assert!(!before.write(7, "A stale"), "fenced while the process lives");
    drop(before);
    let mut after_restart =
        HighestOutside { conn: Connection::open(&path).unwrap(), highest: None };
    assert!(after_restart.write(7, "A stale"), "the record was lost with the process");
    let mut store = open(&path);
    assert_eq!(value_of(&mut store).unwrap().value.as_deref(), Some("A stale"));
}

fn seeded(dir: &Path) -> PathBuf {
    let path = dir.join("seeded.db");
    open(&path).write(&write(5, "seed", "seeded"), Tick(0)).unwrap();
    path
}

fn unchanged(path: &Path) {
    let mut store = open(path);
    let state = value_of(&mut store).unwrap();
    assert_eq!(
        (state.value.as_deref(), state.highest, state.revision),
        (Some("seeded"), Some(g(5)), Revision(1))
    );
    assert!(store.lookup(&ledger(), &OperationId::new("w").unwrap()).unwrap().is_none());
}

#[test]
fn a_locked_database_is_a_clear_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = seeded(dir.path());
    let holder = Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let options = Options { busy_timeout: Duration::from_millis(50), ..Options::default() };
    let mut store = SqliteStore::open(&path, options).unwrap();
    let err = store.write(&write(6, "w", "blocked"), Tick(1)).unwrap_err();
    assert!(matches!(err, StoreError::Locked(_)), "{err}");
    assert!(err.to_string().starts_with("the database is locked by another connection"));
    holder.execute_batch("ROLLBACK").unwrap();
    unchanged(&path);
}

#[test]
fn a_read_only_database_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = seeded(dir.path());
    let mut store =
        SqliteStore::open(&path, Options { read_only: true, ..Options::default() }).unwrap();
    assert_eq!(value_of(&mut store).unwrap().value.as_deref(), Some("seeded"));
    let err = store.write(&write(6, "w", "nope"), Tick(1)).unwrap_err();
    assert!(matches!(err, StoreError::ReadOnly), "{err}");
    unchanged(&path);
}

#[test]
fn a_corrupt_file_is_a_clear_error_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corrupt.db");
    std::fs::write(
        &path,
        b"this is not a database, just some bytes pretending to be one..........",
    )
    .unwrap();
    let err = SqliteStore::open(&path, Options::default()).err().expect("refused");
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
    assert!(err.to_string().contains("not a usable SQLite database"), "{err}");
}

#[test]
fn a_missing_table_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.db");
    let mut store =
        SqliteStore::open(&path, Options { create: false, ..Options::default() }).unwrap();
    let err = store.write(&write(1, "w", "v"), Tick(0)).unwrap_err();
    assert!(
        matches!(err, StoreError::MissingTable(ref t) if t == "fenced_ops" || t == "fenced"),
        "{err}"
    );
    assert!(err.to_string().contains("is missing"), "{err}");
}

#[test]
fn a_failure_mid_write_leaves_value_generation_and_revision_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let path = seeded(dir.path());
    let mut store = open(&path);
    // Make the last statement of the write fail, after the fenced row was updated.
    store
        .connection()
        .execute_batch("CREATE TRIGGER full BEFORE INSERT ON fenced_ops BEGIN SELECT RAISE(ABORT, 'disk full'); END;")
        .unwrap();
    let err = store.write(&write(6, "w", "half"), Tick(1)).unwrap_err();
    assert!(err.to_string().contains("disk full"), "{err}");
    store.connection().execute_batch("DROP TRIGGER full").unwrap();
    drop(store);
    unchanged(&path);
}

#[test]
fn a_generation_beyond_sqlite_integers_is_refused_not_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let path = seeded(dir.path());
    let mut store = open(&path);
    let err = store.write(&write(u64::MAX, "w", "huge"), Tick(1)).unwrap_err();
    assert!(matches!(err, StoreError::InvalidData(_)), "{err}");
    drop(store);
    unchanged(&path);
}

#[test]
fn operation_ids_and_retention_match_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let retention = Retention { max_entries: None, max_age: Some(10) };
    let mut store =
        SqliteStore::open(dir.path().join("ops.db"), Options { retention, ..Options::default() })
            .unwrap();
    let first = store.write(&write(7, "op-1", "debit"), Tick(0)).unwrap();
    let WriteOutcome::Applied(applied) = first else { panic!("{first:?}") };
    let again = store.write(&write(7, "op-1", "debit"), Tick(5)).unwrap();
    assert_eq!(
        again,
        WriteOutcome::Replayed(StoredResult { generation: g(7), applied, recorded_at: Tick(0) })
    );
    assert!(store.lookup(&ledger(), &OperationId::new("op-1").unwrap()).unwrap().is_some());
    // Past the window the id is forgotten (and recorded as such); the retry applies again.
    let late = store.write(&write(7, "op-1", "debit"), Tick(30)).unwrap();
    assert!(matches!(late, WriteOutcome::Applied(Applied { revision: Revision(2), .. })));
    let forgotten = store.forgotten().unwrap();
    assert_eq!(forgotten.len(), 1);
    assert!(forgotten[0].1.matches(&ForgetReason::Age { max_age: 10 }));
}

/// Sequences the built-in stories never produce (time going back, the strict policy's own
/// retry) must still match the reference exactly.
#[test]
fn odd_sequences_match_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    for (case, (policy, retention, steps)) in [
        (
            SameGenerationPolicy::AllowSame,
            Retention { max_entries: None, max_age: Some(3) },
            vec![("op1", 1, 6), ("op2", 1, 2), ("op3", 1, 5), ("op2", 1, 5)],
        ),
        (
            SameGenerationPolicy::StrictlyNewer,
            Retention::FOREVER,
            vec![("op", 3, 1), ("op", 3, 2), ("op-2", 3, 3), ("op-3", 4, 4), ("op", 3, 5)],
        ),
        (
            SameGenerationPolicy::AllowSame,
            Retention { max_entries: NonZeroUsize::new(1), max_age: Some(0) },
            vec![("a", 1, 5), ("b", 1, 4), ("a", 1, 4), ("b", 2, 9)],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let file = dir.path().join(format!("odd-{case}.db"));
        let mut sqlite =
            SqliteStore::open(&file, Options { policy, retention, ..Options::default() }).unwrap();
        let mut memory = MemoryStore::new(policy, retention);
        for (op, generation, t) in steps {
            let request = write(generation, op, op);
            let expected = memory.write(&request, Tick(t)).unwrap();
            assert_eq!(
                sqlite.write(&request, Tick(t)).unwrap(),
                expected,
                "{op} at t={t} ({policy:?}, {retention:?})"
            );
        }
        assert_eq!(sqlite.read(&ledger()).unwrap(), memory.read(&ledger()).unwrap());
    }
}
