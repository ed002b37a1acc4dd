//! A fence that survives a crash, whatever the server's settings: a newer owner's write is
//! acknowledged, every process of the server is killed at once, the server recovers, and the
//! stale owner presents its older generation. The database is set to `synchronous_commit = off`,
//! the setting under which a plain client loses such a commit, so these tests fail for a store
//! that trusts the server's settings.
//!
//! `FENCELAB_CRASH_ROUNDS` sets how many crashes the main test makes (30 by default; each costs
//! a recovery of about a second).

use fencelab_core::{
    fence::register::WriteRejection, FencedStore, Generation, OperationId, ResourceId, Tick,
    WriteOutcome, WriteRequest,
};
use fencelab_postgres::postgres::{Client, Config};
use fencelab_postgres::testing::TestServer;
use fencelab_postgres::{Options, PgStore, StoreError};

fn rounds() -> usize {
    std::env::var("FENCELAB_CRASH_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(30)
}

fn request(resource: &ResourceId, generation: u64, operation: &str, value: &str) -> WriteRequest {
    WriteRequest::new(
        resource.clone(),
        Generation::new(generation).unwrap(),
        OperationId::new(operation).unwrap(),
        None,
        value,
    )
}

fn setting(client: &mut Client, name: &str) -> String {
    client.query_one("SELECT current_setting($1)", &[&name]).unwrap().get(0)
}

/// A new database whose sessions start with `synchronous_commit = off`, and its name.
fn database_with_asynchronous_commit(server: &TestServer) -> String {
    let config = server.database();
    let name = config.get_dbname().expect("a database name").to_string();
    server
        .admin()
        .batch_execute(&format!("ALTER DATABASE {name} SET synchronous_commit = off"))
        .unwrap();
    name
}

fn connect(config: &Config) -> PgStore {
    PgStore::connect(config, Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn an_acknowledged_generation_survives_a_crash_with_synchronous_commit_off() {
    let server = TestServer::start();
    let name = database_with_asynchronous_commit(&server);
    let rounds = rounds();
    let (mut lost, mut stale_applied) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let resource = ResourceId::new(format!("ledger-{round}")).unwrap();
        let mut b = connect(&server.config(&name));
        // The database's setting reaches the store's session: the store, not the session,
        // makes the commit durable.
        assert_eq!(setting(b.client(), "synchronous_commit"), "off");
        let acknowledged = b.write(&request(&resource, 2, "b-1", "B's write"), Tick(1)).unwrap();
        assert!(acknowledged.is_applied(), "{acknowledged:?}");
        server.crash();
        drop(b);
        server.restart().unwrap_or_else(|e| panic!("{e}"));

        let mut a = connect(&server.config(&name));
        let stale = a.write(&request(&resource, 1, "a-1", "A's stale write"), Tick(2)).unwrap();
        let state = a.read(&resource).unwrap();
        if state.as_ref().and_then(|s| s.value.as_deref()) != Some("B's write") {
            lost.push(round);
        }
        let refused = WriteOutcome::Rejected(WriteRejection::Stale {
            presented: Generation::new(1).unwrap(),
            highest: Generation::new(2).unwrap(),
        });
        if stale != refused {
            stale_applied.push((round, stale));
        }
    }
    println!(
        "{rounds} crashes with synchronous_commit = off: {} acknowledged writes lost, {} stale \
         writes not refused",
        lost.len(),
        stale_applied.len()
    );
    assert!(lost.is_empty(), "acknowledged writes lost in rounds {lost:?}");
    assert!(stale_applied.is_empty(), "stale writes not refused: {stale_applied:?}");
}

/// The control: on the same server and database a plain client's acknowledged commit does not
/// survive the same crash, so the test above can tell a durable store from one that is not.
#[test]
fn without_the_store_an_acknowledged_commit_is_lost_in_the_same_crash() {
    let server = TestServer::start();
    let name = database_with_asynchronous_commit(&server);
    server
        .config(&name)
        .connect(fencelab_postgres::postgres::NoTls)
        .unwrap()
        // Made durable, or the crash would take the table too.
        .batch_execute(
            "SET synchronous_commit = on; CREATE TABLE plain (round integer PRIMARY KEY)",
        )
        .unwrap();
    // A crash loses the commit unless the WAL writer (every 200 ms) flushed it first, so a few
    // rounds are enough to see one lost.
    for round in 0..10 {
        let mut client = server.config(&name).connect(fencelab_postgres::postgres::NoTls).unwrap();
        client.execute("INSERT INTO plain VALUES ($1)", &[&round]).unwrap();
        server.crash();
        drop(client);
        server.restart().unwrap_or_else(|e| panic!("{e}"));
        let mut client = server.config(&name).connect(fencelab_postgres::postgres::NoTls).unwrap();
        let kept: i64 = client
            .query_one("SELECT count(*) FROM plain WHERE round = $1", &[&round])
            .unwrap()
            .get(0);
        if kept == 0 {
            println!("round {round}: the acknowledged commit was lost");
            return;
        }
    }
    panic!("no acknowledged commit was lost in 10 crashes: this test cannot tell");
}

/// `fsync` and `full_page_writes` cannot be overridden by a session, so a server with either
/// off is refused, naming the setting; with both back on the same server is accepted.
#[test]
fn a_server_that_can_lose_an_acknowledged_commit_is_refused() {
    let server = TestServer::start();
    let config = server.database();
    for name in ["fsync", "full_page_writes"] {
        let mut admin = server.admin();
        admin.batch_execute(&format!("ALTER SYSTEM SET {name} = off")).unwrap();
        admin.batch_execute("SELECT pg_reload_conf()").unwrap();
        // A reload is asynchronous: wait until new sessions see it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while setting(&mut server.admin(), name) != "off" {
            assert!(std::time::Instant::now() < deadline, "{name} never turned off");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let error = PgStore::connect(&config, Options::default()).err().expect("refused");
        assert!(
            matches!(&error, StoreError::UnsafeSetting { setting, value, .. }
                if *setting == name && value == "off"),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains(&format!("{name} is off (set in ")), "{message}");
        assert!(message.contains(&format!("run ALTER SYSTEM RESET {name}")), "{message}");

        admin.batch_execute(&format!("ALTER SYSTEM RESET {name}")).unwrap();
        admin.batch_execute("SELECT pg_reload_conf()").unwrap();
        while setting(&mut server.admin(), name) != "on" {
            assert!(std::time::Instant::now() < deadline, "{name} never turned on");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(PgStore::connect(&config, Options::default()).is_ok());
    }
}

/// The caller's own statements in the same transaction cannot turn durability off either: the
/// store raises `synchronous_commit` after them, just before its commit.
#[test]
fn a_callers_statements_cannot_make_the_fenced_commit_asynchronous() {
    let server = TestServer::start();
    let name = database_with_asynchronous_commit(&server);
    let resource = ResourceId::new("ledger").unwrap();
    let mut store = connect(&server.config(&name));
    let mut seen: Option<String> = None;
    let outcome = store
        .write_with(&request(&resource, 2, "b-1", "B's write"), Tick(1), |tx, _| {
            tx.batch_execute("SET LOCAL synchronous_commit = off")?;
            seen = Some(tx.query_one("SELECT current_setting('synchronous_commit')", &[])?.get(0));
            Ok(())
        })
        .unwrap();
    assert!(outcome.is_applied());
    assert_eq!(seen.as_deref(), Some("off"));
    server.crash();
    drop(store);
    server.restart().unwrap_or_else(|e| panic!("{e}"));
    let mut store = connect(&server.config(&name));
    let state = store.read(&resource).unwrap().expect("the write survived the crash");
    assert_eq!(state.value.as_deref(), Some("B's write"));
}

/// A setting turned off after the store connected is caught before the next commit: the write
/// is refused, and the resource keeps its earlier state.
#[test]
fn a_setting_turned_off_under_a_connected_store_refuses_its_next_write() {
    let server = TestServer::start();
    let config = server.database();
    let resource = ResourceId::new("ledger").unwrap();
    let mut store = connect(&config);
    assert!(store.write(&request(&resource, 1, "a-1", "before"), Tick(1)).unwrap().is_applied());
    let mut admin = server.admin();
    admin.batch_execute("ALTER SYSTEM SET fsync = off").unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").unwrap();
    // A reload reaches a session between statements; wait until the store's sees it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while setting(store.client(), "fsync") != "off" {
        assert!(std::time::Instant::now() < deadline, "fsync never turned off");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let error = store.write(&request(&resource, 2, "b-1", "after"), Tick(2)).expect_err("refused");
    assert!(matches!(&error, StoreError::UnsafeSetting { setting: "fsync", .. }), "{error:?}");
    admin.batch_execute("ALTER SYSTEM RESET fsync").unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").unwrap();
    let state = connect_when_safe(&config);
    assert_eq!(state.as_ref().and_then(|s| s.value.as_deref()), Some("before"));
}

/// Reads `ledger` once a new store is accepted again.
fn connect_when_safe(config: &Config) -> Option<fencelab_core::fence::store::StoredValue> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match PgStore::connect(config, Options::default()) {
            Ok(mut store) => return store.read(&ResourceId::new("ledger").unwrap()).unwrap(),
            Err(StoreError::UnsafeSetting { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(error) => panic!("{error}"),
        }
    }
}

/// A store connected before the server died says so in the server's own words on its next call
/// (nothing of its connecting is left to send first, which would meet a closed socket).
#[test]
fn a_store_idle_through_a_crash_reports_the_servers_last_words() {
    let server = TestServer::start();
    let mut store = connect(&server.database());
    server.kill_postmaster();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let error = store.read(&ResourceId::new("ledger").unwrap()).expect_err("the server is gone");
    assert!(matches!(error, StoreError::ConnectionLost { .. }), "{error:?}");
    assert!(error.to_string().contains("FATAL 57P01"), "{error}");
}
