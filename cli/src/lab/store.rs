//! The lab's stores: the server or file the lab starts ([`Server`]) and each worker's own
//! connection to it ([`Db`]), which writes through the store's fence or, in the unfenced lab,
//! around it.

use fencelab_core::{
    fence::store::StoredValue, FencedStore, ResourceId, Tick, WriteOutcome, WriteRequest,
};
use fencelab_postgres::postgres;
use fencelab_postgres::testing::{Settings, TestServer};
use fencelab_postgres::PgStore;
use fencelab_sqlite::SqliteStore;
use std::path::PathBuf;
use std::str::FromStr;

/// Which database the lab runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// A SQLite file in a temporary folder.
    Sqlite,
    /// A throwaway PostgreSQL 15 server on 127.0.0.1, in a temporary folder.
    Postgres,
}

impl Kind {
    /// The store's name in the history's setup.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sqlite => "sqlite",
            Kind::Postgres => "postgres",
        }
    }
}

/// A running store, with what its workers need to reach it. Dropping it stops the server and
/// deletes its temporary folder.
pub enum Server {
    /// A SQLite file; the folder goes when this is dropped.
    Sqlite {
        /// The temporary folder.
        folder: tempfile::TempDir,
        /// The database file in it.
        path: PathBuf,
    },
    /// A PostgreSQL server in its own temporary folder.
    Postgres(TestServer),
}

impl Server {
    /// Starts the store and creates its tables, so the workers only connect.
    pub fn start(kind: Kind) -> Result<Server, String> {
        let server = match kind {
            Kind::Sqlite => {
                let folder = tempfile::Builder::new()
                    .prefix("fencelab-lab-")
                    .tempdir()
                    .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
                let path = folder.path().join("lab.db");
                Server::Sqlite { folder, path }
            }
            Kind::Postgres => Server::Postgres(
                // Out of reach of a Ctrl-C at the terminal, which the lab handles itself by
                // stopping the server and deleting its folder.
                TestServer::try_start(Settings { own_process_group: true })
                    .map_err(|e| format!("cannot start PostgreSQL: {e}"))?,
            ),
        };
        Db::open(&server.target())?;
        Ok(server)
    }

    /// How a worker reaches the store: `sqlite:PATH` or `postgres:CONNINFO`.
    pub fn target(&self) -> String {
        match self {
            Server::Sqlite { path, .. } => format!("sqlite:{}", path.display()),
            Server::Postgres(server) => format!(
                "postgres:host=127.0.0.1 port={} user=postgres dbname=postgres",
                server.port()
            ),
        }
    }

    /// The temporary folder the store lives in.
    pub fn folder(&self) -> PathBuf {
        match self {
            Server::Sqlite { folder, .. } => folder.path().to_path_buf(),
            Server::Postgres(server) => {
                server.log_path().parent().map(PathBuf::from).unwrap_or_default()
            }
        }
    }

    /// What the store guarantees before it acknowledges a write, in the store crate's words.
    pub fn durability(&self) -> &'static str {
        match self {
            Server::Sqlite { .. } => fencelab_sqlite::DURABILITY,
            Server::Postgres(_) => fencelab_postgres::DURABILITY,
        }
    }

    /// A line saying what runs where, with the server's process id.
    pub fn describe(&self) -> String {
        match self {
            Server::Sqlite { path, .. } => format!("SQLite file {}", path.display()),
            Server::Postgres(server) => format!(
                "PostgreSQL on 127.0.0.1:{} (postmaster pid {}) in {}",
                server.port(),
                server.postmaster_pid().map_or_else(|| "unknown".into(), |p| p.to_string()),
                self.folder().display()
            ),
        }
    }
}

/// A write that failed: the store's error, and whether the write may have been applied.
#[derive(Debug)]
pub struct WriteFailed {
    /// The store's error.
    pub error: String,
    /// Whether the error leaves the write's outcome unknown (the connection broke, perhaps
    /// during the commit), rather than certainly not applied.
    pub unknown: bool,
}

/// One worker's connection to the store.
pub enum Db {
    /// A connection to the SQLite file.
    Sqlite(SqliteStore),
    /// A connection to the PostgreSQL server.
    Postgres(Box<PgStore>),
}

impl Db {
    /// Connects to a [`Server::target`], creating the tables if they are missing.
    pub fn open(target: &str) -> Result<Db, String> {
        if let Some(path) = target.strip_prefix("sqlite:") {
            SqliteStore::open(path, fencelab_sqlite::Options::default())
                .map(Db::Sqlite)
                .map_err(|e| format!("SQLite {path}: {e}"))
        } else if let Some(conninfo) = target.strip_prefix("postgres:") {
            let config = postgres::Config::from_str(conninfo)
                .map_err(|e| format!("PostgreSQL {conninfo:?}: {e}"))?;
            PgStore::connect(&config, fencelab_postgres::Options::default())
                .map(|store| Db::Postgres(Box::new(store)))
                .map_err(|e| format!("PostgreSQL: {e}"))
        } else {
            Err(format!("{target:?} names no store (sqlite:PATH or postgres:CONNINFO)"))
        }
    }

    /// Writes `request`: through the fence, or around it with the store's unfenced write.
    pub fn write(
        &mut self,
        request: &WriteRequest,
        fenced: bool,
        now: Tick,
    ) -> Result<WriteOutcome, WriteFailed> {
        let known = |e: fencelab_sqlite::StoreError| (e.to_string(), false);
        // Only a broken connection leaves the outcome open: it may have broken during the
        // commit. Every other error of the store's is raised before anything is committed.
        let pg = |e: fencelab_postgres::StoreError| {
            let unknown = matches!(e, fencelab_postgres::StoreError::ConnectionLost { .. });
            (e.to_string(), unknown)
        };
        let outcome = match (self, fenced) {
            (Db::Sqlite(store), true) => store.write(request, now).map_err(known),
            (Db::Sqlite(store), false) => store.write_unfenced(request).map_err(known),
            (Db::Postgres(store), true) => store.write(request, now).map_err(pg),
            (Db::Postgres(store), false) => store.write_unfenced(request).map_err(pg),
        };
        outcome.map_err(|(e, unknown)| WriteFailed {
            error: format!("the store failed: {e}"),
            unknown,
        })
    }

    /// What the store holds for `resource`.
    pub fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, String> {
        let value = match self {
            Db::Sqlite(store) => store.read(resource).map_err(|e| e.to_string()),
            Db::Postgres(store) => store.read(resource).map_err(|e| e.to_string()),
        };
        value.map_err(|e| format!("the store failed: {e}"))
    }
}
