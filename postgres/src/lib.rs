//! A [`FencedStore`] on PostgreSQL, with the synchronous [`postgres`] client.
//!
//! One table, `fenced`, keeps each resource's fence record (the highest generation that has
//! passed the fence, and whether a write under it has been applied), its value and its revision
//! in one row, so the fencing record commits with the protected state. Operation ids and their
//! stored results live in `fenced_ops`, under the same retention as the in-memory reference;
//! every forgotten id is recorded in `fenced_forgotten`. `fenced_meta` holds the schema version,
//! the same-generation policy and the retention. The tables live in the connection's current
//! schema (the first of its `search_path`), so one database can hold several stores.
//!
//! # One write
//!
//! Every write is one `READ COMMITTED` transaction that takes its decision from the core's
//! write boundary, [`boundary::decide`], the same function the in-memory reference
//! ([`FencedResource`](fencelab_core::fence::boundary::FencedResource)) uses, so the order of checks (the
//! generation, the fence raised, expired ids forgotten, the operation id, the expected
//! revision, apply) is written once, in the core:
//!
//! 1. `SELECT ... FOR UPDATE` locks the resource's row and reads its fence record and revision
//!    (a resource never written gets its row created, locked, by `INSERT ... ON CONFLICT DO
//!    NOTHING`; if another writer created it first, the lock is taken on that row);
//! 2. the operation id's stored result is read;
//! 3. [`boundary::decide`] says what happens;
//! 4. a refusal by the fence rolls back, so it changes nothing; anything else stores what the
//!    decision says, with absolute values (the fence record, the value and revision, the expired
//!    and the new operation ids, the capacity), and commits.
//!
//! A write that applies takes six round trips (begin, the lock, the operation id, the write,
//! the durable commit's setting, commit).
//!
//! # Why this is safe under READ COMMITTED
//!
//! Under `READ COMMITTED` each statement sees the rows committed when it started, so a check
//! made by a plain `SELECT` and acted on by a later `UPDATE` can be overtaken by another writer
//! in between: that is the lost update a read-then-write implementation suffers (its tests show
//! it, and show that `SERIALIZABLE` turns it into a serialization failure instead). This store
//! reads under the row lock. `SELECT ... FOR UPDATE` waits for any transaction that holds the
//! lock to end and then returns the newest committed version of the row, so an older owner whose
//! write waited behind a newer owner's sees the newer generation and is refused. The lock is
//! held until the transaction ends, so every later statement of the write (each with a fresh
//! snapshot, taken after the lock was granted) sees everything the previous holder committed,
//! including its operation ids, and nothing can change the row before this write commits. The
//! writes of one resource are serial; writes of different resources never wait for each other.
//!
//! The store asks for `READ COMMITTED` explicitly ([`Options::isolation`]), whatever the
//! server's default. Under `REPEATABLE READ` or `SERIALIZABLE` the same statements are still
//! correct, but a write that waited for another one on the same resource fails with
//! [`StoreError::Serialization`] and must be retried.
//!
//! # Durability
//!
//! A fence record that the server loses in a crash re-admits every generation it had fenced out,
//! so the store answers a write only once its commit is on disk, whatever the server, the
//! database or the role says:
//!
//! - `synchronous_commit = off` (a common speed setting, at any level) lets a commit return
//!   before its write-ahead log is flushed, and a crash soon after loses it. Every transaction
//!   that commits a write raises it to `on` for itself (`set_config(..., true)`, as
//!   `SET LOCAL` does) just before `COMMIT`, after the caller's own statements. Stronger values
//!   (`local`, `remote_write`, `on`, `remote_apply`) all flush the local log and are kept.
//! - `fsync = off` and `full_page_writes = off` cannot be changed from a session: the first lets
//!   an operating system crash lose a commit, the second lets one leave a torn page that recovery
//!   cannot repair. [`PgStore::connect`] reads both and refuses the server with
//!   [`StoreError::UnsafeSetting`], naming the setting.
//! - The isolation level comes from [`Options::isolation`] at every `BEGIN`, so the server's
//!   `default_transaction_isolation` does not matter.
//!
//! A crash can still lose a commit whose acknowledgement never reached the caller; such a write
//! has an unknown outcome ([`StoreError::ConnectionLost`]) and is read back. Failover to a standby
//! keeps a commit only if the standby is synchronous (`synchronous_standby_names`): that is the
//! server's replication setting, which `synchronous_commit = on` then waits for.
//!
//! # Failures
//!
//! Every failure is a [`StoreError`] variant with the client's error as its `source()`: an
//! unreachable server, a connection lost during a write, a read-only database or transaction, a
//! missing table or a schema of another shape, a serialization failure, data the server or the
//! store refuses. A write that fails is rolled back as a whole (an error before `COMMIT` leaves
//! the transaction uncommitted, and PostgreSQL discards it, also when the connection is gone),
//! so nothing is ever half-written. After [`StoreError::ConnectionLost`] the store's connection
//! is closed: connect a new store; whether that write committed is unknown only if the
//! connection broke during `COMMIT` itself, and then reading the resource back tells.
//!
//! The policy and the retention are stored in `fenced_meta` when the tables are created, and a
//! connection asking for different ones is refused ([`StoreError::PolicyMismatch`],
//! [`StoreError::RetentionMismatch`]): two connections must never enforce different rules on the
//! same rows.
//!
//! ```
//! use fencelab_core::{FencedStore, Generation, OperationId, ResourceId, Tick, WriteOutcome, WriteRequest};
//! use fencelab_postgres::{Options, PgStore};
//!
//! // Your server's address, for example "host=127.0.0.1 user=app dbname=app".parse().unwrap();
//! // here a throwaway server from the `testing` feature.
//! let config: fencelab_postgres::postgres::Config = fencelab_postgres::testing::shared().database();
//! let mut store = PgStore::connect(&config, Options::default()).unwrap();
//! let ledger = ResourceId::new("ledger").unwrap();
//! let write = |g, op: &str, v: &str| WriteRequest::new(ledger.clone(), Generation::new(g).unwrap(), OperationId::new(op).unwrap(), None, v);
//! assert!(store.write(&write(8, "b", "new owner"), Tick(1)).unwrap().is_applied());
//! let stale = store.write(&write(7, "a", "stale"), Tick(2)).unwrap();
//! let WriteOutcome::Rejected(rejection) = stale else { panic!("{stale:?}") };
//! assert_eq!(rejection.to_string(), "stale owner: generation 7 < highest accepted 8");
//! ```
//!
//! The crate's tests run this and more against throwaway servers: the `testing` feature's
//! `testing::TestServer` starts one with PostgreSQL 15's `initdb` and `pg_ctl`.

#[cfg(feature = "testing")]
pub mod testing;

/// The crate README's example, compiled as a doctest so that it stays true (it needs a server,
/// so it is not run).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

use fencelab_core::{
    fence::boundary, fence::boundary::Commit, fence::boundary::CommitEffect,
    fence::boundary::Decision, fence::boundary::Expiry, fence::boundary::Held,
    fence::boundary::Rules,
};
use fencelab_core::{
    fence::idempotency::ForgetReason, fence::idempotency::Forgotten, fence::idempotency::Retention,
    fence::idempotency::StoredResult, fence::register::Applied, fence::register::Fence,
    fence::register::Revision, fence::register::SameGenerationPolicy, fence::store::StoredValue,
    names::Named, FencedStore, Generation, OperationId, ResourceId, Tick, WriteOutcome,
    WriteRequest,
};
use postgres::error::{DbError, SqlState};
use postgres::{Client, GenericClient, NoTls, Row, Statement, Transaction};
use std::num::NonZeroUsize;
use std::time::Duration;

pub use postgres;
pub use postgres::IsolationLevel;

/// How to connect and what the store enforces.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The same-generation policy of the fence. Stored in the database when its tables are
    /// created; connecting with a different one is an error.
    pub policy: SameGenerationPolicy,
    /// How long operation ids are remembered. Stored like the policy.
    pub retention: Retention,
    /// Create the tables if they are missing (otherwise a missing table is an error).
    pub create: bool,
    /// The isolation level of every write. `READ COMMITTED` is enough (see the crate
    /// documentation); stricter levels report a write that waited for another one on the same
    /// resource as [`StoreError::Serialization`].
    pub isolation: IsolationLevel,
    /// How long to wait for the server to accept a connection before
    /// [`StoreError::Unreachable`].
    pub connect_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            policy: SameGenerationPolicy::AllowSame,
            retention: Retention::FOREVER,
            create: true,
            isolation: IsolationLevel::ReadCommitted,
            connect_timeout: Duration::from_secs(5),
        }
    }
}

/// What the store guarantees on a crash, in one sentence, for tools that report it (the live
/// lab prints it). The crate documentation's Durability section says why.
pub const DURABILITY: &str = "each fenced commit is flushed to disk before the write is \
    acknowledged, whatever synchronous_commit says, and fsync and full_page_writes are checked \
    on connect and before every commit";

/// The schema this build writes, kept in `fenced_meta.schema_version`.
pub const SCHEMA_VERSION: i32 = 1;

/// What went wrong, in terms a user can act on. A failed write changes nothing: every write is
/// one transaction, and an error before its commit leaves it uncommitted.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No connection could be made: the server is down or not listening there, the address or
    /// port is wrong, or the network failed. Retrying may succeed.
    #[error("cannot connect to PostgreSQL at {target}: {source}")]
    Unreachable {
        /// The host and port tried.
        target: String,
        /// The client's error.
        #[source]
        source: postgres::Error,
    },
    /// The server answered and refused the connection: the database or the role does not
    /// exist, the password or the authentication method is wrong, too many connections. The
    /// message carries the server's own words; retrying the same settings will not help (unless
    /// the server is only starting up or full).
    #[error("PostgreSQL at {target} refused the connection: {}", server_says(.source))]
    ConnectRefused {
        /// The host and port tried.
        target: String,
        /// The server's error.
        #[source]
        source: postgres::Error,
    },
    /// The connection broke (the server stopped or was killed, the backend was terminated, the
    /// network failed). The write was not committed, unless the break came during the commit
    /// itself; this store's connection is closed, so connect a new one.
    #[error("the connection to PostgreSQL was lost; the write was rolled back unless the break came during its commit (read the resource back to tell), and this store must be connected again: {}", server_says(.source))]
    ConnectionLost {
        /// The client's error.
        #[source]
        source: postgres::Error,
    },
    /// The database or the transaction is read-only (`default_transaction_read_only`, a hot
    /// standby).
    #[error("the database is read-only; nothing was written: {source}")]
    ReadOnly {
        /// The server's error.
        #[source]
        source: postgres::Error,
    },
    /// A stricter isolation level than `READ COMMITTED` refused the write because another
    /// transaction changed the same rows (SQLSTATE 40001), or a deadlock was broken (40P01).
    /// Nothing was written; the write can be retried.
    #[error("PostgreSQL refused the write to keep transactions serializable; nothing was written, retry it: {source}")]
    Serialization {
        /// The server's error.
        #[source]
        source: postgres::Error,
    },
    /// The server is set so that it can lose or tear a commit it has acknowledged, and a
    /// session cannot override the setting. It is checked when the store connects and again
    /// before every commit, so a setting changed under a connected store is caught too. Nothing
    /// was written.
    #[error(
        "PostgreSQL's {setting} is {value} ({origin}): {why}, and a lost fence record re-admits \
         the generations it fenced out, so nothing was written; {remedy}"
    )]
    UnsafeSetting {
        /// The setting's name (`fsync`, `full_page_writes`).
        setting: &'static str,
        /// Its value on the server.
        value: String,
        /// What the value risks.
        why: &'static str,
        /// Where the value comes from, as `pg_settings` says (a file, the command line).
        origin: String,
        /// How to turn it back on, for where it was set.
        remedy: String,
    },
    /// A table the store needs does not exist.
    #[error("table {table} is missing; connect with `create: true` or restore the schema")]
    MissingTable {
        /// The table's name.
        table: String,
        /// The server's error, when it was the server that reported it.
        #[source]
        source: Option<postgres::Error>,
    },
    /// A table exists but is not shaped as this build expects (another program's table of the
    /// same name, or a hand-edited one).
    #[error("table {table} does not have this store's shape: {problem}")]
    WrongSchema {
        /// The table's name.
        table: String,
        /// What differs.
        problem: String,
        /// The server's error, when it was the server that reported it.
        #[source]
        source: Option<postgres::Error>,
    },
    /// The tables were written by a build with another schema version.
    #[error(
        "the database has schema version {found}, which this build (schema {SCHEMA_VERSION}) \
         does not know; use the version that created it"
    )]
    UnknownSchema {
        /// The schema version found.
        found: i32,
    },
    /// The database enforces another same-generation policy than the one asked for.
    #[error(
        "the database enforces policy {}, but this connection asked for policy {}; every \
         connection to one database must enforce the same rule, so connect with the stored policy",
        .stored.name(), .requested.name()
    )]
    PolicyMismatch {
        /// The policy stored in the database.
        stored: SameGenerationPolicy,
        /// The policy in this connection's options.
        requested: SameGenerationPolicy,
    },
    /// The database keeps operation ids for another retention than the one asked for.
    #[error(
        "the database enforces retention {}, but this connection asked for retention {}; every \
         connection to one database must enforce the same rule, so connect with the stored \
         retention",
        show_retention(.stored), show_retention(.requested)
    )]
    RetentionMismatch {
        /// The retention stored in the database.
        stored: Retention,
        /// The retention in this connection's options.
        requested: Retention,
    },
    /// A number does not fit PostgreSQL's `bigint` (at most 2^63 - 1). Refused before anything
    /// is sent, so that order in SQL always matches the order of the numbers.
    #[error(
        "{what} {value} is larger than PostgreSQL's bigint allows ({}); nothing was written",
        i64::MAX
    )]
    OutOfRange {
        /// What the number is (a generation, a revision, a time).
        what: &'static str,
        /// The number.
        value: u64,
    },
    /// The server refused a value (for example text with a NUL character) or a constraint of
    /// the tables failed. Nothing was written.
    #[error("PostgreSQL refused the data; nothing was written: {source}")]
    DataRejected {
        /// The server's error.
        #[source]
        source: postgres::Error,
    },
    /// A stored value is outside what the store ever writes (edited by hand?), or the tables
    /// disagreed with the fencing rule.
    #[error("stored data is invalid: {0}")]
    InvalidData(String),
    /// Anything else PostgreSQL reported; its error is also the `source()`. The message repeats
    /// it because most callers print only the top message.
    ///
    /// There is deliberately no `From<postgres::Error>`: every conversion goes through one
    /// classifier, so a lost connection or a read-only database is never a generic failure.
    #[error("PostgreSQL error: {source}")]
    Postgres {
        /// The client's error.
        #[source]
        source: postgres::Error,
    },
}

impl StoreError {
    /// Classifies an error of the client: every error the store returns from PostgreSQL goes
    /// through here. Public so that code writing in the same transaction (`also` in
    /// [`PgStore::write_with`]) or beside the store reports the same way.
    pub fn from_postgres(source: postgres::Error) -> StoreError {
        let Some(db) = source.as_db_error() else {
            // Without a server error, a closed connection or a failed socket leaves no usable
            // connection; anything else (a value the client cannot encode) is the client's own.
            let io = std::error::Error::source(&source).is_some_and(|s| s.is::<std::io::Error>());
            return if source.is_closed() || io {
                StoreError::ConnectionLost { source }
            } else {
                StoreError::Postgres { source }
            };
        };
        let code = db.code();
        if *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED
        {
            StoreError::Serialization { source }
        } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
            StoreError::ReadOnly { source }
        } else if *code == SqlState::UNDEFINED_TABLE {
            let table = quoted_name(db).unwrap_or_else(|| "(unnamed)".into());
            StoreError::MissingTable { table, source: Some(source) }
        } else if [
            SqlState::UNDEFINED_COLUMN,
            SqlState::DATATYPE_MISMATCH,
            SqlState::WRONG_OBJECT_TYPE,
            // `ON CONFLICT (resource)` without a unique index on it.
            SqlState::INVALID_COLUMN_REFERENCE,
        ]
        .contains(code)
        {
            let table = db.table().map_or_else(|| "(unnamed)".into(), str::to_string);
            let problem = db.message().to_string();
            StoreError::WrongSchema { table, problem, source: Some(source) }
        } else if [SqlState::ADMIN_SHUTDOWN, SqlState::CRASH_SHUTDOWN, SqlState::CANNOT_CONNECT_NOW]
            .contains(code)
            || code.code().starts_with("08")
        {
            StoreError::ConnectionLost { source }
        } else if code.code().starts_with("22") || code.code().starts_with("23") {
            // Class 22 is data exceptions, class 23 integrity constraint violations.
            StoreError::DataRejected { source }
        } else {
            StoreError::Postgres { source }
        }
    }

    /// Whether retrying the same write on a new connection may succeed.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            StoreError::Unreachable { .. }
                | StoreError::ConnectionLost { .. }
                | StoreError::Serialization { .. }
        ) || matches!(self, StoreError::ConnectRefused { source, .. }
        if source.as_db_error().is_some_and(|db| {
            // Too many connections, or the server is starting up or shutting down.
            [SqlState::TOO_MANY_CONNECTIONS, SqlState::CANNOT_CONNECT_NOW].contains(db.code())
        }))
    }
}

/// The server's own words when it sent an error (`FATAL 57P01 terminating connection due to
/// unexpected postmaster exit`), which the client's error only shows as `db error`; otherwise
/// the client's error.
fn server_says(source: &postgres::Error) -> String {
    match source.as_db_error() {
        Some(db) => format!("{} {} {}", db.severity(), db.code().code(), db.message()),
        None => source.to_string(),
    }
}

/// The first double-quoted name in a server message (`relation "fenced" does not exist`).
fn quoted_name(db: &DbError) -> Option<String> {
    let message = db.message();
    let start = message.find('"')? + 1;
    let end = start + message[start..].find('"')?;
    Some(message[start..end].to_string())
}

/// Retention as the scenario format spells its fields, for messages.
fn show_retention(retention: &Retention) -> String {
    let show = |v: Option<String>| v.unwrap_or_else(|| "none".into());
    format!(
        "max_entries={}, max_age={}",
        show(retention.max_entries.map(|n| n.to_string())),
        show(retention.max_age.map(|n| n.to_string()))
    )
}

/// The tables. Value and revision are empty (`NULL`, 0) until a write applies, because a request
/// that only passed the fence still creates the row that records it. Both `seq` columns keep the
/// order in which ids were recorded and forgotten.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS fenced (
    resource text PRIMARY KEY,
    highest  bigint NOT NULL CHECK (highest > 0),
    acted    boolean NOT NULL,
    value    text,
    revision bigint NOT NULL CHECK (revision >= 0),
    CHECK ((value IS NULL) = (revision = 0)),
    CHECK (NOT acted OR revision > 0)
);
CREATE TABLE IF NOT EXISTS fenced_ops (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    resource    text NOT NULL,
    operation   text NOT NULL,
    generation  bigint NOT NULL CHECK (generation > 0),
    revision    bigint NOT NULL CHECK (revision > 0),
    recorded_at bigint NOT NULL CHECK (recorded_at >= 0),
    UNIQUE (resource, operation)
);
CREATE TABLE IF NOT EXISTS fenced_forgotten (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    resource     text NOT NULL,
    operation    text NOT NULL,
    generation   bigint NOT NULL,
    revision     bigint NOT NULL,
    recorded_at  bigint NOT NULL,
    forgotten_at bigint NOT NULL,
    reason       text NOT NULL CHECK (reason IN ('age', 'capacity')),
    limit_value  bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS fenced_meta (
    id             integer PRIMARY KEY CHECK (id = 1),
    schema_version integer NOT NULL,
    policy         text NOT NULL,
    max_entries    bigint CHECK (max_entries > 0),
    max_age        bigint CHECK (max_age >= 0)
);
";

/// Every column the store uses, with its type as `information_schema` spells it.
const COLUMNS: &[(&str, &[(&str, &str)])] = &[
    (
        "fenced",
        &[
            ("resource", "text"),
            ("highest", "bigint"),
            ("acted", "boolean"),
            ("value", "text"),
            ("revision", "bigint"),
        ],
    ),
    (
        "fenced_ops",
        &[
            ("seq", "bigint"),
            ("resource", "text"),
            ("operation", "text"),
            ("generation", "bigint"),
            ("revision", "bigint"),
            ("recorded_at", "bigint"),
        ],
    ),
    (
        "fenced_forgotten",
        &[
            ("seq", "bigint"),
            ("resource", "text"),
            ("operation", "text"),
            ("generation", "bigint"),
            ("revision", "bigint"),
            ("recorded_at", "bigint"),
            ("forgotten_at", "bigint"),
            ("reason", "text"),
            ("limit_value", "bigint"),
        ],
    ),
    (
        "fenced_meta",
        &[
            ("id", "integer"),
            ("schema_version", "integer"),
            ("policy", "text"),
            ("max_entries", "bigint"),
            ("max_age", "bigint"),
        ],
    ),
];

/// The fence record of the resource, locked until the transaction ends (`FOR UPDATE`): under
/// `READ COMMITTED` a locked row is read in its newest committed version, after waiting for
/// any transaction that holds it.
const LOCK: &str = "SELECT highest, acted, revision FROM fenced WHERE resource = $1 FOR UPDATE";

/// Creates the row of a resource never written, locked by this transaction, if no other
/// transaction created it first (then nothing is returned, and [`LOCK`] waits for it). The
/// placeholder holds the presented generation, not acted, no value, revision 0; the decision is
/// taken on the empty fence and always passes, so it is overwritten before the commit.
const CREATE: &str = "
INSERT INTO fenced (resource, highest, acted, value, revision) VALUES ($1, $2, false, NULL, 0)
ON CONFLICT (resource) DO NOTHING
RETURNING revision";

/// Stores the fence record of a request that passed the fence, with the value and its revision
/// when the write applies (`$5` not null) and records the operation id (`$6`, at `$7`); every
/// value comes from the decision.
const STORE: &str = "
WITH stored AS (
    UPDATE fenced SET highest = $2, acted = $3,
        value = CASE WHEN $5::bigint IS NULL THEN value ELSE $4 END,
        revision = COALESCE($5::bigint, revision)
    WHERE resource = $1
    RETURNING revision
)
INSERT INTO fenced_ops (resource, operation, generation, revision, recorded_at)
    SELECT $1::text, $6::text, $2::bigint, revision, $7::bigint FROM stored
    WHERE $5::bigint IS NOT NULL";

/// The stored result of one operation id.
const STORED_RESULT: &str =
    "SELECT generation, revision, recorded_at FROM fenced_ops WHERE resource = $1 AND operation = $2";

/// Forgets, and records as forgotten, the resource's operation ids recorded at or before `$2`,
/// at time `$3`, for the maximum age `$4`.
const FORGET_EXPIRED: &str = "
WITH gone AS (
    DELETE FROM fenced_ops WHERE resource = $1 AND recorded_at <= $2
    RETURNING seq, resource, operation, generation, revision, recorded_at
)
INSERT INTO fenced_forgotten
    (resource, operation, generation, revision, recorded_at, forgotten_at, reason, limit_value)
    SELECT resource, operation, generation, revision, recorded_at, $3::bigint, 'age', $4::bigint
    FROM gone
    ORDER BY seq";

/// Forgets, and records as forgotten, the resource's operation ids beyond the newest `$2`, at
/// time `$3`.
const FORGET_OVER_CAPACITY: &str = "
WITH gone AS (
    DELETE FROM fenced_ops WHERE resource = $1 AND seq NOT IN
        (SELECT seq FROM fenced_ops WHERE resource = $1 ORDER BY seq DESC LIMIT $2)
    RETURNING seq, resource, operation, generation, revision, recorded_at
)
INSERT INTO fenced_forgotten
    (resource, operation, generation, revision, recorded_at, forgotten_at, reason, limit_value)
    SELECT resource, operation, generation, revision, recorded_at, $3::bigint, 'capacity', $2::bigint
    FROM gone
    ORDER BY seq";

/// Run last before every commit. Reads `fsync` and `full_page_writes`, which a session cannot
/// change (a reload may have turned them off since the store connected), and makes the commit
/// wait for its write-ahead log to be flushed if the session would not (`synchronous_commit =
/// off`, from the server, the database or the role): every other value flushes the local log,
/// and a stronger one is kept. `true` scopes the change to the transaction.
const DURABLE_COMMIT: &str = "
SELECT current_setting('fsync'), current_setting('full_page_writes'),
    CASE WHEN current_setting('synchronous_commit') = 'off'
        THEN set_config('synchronous_commit', 'on', true) END";

/// The server settings that a session cannot override and that must be on for an acknowledged
/// commit to survive a crash, in the order [`DURABLE_COMMIT`] reads them, each with what turning
/// it off risks.
const REQUIRED_SETTINGS: [(&str, &str); 2] = [
    ("fsync", "an operating system crash or a power loss can lose commits it acknowledged"),
    (
        "full_page_writes",
        "a crash can leave a torn page that recovery cannot repair, losing commits it acknowledged",
    ),
];

/// Refuses a server on which an acknowledged commit can be lost: `row` holds the values of
/// [`REQUIRED_SETTINGS`] in their order. For one that is off, asks `pg_settings` where it was set,
/// to say how to turn it on.
fn check_durability(client: &mut impl GenericClient, row: &Row) -> Result<(), StoreError> {
    for (i, (setting, why)) in REQUIRED_SETTINGS.into_iter().enumerate() {
        let value: String = row.get(i);
        if value == "on" {
            continue;
        }
        let (origin, file): (String, Option<String>) = client
            .query_opt("SELECT source, sourcefile FROM pg_settings WHERE name = $1", &[&setting])
            .map_err(StoreError::from_postgres)?
            .map_or(("unknown".into(), None), |r| (r.get(0), r.get(1)));
        let remedy = match (origin.as_str(), file.as_deref()) {
            (_, Some(file)) if file.ends_with("postgresql.auto.conf") => format!(
                "it was set by ALTER SYSTEM: run ALTER SYSTEM RESET {setting} and then SELECT \
                 pg_reload_conf()"
            ),
            (_, Some(file)) => {
                format!(
                    "set {setting} = on in {file} and reload the server (SELECT pg_reload_conf())"
                )
            }
            ("command line", _) => {
                format!("restart the server without -c {setting}={value} on its command line")
            }
            _ => format!(
                "set {setting} = on where it was set (ALTER SYSTEM RESET {setting}, or the \
                 configuration file) and reload the server (SELECT pg_reload_conf())"
            ),
        };
        let origin = match file {
            Some(file) => format!("set in {file}"),
            None => format!("set by: {origin}"),
        };
        return Err(StoreError::UnsafeSetting { setting, value, why, origin, remedy });
    }
    Ok(())
}

/// The statements of a write, prepared once per connection.
struct Statements {
    durable_commit: Statement,
    lock: Statement,
    create: Statement,
    store: Statement,
    stored_result: Statement,
    forget_expired: Statement,
    forget_over_capacity: Statement,
    read: Statement,
}

impl Statements {
    fn prepare(client: &mut Client) -> Result<Statements, postgres::Error> {
        Ok(Statements {
            durable_commit: client.prepare(DURABLE_COMMIT)?,
            lock: client.prepare(LOCK)?,
            create: client.prepare(CREATE)?,
            store: client.prepare(STORE)?,
            stored_result: client.prepare(STORED_RESULT)?,
            forget_expired: client.prepare(FORGET_EXPIRED)?,
            forget_over_capacity: client.prepare(FORGET_OVER_CAPACITY)?,
            read: client
                .prepare("SELECT highest, value, revision FROM fenced WHERE resource = $1")?,
        })
    }
}

/// The upsert of [`PgStore::write_unfenced`]: it never looks at the generation.
const UNFENCED_WRITE: &str = "
INSERT INTO fenced (resource, highest, acted, value, revision) VALUES ($1, $2, true, $3, 1)
ON CONFLICT (resource) DO UPDATE
    SET highest = excluded.highest, acted = true, value = excluded.value,
        revision = fenced.revision + 1
RETURNING revision";

/// A fenced store in a PostgreSQL database. Each instance owns one connection; connect one per
/// thread.
pub struct PgStore {
    client: Client,
    statements: Statements,
    options: Options,
}

/// A number of the model as `bigint`, refused rather than wrapped.
fn sql_integer(what: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::OutOfRange { what, value })
}

fn generation_from_sql(value: i64) -> Result<Generation, StoreError> {
    u64::try_from(value).ok().and_then(|v| Generation::new(v).ok()).ok_or_else(|| {
        StoreError::InvalidData(format!("stored generation {value} is not positive"))
    })
}

fn revision_from_sql(value: i64) -> Result<Revision, StoreError> {
    u64::try_from(value)
        .map(Revision)
        .map_err(|_| StoreError::InvalidData(format!("stored revision {value} is negative")))
}

fn tick_from_sql(value: i64) -> Result<Tick, StoreError> {
    u64::try_from(value)
        .map(Tick)
        .map_err(|_| StoreError::InvalidData(format!("stored time {value} is negative")))
}

impl PgStore {
    /// Connects, refuses a server that can lose an acknowledged commit
    /// ([`StoreError::UnsafeSetting`]), creates the tables if they are missing (with `create`),
    /// and checks that they have this build's schema version and shape and that the stored
    /// policy and retention are the ones in `options`.
    pub fn connect(config: &postgres::Config, options: Options) -> Result<PgStore, StoreError> {
        let mut config = config.clone();
        config.connect_timeout(options.connect_timeout);
        let sql = sql_options(&options)?;
        let mut client = config.connect(NoTls).map_err(|source| {
            let target = target_of(&config);
            match source.as_db_error() {
                Some(_) => StoreError::ConnectRefused { target, source },
                None => StoreError::Unreachable { target, source },
            }
        })?;
        let err = StoreError::from_postgres;
        {
            // Dropped before the statements are prepared, so that the close of this query's
            // statement is sent then, not with the first write (after a crash, that would
            // hide the server's last words behind a closed connection).
            // Outside a transaction its `synchronous_commit` change lasts for this statement
            // only; what it reads is what a commit would read.
            let settings = client.query_one(DURABLE_COMMIT, &[]).map_err(err)?;
            check_durability(&mut client, &settings)?;
        }
        if options.create {
            create_schema(&mut client, sql).map_err(err)?;
        }
        check_schema(&mut client)?;
        check_stored_options(&mut client, &options)?;
        let statements = Statements::prepare(&mut client).map_err(err)?;
        Ok(PgStore { client, statements, options })
    }

    /// The store's connection, for inspection in tests and tools.
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// Like [`FencedStore::write`], and when the write applies, runs `also` in the same
    /// transaction before it commits: rows the caller writes there commit with the fenced write
    /// or not at all. An error from `also` rolls back everything, the raised fence included, and
    /// is classified like the store's own ([`StoreError::from_postgres`]).
    pub fn write_with(
        &mut self,
        request: &WriteRequest,
        now: Tick,
        also: impl FnOnce(&mut Transaction<'_>, &Applied) -> Result<(), postgres::Error>,
    ) -> Result<WriteOutcome, StoreError> {
        // Every number is checked before the transaction starts, so a refusal sends nothing.
        sql_integer("generation", request.generation.get())?;
        sql_integer("time", now.0)?;
        request.expected_revision.map(|r| sql_integer("expected revision", r.0)).transpose()?;
        let err = StoreError::from_postgres;
        let PgStore { client, statements, options } = self;
        // Dropping the transaction on an error rolls it back; if the connection is gone, the
        // server discards the uncommitted transaction itself.
        let mut tx =
            client.build_transaction().isolation_level(options.isolation).start().map_err(err)?;
        let decision = decide(&mut tx, statements, options, request, now)?;
        let outcome = decision.outcome();
        match decision {
            // A request refused by the fence leaves the database exactly as it was.
            Decision::Unchanged(_) => tx.rollback().map_err(err)?,
            Decision::Commit(_) => {
                if let WriteOutcome::Applied(applied) = &outcome {
                    also(&mut tx, applied).map_err(err)?;
                }
                // Last before the commit, so that neither the server's settings nor the
                // caller's statements can make this commit return before it is on disk.
                let settings = tx.query_one(&statements.durable_commit, &[]).map_err(err)?;
                check_durability(&mut tx, &settings)?;
                tx.commit().map_err(err)?;
            }
        }
        Ok(outcome)
    }

    /// Writes `request` without the fence, as a client that trusts its lease would: one
    /// statement that upserts the value and the next revision and stores the presented
    /// generation as the highest even when that moves it backwards (as the core's unfenced
    /// path, `FencedRegister::write_unchecked`, does, so a recorded history reads like a
    /// simulated one). No fencing rule, no expected revision, no operation id. It exists to
    /// show what fencing prevents, never for real data.
    pub fn write_unfenced(&mut self, request: &WriteRequest) -> Result<WriteOutcome, StoreError> {
        let generation = sql_integer("generation", request.generation.get())?;
        let row = self
            .client
            .query_one(UNFENCED_WRITE, &[&request.resource.as_str(), &generation, &request.value])
            .map_err(StoreError::from_postgres)?;
        let revision = revision_from_sql(row.get(0))?;
        Ok(WriteOutcome::Applied(Applied { generation: request.generation, revision }))
    }

    /// Every operation id forgotten so far on `resource`, oldest first, as the reference's
    /// [`IdempotencyStore::forgotten`](fencelab_core::fence::idempotency::IdempotencyStore::forgotten) lists them.
    pub fn forgotten(&mut self, resource: &ResourceId) -> Result<Vec<Forgotten>, StoreError> {
        let rows = self
            .client
            .query(
                "SELECT operation, generation, revision, recorded_at, forgotten_at, reason, \
                 limit_value FROM fenced_forgotten WHERE resource = $1 ORDER BY seq",
                &[&resource.as_str()],
            )
            .map_err(StoreError::from_postgres)?;
        rows.iter()
            .map(|row| {
                let operation: String = row.get(0);
                let operation = OperationId::new(operation.clone()).map_err(|e| {
                    StoreError::InvalidData(format!("stored operation id {operation:?}: {e}"))
                })?;
                let generation = generation_from_sql(row.get(1))?;
                let applied = Applied { generation, revision: revision_from_sql(row.get(2))? };
                let result =
                    StoredResult { generation, applied, recorded_at: tick_from_sql(row.get(3))? };
                let at = tick_from_sql(row.get(4))?;
                let (reason, limit): (String, i64) = (row.get(5), row.get(6));
                let reason = match reason.as_str() {
                    "age" => ForgetReason::Age {
                        max_age: u64::try_from(limit).map_err(|_| {
                            StoreError::InvalidData(format!("stored maximum age {limit}"))
                        })?,
                    },
                    "capacity" => ForgetReason::Capacity {
                        max_entries: usize::try_from(limit)
                            .ok()
                            .and_then(NonZeroUsize::new)
                            .ok_or_else(|| {
                                StoreError::InvalidData(format!("stored capacity {limit}"))
                            })?,
                    },
                    other => {
                        return Err(StoreError::InvalidData(format!(
                            "stored reason {other:?} is not a reason to forget"
                        )))
                    }
                };
                Ok(Forgotten { operation, result, at, reason })
            })
            .collect()
    }
}

/// Where a configuration points, for messages.
fn target_of(config: &postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            postgres::config::Host::Tcp(name) => name.clone(),
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let ports: Vec<String> = config.get_ports().iter().map(u16::to_string).collect();
    format!(
        "{} port {}",
        hosts.join(","),
        if ports.is_empty() { "5432".into() } else { ports.join(",") }
    )
}

/// Creates the tables and the options row if they are missing, under an advisory lock per
/// schema, so that stores connecting at once do not race to create them.
fn create_schema(
    client: &mut Client,
    (policy, max_entries, max_age): SqlOptions,
) -> Result<(), postgres::Error> {
    let exists: bool =
        client.query_one("SELECT to_regclass('fenced_meta') IS NOT NULL", &[])?.get(0);
    if exists {
        return Ok(());
    }
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock(1717986918, hashtext(current_schema()))", &[])?;
    tx.batch_execute(SCHEMA)?;
    tx.execute(
        "INSERT INTO fenced_meta (id, schema_version, policy, max_entries, max_age) \
         VALUES (1, $1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
        &[&SCHEMA_VERSION, &policy, &max_entries, &max_age],
    )?;
    tx.commit()
}

/// Checks that every table and column the store uses exists with its type.
fn check_schema(client: &mut Client) -> Result<(), StoreError> {
    let rows = client
        .query(
            "SELECT table_name::text, column_name::text, data_type::text \
             FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name::text = ANY($1)",
            &[&COLUMNS.iter().map(|(t, _)| *t).collect::<Vec<_>>()],
        )
        .map_err(StoreError::from_postgres)?;
    let found: Vec<(String, String, String)> =
        rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
    for (table, columns) in COLUMNS {
        if !found.iter().any(|(t, _, _)| t == table) {
            return Err(StoreError::MissingTable { table: table.to_string(), source: None });
        }
        for (column, expected) in *columns {
            let wrong = |problem| StoreError::WrongSchema {
                table: table.to_string(),
                problem,
                source: None,
            };
            match found.iter().find(|(t, c, _)| t == table && c == column) {
                None => return Err(wrong(format!("column {column} is missing"))),
                Some((_, _, actual)) if actual != expected => {
                    return Err(wrong(format!("column {column} is {actual}, not {expected}")))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// The policy, the maximum count and the maximum age as `fenced_meta` stores them.
type SqlOptions = (&'static str, Option<i64>, Option<i64>);

fn sql_options(options: &Options) -> Result<SqlOptions, StoreError> {
    let retention = options.retention;
    let max_entries = retention
        .max_entries
        .map(|n| sql_integer("retention max_entries", n.get() as u64))
        .transpose()?;
    let max_age = retention.max_age.map(|n| sql_integer("retention max_age", n)).transpose()?;
    Ok((options.policy.name(), max_entries, max_age))
}

/// Refuses a connection whose schema version, policy or retention differs from the database's.
fn check_stored_options(client: &mut Client, options: &Options) -> Result<(), StoreError> {
    let row = client
        .query_opt(
            "SELECT schema_version, policy, max_entries, max_age FROM fenced_meta WHERE id = 1",
            &[],
        )
        .map_err(StoreError::from_postgres)?
        .ok_or_else(|| StoreError::WrongSchema {
            table: "fenced_meta".into(),
            problem: "it has no options row".into(),
            source: None,
        })?;
    let (found, policy, max_entries, max_age): (i32, String, Option<i64>, Option<i64>) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    if found != SCHEMA_VERSION {
        return Err(StoreError::UnknownSchema { found });
    }
    let invalid = StoreError::InvalidData;
    let stored_policy = SameGenerationPolicy::from_name(&policy)
        .ok_or_else(|| invalid(format!("stored policy {policy:?} is not a policy")))?;
    let max_entries = max_entries
        .map(|n| {
            usize::try_from(n)
                .ok()
                .and_then(NonZeroUsize::new)
                .ok_or_else(|| invalid(format!("stored retention max_entries {n} is not positive")))
        })
        .transpose()?;
    let max_age = max_age
        .map(|n| {
            u64::try_from(n)
                .map_err(|_| invalid(format!("stored retention max_age {n} is negative")))
        })
        .transpose()?;
    let stored_retention = Retention { max_entries, max_age };
    if stored_policy != options.policy {
        let requested = options.policy;
        return Err(StoreError::PolicyMismatch { stored: stored_policy, requested });
    }
    if stored_retention != options.retention {
        let requested = options.retention;
        return Err(StoreError::RetentionMismatch { stored: stored_retention, requested });
    }
    Ok(())
}

/// The stored result of an operation on a resource, if remembered.
fn stored_result(
    client: &mut impl GenericClient,
    statements: &Statements,
    resource: &str,
    operation: &str,
) -> Result<Option<StoredResult>, StoreError> {
    let row = client
        .query_opt(&statements.stored_result, &[&resource, &operation])
        .map_err(StoreError::from_postgres)?;
    let Some(row) = row else { return Ok(None) };
    let generation = generation_from_sql(row.get(0))?;
    let applied = Applied { generation, revision: revision_from_sql(row.get(1))? };
    Ok(Some(StoredResult { generation, applied, recorded_at: tick_from_sql(row.get(2))? }))
}

/// One write inside its transaction: locks the resource's row (creating it for a resource never
/// written), reads what the boundary holds, takes the decision from [`boundary::decide`], and
/// stores what a passing decision says. Every statement after the lock sees what the lock's
/// previous holder committed, and nothing changes the row until this transaction ends.
fn decide(
    tx: &mut Transaction<'_>,
    statements: &Statements,
    options: &Options,
    request: &WriteRequest,
    now: Tick,
) -> Result<Decision, StoreError> {
    let err = StoreError::from_postgres;
    let resource = request.resource.as_str();
    let generation = sql_integer("generation", request.generation.get())?;
    let (fence, revision) = loop {
        if let Some(row) = tx.query_opt(&statements.lock, &[&resource]).map_err(err)? {
            let fence =
                Fence { highest: Some(generation_from_sql(row.get(0))?), acted: row.get(1) };
            break (fence, revision_from_sql(row.get(2))?);
        }
        if tx.query_opt(&statements.create, &[&resource, &generation]).map_err(err)?.is_some() {
            break (Fence::default(), Revision(0));
        }
        // Another transaction created the row meanwhile: lock it now.
    };
    let remembered = stored_result(tx, statements, resource, request.operation.as_str())?;
    let rules = Rules { policy: options.policy, retention: options.retention };
    let decision = boundary::decide(&Held { fence, revision, remembered }, request, rules, now);
    if let Decision::Commit(commit) = &decision {
        store(tx, statements, request, commit, now)?;
    }
    Ok(decision)
}

/// Stores what a request that passed the fence does, in the decision's order: the expired
/// operation ids, the fence record (with the value when the write applies) and the new id in
/// one statement, the capacity.
fn store(
    tx: &mut Transaction<'_>,
    statements: &Statements,
    request: &WriteRequest,
    commit: &Commit,
    now: Tick,
) -> Result<(), StoreError> {
    let err = StoreError::from_postgres;
    let resource = request.resource.as_str();
    let highest = sql_integer("generation", commit.highest.get())?;
    let now = sql_integer("time", now.0)?;
    if let Some(Expiry { up_to, reason }) = commit.expire {
        let up_to = sql_integer("time", up_to.0)?;
        let ForgetReason::Age { max_age } = reason else {
            return Err(StoreError::InvalidData(format!("an expiry for {reason:?}")));
        };
        let max_age = sql_integer("retention max_age", max_age)?;
        tx.execute(&statements.forget_expired, &[&resource, &up_to, &now, &max_age])
            .map_err(err)?;
    }
    let (revision, recorded_at) = match &commit.effect {
        CommitEffect::Apply { revision, record, .. } => {
            (Some(sql_integer("revision", revision.0)?), sql_integer("time", record.recorded_at.0)?)
        }
        CommitEffect::Replay(_) | CommitEffect::Reject(_) => (None, now),
    };
    let params: [&(dyn postgres::types::ToSql + Sync); 7] = [
        &resource,
        &highest,
        &commit.acted,
        &request.value,
        &revision,
        &request.operation.as_str(),
        &recorded_at,
    ];
    tx.execute(&statements.store, &params).map_err(err)?;
    if let CommitEffect::Apply { trim: Some(keep), .. } = &commit.effect {
        let keep = sql_integer("retention max_entries", keep.get() as u64)?;
        tx.execute(&statements.forget_over_capacity, &[&resource, &keep, &now]).map_err(err)?;
    }
    Ok(())
}

impl FencedStore for PgStore {
    type Error = StoreError;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, StoreError> {
        self.write_with(request, now, |_, _| Ok(()))
    }

    /// A resource whose fence was raised is `Some` even if no write has applied to it yet
    /// (`value: None`, revision 0), as in the reference.
    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, StoreError> {
        let row = self
            .client
            .query_opt(&self.statements.read, &[&resource.as_str()])
            .map_err(StoreError::from_postgres)?;
        row.map(|row| {
            Ok(StoredValue {
                highest: Some(generation_from_sql(row.get(0))?),
                value: row.get(1),
                revision: revision_from_sql(row.get(2))?,
            })
        })
        .transpose()
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, StoreError> {
        stored_result(&mut self.client, &self.statements, resource.as_str(), operation.as_str())
    }
}
