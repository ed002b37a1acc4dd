//! `fencelab lab`: the paused-worker story with real processes, a real pause and a real
//! database, recorded as a history and judged by the checker.
//!
//! The lab starts a store (a SQLite file in a temporary folder, or a throwaway PostgreSQL
//! server), serves the core's [`LeaseAuthority`] (one tick is a millisecond since the workers
//! started) or, with `--authority etcd`, starts a throwaway etcd that the workers ask
//! themselves ([`etcd`]), and runs two or more workers, each a child process of the same binary (the hidden
//! `fencelab lab-worker`). Every worker runs the same script with the same bug: acquire the
//! lease on `ledger`, write, renew, check the lease against its own clock, then write again
//! without checking, renew, release. The lab freezes the first worker, A, with `SIGSTOP`
//! exactly between its check and its write, for longer than its lease; meanwhile the others take
//! the lease in turn (each with a newer generation) and write. Then the lab resumes A with
//! `SIGCONT` and lets it write: with its old token. Fenced, the database refuses that write as
//! stale; unfenced (the store's deliberately unconditional write), it lands over the newer
//! owner's value, and the audit says so.
//!
//! # The protocol between the lab and a worker
//!
//! One JSON object per line ([`protocol`]): the worker writes [`ToLab`] lines on its standard
//! output, the lab writes [`ToWorker`] lines on the worker's standard input. Standard error is
//! the worker's own, for diagnostics.
//!
//! 1. The worker connects to the store, reports `ready` and waits for `"start"`. The lab starts
//!    A once every worker is ready, so no worker is still connecting when A is frozen.
//! 2. Every question to the built-in authority is an `{"ask": ...}` line (`"acquire"`,
//!    `{"renew": {"generation": G}}`, `{"release": {"generation": G}}`), answered by one
//!    `{"answer": ...}` line (`granted` with the generation and the tick the lease ends, `busy`
//!    with the holder and how long to wait, `refused` with the reason, `released`). The lab
//!    records the authority's decisions itself, when it makes them.
//! 3. Everything else the worker does it reports as `{"report": {"wall_ns": T, "what": ...}}`,
//!    with its own clock's time: `checked` (its lease check), `sending` and `wrote` (a write and
//!    the store's answer, with the highest generation before and after), `finished`, or `failed`
//!    with the error after which it cannot go on. A worker served by an authority the lab does
//!    not run reports that authority's decisions too (`granted`, `busy`, `renewed`,
//!    `renew_failed`, `released`).
//! 4. After a `checked` report that believes the lease valid, the worker waits for one
//!    `"proceed"` line before it writes. This is where A is frozen: the lab stops it, waits,
//!    resumes it, and only then sends `"proceed"`, so the pause always falls between the check
//!    and the write.
//! 5. The worker exits after `finished` or `failed`, and when its standard input closes. The
//!    kernel kills it if the lab dies (`PR_SET_PDEATHSIG`).
//!
//! # Cleaning up
//!
//! Workers run in their own process group, so a Ctrl-C at the terminal reaches the lab alone,
//! which then kills and reaps every worker, stops the server and deletes the temporary folders,
//! as it does when it ends or fails. A failure (a worker, the store or the server dies) or a
//! Ctrl-C still writes the history recorded so far, with `setup.incomplete` saying why.

// The lab freezes and resumes its workers with signals through the C library.
#![allow(unsafe_code)]

pub mod authority;
pub mod etcd;
pub mod protocol;
pub mod store;
pub mod worker;

use crate::{say, BadInput};
use fencelab_core::{
    fence::authority::LeaseAuthority, fence::authority::LeaseError, history::event::TokenKind,
    history::Authority, history::Decisions, history::HistoryError, history::Setup, Event, History,
    ResourceId, Tick, WorkerId, WriteOutcome,
};
use fencelab_core::{format::model::Enforcement, format::model::PauseReason};
use fencelab_core::{
    history::builder::Beliefs, history::builder::HistoryBuilder, history::builder::Sent,
    history::builder::WriteAnswer,
};
use fencelab_core::{history::PathSetup, history::StoreSetup};
use fencelab_etcd::testing::EtcdServer;
use protocol::{Answer, Ask, Report, ToLab, ToWorker};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::num::NonZeroU64;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// The leased resource.
pub const RESOURCE: &str = "ledger";
/// The store's one write path, which writes the data of the same name.
const PRIMARY: &str = "primary";
/// The exit code when the lab itself fails: a store, a server or a worker failed or could not
/// start.
pub const LAB_FAILED: u8 = 4;
/// The exit code after a Ctrl-C (128 + SIGINT, as shells report it).
pub const INTERRUPTED: u8 = 130;
/// How long the lab waits without hearing from any worker before it gives up, beyond the pause.
const STALL: Duration = Duration::from_secs(20);
/// The shortest lease the lab accepts, in milliseconds. A must connect, write and renew within
/// one lease before it can be frozen; on a loaded machine that takes tens of milliseconds.
pub const MIN_TTL_MS: u64 = 100;

pub const LAB_EXIT_CODES: &str = "\
Exit codes:
  0    the recorded history audits clean (as `fencelab audit` on it)
  1    the audit shows a certain finding (the unfenced lab: the stale write landed)
  2    bad options (a TTL under 100 ms, a pause not longer than the TTL, fewer than 2
       workers, ...)
  3    the audit is inconclusive: every finding depends on an outcome nobody learned
  4    the lab failed: the store, its server or a worker failed or could not start; the
       history recorded so far is written, marked incomplete
  130  interrupted by Ctrl-C; every worker and server is stopped, the temporary folders are
       deleted and the history so far is written, marked incomplete";

/// Which lease authority the workers ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthorityKind {
    /// The core's `LeaseAuthority`, served by the lab over the workers' pipes.
    Builtin,
    /// A throwaway etcd 3.4 server that the workers ask themselves (`fencelab-etcd`); its
    /// leases count whole seconds.
    Etcd,
}

impl AuthorityKind {
    fn name(self) -> &'static str {
        match self {
            AuthorityKind::Builtin => "builtin",
            AuthorityKind::Etcd => "etcd",
        }
    }
}

/// `fencelab lab`'s options.
#[derive(Debug, Clone, clap::Args)]
pub struct LabArgs {
    /// The lease authority.
    #[arg(long, value_enum, default_value_t = AuthorityKind::Builtin)]
    pub authority: AuthorityKind,
    /// The database the workers write to.
    #[arg(long, value_enum, default_value_t = store::Kind::Sqlite)]
    pub store: store::Kind,
    /// Write through the store's fence (the default): A's late write is refused.
    #[arg(long, conflicts_with = "unfenced")]
    pub fenced: bool,
    /// Write around the fence, unconditionally: A's late write lands.
    #[arg(long)]
    pub unfenced: bool,
    /// How many worker processes (A is frozen; the others take the lease in turn).
    #[arg(long, value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u8).range(2..=26))]
    pub workers: u8,
    /// How long a lease lasts, in milliseconds, at least 100 [default: 300; with etcd 1000, as
    /// etcd's leases count whole seconds].
    #[arg(long, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub ttl_ms: Option<u64>,
    /// How long A stays frozen, in milliseconds; must be longer than the TTL [default: three
    /// TTLs].
    #[arg(long, value_name = "MS",
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub pause_ms: Option<u64>,
    /// Where to write the history (JSON Lines); by default lab-STORE-MODE.jsonl here, or
    /// lab-STORE-etcd-MODE.jsonl with --authority etcd.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl LabArgs {
    /// The lease TTL in milliseconds.
    fn ttl(&self) -> u64 {
        let default = match self.authority {
            AuthorityKind::Builtin => 300,
            AuthorityKind::Etcd => 1000,
        };
        self.ttl_ms.unwrap_or(default)
    }

    /// How long A stays frozen, in milliseconds.
    fn pause(&self) -> u64 {
        self.pause_ms.unwrap_or(3 * self.ttl())
    }

    fn mode(&self) -> &'static str {
        if self.unfenced {
            "unfenced"
        } else {
            "fenced"
        }
    }
}

/// Why a lab run failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The store or its server could not start.
    #[error("the store could not start: {0}")]
    Store(String),
    /// A worker process could not be started.
    #[error("cannot start worker {name}: {source}")]
    Spawn {
        /// The worker.
        name: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A worker reported a failure it cannot go on after.
    #[error("worker {name} failed: {error}")]
    Worker {
        /// The worker.
        name: String,
        /// What it reported.
        error: String,
    },
    /// A worker exited before it finished.
    #[error("worker {name} exited before it finished ({status})")]
    WorkerDied {
        /// The worker.
        name: String,
        /// How it ended.
        status: String,
    },
    /// A worker wrote a line that is not the protocol's.
    #[error("worker {name} sent a line the lab does not understand ({problem}): {line:?}")]
    Protocol {
        /// The worker.
        name: String,
        /// The line.
        line: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The pipe to a worker or a signal to it failed.
    #[error("cannot {what} worker {name}: {source}")]
    Io {
        /// What the lab tried.
        what: &'static str,
        /// The worker.
        name: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The built-in authority failed for a reason other than a held lease.
    #[error("the lease authority failed: {0}")]
    Authority(#[from] LeaseError),
    /// A's lease ran out before the lab could freeze it, so there is no stale write to show.
    #[error("A's lease ran out before A could be frozen between its check and its write (it {how}), so there is no stale write to show; run again with a longer --ttl-ms than {ttl_ms}")]
    LeaseLostBeforeFreeze {
        /// What A learned: that its renewal was refused, or that its check failed.
        how: &'static str,
        /// The TTL asked for.
        ttl_ms: u64,
    },
    /// No worker said anything for too long.
    #[error("no worker reported anything for {0:?}; the lab gave up")]
    Stalled(Duration),
    /// Ctrl-C.
    #[error("interrupted by Ctrl-C")]
    Interrupted,
    /// The recorded history does not hold together: a bug in the lab.
    #[error("the recorded history does not hold together: {0}")]
    Invalid(#[from] HistoryError),
}

impl LabError {
    fn exit_code(&self) -> u8 {
        match self {
            LabError::Interrupted => INTERRUPTED,
            _ => LAB_FAILED,
        }
    }
}

/// What reaches the lab's loop.
enum Input {
    /// A line from worker `.0`.
    Line(usize, String),
    /// Worker `.0` closed its standard output.
    Closed(usize),
    /// Ctrl-C.
    Interrupted,
}

/// Runs the lab, prints its timeline and audits its history.
pub fn lab(args: LabArgs) -> Result<ExitCode, BadInput> {
    if args.ttl() < MIN_TTL_MS {
        return Err(BadInput(format!(
            "--ttl-ms ({}) must be at least {MIN_TTL_MS}: A must write and renew within one lease before it can be frozen, and a shorter lease can run out first on a loaded machine",
            args.ttl()
        )));
    }
    if args.pause() <= args.ttl() {
        return Err(BadInput(format!(
            "--pause-ms ({}) must be longer than --ttl-ms ({}): A must stay frozen past the end of its lease, or nobody can take the lease over and there is no stale write to show",
            args.pause(), args.ttl()
        )));
    }
    if args.authority == AuthorityKind::Etcd && !args.ttl().is_multiple_of(1000) {
        return Err(BadInput(format!(
            "--ttl-ms ({}) must be a whole number of seconds with --authority etcd: etcd's leases count whole seconds",
            args.ttl()
        )));
    }
    let out = args.out.clone().unwrap_or_else(|| default_out(&args));
    // Created now, so a history that cannot be written is refused before anything starts.
    let mut file = std::fs::File::create(&out)
        .map_err(|e| BadInput(format!("cannot write the history to {}: {e}", out.display())))?;
    let (tx, rx) = mpsc::channel();
    let interrupt = tx.clone();
    ctrlc::set_handler(move || {
        let _ = interrupt.send(Input::Interrupted);
    })
    .map_err(|e| BadInput(format!("cannot handle Ctrl-C: {e}")))?;
    say!(
        "fencelab lab: {} authority, {} store, {}, {} workers, lease TTL {} ms, pause {} ms",
        args.authority.name(),
        args.store.name(),
        args.mode(),
        args.workers,
        args.ttl(),
        args.pause()
    );
    let mut lab = Lab::new(&args);
    // Workers are killed before the server stops, so none of them sees it go.
    // A Ctrl-C while a server starts is acted on once the start is over (the servers run out
    // of the terminal's reach), whatever became of it; before the workers, only it can be
    // waiting.
    let interrupted = || matches!(rx.try_recv(), Ok(Input::Interrupted));
    let started = match store::Server::start(args.store).map_err(LabError::Store) {
        _ if interrupted() => Err(LabError::Interrupted),
        started => started,
    };
    let result = started.and_then(|server| {
        say!("store: {}", server.describe());
        if args.unfenced {
            say!("durability: not relied on: --unfenced writes around the store's fence");
        } else {
            say!("durability: {}", server.durability());
        }
        say!("temporary folder: {}", server.folder().display());
        let etcd = match args.authority {
            AuthorityKind::Builtin => None,
            AuthorityKind::Etcd => match EtcdServer::start() {
                _ if interrupted() => return Err(LabError::Interrupted),
                Ok(etcd) => Some(etcd),
                Err(e) => return Err(LabError::Store(format!("etcd: {e}"))),
            },
        };
        if let Some(etcd) = &etcd {
            let folder = etcd.log_path().parent().map(PathBuf::from).unwrap_or_default();
            let pid = etcd.pid().map_or_else(|| "unknown".into(), |p| p.to_string());
            say!("authority: etcd at {} (pid {pid})", etcd.endpoint());
            say!("temporary folder: {}", folder.display());
        }
        let endpoint = etcd.as_ref().map(EtcdServer::endpoint);
        let result =
            lab.spawn(&server.target(), endpoint.as_deref(), &tx).and_then(|()| lab.run(&rx));
        lab.stop_workers();
        drop(etcd);
        drop(server);
        result
    });
    lab.stop_workers();
    let result = result.and_then(|()| Ok(lab.recorder.history(None).validate()?));
    let history = lab.recorder.history(result.as_ref().err().map(ToString::to_string));
    if let Err(e) = file.write_all(history.to_jsonl().as_bytes()) {
        eprintln!("error: cannot write the history to {}: {e}", out.display());
        return Ok(ExitCode::from(LAB_FAILED));
    }
    if let Err(error) = result {
        eprintln!("error: {error}");
        say!(
            "history (incomplete): {} ({} events up to the failure)",
            out.display(),
            history.entries.len()
        );
        return Ok(ExitCode::from(error.exit_code()));
    }
    lab.print_timeline(&history);
    say!("history: {} ({} events)", out.display(), history.entries.len());
    say!("audit (as `fencelab audit {}`):", out.display());
    let code = crate::audit::audit(
        &[out.display().to_string()],
        false,
        None,
        crate::import::Format::default(),
        &crate::import::Reading::default(),
    )?;
    say!(
        "to see it: open the page, choose \"Open a history\" (beside the story picker) and pick {}, or drop the file on the page",
        out.display()
    );
    Ok(code)
}

/// The history's default file: `lab-STORE-MODE.jsonl`, with the authority before the mode
/// unless it is the built-in one, so runs against different authorities keep their own files.
fn default_out(args: &LabArgs) -> PathBuf {
    let authority = match args.authority {
        AuthorityKind::Builtin => String::new(),
        other => format!("-{}", other.name()),
    };
    PathBuf::from(format!("lab-{}{authority}-{}.jsonl", args.store.name(), args.mode()))
}

/// One worker process.
struct Worker {
    name: String,
    id: WorkerId,
    child: Child,
    stdin: ChildStdin,
    ready: bool,
    finished: bool,
}

impl Worker {
    fn pid(&self) -> libc::pid_t {
        libc::pid_t::try_from(self.child.id()).unwrap_or(libc::pid_t::MAX)
    }

    fn signal(&self, signal: libc::c_int, what: &'static str) -> Result<(), LabError> {
        // SAFETY: sends a signal to our own child, which has not been reaped (we hold it);
        // no memory is involved.
        if unsafe { libc::kill(self.pid(), signal) } == 0 {
            Ok(())
        } else {
            let source = std::io::Error::last_os_error();
            Err(LabError::Io { what, name: self.name.clone(), source })
        }
    }

    fn send(&mut self, message: &ToWorker) -> Result<(), LabError> {
        protocol::send(&mut self.stdin, message).map_err(|source| LabError::Io {
            what: "write to",
            name: self.name.clone(),
            source,
        })
    }

    /// Kills (a frozen worker too: SIGKILL needs no SIGCONT) and reaps it.
    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// When A was frozen and resumed.
#[derive(Debug, Clone, Copy)]
struct Freeze {
    stopped: Instant,
    resumed: Option<Instant>,
}

/// The lab's state while it runs.
struct Lab {
    args: LabArgs,
    start_ns: u64,
    authority: LeaseAuthority,
    resource: ResourceId,
    recorder: Recorder,
    workers: Vec<Worker>,
    /// The next worker to start after A is frozen.
    next: usize,
    freeze: Option<Freeze>,
}

impl Lab {
    fn new(args: &LabArgs) -> Lab {
        let start_ns = protocol::wall_ns();
        let ttl = NonZeroU64::new(args.ttl()).unwrap_or(NonZeroU64::MIN);
        let enforcement = if args.unfenced { Enforcement::Unfenced } else { Enforcement::Fenced };
        let names: Vec<String> =
            (0..args.workers).map(|i| char::from(b'A' + i).to_string()).collect();
        let store = StoreSetup {
            name: args.store.name().into(),
            critical: true,
            paths: vec![PathSetup { name: PRIMARY.into(), data: PRIMARY.into(), enforcement }],
        };
        let setup = Setup {
            workers: names,
            resources: vec![RESOURCE.into()],
            stores: vec![store],
            gateway: None,
            incomplete: None,
            // The lab's authority (built in, or etcd through its client) reports every grant.
            authority: Authority::Recorded,
            // The lab's stores answer in its own process, which records each decision as made.
            decisions: Decisions::Exact,
        };
        Lab {
            args: args.clone(),
            start_ns,
            authority: LeaseAuthority::new(ttl),
            // The name is a valid id, so this never falls back.
            resource: lab_resource(),
            recorder: Recorder::new(start_ns, setup),
            workers: Vec::new(),
            next: 1,
            freeze: None,
        }
    }

    /// Starts every worker process; each waits for `start`.
    fn spawn(
        &mut self,
        target: &str,
        etcd: Option<&str>,
        tx: &Sender<Input>,
    ) -> Result<(), LabError> {
        // Tick 0 is now, once the store is ready, so the timeline leaves its start-up out.
        self.start_ns = protocol::wall_ns();
        self.recorder.start_ns = self.start_ns;
        let exe = std::env::current_exe()
            .map_err(|source| LabError::Spawn { name: "A".into(), source })?;
        for (index, name) in self.recorder.builder.setup().workers.clone().into_iter().enumerate() {
            let mut command = Command::new(&exe);
            command
                .arg("lab-worker")
                .args(["--name", &name, "--store", target])
                .args(["--start-ns", &self.start_ns.to_string()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                // Its own process group: a Ctrl-C at the terminal reaches the lab only.
                .process_group(0);
            if self.args.unfenced {
                command.arg("--unfenced");
            }
            if let Some(endpoint) = etcd {
                command.args(["--etcd", endpoint, "--ttl-ms", &self.args.ttl().to_string()]);
            }
            let mut child =
                command.spawn().map_err(|source| LabError::Spawn { name: name.clone(), source })?;
            let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                let _ = child.kill();
                let _ = child.wait();
                let source = std::io::Error::other("no pipes");
                return Err(LabError::Spawn { name, source });
            };
            let id = WorkerId::new(name.as_str()).map_err(|e| LabError::Spawn {
                name: name.clone(),
                source: std::io::Error::other(e.to_string()),
            })?;
            say!("worker {name}: pid {}", child.id());
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(Input::Line(index, line)).is_err() {
                        return;
                    }
                }
                let _ = tx.send(Input::Closed(index));
            });
            self.workers.push(Worker { name, id, child, stdin, ready: false, finished: false });
        }
        Ok(())
    }

    fn stop_workers(&mut self) {
        for worker in &mut self.workers {
            worker.stop();
        }
    }

    fn now_ns(&self) -> u64 {
        protocol::wall_ns()
    }

    fn tick(&self, wall_ns: u64) -> Tick {
        protocol::tick_at(self.start_ns, wall_ns)
    }

    /// The loop: answers the workers, records what they report, freezes and resumes A, until
    /// every worker has finished.
    fn run(&mut self, rx: &Receiver<Input>) -> Result<(), LabError> {
        let mut heard = Instant::now();
        let stall = STALL + Duration::from_millis(self.args.pause());
        while !self.workers.iter().all(|w| w.finished) {
            match rx.recv_timeout(self.wait()) {
                Ok(Input::Line(index, line)) => {
                    heard = Instant::now();
                    self.handle(index, &line)?;
                }
                Ok(Input::Closed(index)) => {
                    let worker = &mut self.workers[index];
                    if !worker.finished {
                        let status =
                            worker.child.wait().map_or_else(|e| e.to_string(), |s| s.to_string());
                        return Err(LabError::WorkerDied { name: worker.name.clone(), status });
                    }
                }
                Ok(Input::Interrupted) => return Err(LabError::Interrupted),
                Err(RecvTimeoutError::Timeout) => {
                    if heard.elapsed() > stall {
                        return Err(LabError::Stalled(stall));
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Err(LabError::Stalled(stall)),
            }
            let now = self.now_ns();
            self.recorder.expire(now);
            self.resume_if_due()?;
        }
        Ok(())
    }

    /// How long the loop may wait for a line: until the next lease ends or A's pause is over.
    fn wait(&self) -> Duration {
        let mut wait = Duration::from_millis(100);
        if let Some(until) = self.recorder.lease_ends() {
            let now = self.tick(self.now_ns());
            wait = wait.min(Duration::from_millis(until.0.saturating_sub(now.0).max(1)));
        }
        if let Some(Freeze { stopped, resumed: None }) = self.freeze {
            let left = Duration::from_millis(self.args.pause()).saturating_sub(stopped.elapsed());
            wait = wait.min(left.max(Duration::from_millis(1)));
        }
        wait
    }

    fn handle(&mut self, index: usize, line: &str) -> Result<(), LabError> {
        let message: ToLab = serde_json::from_str(line).map_err(|e| LabError::Protocol {
            name: self.workers[index].name.clone(),
            line: line.into(),
            problem: e.to_string(),
        })?;
        match message {
            ToLab::Ask(ask) => self.answer(index, ask),
            ToLab::Report { wall_ns, what } => self.report(index, wall_ns, what),
        }
    }

    /// The built-in authority decides, the history records the decision, the worker hears it.
    fn answer(&mut self, index: usize, ask: Ask) -> Result<(), LabError> {
        let now_ns = self.now_ns();
        let now = self.tick(now_ns);
        self.recorder.expire(now_ns);
        let worker = self.workers[index].id.clone();
        let (answer, report) = match ask {
            Ask::Acquire => match self.authority.acquire(&self.resource, &worker, now) {
                Ok(lease) => {
                    let (generation, valid_until) = (lease.generation, lease.valid_until);
                    (
                        Answer::Granted { generation, valid_until },
                        Some(Report::Granted { generation, valid_until }),
                    )
                }
                Err(LeaseError::Held { holder, valid_until: until, .. }) => {
                    let holder = holder.to_string();
                    let retry_in_ms = until.0.saturating_sub(now.0).max(1);
                    let valid_until = Some(until);
                    let report = Some(Report::Busy { holder: holder.clone(), valid_until });
                    (Answer::Busy { holder, valid_until: until, retry_in_ms }, report)
                }
                Err(error) => return Err(error.into()),
            },
            Ask::Renew { generation } => {
                match self.authority.renew(&self.resource, &worker, generation, now) {
                    Ok(lease) => {
                        let valid_until = lease.valid_until;
                        (
                            Answer::Granted { generation, valid_until },
                            Some(Report::Renewed { generation, valid_until }),
                        )
                    }
                    Err(error) => {
                        let reason = error.to_string();
                        (
                            Answer::Refused { reason: reason.clone() },
                            Some(Report::RenewFailed { reason }),
                        )
                    }
                }
            }
            Ask::Release { generation } => {
                match self.authority.release(&self.resource, &worker, generation) {
                    Ok(_) => (Answer::Released, Some(Report::Released { generation })),
                    // A release the authority refuses changes nothing, so nothing is recorded.
                    Err(error) => (Answer::Refused { reason: error.to_string() }, None),
                }
            }
        };
        if let Some(report) = report {
            self.recorder.report(&worker, now_ns, report);
        }
        self.workers[index].send(&ToWorker::Answer(answer))
    }

    fn report(&mut self, index: usize, wall_ns: u64, what: Report) -> Result<(), LabError> {
        let name = self.workers[index].name.clone();
        match &what {
            Report::Failed { error } => {
                return Err(LabError::Worker { name, error: error.clone() });
            }
            // A stopped before it was frozen: nothing else would start the others.
            Report::Finished { stopped: true } if index == 0 && self.freeze.is_none() => {
                self.recorder.report(&self.workers[index].id, wall_ns, what);
                let how = "was refused its renewal";
                return Err(LabError::LeaseLostBeforeFreeze { how, ttl_ms: self.args.ttl() });
            }
            Report::Finished { .. } => {
                self.workers[index].finished = true;
            }
            Report::Ready => {
                self.workers[index].ready = true;
                if self.workers.iter().all(|w| w.ready) {
                    self.workers[0].send(&ToWorker::Start)?;
                }
                return Ok(());
            }
            _ => {}
        }
        let checked = match &what {
            Report::Checked { believes_valid, .. } => Some(*believes_valid),
            _ => None,
        };
        let finished = matches!(what, Report::Finished { .. });
        self.recorder.report(&self.workers[index].id, wall_ns, what);
        match checked {
            // A is frozen between its check and its write, then the others go.
            Some(true) if index == 0 && self.freeze.is_none() => {
                self.freeze_a()?;
                self.start_next()?;
            }
            Some(true) => self.workers[index].send(&ToWorker::Proceed)?,
            // A found its lease over already (a very slow machine): nothing to freeze.
            Some(false) if index == 0 => {
                let how = "found it over when it checked";
                return Err(LabError::LeaseLostBeforeFreeze { how, ttl_ms: self.args.ttl() });
            }
            _ => {}
        }
        if finished && index > 0 {
            self.start_next()?;
        }
        Ok(())
    }

    fn start_next(&mut self) -> Result<(), LabError> {
        if let Some(worker) = self.workers.get_mut(self.next) {
            self.next += 1;
            worker.send(&ToWorker::Start)?;
        }
        Ok(())
    }

    fn freeze_a(&mut self) -> Result<(), LabError> {
        let a = &self.workers[0];
        a.signal(libc::SIGSTOP, "stop")?;
        let stopped = Instant::now();
        let now_ns = self.now_ns();
        say!("froze A (pid {}) with SIGSTOP at t={} ms", a.pid(), self.tick(now_ns).0);
        self.freeze = Some(Freeze { stopped, resumed: None });
        let id = a.id.clone();
        self.recorder.paused(&id, now_ns, self.args.pause());
        Ok(())
    }

    /// Resumes A once its pause is over and every other worker has finished, so its write is
    /// the one after theirs, then lets it write.
    fn resume_if_due(&mut self) -> Result<(), LabError> {
        let Some(Freeze { stopped, resumed: None }) = self.freeze else { return Ok(()) };
        let others_done = self.workers.iter().skip(1).all(|w| w.finished);
        if !others_done || stopped.elapsed() < Duration::from_millis(self.args.pause()) {
            return Ok(());
        }
        self.workers[0].signal(libc::SIGCONT, "resume")?;
        let resumed = Instant::now();
        let now_ns = self.now_ns();
        self.freeze = Some(Freeze { stopped, resumed: Some(resumed) });
        say!(
            "resumed A with SIGCONT at t={} ms, after {} ms frozen",
            self.tick(now_ns).0,
            (resumed - stopped).as_millis()
        );
        let id = self.workers[0].id.clone();
        self.recorder.resumed(&id, now_ns);
        self.workers[0].send(&ToWorker::Proceed)
    }

    /// The story in a few lines and its figures: the pause, the lease TTL, and the time from
    /// A's resumption to the store's answer to its stale write.
    fn print_timeline(&self, history: &History) {
        say!("\ntimeline (t = milliseconds since the workers started):");
        let mut resumed_ns = None;
        let mut late = None;
        for entry in &history.entries {
            let line = match &entry.event {
                Event::LeaseGranted { worker, generation, valid_until, .. } => {
                    format!(
                        "{worker} acquires the lease: generation {generation}, valid until t={}",
                        valid_until.0
                    )
                }
                Event::LeaseBusy { worker, holder, valid_until, .. } => {
                    format!(
                        "{worker} asks for the lease: {holder} holds it until t={}",
                        valid_until.0
                    )
                }
                Event::Renewed { worker, generation, valid_until, .. } => {
                    format!("{worker} renews generation {generation} until t={}", valid_until.0)
                }
                Event::LeaseExpired { worker, generation, .. } => {
                    format!("{worker}'s lease (generation {generation}) expires")
                }
                Event::LeaseChecked { worker, valid_until, .. } => {
                    format!(
                        "{worker} checks its lease: valid until t={}, so it goes on to write",
                        valid_until.0
                    )
                }
                Event::Paused { worker, .. } => {
                    format!("{worker} is frozen with SIGSTOP, between its check and its write")
                }
                Event::Resumed { worker, believes, current, .. } => {
                    resumed_ns = entry.wall_ns;
                    format!(
                        "{worker} resumes (SIGCONT), still believing it holds generation {}; the newest is {}",
                        believes.map_or_else(|| "none".into(), |g| g.to_string()),
                        current.map_or_else(|| "none".into(), |g| g.to_string())
                    )
                }
                Event::WriteArrived { worker, request, outcome, .. } => {
                    if resumed_ns.is_some() && worker == "A" {
                        late = Some((entry.wall_ns, outcome.clone()));
                    }
                    let what = match outcome {
                        WriteOutcome::Applied(_) => "applied".to_string(),
                        WriteOutcome::Rejected(rejection) => format!("REFUSED ({rejection})"),
                        WriteOutcome::Replayed(_) => "answered from the replay record".into(),
                    };
                    format!("{worker}'s write under generation {}: {what}", request.generation)
                }
                Event::RenewFailed { worker, reason, .. } => {
                    format!("{worker} tries to renew and is refused ({reason}); it stops")
                }
                Event::Released { worker, generation, .. } => {
                    format!("{worker} releases generation {generation}")
                }
                _ => continue,
            };
            say!("  t={:>6}  {line}", entry.at.0);
        }
        let store = self.args.store.name();
        say!("\nfigures:");
        say!("  lease TTL            {} ms", self.args.ttl());
        if let Some(Freeze { stopped, resumed: Some(resumed) }) = self.freeze {
            let pause = resumed - stopped;
            say!("  pause (SIGSTOP)      {:.1} ms (asked for {} ms)", ms(pause), self.args.pause());
        }
        if let (Some(resumed), Some((Some(answered), outcome))) = (resumed_ns, late) {
            let gap = Duration::from_nanos(answered.saturating_sub(resumed));
            let what = match outcome {
                WriteOutcome::Applied(_) => format!("the stale write landed in {store}"),
                _ => format!("{store} refused the stale write"),
            };
            say!("  resume to answer     {:.1} ms ({what})", ms(gap));
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The lab's resource as an id.
fn lab_resource() -> ResourceId {
    // The name is a valid id, so this never falls back.
    ResourceId::new(RESOURCE).unwrap_or_else(|_| unreachable!())
}

/// Turns what the authority decided and the workers reported into the history's entries, in
/// the order the lab learns them, each at its tick (never before the previous entry's), through
/// the core's [`HistoryBuilder`], which also says what a frozen worker believes.
struct Recorder {
    start_ns: u64,
    builder: HistoryBuilder,
    /// Each worker's write on its way: its message.
    sent: BTreeMap<WorkerId, u64>,
    /// The one resource the lab's workers share.
    resource: ResourceId,
}

impl Recorder {
    fn new(start_ns: u64, setup: Setup) -> Recorder {
        Recorder {
            start_ns,
            builder: HistoryBuilder::new(setup),
            sent: BTreeMap::new(),
            resource: lab_resource(),
        }
    }

    /// Moves the history's clock to `wall_ns`, for an entry recorded now.
    fn at(&mut self, wall_ns: u64) {
        self.builder.at(protocol::tick_at(self.start_ns, wall_ns), Some(wall_ns));
    }

    fn push(&mut self, wall_ns: u64, event: Event) {
        self.at(wall_ns);
        self.builder.push(event);
    }

    /// The end of the lease the history says is held, if one is.
    fn lease_ends(&self) -> Option<Tick> {
        self.builder.live(RESOURCE).map(|(_, _, until)| until)
    }

    /// Records the end of a lease that has run out by `wall_ns`.
    fn expire(&mut self, wall_ns: u64) {
        let now = protocol::tick_at(self.start_ns, wall_ns);
        if self.lease_ends().is_some_and(|until| until <= now) {
            self.at(wall_ns);
            self.builder.expire_due();
        }
    }

    /// `worker` froze at `wall_ns`, believing what it last heard.
    fn paused(&mut self, worker: &WorkerId, wall_ns: u64, ticks: u64) {
        self.at(wall_ns);
        let reason = Some(PauseReason::Descheduled);
        self.builder.paused(worker, Beliefs { ticks: Some(ticks), reason, ..Beliefs::default() });
    }

    /// `worker` woke up at `wall_ns`, with the beliefs it had.
    fn resumed(&mut self, worker: &WorkerId, wall_ns: u64) {
        self.at(wall_ns);
        self.builder.resumed(worker, Beliefs::default());
    }

    fn report(&mut self, worker: &WorkerId, wall_ns: u64, report: Report) {
        let name = worker.clone();
        let resource = || self.resource.clone();
        let event = match report {
            Report::Granted { generation, valid_until } => {
                self.expire(wall_ns);
                self.at(wall_ns);
                self.builder.granted(worker, &self.resource, generation, valid_until);
                return;
            }
            Report::Busy { holder, valid_until } => {
                self.at(wall_ns);
                // The holder's name comes from this lab's authority, so it is a valid id.
                let holder = WorkerId::new(holder).ok();
                self.builder.busy(worker, &self.resource, holder, valid_until);
                return;
            }
            Report::Renewed { generation, valid_until } => {
                Event::Renewed { worker: name, resource: resource(), generation, valid_until }
            }
            Report::RenewFailed { reason } => {
                Event::RenewFailed { worker: name, resource: resource(), reason }
            }
            Report::Released { generation } => {
                Event::Released { worker: name, resource: resource(), generation }
            }
            Report::Checked { local_time, valid_until, believes_valid } => Event::LeaseChecked {
                worker: name,
                resource: resource(),
                local_time,
                valid_until,
                believes_valid,
            },
            Report::Sending { request } => {
                self.at(wall_ns);
                let store = self.store().to_string();
                // Every worker writes under the token its lease gave it.
                let sent = Sent { token: Some(TokenKind::Lease), ..Sent::new(store, request) };
                let message = self.builder.write_sent(worker, sent);
                self.sent.insert(name, message);
                return;
            }
            Report::Wrote { outcome, value_after, highest_before, highest_after } => {
                let Some(message) = self.sent.remove(&name) else { return };
                self.at(wall_ns);
                // The worker read the store's record around its write: nothing is inferred.
                let answer = WriteAnswer {
                    value_after: Some(value_after),
                    highest_before: Some(highest_before),
                    highest_after: Some(highest_after),
                    ..WriteAnswer::new(outcome)
                };
                self.builder.write_answered(worker, message, answer);
                return;
            }
            Report::WriteUnknown => {
                let Some(message) = self.sent.remove(&name) else { return };
                self.at(wall_ns);
                self.builder.write_unknown(worker, message);
                return;
            }
            Report::Finished { stopped: false } => Event::WorkerFinished { worker: name },
            Report::Ready | Report::Finished { stopped: true } | Report::Failed { .. } => return,
        };
        self.push(wall_ns, event);
    }

    fn store(&self) -> &str {
        self.builder.setup().stores.first().map_or("store", |s| s.name.as_str())
    }

    /// The history so far; `incomplete` says why it stops early, if it does.
    fn history(&self, incomplete: Option<String>) -> History {
        self.builder.history(incomplete)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencelab_core::{Checker, Generation, OperationId, WriteRequest};

    /// A write whose connection broke is in the history as sent and of unknown outcome, and
    /// the checker weighs both outcomes: a stale one is a possible finding, not a certain one.
    #[test]
    fn a_write_of_unknown_outcome_is_recorded_as_such() {
        let mut lab = Lab::new(&LabArgs {
            authority: AuthorityKind::Builtin,
            store: store::Kind::Postgres,
            fenced: false,
            unfenced: true,
            workers: 2,
            ttl_ms: Some(300),
            pause_ms: None,
            out: None,
        });
        let recorder = &mut lab.recorder;
        let ms = |t: u64| recorder_ns(t);
        let generation = |g: u64| Generation::new(g).unwrap();
        let write = |worker: &str, g: u64| {
            let resource = ResourceId::new(RESOURCE).unwrap();
            let operation = OperationId::new(format!("{worker}-{g}")).unwrap();
            WriteRequest::new(resource, generation(g), operation, None, format!("{worker} {g}"))
        };
        let granted = |g: u64, until: u64| Report::Granted {
            generation: generation(g),
            valid_until: Tick(until),
        };
        recorder.start_ns = 0;
        recorder.report(&w("A"), ms(1), granted(1, 301));
        recorder.report(&w("B"), ms(400), granted(2, 700));
        recorder.report(&w("B"), ms(401), Report::Sending { request: write("B", 2) });
        let revision = fencelab_core::fence::register::Revision(1);
        let applied = WriteOutcome::Applied(fencelab_core::fence::register::Applied {
            generation: generation(2),
            revision,
        });
        let wrote = |outcome| Report::Wrote {
            outcome,
            value_after: None,
            highest_before: None,
            highest_after: None,
        };
        recorder.report(&w("B"), ms(402), wrote(applied.clone()));
        // A's stale write: the connection broke, so nobody knows whether it landed.
        recorder.report(&w("A"), ms(500), Report::Sending { request: write("A", 1) });
        recorder.report(&w("A"), ms(501), Report::WriteUnknown);
        let history = recorder.history(Some("worker A failed".into()));
        let last = &history.entries.last().unwrap().event;
        let sent = history.entries.iter().find_map(|e| match &e.event {
            Event::WriteSent { worker, message, .. } if worker == "A" => Some(*message),
            _ => None,
        });
        assert!(
            matches!(last, Event::WriteUnknown { worker, message, .. } if worker == "A" && Some(*message) == sent),
            "{last:?}"
        );
        let found = Checker::judge(&history);
        assert!(!found.is_empty() && found.iter().all(|v| v.possible), "{found:?}");
    }

    /// A frozen worker believes the generation it was granted; when it wakes after its lease
    /// ran out and another was granted, it is no longer the owner and the newest generation is
    /// the other's. The recorder says only when it froze and woke.
    #[test]
    fn a_frozen_worker_s_beliefs_come_from_what_it_was_granted() {
        let setup = Setup {
            workers: vec!["A".into(), "B".into()],
            resources: vec![RESOURCE.into()],
            ..Setup::default()
        };
        let mut recorder = Recorder::new(0, setup);
        let g = |n: u64| Generation::new(n).unwrap();
        let granted =
            |n: u64, until: u64| Report::Granted { generation: g(n), valid_until: Tick(until) };
        recorder.report(&w("A"), recorder_ns(1), granted(1, 301));
        recorder.paused(&w("A"), recorder_ns(2), 900);
        recorder.expire(recorder_ns(301));
        recorder.report(&w("B"), recorder_ns(400), granted(2, 700));
        recorder.expire(recorder_ns(701));
        recorder.resumed(&w("A"), recorder_ns(902));
        let history = recorder.history(None);
        assert!(history.validate().is_ok(), "{:?}", history.validate());
        let events: Vec<&Event> = history.entries.iter().map(|e| &e.event).collect();
        assert!(
            matches!(events[2], Event::Paused { worker, ticks: 900, believes: Some(b), .. } if worker == "A" && *b == g(1)),
            "{events:?}"
        );
        let expired: Vec<u64> = history
            .entries
            .iter()
            .filter(|e| matches!(e.event, Event::LeaseExpired { .. }))
            .map(|e| e.at.0)
            .collect();
        assert_eq!(expired, [301, 701]);
        assert!(
            matches!(events.last(), Some(Event::Resumed { still_owner: false, believes: Some(b), current: Some(c), .. }) if *b == g(1) && *c == g(2)),
            "{events:?}"
        );
    }

    fn w(name: &str) -> WorkerId {
        WorkerId::new(name).unwrap()
    }

    fn recorder_ns(ms: u64) -> u64 {
        ms * 1_000_000
    }
}
