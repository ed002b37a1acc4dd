//! The SQLite store against real database files in a temporary folder.

use fencelab_core::format::model::Enforcement;
use fencelab_core::format::model::StoreSpec;
use fencelab_core::stories::library;
use fencelab_core::*;
use fencelab_core::{
    drive::conformance::check_cases, drive::conformance::check_store,
    drive::conformance::explore_store, drive::conformance::factory, drive::conformance::rule_cases,
    drive::conformance::Divergence, drive::conformance::ScheduleOptions,
};
use fencelab_core::{
    fence::idempotency::ForgetReason, fence::idempotency::Retention,
    fence::idempotency::StoredResult, fence::register::Applied, fence::register::Revision,
    fence::register::SameGenerationPolicy, fence::register::WriteRejection,
    fence::store::MemoryStore, fence::store::StoredValue,
};
use fencelab_kit::{check_all, check_concurrent, races, ConcurrentOptions, KitOptions};
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

#[test]
fn an_in_memory_store_fences_like_a_file_and_is_private_to_its_store() {
    let mut store = SqliteStore::open_in_memory(Options::default()).unwrap();
    assert!(store.write(&write(8, "b", "new owner"), Tick(1)).unwrap().is_applied());
    let stale = store.write(&write(7, "a", "stale"), Tick(2)).unwrap();
    let WriteOutcome::Rejected(rejection) = stale else { panic!("{stale:?}") };
    assert_eq!(rejection.to_string(), "stale owner: generation 7 < highest accepted 8");
    assert_eq!(value_of(&mut store).unwrap().value.as_deref(), Some("new owner"));

    let mut other = SqliteStore::open_in_memory(Options::default()).unwrap();
    assert_eq!(value_of(&mut other), None);
}

#[test]
fn an_in_memory_store_starts_empty_so_it_needs_to_create_its_tables() {
    for options in [
        Options { create: false, ..Options::default() },
        Options { read_only: true, ..Options::default() },
    ] {
        let refused = SqliteStore::open_in_memory(options).err();
        assert!(
            matches!(refused, Some(StoreError::MissingTable(ref t)) if t == "fenced"),
            "{refused:?}"
        );
    }
}

#[test]
fn conformance_an_in_memory_store_matches_the_reference() {
    let scenarios = library::all();
    let report = check_store(&scenarios, |spec| {
        let options =
            Options { policy: spec.policy, retention: spec.retention, ..Options::default() };
        SqliteStore::open_in_memory(options)
    })
    .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(report.scenarios, scenarios.len());
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
        // The fencing rule the store's conditional statements carry, run by hand: zero rows.
        let rows = store
            .connection()
            .execute(
                "UPDATE fenced SET highest = 7, value = 'A stale', revision = revision + 1
                 WHERE resource = 'ledger' AND (highest < 7 OR (highest = 7 AND (NOT 0 OR NOT acted)))",
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
                "INSERT INTO fenced (resource, highest, acted, value, revision) VALUES ('ledger', ?1, 1, ?2, 1)
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
    let err = SqliteStore::open(&path, Options { create: false, ..Options::default() })
        .err()
        .expect("refused");
    assert!(matches!(err, StoreError::MissingTable(ref t) if t == "fenced"), "{err}");
    assert!(err.to_string().contains("is missing"), "{err}");
    // A table dropped after the schema was made is named at the write that needs it.
    let path = dir.path().join("dropped.db");
    let mut store = open(&path);
    store.connection().execute_batch("DROP TABLE fenced_ops").unwrap();
    let err = store.write(&write(1, "w", "v"), Tick(0)).unwrap_err();
    assert!(matches!(err, StoreError::MissingTable(ref t) if t == "fenced_ops"), "{err}");
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
    assert!(matches!(err, StoreError::OutOfRange { what: "generation", .. }), "{err}");
    assert!(err.to_string().ends_with("nothing was written"), "{err}");
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

fn request(token: u64, op: &str, value: &str, expected: Option<u64>) -> WriteRequest {
    WriteRequest::new(
        ledger(),
        g(token),
        OperationId::new(op).unwrap(),
        expected.map(Revision),
        value,
    )
}

fn stale(presented: u64, highest: u64) -> WriteOutcome {
    WriteOutcome::Rejected(WriteRejection::Stale { presented: g(presented), highest: g(highest) })
}

fn open_with(path: &Path, policy: SameGenerationPolicy, retention: Retention) -> SqliteStore {
    SqliteStore::open(path, Options { policy, retention, ..Options::default() }).unwrap()
}

fn state(highest: u64, value: Option<&str>, revision: u64) -> Option<StoredValue> {
    Some(StoredValue {
        highest: Some(g(highest)),
        value: value.map(str::to_string),
        revision: Revision(revision),
    })
}

const POLICIES: [SameGenerationPolicy; 2] =
    [SameGenerationPolicy::AllowSame, SameGenerationPolicy::StrictlyNewer];

/// The newer owner's retry of an operation the old owner applied is answered from the replay
/// record, but it has shown generation 2: from then on the old owner is stale, and that survives
/// a reopen because the raised fence was committed.
#[test]
fn a_replay_under_a_newer_generation_fences_out_the_older_owner() {
    let dir = tempfile::tempdir().unwrap();
    for policy in POLICIES {
        let path = dir.path().join(format!("replay-{policy:?}.db"));
        let mut store = open_with(&path, policy, Retention::FOREVER);
        let first = store.write(&write(1, "job-1", "A"), Tick(0)).unwrap();
        let WriteOutcome::Applied(applied) = first else { panic!("{first:?}") };
        let retry = store.write(&write(2, "job-1", "B's retry"), Tick(1)).unwrap();
        let stored = StoredResult { generation: g(1), applied, recorded_at: Tick(0) };
        assert_eq!(retry, WriteOutcome::Replayed(stored), "{policy:?}");
        let late = store.write(&write(1, "job-2", "A again"), Tick(2)).unwrap();
        assert_eq!(late, stale(1, 2), "{policy:?}");
        let WriteOutcome::Rejected(rejection) = late else { unreachable!() };
        assert_eq!(rejection.to_string(), "stale owner: generation 1 < highest accepted 2");
        assert_eq!(value_of(&mut store), state(2, Some("A"), 1), "{policy:?}");
        drop(store);
        let mut reopened = open_with(&path, policy, Retention::FOREVER);
        assert_eq!(reopened.write(&write(1, "job-3", "A"), Tick(3)).unwrap(), stale(1, 2));
    }
}

/// A revision conflict under a newer generation still raises the fence; under the strict
/// policy the newer owner is still owed its one write.
#[test]
fn a_revision_conflict_under_a_newer_generation_raises_the_fence() {
    let dir = tempfile::tempdir().unwrap();
    for policy in POLICIES {
        let mut store = open_with(
            &dir.path().join(format!("conflict-{policy:?}.db")),
            policy,
            Retention::FOREVER,
        );
        assert!(store.write(&request(1, "a-1", "A", None), Tick(0)).unwrap().is_applied());
        let conflict = store.write(&request(2, "b-1", "B", Some(0)), Tick(1)).unwrap();
        let expected =
            WriteRejection::RevisionConflict { expected: Revision(0), actual: Revision(1) };
        assert_eq!(conflict, WriteOutcome::Rejected(expected), "{policy:?}");
        assert_eq!(value_of(&mut store), state(2, Some("A"), 1), "{policy:?}");
        assert_eq!(store.write(&request(1, "a-2", "A", None), Tick(2)).unwrap(), stale(1, 2));
        let retried = store.write(&request(2, "b-2", "B", Some(1)), Tick(3)).unwrap();
        assert!(retried.is_applied(), "{policy:?}: {retried:?}");
        assert_eq!(value_of(&mut store), state(2, Some("B"), 2), "{policy:?}");
    }
}

/// Under the strict policy a generation that only raised the fence (by a replay) has not acted:
/// it may write once, then its second new operation is stale and its retry is replayed.
#[test]
fn under_the_strict_policy_a_generation_that_only_raised_the_fence_writes_once() {
    let dir = tempfile::tempdir().unwrap();
    let strict = SameGenerationPolicy::StrictlyNewer;
    let mut store = open_with(&dir.path().join("strict.db"), strict, Retention::FOREVER);
    assert!(store.write(&write(1, "job-1", "A"), Tick(0)).unwrap().is_applied());
    let replay = store.write(&write(2, "job-1", "B"), Tick(1)).unwrap();
    assert!(matches!(replay, WriteOutcome::Replayed(_)), "{replay:?}");
    assert_eq!(value_of(&mut store), state(2, Some("A"), 1), "the replay raised the fence");
    let own = store.write(&write(2, "job-2", "B"), Tick(2)).unwrap();
    let WriteOutcome::Applied(applied) = own else { panic!("{own:?}") };
    assert_eq!(applied, Applied { generation: g(2), revision: Revision(2) });
    assert_eq!(store.write(&write(2, "job-3", "B twice"), Tick(3)).unwrap(), stale(2, 2));
    let stored = StoredResult { generation: g(2), applied, recorded_at: Tick(2) };
    let retry = store.write(&write(2, "job-2", "B"), Tick(4)).unwrap();
    assert_eq!(retry, WriteOutcome::Replayed(stored));
    assert_eq!(value_of(&mut store), state(2, Some("B"), 2));
}

/// A request that passes the fence on a resource never written creates its row: `read` then
/// shows the raised fence with no value and revision 0.
#[test]
fn a_raised_fence_on_a_resource_never_written_reads_as_raised_and_empty() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(&dir.path().join("fence-only.db"));
    assert_eq!(value_of(&mut store), None);
    let conflict = store.write(&request(3, "c-1", "C", Some(5)), Tick(0)).unwrap();
    let expected = WriteRejection::RevisionConflict { expected: Revision(5), actual: Revision(0) };
    assert_eq!(conflict, WriteOutcome::Rejected(expected));
    assert_eq!(value_of(&mut store), state(3, None, 0));
    assert_eq!(store.write(&request(2, "b-1", "B", None), Tick(1)).unwrap(), stale(2, 3));
    let applied = store.write(&request(3, "c-2", "C", Some(0)), Tick(2)).unwrap();
    assert_eq!(applied, WriteOutcome::Applied(Applied { generation: g(3), revision: Revision(1) }));
    assert_eq!(value_of(&mut store), state(3, Some("C"), 1));
}

fn data_version(observer: &Connection) -> i64 {
    observer.pragma_query_value(None, "data_version", |r| r.get(0)).unwrap()
}

/// A request refused by the fence commits nothing, not even the expiry of old operation ids
/// (another connection sees no commit at all); the strict policy's own retry is refused the
/// same way. The next request that passes the fence does expire them, even though it is
/// answered from the replay record.
#[test]
fn a_request_refused_by_the_fence_commits_nothing_not_even_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let retention = Retention { max_entries: None, max_age: Some(10) };
    for policy in POLICIES {
        let path = dir.path().join(format!("refused-{policy:?}.db"));
        let mut store = open_with(&path, policy, retention);
        assert!(store.write(&write(1, "old", "A"), Tick(0)).unwrap().is_applied());
        assert!(store.write(&write(2, "kept", "B"), Tick(5)).unwrap().is_applied());
        let observer = Connection::open(&path).unwrap();
        let before = data_version(&observer);
        assert_eq!(store.write(&write(1, "late", "A"), Tick(12)).unwrap(), stale(1, 2));
        if policy == SameGenerationPolicy::StrictlyNewer {
            let retry = store.write(&write(2, "kept", "B"), Tick(12)).unwrap();
            assert!(matches!(retry, WriteOutcome::Replayed(_)), "{retry:?}");
        }
        assert_eq!(data_version(&observer), before, "{policy:?}: something was committed");
        assert!(store.lookup(&ledger(), &OperationId::new("old").unwrap()).unwrap().is_some());
        assert_eq!(store.forgotten().unwrap(), vec![], "{policy:?}");

        // Under the strict policy generation 2 has acted, so only generation 3 passes the fence.
        let next = if policy == SameGenerationPolicy::StrictlyNewer { 3 } else { 2 };
        let replay = store.write(&write(next, "kept", "B"), Tick(12)).unwrap();
        assert!(matches!(replay, WriteOutcome::Replayed(_)), "{policy:?}: {replay:?}");
        assert_ne!(data_version(&observer), before, "{policy:?}: the raised fence was committed");
        assert!(store.lookup(&ledger(), &OperationId::new("old").unwrap()).unwrap().is_none());
        let forgotten = store.forgotten().unwrap();
        assert_eq!(forgotten.len(), 1, "{policy:?}");
        assert_eq!(forgotten[0].0, "old");
        assert!(forgotten[0].1.matches(&ForgetReason::Age { max_age: 10 }));
        assert_eq!(value_of(&mut store), state(next, Some("B"), 2), "{policy:?}");
    }
}

/// Every sequence of three writes from a small alphabet (three generations, two operation ids,
/// with and without an expected revision), under both policies and three retentions, gives the
/// reference's outcomes, states and remembered ids. Each sequence writes a resource of its own,
/// so one database per configuration serves them all.
#[test]
fn every_short_sequence_matches_the_reference() {
    let mut alphabet = Vec::new();
    for generation in 1..=3 {
        for op in ["a", "b"] {
            for expected in [None, Some(1)] {
                alphabet.push((generation, op, expected));
            }
        }
    }
    let retentions = [
        Retention::FOREVER,
        Retention { max_entries: None, max_age: Some(8) },
        Retention { max_entries: NonZeroUsize::new(1), max_age: None },
    ];
    let n = alphabet.len();
    let mut sequences = 0;
    for policy in POLICIES {
        for retention in retentions {
            let options = Options { policy, retention, ..Options::default() };
            let mut sqlite = SqliteStore::open(":memory:", options).unwrap();
            let mut memory = MemoryStore::new(policy, retention);
            for index in 0..n * n * n {
                let steps = [index % n, index / n % n, index / (n * n)].map(|i| alphabet[i]);
                let resource = ResourceId::new(format!("seq-{index}")).unwrap();
                for (i, (generation, op, expected)) in steps.into_iter().enumerate() {
                    let write = WriteRequest::new(
                        resource.clone(),
                        g(generation),
                        OperationId::new(op).unwrap(),
                        expected.map(Revision),
                        format!("{op}{i}"),
                    );
                    let now = Tick(5 * i as u64);
                    let want = memory.write(&write, now).unwrap();
                    let context = format!("{steps:?}, step {i}, {policy:?}, {retention:?}");
                    assert_eq!(sqlite.write(&write, now).unwrap(), want, "{context}");
                    let (got, want) = (sqlite.read(&resource), memory.read(&resource));
                    assert_eq!(got.unwrap(), want.unwrap(), "{context}");
                    for op in ["a", "b"] {
                        let op = OperationId::new(op).unwrap();
                        let (got, want) =
                            (sqlite.lookup(&resource, &op), memory.lookup(&resource, &op));
                        assert_eq!(got.unwrap(), want.unwrap(), "{context}, lookup {op}");
                    }
                }
                sequences += 1;
            }
        }
    }
    assert_eq!(sequences, 2 * 3 * 12 * 12 * 12);
}

/// Durability: every commit is synced (`synchronous=FULL`, 2) in WAL mode, so an acknowledged
/// fence record survives a power loss.
#[test]
fn every_commit_is_synced_before_it_is_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("durable.db"));
    let conn = store.connection();
    let synchronous: i64 = conn.pragma_query_value(None, "synchronous", |r| r.get(0)).unwrap();
    let journal: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!((synchronous, journal.as_str()), (2, "wal"));
}

/// The policy is stored with the data: a second connection asking for another one is refused,
/// read-only or not, and a connection with the stored one enforces it.
#[test]
fn a_connection_with_another_policy_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.db");
    let strict = SameGenerationPolicy::StrictlyNewer;
    let mut first = open_with(&path, strict, Retention::FOREVER);
    assert!(first.write(&write(1, "a", "A"), Tick(0)).unwrap().is_applied());
    for read_only in [false, true] {
        let options = Options { read_only, ..Options::default() };
        let err = SqliteStore::open(&path, options).err().expect("refused");
        assert!(
            matches!(
                err,
                StoreError::PolicyMismatch {
                    stored: SameGenerationPolicy::StrictlyNewer,
                    requested: SameGenerationPolicy::AllowSame
                }
            ),
            "{err}"
        );
        assert!(err.to_string().starts_with(
            "the database enforces policy strictly_newer, but this connection asked for policy allow_same"
        ), "{err}");
    }
    let mut second = open_with(&path, strict, Retention::FOREVER);
    assert_eq!(second.write(&write(1, "b", "A twice"), Tick(1)).unwrap(), stale(1, 1));
}

#[test]
fn a_connection_with_another_retention_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("retention.db");
    let stored = Retention { max_entries: None, max_age: Some(10) };
    drop(open_with(&path, SameGenerationPolicy::AllowSame, stored));
    let requested = Retention { max_entries: NonZeroUsize::new(3), max_age: None };
    let options = Options { retention: requested, ..Options::default() };
    let err = SqliteStore::open(&path, options).err().expect("refused");
    assert!(
        matches!(err, StoreError::RetentionMismatch { stored: s, requested: r } if s == stored && r == requested),
        "{err}"
    );
    assert!(
        err.to_string().starts_with(
            "the database enforces retention max_entries=none, max_age=10, but this connection \
             asked for retention max_entries=3, max_age=none"
        ),
        "{err}"
    );
    open_with(&path, SameGenerationPolicy::AllowSame, stored);
}

/// Two connections creating one database at the same moment: the options are written once, and
/// the one asking for the other policy is refused rather than enforcing it.
#[test]
fn two_connections_creating_one_database_at_once_agree_on_its_options() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..5 {
        let path = dir.path().join(format!("together-{round}.db"));
        let start = Arc::new(Barrier::new(2));
        let handles: Vec<_> = POLICIES
            .into_iter()
            .map(|policy| {
                let (path, start) = (path.clone(), start.clone());
                thread::spawn(move || {
                    start.wait();
                    SqliteStore::open(&path, Options { policy, ..Options::default() }).map(drop)
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let refused: Vec<_> = results.iter().filter_map(|r| r.as_ref().err()).collect();
        assert_eq!(refused.len(), 1, "{results:?}");
        assert!(matches!(refused[0], StoreError::PolicyMismatch { .. }), "{}", refused[0]);
    }
}

/// The schema of the previous version: no `acted` flag, no options table, no `user_version`.
const SCHEMA_1: &str = "
CREATE TABLE fenced (
    resource TEXT PRIMARY KEY,
    highest  INTEGER NOT NULL CHECK (highest > 0),
    value    TEXT NOT NULL,
    revision INTEGER NOT NULL CHECK (revision > 0)
);
CREATE TABLE fenced_ops (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    resource    TEXT NOT NULL,
    operation   TEXT NOT NULL,
    generation  INTEGER NOT NULL,
    revision    INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    UNIQUE (resource, operation)
);
CREATE TABLE fenced_forgotten (
    resource    TEXT NOT NULL,
    operation   TEXT NOT NULL,
    generation  INTEGER NOT NULL,
    revision    INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    forgotten_at INTEGER NOT NULL,
    reason      TEXT NOT NULL
);
INSERT INTO fenced VALUES ('ledger', 8, 'B completed', 3);
INSERT INTO fenced_ops (resource, operation, generation, revision, recorded_at)
    VALUES ('ledger', 'b-3', 8, 3, 5);
";

fn schema_version(path: &Path) -> i64 {
    Connection::open(path).unwrap().pragma_query_value(None, "user_version", |r| r.get(0)).unwrap()
}

/// A file from the previous schema is migrated on a read-write open: its rows were all made by
/// applied writes, so under the strict policy generation 8 has acted; the opener's options are
/// recorded from then on.
#[test]
fn a_database_from_the_previous_schema_is_migrated_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("schema-1.db");
    Connection::open(&path).unwrap().execute_batch(SCHEMA_1).unwrap();
    let strict = SameGenerationPolicy::StrictlyNewer;
    let mut store = open_with(&path, strict, Retention::FOREVER);
    assert_eq!(schema_version(&path), fencelab_sqlite::SCHEMA_VERSION);
    assert_eq!(value_of(&mut store), state(8, Some("B completed"), 3));
    let applied = Applied { generation: g(8), revision: Revision(3) };
    let stored = StoredResult { generation: g(8), applied, recorded_at: Tick(5) };
    let b3 = OperationId::new("b-3").unwrap();
    assert_eq!(store.lookup(&ledger(), &b3).unwrap(), Some(stored));
    assert_eq!(store.write(&write(7, "a-1", "A"), Tick(6)).unwrap(), stale(7, 8));
    assert_eq!(store.write(&write(8, "b-4", "B again"), Tick(6)).unwrap(), stale(8, 8));
    assert_eq!(
        store.write(&write(8, "b-3", "B"), Tick(6)).unwrap(),
        WriteOutcome::Replayed(stored)
    );
    let next = store.write(&write(9, "c-1", "C"), Tick(7)).unwrap();
    assert_eq!(next, WriteOutcome::Applied(Applied { generation: g(9), revision: Revision(4) }));
    drop(store);
    let err = SqliteStore::open(&path, Options::default()).err().expect("refused");
    assert!(matches!(err, StoreError::PolicyMismatch { .. }), "{err}");
}

#[test]
fn a_read_only_connection_refuses_the_previous_schema_and_leaves_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("schema-1.db");
    Connection::open(&path).unwrap().execute_batch(SCHEMA_1).unwrap();
    let options = Options { read_only: true, ..Options::default() };
    let err = SqliteStore::open(&path, options).err().expect("refused");
    assert!(matches!(err, StoreError::NeedsMigration { found: 1 }), "{err}");
    assert!(err.to_string().contains("open it read-write once"), "{err}");
    assert_eq!(schema_version(&path), 0);
}

#[test]
fn a_database_with_an_unknown_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.db");
    drop(open(&path));
    Connection::open(&path).unwrap().pragma_update(None, "user_version", 3).unwrap();
    let err = SqliteStore::open(&path, Options::default()).err().expect("refused");
    assert!(matches!(err, StoreError::UnknownSchema { found: 3 }), "{err}");
    assert!(err.to_string().contains("schema version 3"), "{err}");
}

#[test]
fn a_hand_edited_stored_policy_is_invalid_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("edited.db");
    drop(open(&path));
    Connection::open(&path)
        .unwrap()
        .execute_batch("UPDATE fenced_meta SET policy = 'sometimes'")
        .unwrap();
    let err = SqliteStore::open(&path, Options::default()).err().expect("refused");
    assert!(matches!(err, StoreError::InvalidData(_)), "{err}");
    assert!(err.to_string().contains("\"sometimes\" is not a policy"), "{err}");
}

/// A generic SQLite failure keeps the SQLite error as its source, so error chains show it.
#[test]
fn a_sqlite_error_keeps_its_cause_in_the_error_chain() {
    let dir = tempfile::tempdir().unwrap();
    let path = seeded(dir.path());
    let mut store = open(&path);
    store
        .connection()
        .execute_batch("CREATE TRIGGER full BEFORE INSERT ON fenced_ops BEGIN SELECT RAISE(ABORT, 'disk full'); END;")
        .unwrap();
    let err = store.write(&write(6, "w", "half"), Tick(1)).unwrap_err();
    assert!(matches!(err, StoreError::Sqlite(_)), "{err}");
    let source = std::error::Error::source(&err).expect("the SQLite error as source");
    let cause = source.downcast_ref::<rusqlite::Error>().expect("a rusqlite::Error");
    assert!(cause.to_string().contains("disk full"), "{cause}");
}

/// Under the strict policy the owner's own retry gets its stored result only while the id is
/// remembered, as in the reference; a refused retry deletes nothing either.
#[test]
fn a_strict_own_retry_past_its_retention_is_refused_like_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let retention = Retention { max_entries: None, max_age: Some(5) };
    let path = dir.path().join("strict-retention.db");
    let mut store = open_with(&path, SameGenerationPolicy::StrictlyNewer, retention);
    assert!(store.write(&write(1, "op", "v"), Tick(0)).unwrap().is_applied());
    assert!(matches!(
        store.write(&write(1, "op", "v"), Tick(2)).unwrap(),
        WriteOutcome::Replayed(_)
    ));
    assert_eq!(store.write(&write(1, "op", "v"), Tick(100)).unwrap(), stale(1, 1));
    assert!(store.lookup(&ledger(), &OperationId::new("op").unwrap()).unwrap().is_some());
}

/// A database file per store of a story, in `dir`.
fn store_file(dir: &Path, spec: &StoreSpec) -> PathBuf {
    dir.join(format!("{}.db", spec.name))
}

fn options_for(spec: &StoreSpec) -> Options {
    Options { policy: spec.policy, retention: spec.retention, ..Options::default() }
}

#[test]
fn conformance_sqlite_matches_the_reference_on_every_schedule_of_every_built_in_story() {
    let mut played = 0;
    for story in library::all() {
        // One folder per story: its schedules share the story's database files.
        let dir = tempfile::tempdir().unwrap();
        let stores = factory(|spec: &StoreSpec| {
            SqliteStore::open(store_file(dir.path(), spec), options_for(spec))
        });
        let report = explore_store(&[story], stores, &ScheduleOptions::default())
            .unwrap_or_else(|d| panic!("{d}"));
        assert!(!report.bound_hit(), "{report:?}");
        played += report.schedules;
    }
    assert!(played > library::all().len(), "{played} schedules");
}

#[test]
fn conformance_sqlite_keeps_every_rule_across_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let stores = factory(|spec: &StoreSpec| {
        SqliteStore::open(store_file(dir.path(), spec), options_for(spec))
    })
    .reopen(|spec: &StoreSpec, store: SqliteStore| {
        drop(store);
        SqliteStore::open(store_file(dir.path(), spec), options_for(spec))
    });
    let cases = rule_cases();
    let report = check_cases(&cases, stores).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!((report.scenarios, report.reopens), (cases.len(), cases.len()));
}

/// Several connections to one database file per race, one per writer.
fn connections(dir: &Path) -> impl FnMut(&StoreSpec) -> Result<OpenMore, StoreError> + '_ {
    let races = AtomicUsize::new(0);
    move |spec: &StoreSpec| {
        let path = dir.join(format!("race-{}.db", races.fetch_add(1, Ordering::Relaxed)));
        let options = options_for(spec);
        Ok(Box::new(move || SqliteStore::open(&path, options)))
    }
}

type OpenMore = Box<dyn FnMut() -> Result<SqliteStore, StoreError>>;

#[test]
fn concurrent_connections_to_one_sqlite_file_stay_linearizable_in_every_race() {
    let dir = tempfile::tempdir().unwrap();
    let report = check_concurrent(&races(), connections(dir.path()), &ConcurrentOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.races, races().len());
    // An atomic store has no gap to be held in.
    assert_eq!(report.held_in_gap, 0);
}

/// The kit's one entry point, on connections to SQLite files: every check, random sequences
/// and races from a fresh seed each run (a failure prints it).
#[test]
fn sqlite_passes_every_check_of_the_kit() {
    let dir = tempfile::tempdir().unwrap();
    let concurrent = ConcurrentOptions { barrier_rounds: 20, ..ConcurrentOptions::default() };
    let options = KitOptions { concurrent, ..KitOptions::default() };
    let report = check_all(connections(dir.path()), &options);
    assert!(report.passed(), "{report}");
    assert_eq!(report.ran.len(), 5, "{report}");
}
