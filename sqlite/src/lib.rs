//! A [`FencedStore`] on SQLite.
//!
//! One table, `fenced`, keeps each resource's highest accepted generation, value and revision in
//! the same row, so the fencing record is persisted with the protected state in the same
//! transaction. A write is one conditional `UPDATE` whose `WHERE` clause carries the generation
//! rule and the expected revision (or an `INSERT` for a new resource); the number of affected
//! rows tells applied from rejected. Operation ids and their stored results live in
//! `fenced_ops`, with the same retention policy as the in-memory reference, and every forgotten
//! id is recorded in `fenced_forgotten`.
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

use fencelab_core::{
    Applied, FencedStore, ForgetReason, Generation, OperationId, ResourceId, Retention, Revision,
    SameGenerationPolicy, StoredResult, StoredValue, Tick, WriteOutcome, WriteRejection,
    WriteRequest,
};
use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// How to open the database.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The same-generation policy of the fence.
    pub policy: SameGenerationPolicy,
    /// How long operation ids are remembered.
    pub retention: Retention,
    /// Create the tables if they are missing (otherwise a missing table is an error).
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
    /// A stored value is outside what the store ever writes (edited by hand?).
    #[error("stored data is invalid: {0}")]
    InvalidData(String),
    /// Anything else SQLite reported.
    #[error("SQLite error: {0}")]
    Sqlite(rusqlite::Error),
}

impl StoreError {
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

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS fenced (
    resource TEXT PRIMARY KEY,
    highest  INTEGER NOT NULL CHECK (highest > 0),
    value    TEXT NOT NULL,
    revision INTEGER NOT NULL CHECK (revision > 0)
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
";

/// A fenced store in one SQLite database file. Each instance owns one connection; open one per
/// thread or process.
pub struct SqliteStore {
    conn: Connection,
    options: Options,
}

/// SQLite stores integers as signed 64-bit; generations above `i64::MAX` are refused rather
/// than wrapped, so ordering in SQL always matches ordering of generations.
fn sql_generation(generation: Generation) -> Result<i64, StoreError> {
    i64::try_from(generation.get()).map_err(|_| {
        StoreError::InvalidData(format!("generation {generation} does not fit SQLite's INTEGER"))
    })
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

impl SqliteStore {
    /// Opens (and, with `create`, prepares) the database at `path`, in WAL mode.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<SqliteStore, StoreError> {
        let busy = options.busy_timeout;
        let err = |e| StoreError::from_sqlite(e, busy);
        let flags = if options.read_only {
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
        } else {
            OpenFlags::default()
        };
        let conn = Connection::open_with_flags(path, flags).map_err(err)?;
        conn.busy_timeout(busy).map_err(err)?;
        // Touch the file header now, so a corrupt file is reported at open, not at first write.
        conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())).map_err(err)?;
        if !options.read_only {
            conn.pragma_update(None, "journal_mode", "WAL").map_err(err)?;
            conn.pragma_update(None, "synchronous", "NORMAL").map_err(err)?;
            if options.create {
                conn.execute_batch(SCHEMA).map_err(err)?;
            }
        }
        Ok(SqliteStore { conn, options })
    }

    /// The underlying connection, for inspection in tests and tools.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError {
        let busy = self.options.busy_timeout;
        move |e| StoreError::from_sqlite(e, busy)
    }

    fn try_write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, StoreError> {
        let err = self.err();
        let options = self.options;
        // IMMEDIATE takes the write lock up front, so the reads below and the write are one
        // serial step with respect to every other writer. Any error drops the transaction,
        // which rolls everything back: nothing is ever half-written.
        let tx =
            self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(&err)?;
        let outcome = decide(&tx, options, request, now).map_err(|e| match e {
            Failure::Sql(e) | Failure::Store(StoreError::Sqlite(e)) => err(e),
            Failure::Store(e) => e,
        })?;
        tx.commit().map_err(&err)?;
        Ok(outcome)
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
) -> Result<Option<StoredResult>, StoreError> {
    let row: Option<(i64, i64, i64)> = conn
        .query_row(
            "SELECT generation, revision, recorded_at FROM fenced_ops WHERE resource = ?1 AND operation = ?2",
            [resource, operation],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(StoreError::Sqlite)?;
    row.map(|(g, rev, at)| {
        let generation = generation_from_sql(g)?;
        let applied = Applied { generation, revision: revision_from_sql(rev)? };
        let recorded_at = Tick(u64::try_from(at).unwrap_or(0));
        Ok(StoredResult { generation, applied, recorded_at })
    })
    .transpose()
}

/// A SQL failure, or a store-level one, inside a write.
enum Failure {
    Sql(rusqlite::Error),
    Store(StoreError),
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

/// Everything one write does, inside its transaction. The order of checks is the reference's:
/// generation, then operation id, then expected revision.
fn decide(
    tx: &rusqlite::Transaction<'_>,
    options: Options,
    request: &WriteRequest,
    now: Tick,
) -> Result<WriteOutcome, Failure> {
    let resource = request.resource.as_str();
    let generation = sql_generation(request.generation)?;
    let now_sql = i64::try_from(now.0)
        .map_err(|_| StoreError::InvalidData(format!("time {now} too large")))?;

    if let Some(max_age) = options.retention.max_age {
        let cutoff = now.0.saturating_sub(max_age);
        let expired = now.0 >= max_age;
        if expired {
            let cutoff = i64::try_from(cutoff).unwrap_or(i64::MAX);
            tx.execute(
                    "INSERT INTO fenced_forgotten SELECT resource, operation, generation, revision, recorded_at, ?3, 'age'
                     FROM fenced_ops WHERE resource = ?1 AND recorded_at <= ?2 ORDER BY seq",
                    params![resource, cutoff, now_sql],
                )
                ?;
            tx.execute(
                "DELETE FROM fenced_ops WHERE resource = ?1 AND recorded_at <= ?2",
                params![resource, cutoff],
            )?;
        }
    }

    let row: Option<(i64, i64)> = tx
        .query_row("SELECT highest, revision FROM fenced WHERE resource = ?1", [resource], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let current = match row {
        Some((highest, revision)) => {
            Some((generation_from_sql(highest)?, revision_from_sql(revision)?))
        }
        None => None,
    };
    let highest = current.map(|(h, _)| h);
    let stored = stored_result(tx, resource, request.operation.as_str())?;
    if let Some(h) = highest.filter(|_| !options.policy.admits(highest, request.generation)) {
        // The strict policy's own retry: the same reference rule as `FencedResource::write`.
        return Ok(match stored {
            Some(s) if h == request.generation && s.generation == request.generation => {
                WriteOutcome::Replayed(s)
            }
            _ => WriteOutcome::Rejected(WriteRejection::Stale {
                presented: request.generation,
                highest: h,
            }),
        });
    }
    if let Some(stored) = stored {
        return Ok(WriteOutcome::Replayed(stored));
    }

    // The fence itself: one conditional statement carries the generation rule and the
    // expected revision. Zero affected rows means it was refused.
    let expected = request.expected_revision.map(|r| r.0 as i64);
    let strict = matches!(options.policy, SameGenerationPolicy::StrictlyNewer);
    let changed = if current.is_some() {
        tx.execute(
            "UPDATE fenced SET highest = ?2, value = ?3, revision = revision + 1
                 WHERE resource = ?1
                   AND (highest < ?2 OR (highest = ?2 AND NOT ?4))
                   AND (?5 IS NULL OR revision = ?5)",
            params![resource, generation, request.value, strict, expected],
        )?
    } else {
        tx.execute(
            "INSERT INTO fenced (resource, highest, value, revision)
                 SELECT ?1, ?2, ?3, 1 WHERE ?4 IS NULL OR ?4 = 0
                 ON CONFLICT (resource) DO NOTHING",
            params![resource, generation, request.value, expected],
        )?
    };
    if changed == 0 {
        let actual = current.map_or(Revision(0), |(_, r)| r);
        let rejection = match (highest, request.expected_revision) {
            (Some(h), _) if !options.policy.admits(Some(h), request.generation) => {
                WriteRejection::Stale { presented: request.generation, highest: h }
            }
            (_, Some(expected)) => WriteRejection::RevisionConflict { expected, actual },
            _ => {
                let why = "a conditional write changed nothing without a reason";
                return Err(StoreError::InvalidData(why.into()).into());
            }
        };
        return Ok(WriteOutcome::Rejected(rejection));
    }
    let revision = Revision(current.map_or(1, |(_, r)| r.0 + 1));
    let applied = Applied { generation: request.generation, revision };
    tx.execute(
            "INSERT INTO fenced_ops (resource, operation, generation, revision, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![resource, request.operation.as_str(), generation, revision.0 as i64, now_sql],
        )
        ?;
    if let Some(max) = options.retention.max_entries {
        let keep = i64::try_from(max.get()).unwrap_or(i64::MAX);
        let reason = format!("capacity {max}");
        tx.execute(
                "INSERT INTO fenced_forgotten SELECT resource, operation, generation, revision, recorded_at, ?3, ?4
                 FROM fenced_ops WHERE resource = ?1 AND seq NOT IN
                   (SELECT seq FROM fenced_ops WHERE resource = ?1 ORDER BY seq DESC LIMIT ?2)",
                params![resource, keep, now_sql, reason],
            )
            ?;
        tx.execute(
            "DELETE FROM fenced_ops WHERE resource = ?1 AND seq NOT IN
                   (SELECT seq FROM fenced_ops WHERE resource = ?1 ORDER BY seq DESC LIMIT ?2)",
            params![resource, keep],
        )?;
    }
    Ok(WriteOutcome::Applied(applied))
}

impl FencedStore for SqliteStore {
    type Error = StoreError;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, StoreError> {
        self.try_write(request, now)
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, StoreError> {
        let err = self.err();
        let row: Option<(i64, String, i64)> = self
            .conn
            .query_row(
                "SELECT highest, value, revision FROM fenced WHERE resource = ?1",
                [resource.as_str()],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(&err)?;
        row.map(|(h, value, rev)| {
            Ok(StoredValue {
                highest: Some(generation_from_sql(h)?),
                value: Some(value),
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
        stored_result(&self.conn, resource.as_str(), operation.as_str()).map_err(|e| match e {
            StoreError::Sqlite(e) => StoreError::from_sqlite(e, busy),
            other => other,
        })
    }
}
