//! A [`FencedStore`] on SQLite.
//!
//! One table, `fenced`, keeps each resource's fence record (the highest generation that has
//! passed the fence, and whether a write under it has been applied), its value and its revision
//! in one row, so the fencing record is persisted with the protected state in the same
//! transaction. Operation ids and their stored results live in `fenced_ops`, under the same
//! retention policy as the in-memory reference, and every forgotten id is recorded in
//! `fenced_forgotten`.
//!
//! `fencelab lab --store sqlite` plays the paused-worker story against this store with real
//! processes and a real `SIGSTOP`, and records it as a history the checker can judge.
//!
//! # One write
//!
//! Every write is one `IMMEDIATE` transaction, which takes the database's write lock before it
//! reads: it reads the resource's fence record, revision and the operation id's stored result,
//! takes its decision from the core's write boundary, [`boundary::decide`] (the function the
//! in-memory reference [`FencedResource`](fencelab_core::fence::boundary::FencedResource) uses, so the order of
//! checks is written once, in the core), and stores what the decision says with absolute values.
//! A request refused by the fence rolls back and changes nothing, not even expired operation
//! ids; any other outcome commits, so a newer owner's replay or revision conflict still raises
//! the fence.
//!
//! # Durability and configuration
//!
//! The database runs in WAL mode with `synchronous=FULL`: a commit is on disk before it is
//! acknowledged. With `NORMAL`, a commit acknowledged just before a power loss can vanish, and a
//! lost fence record re-admits the generation it had fenced out. A killed writer process loses
//! nothing it was told about and leaves no half-written write: the commit is in the WAL before
//! the answer, and recovery drops an unfinished transaction whole.
//!
//! Several processes may open one file at once, a new one included: the first opens' set-up
//! (the journal mode, the tables, the options row) waits for the others up to
//! [`Options::busy_timeout`] instead of failing on a lock conflict.
//!
//! The same-generation policy and the retention are stored in `fenced_meta` when the tables are
//! created, and a connection asking for different ones is refused
//! ([`StoreError::PolicyMismatch`], [`StoreError::RetentionMismatch`]): two connections must
//! never enforce different rules on the same rows. A database from the previous schema (no fence
//! flag) is migrated by the first read-write open, which records that connection's options.
//!
//! ```
//! use fencelab_core::{FencedStore, Generation, OperationId, ResourceId, Tick, WriteOutcome, WriteRequest};
//! use fencelab_sqlite::{Options, SqliteStore};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut store = SqliteStore::open(dir.path().join("fenced.db"), Options::default()).unwrap();
//! let ledger = ResourceId::new("ledger").unwrap();
//! let write = |g, op: &str, v: &str| WriteRequest::new(ledger.clone(), Generation::new(g).unwrap(), OperationId::new(op).unwrap(), None, v);
//! assert!(store.write(&write(8, "b", "new owner"), Tick(1)).unwrap().is_applied());
//! let stale = store.write(&write(7, "a", "stale"), Tick(2)).unwrap();
//! let WriteOutcome::Rejected(rejection) = stale else { panic!("{stale:?}") };
//! assert_eq!(rejection.to_string(), "stale owner: generation 7 < highest accepted 8");
//! ```

/// The crate README's example, run as a doctest so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

use fencelab_core::{
    fence::boundary, fence::boundary::Commit, fence::boundary::CommitEffect,
    fence::boundary::Decision, fence::boundary::Held, fence::boundary::Rules,
};
use fencelab_core::{
    fence::idempotency::ForgetReason, fence::idempotency::Retention,
    fence::idempotency::StoredResult, fence::register::Applied, fence::register::Fence,
    fence::register::Revision, fence::register::SameGenerationPolicy, fence::store::StoredValue,
    names::Named, FencedStore, Generation, OperationId, ResourceId, Tick, WriteOutcome,
    WriteRequest,
};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};
use std::num::NonZeroUsize;
use std::path::Path;
use std::time::{Duration, Instant};

/// How to open the database.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The same-generation policy of the fence. Stored in the database when its tables are
    /// created; opening with a different one is an error.
    pub policy: SameGenerationPolicy,
    /// How long operation ids are remembered. Stored like the policy.
    pub retention: Retention,
    /// Create the tables if they are missing (otherwise a missing table is an error). A
    /// database from the previous schema is migrated by any read-write connection regardless.
    pub create: bool,
    /// Open read-only: every write fails with [`StoreError::ReadOnly`].
    pub read_only: bool,
    /// How long to wait for another connection's write lock before failing with
    /// [`StoreError::Locked`].
    pub busy_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            policy: SameGenerationPolicy::AllowSame,
            retention: Retention::FOREVER,
            create: true,
            read_only: false,
            busy_timeout: Duration::from_secs(5),
        }
    }
}

/// What the store guarantees on a crash, in one sentence, for tools that report it (the live
/// lab prints it). The crate documentation's Durability section says why.
pub const DURABILITY: &str = "each commit is synced to disk before the write is \
    acknowledged (WAL, synchronous=FULL), with the fence record in the same transaction as the \
    value";

/// The schema this build writes, kept in SQLite's `user_version` header field.
pub const SCHEMA_VERSION: i64 = 2;

/// What went wrong, in terms a user can act on. A failed write changes nothing: every write is
/// one transaction, rolled back on any error.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another connection held the write lock for longer than the busy timeout.
    #[error("the database is locked by another connection (waited {0:?}); nothing was written")]
    Locked(Duration),
    /// The database was opened read-only, or the file cannot be written.
    #[error("the database is read-only; nothing was written")]
    ReadOnly,
    /// The file is not a SQLite database, or it is damaged.
    #[error("the file is not a usable SQLite database (corrupt or not a database): {0}")]
    Corrupt(String),
    /// A table the store needs does not exist.
    #[error("table {0} is missing; open with `create: true` or restore the schema")]
    MissingTable(String),
    /// The database has an older schema, and this connection is read-only so cannot migrate it.
    #[error(
        "the database has schema version {found}, older than this build's {SCHEMA_VERSION}; \
         a read-only connection cannot migrate it, so open it read-write once"
    )]
    NeedsMigration {
        /// The schema version found in the file.
        found: i64,
    },
    /// The database has a schema this build does not know, probably from a newer version.
    #[error(
        "the database has schema version {found}, which this build (schema \
         {SCHEMA_VERSION}) does not know; open it with the version that created it"
    )]
    UnknownSchema {
        /// The schema version found in the file.
        found: i64,
    },
    /// The database enforces another same-generation policy than the one asked for.
    #[error(
        "the database enforces policy {}, but this connection asked for policy {}; every \
         connection to one database must enforce the same rule, so open it with the stored policy",
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
         connection to one database must enforce the same rule, so open it with the stored \
         retention",
        show_retention(.stored), show_retention(.requested)
    )]
    RetentionMismatch {
        /// The retention stored in the database.
        stored: Retention,
        /// The retention in this connection's options.
        requested: Retention,
    },
    /// A number does not fit SQLite's INTEGER (at most 2^63 - 1). Refused before anything is
    /// written, so that order in SQL always matches the order of the numbers.
    #[error(
        "{what} {value} is larger than SQLite's INTEGER allows ({}); nothing was written",
        i64::MAX
    )]
    OutOfRange {
        /// What the number is (a generation, a revision, a time).
        what: &'static str,
        /// The number.
        value: u64,
    },
    /// A stored value is outside what the store ever writes (edited by hand?).
    #[error("stored data is invalid: {0}")]
    InvalidData(String),
    /// Anything else SQLite reported; the SQLite error is also the `source()`. The message
    /// repeats it because the conformance kit and most callers print only the top message.
    ///
    /// There is deliberately no `From<rusqlite::Error>`: every conversion goes through one
    /// classifier, so a locked or read-only database is never reported as a generic failure.
    #[error("SQLite error: {0}")]
    Sqlite(#[source] rusqlite::Error),
}

impl StoreError {
    /// Whether the same write may succeed if tried again: another connection held the write
    /// lock for longer than the busy timeout. Writers in several processes that write back to
    /// back should retry on it.
    pub fn is_transient(&self) -> bool {
        matches!(self, StoreError::Locked(_))
    }

    fn from_sqlite(error: rusqlite::Error, busy: Duration) -> StoreError {
        if let rusqlite::Error::SqliteFailure(failure, message) = &error {
            match failure.code {
                ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                    return StoreError::Locked(busy)
                }
                ErrorCode::ReadOnly => return StoreError::ReadOnly,
                ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => {
                    return StoreError::Corrupt(message.clone().unwrap_or_default())
                }
                _ => {}
            }
            if let Some(table) = message.as_deref().and_then(|m| m.strip_prefix("no such table: "))
            {
                return StoreError::MissingTable(table.to_string());
            }
        }
        StoreError::Sqlite(error)
    }
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

/// The current schema. Value and revision are empty (`NULL`, 0) until a write applies, because a
/// request that only passed the fence still creates the row that records it.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS fenced (
    resource TEXT PRIMARY KEY,
    highest  INTEGER NOT NULL CHECK (highest > 0),
    acted    INTEGER NOT NULL CHECK (acted IN (0, 1)),
    value    TEXT,
    revision INTEGER NOT NULL CHECK (revision >= 0),
    CHECK ((value IS NULL) = (revision = 0)),
    CHECK (acted = 0 OR revision > 0)
);
CREATE TABLE IF NOT EXISTS fenced_ops (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    resource    TEXT NOT NULL,
    operation   TEXT NOT NULL,
    generation  INTEGER NOT NULL,
    revision    INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    UNIQUE (resource, operation)
);
CREATE TABLE IF NOT EXISTS fenced_forgotten (
    resource    TEXT NOT NULL,
    operation   TEXT NOT NULL,
    generation  INTEGER NOT NULL,
    revision    INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    forgotten_at INTEGER NOT NULL,
    reason      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS fenced_meta (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    policy      TEXT NOT NULL,
    max_entries INTEGER CHECK (max_entries > 0),
    max_age     INTEGER CHECK (max_age >= 0)
);
";

/// From schema 1 (no `acted` column, value and revision always set): the old table is renamed,
/// [`SCHEMA`] creates the new one, and the rows are copied over. Every schema-1 row was created or
/// raised by an applied write, so each has acted under its highest generation.
const RENAME_SCHEMA_1: &str = "ALTER TABLE fenced RENAME TO fenced_schema_1;";
const COPY_FROM_SCHEMA_1: &str = "
INSERT INTO fenced (resource, highest, acted, value, revision)
    SELECT resource, highest, 1, value, revision FROM fenced_schema_1;
DROP TABLE fenced_schema_1;
";

/// The upsert of [`SqliteStore::write_unfenced`]: it never looks at the generation.
const UNFENCED_WRITE: &str = "
INSERT INTO fenced (resource, highest, acted, value, revision) VALUES (?1, ?2, 1, ?3, 1)
ON CONFLICT (resource) DO UPDATE
    SET highest = excluded.highest, acted = 1, value = excluded.value, revision = revision + 1
RETURNING revision";

/// A fenced store in one SQLite database file. Each instance owns one connection; open one per
/// thread or process.
pub struct SqliteStore {
    conn: Connection,
    options: Options,
}

/// SQLite stores integers as signed 64-bit; generations above `i64::MAX` are refused rather
/// than wrapped, so ordering in SQL always matches ordering of generations.
fn sql_generation(generation: Generation) -> Result<i64, StoreError> {
    sql_integer("generation", generation.get())
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

/// A count or age from the options as SQLite's INTEGER, refused rather than wrapped.
fn sql_integer(what: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::OutOfRange { what, value })
}

/// How to open a connection with `options`.
fn flags(options: &Options) -> OpenFlags {
    if options.read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::default()
    }
}

impl SqliteStore {
    /// Opens the database at `path` in WAL mode with `synchronous=FULL`. A read-write
    /// connection creates the tables (with `create`) or migrates an older schema; every
    /// connection is refused if the database stores another policy or retention than `options`.
    ///
    /// Several processes may open one new file at once. SQLite answers some of the set-up's
    /// lock conflicts at once instead of waiting (switching a new file to WAL takes a read lock
    /// and then asks for the write lock, and it gives up rather than risk a deadlock), so the
    /// set-up is tried again until `busy_timeout` has passed.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<SqliteStore, StoreError> {
        let busy = options.busy_timeout;
        let err = |e| StoreError::from_sqlite(e, busy);
        let deadline = Instant::now() + busy;
        let conn = Connection::open_with_flags(path, flags(&options)).map_err(err)?;
        conn.busy_timeout(busy).map_err(err)?;
        // Touch the file header now, so a corrupt file is reported at open, not at first write.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())).map_err(err)?;
        if !options.read_only {
            retry_while_locked(deadline, || {
                conn.pragma_update(None, "journal_mode", "WAL").map_err(Failure::Sql)
            })
            .map_err(|e| e.into_store(busy))?;
            // FULL syncs the WAL at every commit: an acknowledged fence record survives a
            // power loss, so a lost commit can never re-admit the generation it fenced out.
            conn.pragma_update(None, "synchronous", "FULL").map_err(err)?;
        }
        SqliteStore::prepare(conn, options, deadline)
    }

    /// Opens a new, private database in memory that lasts as long as the store: the same
    /// schema, checks and transactions as [`SqliteStore::open`] without a file, for tests (one
    /// store per scenario of the conformance kit, say). Nothing survives the store, so there is
    /// no journal to configure. The database starts empty, so `read_only` or `create: false`
    /// fail with [`StoreError::MissingTable`], as they would on an empty file.
    ///
    /// ```
    /// use fencelab_core::drive::conformance::check_store;
    /// use fencelab_core::stories::library;
    /// use fencelab_sqlite::{Options, SqliteStore};
    ///
    /// let report = check_store(&library::all(), |spec| {
    ///     let (policy, retention) = (spec.policy, spec.retention);
    ///     SqliteStore::open_in_memory(Options { policy, retention, ..Options::default() })
    /// })
    /// .unwrap_or_else(|divergence| panic!("{divergence}"));
    /// assert_eq!(report.scenarios, library::all().len());
    /// ```
    pub fn open_in_memory(options: Options) -> Result<SqliteStore, StoreError> {
        let busy = options.busy_timeout;
        let conn = Connection::open_in_memory_with_flags(flags(&options))
            .map_err(|e| StoreError::from_sqlite(e, busy))?;
        SqliteStore::prepare(conn, options, Instant::now())
    }

    /// Creates or migrates the schema on a new connection, trying again on a lock conflict
    /// until `deadline`, and checks the stored options.
    fn prepare(
        mut conn: Connection,
        options: Options,
        deadline: Instant,
    ) -> Result<SqliteStore, StoreError> {
        let busy = options.busy_timeout;
        retry_while_locked(deadline, || prepare_schema(&mut conn, &options))
            .map_err(|e| e.into_store(busy))?;
        check_stored_options(&conn, &options).map_err(|e| e.into_store(busy))?;
        Ok(SqliteStore { conn, options })
    }

    /// The underlying connection, for inspection in tests and tools.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Writes `request` without the fence, as a store that trusts its writers' leases would:
    /// a plain upsert of the value and the next revision, with the presented generation stored
    /// as the highest even when that moves it backwards (as the core's unfenced path,
    /// `FencedRegister::write_unchecked`, does, so a recorded history reads like a simulated
    /// one). One statement is one transaction, so the write is atomic; only the generation
    /// check is missing. It exists to show what fencing prevents, never for real data.
    pub fn write_unfenced(&self, request: &WriteRequest) -> Result<WriteOutcome, StoreError> {
        let generation = sql_generation(request.generation)?;
        let revision: i64 = self
            .conn
            .prepare_cached(UNFENCED_WRITE)
            .and_then(|mut statement| {
                let resource = request.resource.as_str();
                statement.query_row(params![resource, generation, request.value], |r| r.get(0))
            })
            .map_err(self.err())?;
        let revision = revision_from_sql(revision)?;
        Ok(WriteOutcome::Applied(Applied { generation: request.generation, revision }))
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError {
        let busy = self.options.busy_timeout;
        move |e| StoreError::from_sqlite(e, busy)
    }

    fn try_write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, StoreError> {
        let (err, options) = (self.err(), self.options);
        // IMMEDIATE takes the write lock up front, so the reads below and the writes are one
        // serial step with respect to every other writer. Any error drops the transaction,
        // which rolls everything back: nothing is ever half-written.
        let tx =
            self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(&err)?;
        let decision = decide(&tx, options, request, now).map_err(|e| match e {
            Failure::Sql(e) => err(e),
            Failure::Store(e) => e,
        })?;
        match decision {
            Decision::Commit(_) => tx.commit().map_err(&err)?,
            // A request refused by the fence leaves the database exactly as it was.
            Decision::Unchanged(_) => tx.rollback().map_err(&err)?,
        }
        Ok(decision.outcome())
    }

    /// How many operation ids have been forgotten, and why, oldest first.
    pub fn forgotten(&self) -> Result<Vec<(String, ForgetReasonLabel)>, StoreError> {
        let err = self.err();
        let mut stmt = self
            .conn
            .prepare("SELECT operation, reason FROM fenced_forgotten ORDER BY rowid")
            .map_err(&err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(&err)?;
        rows.map(|r| r.map(|(op, reason)| (op, ForgetReasonLabel(reason))).map_err(&err)).collect()
    }
}

/// Creates or migrates the schema if this database needs it. The common case, a current schema,
/// only reads the header, so opening never waits for another connection's write lock.
fn prepare_schema(conn: &mut Connection, options: &Options) -> Result<(), Failure> {
    let found = schema_version(conn)?;
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    if found != 0 {
        return Err(StoreError::UnknownSchema { found }.into());
    }
    let old = has_table(conn, "fenced")?;
    if options.read_only {
        return Err(if old {
            StoreError::NeedsMigration { found: 1 }
        } else {
            StoreError::MissingTable("fenced".into())
        }
        .into());
    }
    if !old && !options.create {
        return Err(StoreError::MissingTable("fenced".into()).into());
    }
    let (policy, max_entries, max_age) = sql_options(options)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Another connection may have prepared the file while this one waited for the lock.
    if schema_version(&tx)? == 0 {
        let from_schema_1 = has_table(&tx, "fenced")?;
        if from_schema_1 {
            tx.execute_batch(RENAME_SCHEMA_1)?;
        }
        tx.execute_batch(SCHEMA)?;
        if from_schema_1 {
            tx.execute_batch(COPY_FROM_SCHEMA_1)?;
        }
        tx.execute(
            "INSERT INTO fenced_meta (id, policy, max_entries, max_age) VALUES (1, ?1, ?2, ?3)",
            params![policy, max_entries, max_age],
        )?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    tx.commit()?;
    Ok(())
}

/// Runs `step` again while SQLite reports a lock conflict, with a short growing pause, until
/// `deadline`; the last conflict is returned after it. For the set-up steps on which SQLite
/// does not wait by itself.
fn retry_while_locked<T>(
    deadline: Instant,
    mut step: impl FnMut() -> Result<T, Failure>,
) -> Result<T, Failure> {
    let mut pause = Duration::from_millis(1);
    loop {
        match step() {
            Err(Failure::Sql(rusqlite::Error::SqliteFailure(failure, _)))
                if matches!(failure.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                    && Instant::now() + pause < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn schema_version(conn: &Connection) -> Result<i64, Failure> {
    Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
}

fn has_table(conn: &Connection, name: &str) -> Result<bool, Failure> {
    let found = conn
        .query_row("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", [name], |_| {
            Ok(())
        })
        .optional()?;
    Ok(found.is_some())
}

/// The policy and retention as `fenced_meta` stores them.
fn sql_options(options: &Options) -> Result<(&'static str, Option<i64>, Option<i64>), Failure> {
    let retention = options.retention;
    let max_entries = retention
        .max_entries
        .map(|n| sql_integer("retention max_entries", n.get() as u64))
        .transpose()?;
    let max_age = retention.max_age.map(|n| sql_integer("retention max_age", n)).transpose()?;
    Ok((options.policy.name(), max_entries, max_age))
}

/// Refuses a connection whose policy or retention differs from the database's.
fn check_stored_options(conn: &Connection, options: &Options) -> Result<(), Failure> {
    let (policy, max_entries, max_age): (String, Option<i64>, Option<i64>) = conn.query_row(
        "SELECT policy, max_entries, max_age FROM fenced_meta WHERE id = 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let invalid = |what: String| Failure::Store(StoreError::InvalidData(what));
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
        return Err(StoreError::PolicyMismatch { stored: stored_policy, requested }.into());
    }
    if stored_retention != options.retention {
        let requested = options.retention;
        return Err(StoreError::RetentionMismatch { stored: stored_retention, requested }.into());
    }
    Ok(())
}

/// Why an operation id was forgotten, as stored (`age` or `capacity N`); the in-memory
/// equivalent is [`ForgetReason`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForgetReasonLabel(pub String);

impl ForgetReasonLabel {
    /// Whether this matches the in-memory reason.
    pub fn matches(&self, reason: &ForgetReason) -> bool {
        match reason {
            ForgetReason::Age { .. } => self.0 == "age",
            ForgetReason::Capacity { max_entries } => self.0 == format!("capacity {max_entries}"),
            ForgetReason::Explicit => self.0 == "explicit",
        }
    }
}

/// The stored result of an operation on a resource, if remembered.
fn stored_result(
    conn: &Connection,
    resource: &str,
    operation: &str,
) -> Result<Option<StoredResult>, Failure> {
    let row: Option<(i64, i64, i64)> = conn
        .prepare_cached(
            "SELECT generation, revision, recorded_at FROM fenced_ops WHERE resource = ?1 AND operation = ?2",
        )?
        .query_row(
            [resource, operation],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((g, rev, at)) = row else { return Ok(None) };
    let generation = generation_from_sql(g)?;
    let applied = Applied { generation, revision: revision_from_sql(rev)? };
    let recorded_at = Tick(
        u64::try_from(at)
            .map_err(|_| StoreError::InvalidData(format!("stored time {at} is negative")))?,
    );
    Ok(Some(StoredResult { generation, applied, recorded_at }))
}

/// Runs one of a write's statements, prepared once per connection and cached.
fn run(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
}

/// A SQL failure, or a store-level one, inside a write. SQL failures are classified once, at
/// the boundary, by [`StoreError::from_sqlite`].
enum Failure {
    Sql(rusqlite::Error),
    Store(StoreError),
}

impl Failure {
    fn into_store(self, busy: Duration) -> StoreError {
        match self {
            Failure::Sql(e) => StoreError::from_sqlite(e, busy),
            Failure::Store(e) => e,
        }
    }
}

impl From<rusqlite::Error> for Failure {
    fn from(e: rusqlite::Error) -> Self {
        Failure::Sql(e)
    }
}

impl From<StoreError> for Failure {
    fn from(e: StoreError) -> Self {
        Failure::Store(e)
    }
}

/// Stores the fence record of a request that passed the fence, creating the row of a resource
/// never written (no value, revision 0, and so not acted). The values come from the decision.
const STORE_FENCE: &str = "
INSERT INTO fenced (resource, highest, acted, value, revision) VALUES (?1, ?2, 0, NULL, 0)
ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest, acted = ?3";

/// Stores an applied write: the fence record, the value and its revision, from the decision.
const STORE_WRITE: &str = "
INSERT INTO fenced (resource, highest, acted, value, revision) VALUES (?1, ?2, ?3, ?4, ?5)
ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest, acted = excluded.acted,
    value = excluded.value, revision = excluded.revision";

/// Remembers an applied operation id with its result.
const RECORD: &str = "
INSERT INTO fenced_ops (resource, operation, generation, revision, recorded_at)
    VALUES (?1, ?2, ?3, ?4, ?5)";

/// Records, then deletes, the resource's operation ids beyond the newest `?2`, the capacity.
const FORGET_OVER_CAPACITY: &str = "
INSERT INTO fenced_forgotten
    SELECT resource, operation, generation, revision, recorded_at, ?3, ?4 FROM fenced_ops
    WHERE resource = ?1 AND seq NOT IN
        (SELECT seq FROM fenced_ops WHERE resource = ?1 ORDER BY seq DESC LIMIT ?2)";
const DELETE_OVER_CAPACITY: &str = "
DELETE FROM fenced_ops WHERE resource = ?1 AND seq NOT IN
    (SELECT seq FROM fenced_ops WHERE resource = ?1 ORDER BY seq DESC LIMIT ?2)";

/// Records, then deletes, the resource's operation ids recorded at or before `?2`.
const FORGET_EXPIRED: &str = "
INSERT INTO fenced_forgotten
    SELECT resource, operation, generation, revision, recorded_at, ?3, 'age' FROM fenced_ops
    WHERE resource = ?1 AND recorded_at <= ?2 ORDER BY seq";
const DELETE_EXPIRED: &str = "DELETE FROM fenced_ops WHERE resource = ?1 AND recorded_at <= ?2";

/// One write inside its transaction: reads what the boundary holds for the resource, takes the
/// decision from [`boundary::decide`], and stores what a passing decision says. The
/// transaction's write lock, taken before the read, makes the three one step.
fn decide(
    tx: &rusqlite::Transaction<'_>,
    options: Options,
    request: &WriteRequest,
    now: Tick,
) -> Result<Decision, Failure> {
    let resource = request.resource.as_str();
    let row: Option<(i64, bool, i64)> = tx
        .prepare_cached("SELECT highest, acted, revision FROM fenced WHERE resource = ?1")?
        .query_row([resource], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let (fence, revision) = match row {
        Some((highest, acted, revision)) => (
            Fence { highest: Some(generation_from_sql(highest)?), acted },
            revision_from_sql(revision)?,
        ),
        None => (Fence::default(), Revision(0)),
    };
    let remembered = stored_result(tx, resource, request.operation.as_str())?;
    let rules = Rules { policy: options.policy, retention: options.retention };
    let decision = boundary::decide(&Held { fence, revision, remembered }, request, rules, now);
    if let Decision::Commit(commit) = &decision {
        store(tx, request, commit, now)?;
    }
    Ok(decision)
}

/// Stores what a request that passed the fence does, in the decision's order: the expired
/// operation ids, the fence record (with the value when the write applies), the new id, the
/// capacity.
fn store(
    tx: &rusqlite::Transaction<'_>,
    request: &WriteRequest,
    commit: &Commit,
    now: Tick,
) -> Result<(), Failure> {
    let resource = request.resource.as_str();
    let highest = sql_generation(commit.highest)?;
    let now = sql_integer("time", now.0)?;
    if let Some(expiry) = commit.expire {
        let up_to = sql_integer("time", expiry.up_to.0)?;
        run(tx, FORGET_EXPIRED, params![resource, up_to, now])?;
        run(tx, DELETE_EXPIRED, params![resource, up_to])?;
    }
    match &commit.effect {
        CommitEffect::Apply { revision, .. } => {
            let revision = sql_integer("revision", revision.0)?;
            let params = params![resource, highest, commit.acted, request.value, revision];
            run(tx, STORE_WRITE, params)?;
        }
        CommitEffect::Replay(_) | CommitEffect::Reject(_) => {
            run(tx, STORE_FENCE, params![resource, highest, commit.acted])?;
        }
    }
    if let CommitEffect::Apply { record, trim, .. } = &commit.effect {
        let (generation, revision) = (record.generation, record.applied.revision);
        let operation = request.operation.as_str();
        let params = params![
            resource,
            operation,
            sql_generation(generation)?,
            sql_integer("revision", revision.0)?,
            sql_integer("time", record.recorded_at.0)?
        ];
        run(tx, RECORD, params)?;
        if let Some(keep) = trim {
            let reason = format!("capacity {keep}");
            let keep = sql_integer("retention max_entries", keep.get() as u64)?;
            run(tx, FORGET_OVER_CAPACITY, params![resource, keep, now, reason])?;
            run(tx, DELETE_OVER_CAPACITY, params![resource, keep])?;
        }
    }
    Ok(())
}

impl FencedStore for SqliteStore {
    type Error = StoreError;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, StoreError> {
        self.try_write(request, now)
    }

    /// A resource whose fence was raised is `Some` even if no write has applied to it yet
    /// (`value: None`, revision 0), as in the reference.
    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, StoreError> {
        let err = self.err();
        let row: Option<(i64, Option<String>, i64)> = self
            .conn
            .prepare_cached("SELECT highest, value, revision FROM fenced WHERE resource = ?1")
            .and_then(|mut statement| {
                statement
                    .query_row([resource.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()
            })
            .map_err(&err)?;
        row.map(|(h, value, rev)| {
            Ok(StoredValue {
                highest: Some(generation_from_sql(h)?),
                value,
                revision: revision_from_sql(rev)?,
            })
        })
        .transpose()
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, StoreError> {
        let busy = self.options.busy_timeout;
        stored_result(&self.conn, resource.as_str(), operation.as_str())
            .map_err(|e| e.into_store(busy))
    }
}
