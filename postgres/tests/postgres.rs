//! The PostgreSQL store against real servers: most tests get a database of their own on the
//! process's shared server (`testing::shared`); the ones that kill a server start their own.

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
    fence::boundary::FencedResource, fence::idempotency::Retention,
    fence::register::FencedRegister, fence::register::Revision,
    fence::register::SameGenerationPolicy, fence::register::WriteRejection,
    fence::store::MemoryStore, fence::store::StoredValue,
};
use fencelab_kit::{check_all, check_concurrent, races, ConcurrentOptions, KitOptions};
use fencelab_postgres::postgres::error::SqlState;
use fencelab_postgres::postgres::{Client, Config, IsolationLevel, NoTls};
use fencelab_postgres::testing::{shared, TestServer};
use fencelab_postgres::{Options, PgStore, StoreError};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

fn g(token: u64) -> Generation {
    Generation::new(token).unwrap()
}

fn ledger() -> ResourceId {
    ResourceId::new("ledger").unwrap()
}

fn write(token: u64, op: &str, value: &str) -> WriteRequest {
    WriteRequest::new(ledger(), g(token), OperationId::new(op).unwrap(), None, value)
}

fn connect(config: &Config) -> PgStore {
    PgStore::connect(config, Options::default()).unwrap()
}

fn state(highest: u64, value: Option<&str>, revision: u64) -> Option<StoredValue> {
    Some(StoredValue {
        highest: Some(g(highest)),
        value: value.map(str::to_string),
        revision: Revision(revision),
    })
}

fn stale(presented: u64, highest: u64) -> WriteOutcome {
    WriteOutcome::Rejected(WriteRejection::Stale { presented: g(presented), highest: g(highest) })
}

/// A new database on the shared server, with the store's tables and the ledger written once
/// under generation 7.
fn seeded() -> Config {
    let config = shared().database();
    let outcome = connect(&config).write(&write(7, "a-0", "A started"), Tick(0)).unwrap();
    assert!(outcome.is_applied(), "{outcome:?}");
    config
}

/// The rows of the store's tables, read back over a connection of its own: the ledger's row
/// and how many operation ids are remembered.
fn rows(config: &Config) -> (Option<StoredValue>, i64) {
    let mut store = connect(config);
    let value = store.read(&ledger()).unwrap();
    let ops: i64 = store.client().query_one("SELECT count(*) FROM fenced_ops", &[]).unwrap().get(0);
    (value, ops)
}

fn unchanged(config: &Config) {
    assert_eq!(rows(config), (state(7, Some("A started"), 1), 1));
}

#[test]
fn conformance_postgres_matches_the_reference_on_every_built_in_story() {
    let config = shared().database();
    let mut admin = config.connect(NoTls).unwrap();
    let schemas = AtomicUsize::new(0);
    let mut scenarios = library::all();
    scenarios.push(library::contention(3, Enforcement::Fenced));
    // A tiny capacity, so forgetting by count is compared too.
    let mut capacity = library::scenario("same-owner-updates", Some("expected-revision")).unwrap();
    capacity.stores[0].retention = Retention { max_entries: NonZeroUsize::new(1), max_age: None };
    scenarios.push(capacity);
    // Every store the kit asks for is a schema of its own in one database.
    let report = check_store(&scenarios, |spec| {
        let n = schemas.fetch_add(1, Ordering::Relaxed);
        admin.batch_execute(&format!("CREATE SCHEMA c{n}")).unwrap();
        let mut config = config.clone();
        config.options(&format!("-c search_path=c{n}"));
        let options =
            Options { policy: spec.policy, retention: spec.retention, ..Options::default() };
        PgStore::connect(&config, options)
    })
    .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(report.scenarios, scenarios.len());
    assert!(report.writes > 60, "{report:?}");
}

#[test]
fn the_kit_reports_the_first_divergence_of_a_store_that_gets_the_policy_wrong() {
    let config = shared().database();
    let scenarios = [library::scenario("same-owner-updates", Some("allow-same")).unwrap()];
    let result = check_store(&scenarios, |spec| {
        // Wrong on purpose: ignores the scenario's same-generation policy.
        let policy = SameGenerationPolicy::StrictlyNewer;
        PgStore::connect(
            &config,
            Options { policy, retention: spec.retention, ..Options::default() },
        )
    });
    let Err(Divergence::Outcome { scenario, index, expected, actual, .. }) = result else {
        panic!("{result:?}")
    };
    assert_eq!((scenario.as_str(), index), ("same-owner-updates/allow-same", 1));
    assert!(expected.contains("applied") && actual.contains("stale"), "{expected} vs {actual}");
}

/// Waits until a backend of the database is waiting for a lock.
fn wait_for_a_lock_wait(config: &Config) {
    let mut observer = config.connect(NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let waiting: i64 = observer
            .query_one(
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .unwrap()
            .get(0);
        if waiting == 1 {
            return;
        }
        assert!(Instant::now() < deadline, "no backend started waiting for a lock");
        thread::sleep(Duration::from_millis(10));
    }
}

/// The newer owner (generation 8) writes through the store and stops before its commit,
/// holding the ledger's row lock; the older owner's write (generation 7, `older`'s options)
/// runs meanwhile, is seen waiting for the lock, and gets its answer once the newer one has
/// committed. Returns the two answers.
fn older_behind_newer(
    config: &Config,
    older: Options,
) -> (Result<WriteOutcome, StoreError>, WriteOutcome) {
    let (holding, release) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let newer = {
        let (config, holding, release) = (config.clone(), holding.clone(), release.clone());
        thread::spawn(move || {
            connect(&config)
                .write_with(&write(8, "b-1", "B completed"), Tick(2), |_, _| {
                    holding.wait();
                    release.wait();
                    Ok(())
                })
                .unwrap()
        })
    };
    holding.wait();
    let older = {
        let config = config.clone();
        thread::spawn(move || {
            PgStore::connect(&config, older).unwrap().write(&write(7, "a-1", "A stale"), Tick(3))
        })
    };
    wait_for_a_lock_wait(config);
    assert!(!older.is_finished(), "the older write did not wait for the row lock");
    release.wait();
    let newer = newer.join().unwrap();
    (older.join().unwrap(), newer)
}

/// The conditional write under READ COMMITTED: the older owner's statement waits for the row
/// lock, evaluates its `WHERE` clause again on the row the newer owner committed, and is
/// refused; the newer write stands.
#[test]
fn under_read_committed_the_older_owner_waits_for_the_row_lock_and_is_refused() {
    let config = seeded();
    let (older, newer) = older_behind_newer(&config, Options::default());
    assert!(newer.is_applied(), "{newer:?}");
    assert_eq!(older.unwrap(), stale(7, 8));
    assert_eq!(rows(&config), (state(8, Some("B completed"), 2), 2));
}

/// The same interleaving with the store asking for SERIALIZABLE: the waiting write is refused
/// by PostgreSQL instead, as a serialization failure, and writes nothing.
#[test]
fn under_serializable_the_waiting_write_is_a_serialization_failure() {
    let config = seeded();
    let options = Options { isolation: IsolationLevel::Serializable, ..Options::default() };
    let (older, newer) = older_behind_newer(&config, options);
    assert!(newer.is_applied(), "{newer:?}");
    let error = older.unwrap_err();
    assert!(matches!(error, StoreError::Serialization { .. }), "{error:?}");
    assert!(error.is_transient());
    assert_eq!(rows(&config), (state(8, Some("B completed"), 2), 2));
}

/// A read-then-write implementation, as a naive client writes it: read the fence, check it in
/// the client, then an unconditional UPDATE. `pause` runs between the read and the update.
fn naive_write(
    client: &mut Client,
    isolation: IsolationLevel,
    generation: i64,
    value: &str,
    pause: impl FnOnce(),
) -> Result<bool, fencelab_postgres::postgres::Error> {
    let mut tx = client.build_transaction().isolation_level(isolation).start()?;
    let highest: i64 =
        tx.query_one("SELECT highest FROM fenced WHERE resource = 'ledger'", &[])?.get(0);
    pause();
    if generation < highest {
        tx.rollback()?;
        return Ok(false);
    }
    tx.execute(
        "UPDATE fenced SET highest = $1, value = $2, revision = revision + 1 \
         WHERE resource = 'ledger'",
        &[&generation, &value],
    )?;
    tx.commit()?;
    Ok(true)
}

/// The article's interleaving with the naive client: the older owner reads highest 7, the
/// newer owner writes under 8 and commits, then the older owner's UPDATE runs. Returns the
/// older owner's result.
fn naive_race(
    config: &Config,
    isolation: IsolationLevel,
) -> Result<bool, fencelab_postgres::postgres::Error> {
    let (read_done, committed) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    let older = {
        let (config, read_done, committed) = (config.clone(), read_done.clone(), committed.clone());
        thread::spawn(move || {
            let mut client = config.connect(NoTls).unwrap();
            naive_write(&mut client, isolation, 7, "A stale", || {
                read_done.wait();
                committed.wait();
            })
        })
    };
    read_done.wait();
    let mut newer = config.connect(NoTls).unwrap();
    assert!(naive_write(&mut newer, isolation, 8, "B completed", || {}).unwrap());
    committed.wait();
    older.join().unwrap()
}

#[test]
fn a_read_then_write_implementation_loses_the_newer_write_under_read_committed() {
    let config = seeded();
    assert!(naive_race(&config, IsolationLevel::ReadCommitted).unwrap());
    // The newer owner's committed write is gone, overwritten by the stale one.
    assert_eq!(rows(&config).0, state(7, Some("A stale"), 3));
}

#[test]
fn a_read_then_write_implementation_gets_a_serialization_failure_under_serializable() {
    let config = seeded();
    let error = naive_race(&config, IsolationLevel::Serializable).unwrap_err();
    assert_eq!(error.code(), Some(&SqlState::T_R_SERIALIZATION_FAILURE), "{error}");
    assert!(matches!(StoreError::from_postgres(error), StoreError::Serialization { .. }));
    assert_eq!(rows(&config).0, state(8, Some("B completed"), 2));
}

/// The postmaster is killed while a write waits to commit: the write fails with a typed error,
/// a new connection finds no server, and after the server recovers the row is as it was.
#[test]
fn a_killed_postmaster_mid_write_is_a_lost_connection_and_leaves_no_partial_row() {
    let server = TestServer::start();
    let config = server.database();
    connect(&config).write(&write(7, "a-0", "A started"), Tick(0)).unwrap();
    let mut store = connect(&config);
    let error = store
        .write_with(&write(8, "b-1", "B completed"), Tick(2), |_, _| {
            server.kill_postmaster();
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(error, StoreError::ConnectionLost { .. }), "{error:?}");
    assert!(error.is_transient());
    assert!(error.to_string().contains("rolled back unless"), "{error}");
    let down = PgStore::connect(&config, Options::default()).err().unwrap();
    assert!(matches!(down, StoreError::Unreachable { .. }), "{down:?}");
    assert!(down.to_string().contains("127.0.0.1"), "{down}");
    server.restart().unwrap_or_else(|e| panic!("{e}"));
    let config = server.config(config.get_dbname().unwrap());
    unchanged(&config);
}

/// The store's backend is terminated while a write waits to commit.
#[test]
fn a_connection_lost_mid_write_is_typed_and_writes_nothing() {
    let config = seeded();
    let mut admin = config.connect(NoTls).unwrap();
    let error = connect(&config)
        .write_with(&write(8, "b-1", "B completed"), Tick(2), |tx, _| {
            let pid: i32 = tx.query_one("SELECT pg_backend_pid()", &[])?.get(0);
            admin.execute("SELECT pg_terminate_backend($1, 10000)", &[&pid]).unwrap();
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(error, StoreError::ConnectionLost { .. }), "{error:?}");
    unchanged(&config);
}

/// A database or role that does not exist is the server's refusal, in its own words, and no
/// retry will help; a port nobody listens on is unreachable.
#[test]
fn a_refused_connection_says_why_and_is_not_transient() {
    let mut config = shared().config("no_such_database");
    let error = PgStore::connect(&config, Options::default()).err().unwrap();
    assert!(matches!(error, StoreError::ConnectRefused { .. }), "{error:?}");
    assert!(error.to_string().contains("database \"no_such_database\" does not exist"), "{error}");
    assert!(!error.is_transient());
    config.dbname("postgres").user("no_such_role");
    let error = PgStore::connect(&config, Options::default()).err().unwrap();
    assert!(error.to_string().contains("role \"no_such_role\" does not exist"), "{error}");
}

#[test]
fn an_unreachable_server_is_a_typed_error() {
    // A port nobody listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = Config::new();
    config.host("127.0.0.1").port(port).user("postgres").dbname("postgres");
    let error = PgStore::connect(&config, Options::default()).err().unwrap();
    assert!(matches!(error, StoreError::Unreachable { .. }), "{error:?}");
    assert!(error.to_string().contains(&format!("127.0.0.1 port {port}")), "{error}");
    assert!(std::error::Error::source(&error).is_some());
}

#[test]
fn a_read_only_database_is_a_clear_error_and_nothing_is_written() {
    let config = seeded();
    let name = config.get_dbname().unwrap().to_string();
    shared()
        .admin()
        .batch_execute(&format!("ALTER DATABASE {name} SET default_transaction_read_only = on"))
        .unwrap();
    let mut store = connect(&config);
    let error = store.write(&write(8, "b-1", "B completed"), Tick(2)).unwrap_err();
    assert!(matches!(error, StoreError::ReadOnly { .. }), "{error:?}");
    assert!(error.to_string().starts_with("the database is read-only"), "{error}");
    unchanged(&config);
}

#[test]
fn missing_tables_are_named_when_the_store_may_not_create_them() {
    let config = shared().database();
    let options = Options { create: false, ..Options::default() };
    let error = PgStore::connect(&config, options).err().unwrap();
    assert!(
        matches!(&error, StoreError::MissingTable { table, .. } if table == "fenced"),
        "{error:?}"
    );
    assert!(error.to_string().contains("connect with `create: true`"), "{error}");
}

#[test]
fn a_table_of_another_shape_is_a_wrong_schema() {
    let config = shared().database();
    let mut client = config.connect(NoTls).unwrap();
    client
        .batch_execute(
            "CREATE TABLE fenced (resource text PRIMARY KEY, highest integer, value text)",
        )
        .unwrap();
    let error = PgStore::connect(&config, Options::default()).err().unwrap();
    let StoreError::WrongSchema { table, problem, .. } = &error else { panic!("{error:?}") };
    assert_eq!(
        (table.as_str(), problem.as_str()),
        ("fenced", "column highest is integer, not bigint")
    );
}

#[test]
fn a_table_dropped_under_a_connected_store_is_named_by_the_server() {
    let config = seeded();
    let mut store = connect(&config);
    config.connect(NoTls).unwrap().batch_execute("DROP TABLE fenced_ops").unwrap();
    let error = store.write(&write(8, "b-1", "B completed"), Tick(2)).unwrap_err();
    let StoreError::MissingTable { table, source } = &error else { panic!("{error:?}") };
    assert_eq!(table, "fenced_ops");
    assert!(source.is_some());
    let row = store.read(&ledger()).unwrap();
    assert_eq!(row, state(7, Some("A started"), 1), "the raised fence was rolled back");
}

#[test]
fn another_schema_version_is_refused() {
    let config = seeded();
    config
        .connect(NoTls)
        .unwrap()
        .batch_execute("UPDATE fenced_meta SET schema_version = 99")
        .unwrap();
    let error = PgStore::connect(&config, Options::default()).err().unwrap();
    assert!(matches!(error, StoreError::UnknownSchema { found: 99 }), "{error:?}");
}

#[test]
fn a_connection_with_another_policy_or_retention_is_refused() {
    let config = seeded();
    let strict = Options { policy: SameGenerationPolicy::StrictlyNewer, ..Options::default() };
    let error = PgStore::connect(&config, strict).err().unwrap();
    assert!(matches!(error, StoreError::PolicyMismatch { .. }), "{error:?}");
    assert!(error.to_string().contains("enforces policy allow_same"), "{error}");
    let retention = Retention { max_entries: NonZeroUsize::new(3), max_age: None };
    let error =
        PgStore::connect(&config, Options { retention, ..Options::default() }).err().unwrap();
    assert!(matches!(error, StoreError::RetentionMismatch { .. }), "{error:?}");
    assert!(
        error.to_string().contains("enforces retention max_entries=none, max_age=none, but this connection asked for retention max_entries=3"),
        "{error}"
    );
}

#[test]
fn a_generation_beyond_bigint_is_refused_not_wrapped() {
    let config = seeded();
    let beyond = i64::MAX as u64 + 1;
    let error = connect(&config).write(&write(beyond, "b-1", "huge"), Tick(2)).unwrap_err();
    assert!(matches!(error, StoreError::OutOfRange { what: "generation", .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "generation 9223372036854775808 is larger than PostgreSQL's bigint allows \
         (9223372036854775807); nothing was written"
    );
    unchanged(&config);
    // The largest generation that fits is an ordinary generation.
    let largest = connect(&config).write(&write(i64::MAX as u64, "b-2", "largest"), Tick(3));
    assert!(largest.unwrap().is_applied());
}

#[test]
fn a_value_the_server_refuses_is_typed_and_the_raised_fence_rolls_back() {
    let config = seeded();
    let error = connect(&config).write(&write(8, "b-1", "nul \0 inside"), Tick(2)).unwrap_err();
    assert!(matches!(error, StoreError::DataRejected { .. }), "{error:?}");
    unchanged(&config);
}

/// Rows the caller writes in `also` commit with the fenced write, or, when `also` fails, the
/// whole write is undone, the raised fence included.
#[test]
fn write_with_commits_the_callers_rows_with_the_fenced_write_or_not_at_all() {
    let config = seeded();
    let mut store = connect(&config);
    store.client().batch_execute("CREATE TABLE audit (note text NOT NULL)").unwrap();
    let error = store
        .write_with(&write(8, "b-1", "B completed"), Tick(2), |tx, _| {
            tx.execute("INSERT INTO audit (note) VALUES (NULL)", &[]).map(drop)
        })
        .unwrap_err();
    assert!(matches!(error, StoreError::DataRejected { .. }), "{error:?}");
    unchanged(&config);
    let outcome = store
        .write_with(&write(8, "b-1", "B completed"), Tick(2), |tx, applied| {
            let note = format!("revision {}", applied.revision.0);
            tx.execute("INSERT INTO audit (note) VALUES ($1)", &[&note]).map(drop)
        })
        .unwrap();
    assert!(outcome.is_applied());
    let note: String = store.client().query_one("SELECT note FROM audit", &[]).unwrap().get(0);
    assert_eq!(note, "revision 2");
    assert_eq!(rows(&config), (state(8, Some("B completed"), 2), 2));
}

/// Stores connecting to a new database at once create its tables once and agree on them.
#[test]
fn stores_connecting_at_once_create_the_tables_once() {
    let config = shared().database();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let config = config.clone();
            thread::spawn(move || PgStore::connect(&config, Options::default()).map(drop))
        })
        .collect();
    for handle in handles {
        handle.join().unwrap().unwrap();
    }
    let meta: i64 = config
        .connect(NoTls)
        .unwrap()
        .query_one("SELECT count(*) FROM fenced_meta", &[])
        .unwrap()
        .get(0);
    assert_eq!(meta, 1);
}

/// Forgetting by age and by count, and what is recorded as forgotten, match the reference.
#[test]
fn retention_and_forgotten_ids_match_the_reference() {
    let config = shared().database();
    let policy = SameGenerationPolicy::AllowSame;
    let retention = Retention { max_entries: NonZeroUsize::new(2), max_age: Some(10) };
    let mut store =
        PgStore::connect(&config, Options { policy, retention, ..Options::default() }).unwrap();
    let mut reference = FencedResource::new(FencedRegister::new(ledger(), policy), retention);
    let steps = [("a", 1, 0), ("b", 1, 1), ("c", 1, 2), ("a", 1, 3), ("b", 2, 15), ("d", 2, 16)];
    for (op, generation, t) in steps {
        let request = write(generation, op, op);
        let want = reference.write(&request, Tick(t));
        assert_eq!(store.write(&request, Tick(t)).unwrap(), want, "{op} at {t}");
    }
    assert_eq!(store.forgotten(&ledger()).unwrap(), reference.idempotency.forgotten());
    assert_eq!(store.forgotten(&ledger()).unwrap().len(), 4);
}

/// Every sequence of three writes from a small alphabet (two generations, two operation ids,
/// with and without an expected revision), under both policies and three retentions, gives the
/// reference's outcomes, states and remembered ids. Each configuration runs in a thread with
/// its own database, and each sequence writes a resource of its own.
#[test]
fn every_short_sequence_matches_the_reference() {
    let mut alphabet = Vec::new();
    for generation in 1..=2 {
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
    let mut handles = Vec::new();
    for policy in [SameGenerationPolicy::AllowSame, SameGenerationPolicy::StrictlyNewer] {
        for retention in retentions {
            let (alphabet, config) = (alphabet.clone(), shared().database());
            handles.push(thread::spawn(move || {
                let options = Options { policy, retention, ..Options::default() };
                let mut store = PgStore::connect(&config, options).unwrap();
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
                        assert_eq!(store.write(&write, now).unwrap(), want, "{context}");
                    }
                    assert_eq!(store.read(&resource).unwrap(), memory.read(&resource).unwrap());
                    for op in ["a", "b"] {
                        let op = OperationId::new(op).unwrap();
                        let (got, want) =
                            (store.lookup(&resource, &op), memory.lookup(&resource, &op));
                        assert_eq!(got.unwrap(), want.unwrap(), "{steps:?}, lookup {op}");
                    }
                }
                n * n * n
            }));
        }
    }
    let sequences: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(sequences, 2 * 3 * 8 * 8 * 8);
}

/// A factory of stores on `config`'s database, one schema per store of a story.
fn schema_per_store(config: &Config) -> impl FnMut(&StoreSpec) -> Result<PgStore, StoreError> + '_ {
    move |spec: &StoreSpec| {
        let schema = format!("s_{}", spec.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
        let mut admin = config.connect(NoTls).unwrap();
        admin.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {schema}")).unwrap();
        let mut config = config.clone();
        config.options(&format!("-c search_path={schema}"));
        PgStore::connect(&config, pg_options(spec))
    }
}

fn pg_options(spec: &StoreSpec) -> Options {
    Options { policy: spec.policy, retention: spec.retention, ..Options::default() }
}

#[test]
fn conformance_postgres_matches_the_reference_on_every_schedule_of_every_built_in_story() {
    let mut played = 0;
    for story in library::all() {
        // One database per story: its schedules share it, each on resources of its own.
        let config = shared().database();
        let stores = factory(schema_per_store(&config));
        let report = explore_store(&[story], stores, &ScheduleOptions::default())
            .unwrap_or_else(|d| panic!("{d}"));
        assert!(!report.bound_hit(), "{report:?}");
        played += report.schedules;
    }
    assert!(played > library::all().len(), "{played} schedules");
}

#[test]
fn conformance_postgres_keeps_every_rule_across_a_reconnect() {
    let config = shared().database();
    let mut make = schema_per_store(&config);
    let mut again = schema_per_store(&config);
    let stores = factory(|spec: &StoreSpec| make(spec)).reopen(|spec: &StoreSpec, store| {
        drop(store);
        again(spec)
    });
    let cases = rule_cases();
    let report = check_cases(&cases, stores).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!((report.scenarios, report.reopens), (cases.len(), cases.len()));
}

/// Several connections to one database per race (a schema per race), one per writer.
fn pg_connections(
    config: &Config,
) -> impl FnMut(&StoreSpec) -> Result<PgOpenMore, StoreError> + '_ {
    let races = AtomicUsize::new(0);
    move |spec: &StoreSpec| {
        let schema = format!("race_{}", races.fetch_add(1, Ordering::Relaxed));
        config.connect(NoTls).unwrap().batch_execute(&format!("CREATE SCHEMA {schema}")).unwrap();
        let mut config = config.clone();
        config.options(&format!("-c search_path={schema}"));
        let options = pg_options(spec);
        Ok(Box::new(move || PgStore::connect(&config, options)))
    }
}

type PgOpenMore = Box<dyn FnMut() -> Result<PgStore, StoreError>>;

#[test]
fn concurrent_connections_to_postgres_stay_linearizable_in_every_race() {
    let config = shared().database();
    let report = check_concurrent(&races(), pg_connections(&config), &ConcurrentOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.races, races().len());
    assert_eq!(report.held_in_gap, 0);
}

/// The kit's one entry point, on connections to PostgreSQL (a schema per store): every check,
/// random sequences and races from a fresh seed each run (a failure prints it).
#[test]
fn postgres_passes_every_check_of_the_kit() {
    let config = shared().database();
    let concurrent = ConcurrentOptions { barrier_rounds: 20, ..ConcurrentOptions::default() };
    let options = KitOptions { concurrent, ..KitOptions::default() };
    let report = check_all(pg_connections(&config), &options);
    assert!(report.passed(), "{report}");
    assert_eq!(report.ran.len(), 5, "{report}");
}
