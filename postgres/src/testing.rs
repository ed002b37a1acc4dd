//! Throwaway PostgreSQL servers for tests and benchmarks (feature `testing`).
//!
//! [`TestServer::start`] runs `initdb` into a new temporary folder and starts the server on
//! 127.0.0.1 with a free port, its socket in the same folder; dropping it stops the server
//! (`pg_ctl stop -m immediate`) and deletes the folder, also when a test panics. PostgreSQL
//! refuses to run as root, so as root both run as the `postgres` user (`runuser`), which the
//! Debian package creates. If the server cannot start, the error carries the server's own log.
//!
//! [`shared`] is one server per process, for tests that only need a database of their own
//! ([`TestServer::database`]); it is stopped and deleted when the process exits.

// The throwaway servers run as another user and are killed as a crash would kill them, through
// the C library (`geteuid`, `kill`, `atexit`); each call says why it is sound.
#![allow(unsafe_code)]

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where Debian's PostgreSQL 15 keeps its programs; `FENCELAB_PG_BIN` overrides it.
pub const DEFAULT_BIN: &str = "/usr/lib/postgresql/15/bin";

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A program could not be run at all (not installed?).
    #[error(
        "cannot run {program}: {source} (is PostgreSQL 15 installed? scripts/setup.sh installs it)"
    )]
    Spawn {
        /// The program.
        program: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A step failed; `output` holds what it printed and the server's log.
    #[error("{step} failed ({status}):\n{output}")]
    Failed {
        /// The step (`initdb`, `pg_ctl start`).
        step: String,
        /// Its exit status.
        status: String,
        /// Its output, then the server's log.
        output: String,
    },
    /// Preparing the folder failed.
    #[error("cannot prepare the server's folder: {0}")]
    Folder(#[source] std::io::Error),
}

/// How the server runs. Its durability is always PostgreSQL's default (`fsync`,
/// `full_page_writes` and `synchronous_commit` on), because the store refuses a server that can
/// lose an acknowledged commit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    /// Whether PostgreSQL's programs (and so the server) run in a process group of their own,
    /// out of reach of a Ctrl-C at the terminal: for a program that handles Ctrl-C itself and
    /// stops the server on its way out. Off, a Ctrl-C stops a test run's servers with it.
    pub own_process_group: bool,
}

/// A PostgreSQL server in a temporary folder, stopped and deleted on drop.
pub struct TestServer {
    path: PathBuf,
    /// Deleted after the server has stopped.
    folder: Mutex<Option<tempfile::TempDir>>,
    port: Mutex<u16>,
    settings: Settings,
    stopped: Mutex<bool>,
    databases: AtomicUsize,
}

fn bin() -> PathBuf {
    std::env::var_os("FENCELAB_PG_BIN").map_or_else(|| PathBuf::from(DEFAULT_BIN), PathBuf::from)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Runs one of PostgreSQL's programs, as `postgres` when this process is root.
fn pg_command(program: &str, settings: Settings) -> Command {
    let path = bin().join(program);
    let mut command = if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(path);
        command
    } else {
        Command::new(path)
    };
    if settings.own_process_group {
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
    }
    command
}

fn run(step: &str, mut command: Command, log: Option<&Path>) -> Result<Output, StartError> {
    let program = format!("{command:?}");
    let output = command.output().map_err(|source| StartError::Spawn { program, source })?;
    if output.status.success() {
        return Ok(output);
    }
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    if let Some(log) = log {
        text.push_str("\n--- server log ---\n");
        text.push_str(&fs::read_to_string(log).unwrap_or_else(|e| format!("(no log: {e})")));
    }
    Err(StartError::Failed { step: step.into(), status: output.status.to_string(), output: text })
}

/// A port nobody listens on right now. Another process may take it before the server binds
/// it, so starting retries with a new one when the bind fails.
fn free_port() -> Result<u16, StartError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(StartError::Folder)?;
    Ok(listener.local_addr().map_err(StartError::Folder)?.port())
}

impl TestServer {
    /// Starts a server for tests, or panics with its log.
    pub fn start() -> TestServer {
        Self::try_start(Settings::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts a server with `settings`.
    pub fn try_start(settings: Settings) -> Result<TestServer, StartError> {
        let folder = tempfile::Builder::new()
            .prefix("fencelab-pg-")
            .tempdir()
            .map_err(StartError::Folder)?;
        if is_root() {
            let id = |flag: &str| -> Result<u32, StartError> {
                let output = run(
                    "id",
                    {
                        let mut c = Command::new("id");
                        c.args([flag, "postgres"]);
                        c
                    },
                    None,
                )?;
                String::from_utf8_lossy(&output.stdout).trim().parse().map_err(|e| {
                    StartError::Folder(std::io::Error::other(format!("id {flag} postgres: {e}")))
                })
            };
            std::os::unix::fs::chown(folder.path(), Some(id("-u")?), Some(id("-g")?))
                .map_err(StartError::Folder)?;
        }
        let server = TestServer {
            path: folder.path().to_path_buf(),
            folder: Mutex::new(Some(folder)),
            port: Mutex::new(0),
            settings,
            stopped: Mutex::new(true),
            databases: AtomicUsize::new(0),
        };
        let mut initdb = pg_command("initdb", settings);
        initdb.arg("-D").arg(server.data()).args([
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        ]);
        run("initdb", initdb, None)?;
        server.restart()?;
        Ok(server)
    }

    fn folder(&self) -> &Path {
        &self.path
    }

    fn data(&self) -> PathBuf {
        self.folder().join("data")
    }

    /// The server's log file.
    pub fn log_path(&self) -> PathBuf {
        self.folder().join("log")
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        *self.port.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts the server again on its data folder (after [`TestServer::kill_postmaster`]: it
    /// recovers from its write-ahead log), on a new free port if its old one is taken.
    pub fn restart(&self) -> Result<(), StartError> {
        let mut last = None;
        for _ in 0..5 {
            let port = free_port()?;
            let server_options = format!(
                "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200",
                self.folder().display()
            );
            let mut start = pg_command("pg_ctl", self.settings);
            start
                .arg("-D")
                .arg(self.data())
                .arg("-o")
                .arg(server_options)
                .arg("-l")
                .arg(self.log_path())
                .args(["-w", "-t", "60", "start"]);
            match run("pg_ctl start", start, Some(&self.log_path())) {
                Ok(_) => {
                    *self.port.lock().unwrap_or_else(|e| e.into_inner()) = port;
                    *self.stopped.lock().unwrap_or_else(|e| e.into_inner()) = false;
                    return Ok(());
                }
                Err(e) if e.to_string().contains("could not bind") => last = Some(e),
                // A backend killed with its postmaster may still be leaving the old shared
                // memory on a loaded machine; the server refuses to start until it has.
                Err(e) if e.to_string().contains("is still in use") => {
                    last = Some(e);
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("tried at least once"))
    }

    /// The postmaster's process id, from its pid file.
    pub fn postmaster_pid(&self) -> Option<u32> {
        let text = fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// Kills the postmaster with SIGKILL, as a crash would, and waits until it and its
    /// backends have gone (a backend notices its postmaster's death and exits).
    pub fn kill_postmaster(&self) {
        let pid = self.postmaster_pid().expect("the server is running");
        let pid = libc::pid_t::try_from(pid).expect("a process id");
        // SAFETY: sends a signal to the process whose id the server wrote; no memory involved.
        let sent = unsafe { libc::kill(pid, libc::SIGKILL) };
        assert_eq!(sent, 0, "kill -KILL {pid}: {}", std::io::Error::last_os_error());
        // The backends attach the server's shared memory, and a new postmaster refuses to
        // start while any of them is alive or while the old postmaster's process id still
        // exists, so wait for all of them to be gone.
        let postmaster = PathBuf::from(format!("/proc/{pid}"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline && (postmaster.exists() || self.processes_alive()) {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.after_kill(&postmaster);
    }

    /// Ends a kill: a postmaster still there is a zombie (pg_ctl exited long ago, so whatever
    /// adopted it must reap it, and not every container's first process does so promptly), so
    /// its pid file is stale, as after a machine crash, and is removed.
    fn after_kill(&self, postmaster: &Path) {
        if postmaster.exists() {
            let _ = fs::remove_file(self.data().join("postmaster.pid"));
        }
        *self.stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }

    /// Kills every process of the server at once with SIGKILL (the postmaster, the backends, the
    /// WAL writer, the checkpointer), as the kernel's out-of-memory killer or a container's
    /// forced stop would, and waits until they are gone. Nothing gets to flush what it held in
    /// shared memory, so a commit whose write-ahead log was not yet written is lost.
    pub fn crash(&self) {
        assert!(self.processes_alive(), "the server is not running");
        let pid = self.postmaster_pid().expect("the server is running");
        let postmaster = PathBuf::from(format!("/proc/{pid}"));
        let deadline = Instant::now() + Duration::from_secs(10);
        // Again until none is left: the postmaster may have started a process after the list
        // was read.
        loop {
            let pids = self.processes();
            if pids.is_empty() || Instant::now() > deadline {
                break;
            }
            for pid in pids {
                // SAFETY: sends a signal to a process of this server; no memory involved. One
                // that has exited meanwhile gives ESRCH, which is what the signal was for.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.after_kill(&postmaster);
    }

    /// The processes that run from this server's data folder (a zombie has no folder).
    fn processes(&self) -> Vec<libc::pid_t> {
        let data = self.data();
        let Ok(entries) = fs::read_dir("/proc") else { return Vec::new() };
        entries
            .flatten()
            .filter(|entry| fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd == data))
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect()
    }

    /// Whether any process still runs from this server's data folder.
    fn processes_alive(&self) -> bool {
        !self.processes().is_empty()
    }

    /// A configuration for database `dbname` as user `postgres`.
    pub fn config(&self, dbname: &str) -> postgres::Config {
        let mut config = postgres::Config::new();
        config.host("127.0.0.1").port(self.port()).user("postgres").dbname(dbname);
        config
    }

    /// A client of the `postgres` database, for administration.
    pub fn admin(&self) -> postgres::Client {
        self.config("postgres")
            .connect(postgres::NoTls)
            .unwrap_or_else(|e| panic!("connecting to the test server: {e}\n{}", self.log()))
    }

    /// Creates a new, empty database and returns its configuration.
    pub fn database(&self) -> postgres::Config {
        let n = self.databases.fetch_add(1, Ordering::Relaxed);
        let name = format!("test_{n}");
        self.admin()
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("creating database {name}: {e}\n{}", self.log()));
        self.config(&name)
    }

    /// Stops the server (immediately: tests keep nothing) if it runs.
    pub fn stop(&self) {
        let mut stopped = self.stopped.lock().unwrap_or_else(|e| e.into_inner());
        if !*stopped {
            let mut stop = pg_command("pg_ctl", self.settings);
            stop.arg("-D").arg(self.data()).args(["-m", "immediate", "-w", "stop"]);
            // A server that is already gone has nothing to stop; the folder goes either way.
            let _ = stop.output();
            *stopped = true;
        }
    }

    /// Stops the server and deletes its folder.
    fn shut_down(&self) {
        self.stop();
        if let Some(folder) = self.folder.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = folder.close();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.shut_down();
    }
}

static SHARED: OnceLock<TestServer> = OnceLock::new();

extern "C" fn shut_down_shared() {
    if let Some(server) = SHARED.get() {
        server.shut_down();
    }
}

/// The process's shared server, started on first use and stopped and deleted when the process
/// exits (statics are never dropped, so an `atexit` handler does it). Give each test a database
/// of its own ([`TestServer::database`]); tests that stop or kill a server start their own.
pub fn shared() -> &'static TestServer {
    SHARED.get_or_init(|| {
        let server = TestServer::start();
        // SAFETY: registers a plain function with the C library; it runs once, at exit.
        unsafe { libc::atexit(shut_down_shared) };
        server
    })
}
