//! Throwaway etcd servers for tests and benchmarks (feature `testing`).
//!
//! [`EtcdServer::start`] runs etcd 3.4's own binary as a one-member cluster on 127.0.0.1 with
//! free client and peer ports and its data in a new temporary folder, with short heartbeat and
//! election timeouts so it elects itself quickly and can grant one-second leases. It returns once
//! `/health` answers. Dropping it kills the server, waits for it, and deletes the folder, also
//! when a test panics. If the server cannot start, the error carries etcd's own log (its output
//! goes to a file in the folder).

// The throwaway servers are stopped with a signal through the C library.
#![allow(unsafe_code)]

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where Debian's `etcd-server` package installs etcd; `FENCELAB_ETCD_BIN` overrides it.
pub const DEFAULT_BIN: &str = "/usr/bin/etcd";

/// Why a server did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// etcd could not be run at all (not installed?).
    #[error("cannot run {program}: {source} (is etcd installed? scripts/setup.sh installs it)")]
    Spawn {
        /// The program.
        program: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// etcd exited, or did not answer `/health` in time; `output` holds its log.
    #[error("{step} failed ({status}):\n{output}")]
    Failed {
        /// The step (`etcd`, `waiting for /health`).
        step: String,
        /// Its exit status, or what was waited for.
        status: String,
        /// etcd's log.
        output: String,
    },
    /// Preparing the folder or the ports failed.
    #[error("cannot prepare the server's folder: {0}")]
    Folder(#[source] std::io::Error),
}

/// How the server runs.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// etcd's heartbeat interval. etcd's minimum lease TTL is 1.5 election timeouts rounded up
    /// to whole seconds, so short timeouts allow one-second leases.
    pub heartbeat: Duration,
    /// etcd's election timeout (at least five heartbeats).
    pub election: Duration,
    /// How long to wait for `/health` before giving up.
    pub start_timeout: Duration,
}

impl Default for Settings {
    /// 10 ms heartbeats and a 100 ms election timeout: the server leads within a fraction of a
    /// second and grants one-second leases. Fine on loopback, far too short for a real network.
    fn default() -> Self {
        Settings {
            heartbeat: Duration::from_millis(10),
            election: Duration::from_millis(100),
            start_timeout: Duration::from_secs(30),
        }
    }
}

/// An etcd server in a temporary folder, killed and deleted on drop.
pub struct EtcdServer {
    path: PathBuf,
    /// Deleted after the server has stopped.
    folder: Mutex<Option<tempfile::TempDir>>,
    client_port: u16,
    child: Mutex<Option<Child>>,
}

fn bin() -> PathBuf {
    std::env::var_os("FENCELAB_ETCD_BIN").map_or_else(|| PathBuf::from(DEFAULT_BIN), PathBuf::from)
}

/// A port nobody listens on right now. Another process may take it before etcd binds it, so
/// starting retries with new ones when etcd exits.
fn free_port() -> Result<u16, StartError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(StartError::Folder)?;
    Ok(listener.local_addr().map_err(StartError::Folder)?.port())
}

/// Whether `/health` on `port` reports a healthy server (it needs a leader).
fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && answer.contains("\"health\":\"true\"")
}

fn millis(duration: Duration) -> String {
    duration.as_millis().max(1).to_string()
}

impl EtcdServer {
    /// Starts a server with [`Settings::default`].
    pub fn start() -> Result<EtcdServer, StartError> {
        Self::start_with(Settings::default())
    }

    /// Starts a server with `settings`.
    pub fn start_with(settings: Settings) -> Result<EtcdServer, StartError> {
        let folder = tempfile::Builder::new()
            .prefix("fencelab-etcd-")
            .tempdir()
            .map_err(StartError::Folder)?;
        let path = folder.path().to_path_buf();
        let mut last = None;
        for attempt in 0..5 {
            let (client, peer) = (free_port()?, free_port()?);
            let data = path.join(format!("data-{attempt}"));
            let log = path.join("log");
            let log_file = fs::File::create(&log).map_err(StartError::Folder)?;
            let err_file = log_file.try_clone().map_err(StartError::Folder)?;
            let client_url = format!("http://127.0.0.1:{client}");
            let peer_url = format!("http://127.0.0.1:{peer}");
            let mut command = Command::new(bin());
            command
                .arg("--name")
                .arg("fencelab")
                .arg("--data-dir")
                .arg(&data)
                .args(["--listen-client-urls", &client_url])
                .args(["--advertise-client-urls", &client_url])
                .args(["--listen-peer-urls", &peer_url])
                .args(["--initial-advertise-peer-urls", &peer_url])
                .args(["--initial-cluster", &format!("fencelab={peer_url}")])
                .args(["--heartbeat-interval", &millis(settings.heartbeat)])
                .args(["--election-timeout", &millis(settings.election)])
                .stdin(Stdio::null())
                .stdout(log_file)
                .stderr(err_file);
            let child = command
                .spawn()
                .map_err(|source| StartError::Spawn { program: format!("{command:?}"), source })?;
            let server = EtcdServer {
                path: path.clone(),
                folder: Mutex::new(None),
                client_port: client,
                child: Mutex::new(Some(child)),
            };
            match server.wait_healthy(settings.start_timeout) {
                Ok(()) => {
                    *server.folder.lock().unwrap_or_else(|e| e.into_inner()) = Some(folder);
                    return Ok(server);
                }
                // Another process took a port between our check and etcd's bind.
                Err(e) if e.to_string().contains("address already in use") => {
                    drop(server);
                    last = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        Err(last.expect("tried at least once"))
    }

    /// Waits until `/health` answers, or fails with the log if etcd exits or time runs out.
    fn wait_healthy(&self, timeout: Duration) -> Result<(), StartError> {
        let deadline = Instant::now() + timeout;
        loop {
            if healthy(self.client_port) {
                return Ok(());
            }
            let exited = {
                let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
                child.as_mut().and_then(|c| c.try_wait().ok().flatten())
            };
            if let Some(status) = exited {
                return Err(StartError::Failed {
                    step: "etcd".into(),
                    status: status.to_string(),
                    output: self.log(),
                });
            }
            if Instant::now() >= deadline {
                self.kill();
                return Err(StartError::Failed {
                    step: "waiting for /health".into(),
                    status: format!("no healthy answer within {timeout:?}"),
                    output: self.log(),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn folder(&self) -> &Path {
        &self.path
    }

    /// The client URL, `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    /// The client port.
    pub fn port(&self) -> u16 {
        self.client_port
    }

    /// etcd's log file.
    pub fn log_path(&self) -> PathBuf {
        self.folder().join("log")
    }

    /// etcd's log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.log_path()).unwrap_or_else(|e| format!("(no log: {e})"))
    }

    /// etcd's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(Child::id)
    }

    /// Stops the server gracefully (SIGTERM) and waits for it to exit; kills it if it has not
    /// exited within ten seconds. Does nothing if it has stopped already.
    pub fn stop(&self) {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mut process) = child.take() {
            if let Ok(pid) = libc::pid_t::try_from(process.id()) {
                // SAFETY: sends a signal to our own child, which has not been reaped yet, so
                // the process id cannot belong to another process.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && matches!(process.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = process.kill();
            let _ = process.wait();
        }
    }

    /// Kills the server (SIGKILL), as a crash would, and waits for it to exit. Does nothing if
    /// it has stopped already.
    pub fn kill(&self) {
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(mut process) = child.take() {
            // An error means it has exited already; waiting reaps it either way.
            let _ = process.kill();
            let _ = process.wait();
        }
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        self.kill();
        if let Some(folder) = self.folder.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = folder.close();
        }
    }
}
