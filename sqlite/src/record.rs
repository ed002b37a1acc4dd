//! A real run against the SQLite store, recorded as a Fencelab [`History`].
//!
//! The simulator plays the paused-worker story in logical time. This module plays it for real,
//! so the checker and the diagram judge something that actually happened: two worker threads, a
//! real [`std::thread::sleep`] for the pause, the core's [`LeaseAuthority`] with one tick per
//! millisecond since the run started (read from [`Instant`]), and a [`SqliteStore`] in a
//! temporary file, one connection per thread.
//!
//! The story: worker A acquires the lease on `ledger`, writes, and freezes for longer than its
//! TTL (a stop-the-world GC pause). Worker B asks for the lease, is told A holds it, waits until
//! A's lease ends and acquires it with the next generation, then writes. A wakes up still
//! believing it owns the ledger and writes under its old generation. With [`Mode::Fenced`] the
//! store refuses that write as stale; with [`Mode::Unfenced`] it overwrites B's value, and
//! [`Checker::judge`](fencelab_core::Checker::judge) reports a stale write accepted.
//!
//! # How the history is kept honest
//!
//! The entries are built by the core's [`HistoryBuilder`], from what the threads observe, as the
//! lab's and the interop readers' are. One lock orders everything the run records. Every authority decision and every write is made
//! while holding it, and its entries are timestamped and appended under the same lock, so the
//! history's order is the order in which things happened and time never runs backwards. A
//! write's `highest_before` and `highest_after` are read on the writer's connection just before
//! and after the store decides, still under the lock, so no other write of the run can land in
//! between. The store's own check does not depend on that lock: the fenced path is the store's
//! ordinary [`FencedStore::write`], one `IMMEDIATE` transaction.
//!
//! The interleaving does not depend on luck. B starts asking only once A has its grant, and
//! sleeps until the time the authority says A's lease ends. A's pause is a real sleep of
//! [`Timings::pause`], extended if the machine was so slow that B has not written yet: the story
//! is about the write that comes after the new owner's, so the recorder makes sure it does.
//!
//! ```no_run
//! use fencelab_core::{Checker, invariant::InvariantKind};
//! use fencelab_sqlite::record::{record_run, Mode, Timings};
//!
//! let history = record_run(Mode::Unfenced, Timings::default())?;
//! let found = Checker::judge(&history);
//! assert!(found.iter().any(|v| v.invariant == InvariantKind::StaleWriteAccepted));
//! # Ok::<(), fencelab_sqlite::record::RecordError>(())
//! ```

use crate::{Options, SqliteStore, StoreError};
use fencelab_core::{
    fence::authority::Lease, fence::authority::LeaseAuthority, fence::authority::LeaseError,
    history::event::TokenKind, history::Setup, ids::IdError, Event, FencedStore, Generation,
    History, OperationId, ResourceId, Tick, WorkerId, WriteOutcome, WriteRequest,
};
use fencelab_core::{format::model::Enforcement, format::model::PauseReason};
use fencelab_core::{
    history::builder::Beliefs, history::builder::HistoryBuilder, history::builder::Sent,
    history::builder::WriteAnswer,
};
use fencelab_core::{history::PathSetup, history::StoreSetup};
use std::fmt;
use std::num::NonZeroU64;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The leased resource, as the setup and every request name it.
pub const RESOURCE: &str = "ledger";
/// The store's name in the setup, so the diagram's participant says what it is.
pub const STORE: &str = "sqlite";
/// The one write path, which writes the data of the same name, as the simulator names it.
const PRIMARY: &str = "primary";

/// How the store treats a write's generation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The store compares generations and writes in one transaction, as [`SqliteStore`] always
    /// does: A's late write is refused as stale.
    Fenced,
    /// The store writes without looking at the generation, through a plain SQL upsert, as a
    /// store without fencing would: A's late write overwrites B's.
    Unfenced,
}

impl Mode {
    /// How the history's setup and write events describe the store's protection.
    pub fn enforcement(self) -> Enforcement {
        match self {
            Mode::Fenced => Enforcement::Fenced,
            Mode::Unfenced => Enforcement::Unfenced,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Fenced => "fenced",
            Mode::Unfenced => "unfenced",
        })
    }
}

/// The run's real durations. One tick of the history is one millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// How long a lease lasts, in whole milliseconds (anything finer is dropped).
    pub ttl: Duration,
    /// How long A sleeps after its first write. It must be longer than the TTL, or A would
    /// never lose its lease and there would be no story to record.
    pub pause: Duration,
}

impl Default for Timings {
    /// Margins wide enough for a busy shared machine: each worker writes within a few
    /// milliseconds of its grant, well inside 150 ms, and A sleeps four times its TTL.
    fn default() -> Self {
        Timings { ttl: Duration::from_millis(150), pause: Duration::from_millis(600) }
    }
}

impl Timings {
    /// The TTL in ticks, once the timings are known to tell the story.
    fn ttl_ticks(&self) -> Result<NonZeroU64, RecordError> {
        let ttl = u64::try_from(self.ttl.as_millis())
            .ok()
            .and_then(NonZeroU64::new)
            .ok_or(RecordError::Ttl(self.ttl))?;
        if self.pause <= self.ttl {
            return Err(RecordError::PauseTooShort { ttl: self.ttl, pause: self.pause });
        }
        Ok(ttl)
    }
}

/// Why a run could not be recorded. No partial history is returned: a history missing the
/// events after a failure would be judged on less than what happened.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The TTL is below one millisecond, or too long to count in milliseconds.
    #[error("the lease TTL must be at least 1 ms (got {0:?})")]
    Ttl(Duration),
    /// A would wake up with its lease still valid, so nobody could take it over.
    #[error("the pause ({pause:?}) must be longer than the lease TTL ({ttl:?}), or A never loses its lease")]
    PauseTooShort {
        /// The lease TTL asked for.
        ttl: Duration,
        /// The pause asked for.
        pause: Duration,
    },
    /// The temporary folder for the database could not be created.
    #[error("cannot create a temporary folder for the database: {0}")]
    TempDir(#[source] std::io::Error),
    /// The store failed (not a refusal: refusals are outcomes, and are recorded).
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
    /// The authority refused a worker for a reason other than a lease someone else holds.
    #[error("the lease authority refused {worker}: {source}")]
    Lease {
        /// The worker that asked.
        worker: &'static str,
        /// The authority's reason.
        #[source]
        source: LeaseError,
    },
    /// A name the run uses is not a valid id.
    #[error("invalid name: {0}")]
    Id(#[from] IdError),
    /// A thread of the run panicked.
    #[error("the {0} thread panicked; the run was not recorded")]
    Panicked(&'static str),
}

/// Records one run of the story in `mode` against a fresh database in a temporary folder,
/// which is deleted afterwards.
pub fn record_run(mode: Mode, timings: Timings) -> Result<History, RecordError> {
    let ttl = timings.ttl_ticks()?;
    let dir = tempfile::tempdir().map_err(RecordError::TempDir)?;
    let path = dir.path().join("fencelab.db");
    let options = Options::default();
    // One connection per worker, as one per thread or process is how the store is meant to be
    // used. Opened before the clock starts, so creating the schema is not part of the story.
    let store_a = SqliteStore::open(&path, options)?;
    let store_b = SqliteStore::open(&path, options)?;
    let resource = ResourceId::new(RESOURCE)?;
    let store = StoreSetup {
        name: STORE.into(),
        critical: true,
        paths: vec![PathSetup {
            name: PRIMARY.into(),
            data: PRIMARY.into(),
            enforcement: mode.enforcement(),
        }],
    };
    let setup = Setup {
        workers: vec!["A".into(), "B".into()],
        resources: vec![RESOURCE.into()],
        stores: vec![store],
        gateway: None,
        incomplete: None,
    };
    let shared = Shared {
        start: Instant::now(),
        state: Mutex::new(State {
            authority: LeaseAuthority::new(ttl),
            builder: HistoryBuilder::new(setup),
        }),
    };
    let a = Worker::new("A", &shared, store_a, mode, resource.clone())?;
    let b = Worker::new("B", &shared, store_b, mode, resource)?;
    let (granted, a_granted) = mpsc::channel();
    let (wrote, b_wrote) = mpsc::channel();
    let (stop, stopped) = mpsc::channel::<()>();
    let shared = &shared;
    thread::scope(|s| {
        let authority = s.spawn(move || watch_expiries(shared, stopped));
        let a = s.spawn(move || run_a(a, timings.pause, granted, b_wrote));
        let b = s.spawn(move || run_b(b, a_granted, wrote));
        let a = a.join().map_err(|_| RecordError::Panicked("worker A"));
        let b = b.join().map_err(|_| RecordError::Panicked("worker B"));
        drop(stop);
        let authority = authority.join().map_err(|_| RecordError::Panicked("authority"));
        // A's failure comes first: B gives up without one when A never got its lease.
        a??;
        b??;
        authority??;
        Ok::<(), RecordError>(())
    })?;
    let builder = std::mem::take(&mut shared.lock().builder);
    Ok(builder.finish())
}

/// What the threads share: the start of the run, and behind one lock everything they decide
/// and record.
struct Shared {
    start: Instant,
    state: Mutex<State>,
}

struct State {
    authority: LeaseAuthority,
    /// The history so far; its clock is the latest tick handed out, so a timestamp never goes
    /// backwards.
    builder: HistoryBuilder,
}

impl Shared {
    /// Takes the run's lock. A thread that panicked while holding it has already failed the
    /// run (its join reports the panic), so the others carry on to their end rather than fail a
    /// second time; the state is still consistent, as every change is one push or one
    /// authority call.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The real time at which the run reaches `tick`.
    fn instant(&self, tick: Tick) -> Instant {
        self.start + Duration::from_millis(tick.0)
    }
}

impl State {
    /// The current tick: whole milliseconds since the run started, which the history's next
    /// entries are recorded at, with the wall-clock time. Called under the lock, so entries
    /// appended in order get non-decreasing times.
    fn now(&mut self, start: Instant) -> Tick {
        let elapsed = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.builder.at(Tick(elapsed), wall_ns());
        self.builder.now()
    }

    /// The authority drops a lease that has run out, and the history says so.
    fn expired(&mut self, lease: Lease) {
        self.builder.push(Event::LeaseExpired {
            worker: lease.holder,
            resource: lease.resource,
            generation: lease.generation,
        });
    }
}

/// Nanoseconds since the Unix epoch, or `None` if the system clock is set before it.
fn wall_ns() -> Option<u64> {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

/// The authority's own bookkeeping: it notices each lease's end when it comes, as the
/// simulator's authority does, so the history shows when A stopped being the owner even before
/// anybody asks. It runs until the run drops `stop`. Every lease lasts the same TTL, so one
/// granted while the watcher sleeps never ends before the one it is waiting for.
fn watch_expiries(shared: &Shared, stop: Receiver<()>) -> Result<(), RecordError> {
    // With no lease to wait for, look again this often for one granted in the meantime.
    const IDLE: Duration = Duration::from_millis(5);
    loop {
        let wait = {
            let mut state = shared.lock();
            let now = state.now(shared.start);
            for lease in state.authority.expire(now) {
                state.expired(lease);
            }
            let next = state
                .authority
                .records()
                .filter_map(|(_, record)| record.lease.as_ref())
                .map(|lease| lease.valid_until)
                .min();
            next.map_or(IDLE, |t| shared.instant(t).saturating_duration_since(Instant::now()))
        };
        match stop.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return Ok(()),
        }
    }
}

/// One worker thread: its name, its connection to the store and its count of writes.
struct Worker<'a> {
    name: &'static str,
    id: WorkerId,
    shared: &'a Shared,
    store: SqliteStore,
    mode: Mode,
    resource: ResourceId,
    writes: u32,
}

impl<'a> Worker<'a> {
    fn new(
        name: &'static str,
        shared: &'a Shared,
        store: SqliteStore,
        mode: Mode,
        resource: ResourceId,
    ) -> Result<Worker<'a>, IdError> {
        let id = WorkerId::new(name)?;
        Ok(Worker { name, id, shared, store, mode, resource, writes: 0 })
    }

    /// Asks for the lease until the authority grants it. While someone else holds it, the
    /// worker sleeps until the time the authority says that lease ends, then asks again.
    fn acquire(&mut self) -> Result<Lease, RecordError> {
        loop {
            let until = {
                let mut state = self.shared.lock();
                let now = state.now(self.shared.start);
                // The authority may see the old lease's end here before its watcher does.
                if let Some(lease) = state.authority.expire_resource(&self.resource, now) {
                    state.expired(lease);
                }
                match state.authority.acquire(&self.resource, &self.id, now) {
                    Ok(lease) => {
                        // The grant reaches the worker in the same call: it arrives at once.
                        let until = lease.valid_until;
                        state.builder.granted(&self.id, &self.resource, lease.generation, until);
                        return Ok(lease);
                    }
                    Err(LeaseError::Held { holder, valid_until, .. }) => {
                        let holder = Some(holder.clone());
                        state.builder.busy(&self.id, &self.resource, holder, Some(valid_until));
                        valid_until
                    }
                    Err(source) => return Err(RecordError::Lease { worker: self.name, source }),
                }
            };
            let wake = self.shared.instant(until);
            thread::sleep(wake.saturating_duration_since(Instant::now()));
        }
    }

    /// Sends one write under `generation` and records what the store did with it. The request
    /// reaches the store in the same call, so it `arrives_at` the time it was sent; its arrival
    /// is stamped when the store has answered.
    fn write(&mut self, generation: Generation, value: &str) -> Result<WriteOutcome, RecordError> {
        self.writes += 1;
        let operation = OperationId::new(format!("{}-{}", self.name, self.writes))?;
        let request = WriteRequest::new(self.resource.clone(), generation, operation, None, value);
        let mut state = self.shared.lock();
        let sent_at = state.now(self.shared.start);
        // Each worker writes under the token its lease gave it.
        let sent = Sent { token: Some(TokenKind::Lease), ..Sent::new(STORE, request.clone()) };
        let message = state.builder.write_sent(&self.id, sent);
        let before = self.store.read(&self.resource)?;
        let outcome = match self.mode {
            Mode::Fenced => self.store.write(&request, sent_at)?,
            Mode::Unfenced => self.store.write_unfenced(&request)?,
        };
        let after = self.store.read(&self.resource)?;
        state.now(self.shared.start);
        let (value_after, highest_after) = after.map_or((None, None), |v| (v.value, v.highest));
        // Read on the writer's connection around the decision: nothing is inferred.
        let answer = WriteAnswer {
            value_after: Some(value_after),
            highest_before: Some(before.and_then(|v| v.highest)),
            highest_after: Some(highest_after),
            ..WriteAnswer::new(outcome.clone())
        };
        state.builder.write_answered(&self.id, message, answer);
        Ok(outcome)
    }

    /// Records something of this worker's own at the current time.
    fn record(&self, record: impl FnOnce(&mut State, Tick)) -> Result<(), RecordError> {
        let mut state = self.shared.lock();
        let now = state.now(self.shared.start);
        record(&mut state, now);
        Ok(())
    }

    fn finish(&self) -> Result<(), RecordError> {
        self.record(|state, _| {
            state.builder.push(Event::WorkerFinished { worker: self.id.clone() })
        })
    }
}

/// Worker A: acquires, writes, freezes past its TTL, wakes up still believing it owns the
/// ledger, and writes again under its old generation.
fn run_a(
    mut a: Worker<'_>,
    pause: Duration,
    granted: Sender<()>,
    b_wrote: Receiver<()>,
) -> Result<(), RecordError> {
    let lease = a.acquire()?;
    // B may start asking now. If B's thread is gone, its own error is the run's.
    let _ = granted.send(());
    let generation = lease.generation;
    a.write(generation, "A: balance=100")?;
    let ticks = u64::try_from(pause.as_millis()).unwrap_or(u64::MAX);
    let believes = Some(Some(generation));
    let paused = Beliefs {
        ticks: Some(ticks),
        reason: Some(PauseReason::GcPause),
        believes,
        ..Beliefs::default()
    };
    a.record(|state, _| state.builder.paused(&a.id, paused))?;
    thread::sleep(pause);
    // On a slow machine the pause lasts until B's write has been decided, so the late write is
    // always the one after the new owner's. An error means B has failed, and the run with it.
    let _ = b_wrote.recv();
    a.record(|state, now| {
        // What the authority says, rather than what the history has seen of it.
        let owner = state.authority.lease(&a.resource, now);
        let resumed = Beliefs {
            believes: Some(Some(generation)),
            resource: Some(Some(a.resource.clone())),
            still_owner: Some(
                owner.is_some_and(|l| l.holder == a.id && l.generation == generation),
            ),
            current: Some(state.authority.generation(&a.resource)),
            ..Beliefs::default()
        };
        state.builder.resumed(&a.id, resumed);
    })?;
    a.write(generation, "A: balance=90 (computed before the pause)")?;
    a.finish()
}

/// Worker B: once A holds the lease, asks for it, waits out A's lease, and writes under the
/// new generation.
fn run_b(mut b: Worker<'_>, a_granted: Receiver<()>, wrote: Sender<()>) -> Result<(), RecordError> {
    if a_granted.recv().is_err() {
        // A failed before it got its lease; its error is the run's.
        return Ok(());
    }
    let lease = b.acquire()?;
    b.write(lease.generation, "B: balance=120")?;
    // A may wake up now. If A's thread is gone, its own error is the run's.
    let _ = wrote.send(());
    b.finish()
}
