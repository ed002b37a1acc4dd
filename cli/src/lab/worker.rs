//! A lab worker: a process of its own (`fencelab lab-worker`, hidden) that holds a lease and
//! writes under it, with the bug the lab exists to show: it checks its lease, and writes some
//! time later without checking again.

// A worker sets its signal handling through the C library.
#![allow(unsafe_code)]

use super::authority::{Acquired, Authority, Builtin, Held};
use super::etcd::Etcd;
use super::protocol::{self, Report, ToLab, ToWorker};
use super::store::Db;
use fencelab_core::{OperationId, ResourceId, Tick, WriteOutcome, WriteRequest};
use std::process::ExitCode;

/// What the lab tells a worker on its command line.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkerArgs {
    /// The worker's name in the history.
    #[arg(long)]
    pub name: String,
    /// The store: `sqlite:PATH` or `postgres:CONNINFO`.
    #[arg(long)]
    pub store: String,
    /// Write around the fence instead of through it.
    #[arg(long)]
    pub unfenced: bool,
    /// The lab's start, in nanoseconds since the Unix epoch: tick 0.
    #[arg(long)]
    pub start_ns: u64,
    /// Ask the etcd at this client URL for leases instead of the lab's built-in authority.
    #[arg(long, value_name = "URL")]
    pub etcd: Option<String>,
    /// The lease TTL to ask etcd for, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub ttl_ms: u64,
}

/// Runs the worker's script; its errors are reported to the lab before it exits with 1.
pub fn main(args: WorkerArgs) -> ExitCode {
    // A worker never outlives its lab, even one killed without a chance to clean up.
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    let mut worker = match Worker::new(&args) {
        Ok(worker) => worker,
        Err(error) => return fail(error),
    };
    match worker.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(error),
    }
}

fn fail(error: String) -> ExitCode {
    // If the lab is gone there is nobody to tell.
    let _ = report(Report::Failed { error });
    ExitCode::FAILURE
}

/// Tells the lab what happened, now.
fn report(what: Report) -> Result<(), String> {
    let line = ToLab::Report { wall_ns: protocol::wall_ns(), what };
    protocol::send(&mut std::io::stdout().lock(), &line).map_err(|e| format!("the lab: {e}"))
}

/// Waits for the lab's next instruction, which must be `expected`.
fn wait_for(expected: ToWorker) -> Result<(), String> {
    match protocol::receive::<ToWorker>(&mut std::io::stdin().lock()) {
        Ok(Some(message)) if message == expected => Ok(()),
        Ok(Some(other)) => Err(format!("the lab sent {other:?}, expected {expected:?}")),
        Ok(None) => Err("the lab closed the pipe".into()),
        Err(e) => Err(format!("the lab: {e}")),
    }
}

struct Worker {
    name: String,
    resource: ResourceId,
    db: Db,
    fenced: bool,
    authority: Box<dyn Authority>,
    start_ns: u64,
    writes: u32,
}

impl Worker {
    fn new(args: &WorkerArgs) -> Result<Worker, String> {
        let resource = ResourceId::new(super::RESOURCE).map_err(|e| e.to_string())?;
        let authority: Box<dyn Authority> = match &args.etcd {
            Some(endpoint) => {
                let ttl = std::time::Duration::from_millis(args.ttl_ms);
                let etcd =
                    Etcd::connect(endpoint, resource.clone(), &args.name, ttl, args.start_ns);
                Box::new(etcd?)
            }
            None => Box::new(Builtin),
        };
        Ok(Worker {
            name: args.name.clone(),
            resource,
            db: Db::open(&args.store)?,
            fenced: !args.unfenced,
            authority,
            start_ns: args.start_ns,
            writes: 0,
        })
    }

    fn now(&self) -> Tick {
        protocol::tick_at(self.start_ns, protocol::wall_ns())
    }

    /// The script: acquire, write, renew, check the lease, wait for the lab, write again
    /// without checking, renew (and stop if that is refused), release.
    fn run(&mut self) -> Result<(), String> {
        report(Report::Ready)?;
        wait_for(ToWorker::Start)?;
        let held = self.acquire()?;
        self.write(&held)?;
        let Some(held) = self.renew(&held)? else {
            return report(Report::Finished { stopped: true });
        };
        let local_time = self.now().0;
        let believes_valid = local_time < held.valid_until.0;
        let valid_until = held.valid_until;
        report(Report::Checked { local_time, valid_until, believes_valid })?;
        if !believes_valid {
            return report(Report::Finished { stopped: true });
        }
        // The bug: between this wait and the write nothing looks at the lease again, so a
        // worker frozen here writes with its old token when it wakes up.
        wait_for(ToWorker::Proceed)?;
        self.write(&held)?;
        let Some(held) = self.renew(&held)? else {
            return report(Report::Finished { stopped: true });
        };
        self.authority.release(&held)?;
        if !self.authority.lab_sees_decisions() {
            report(Report::Released { generation: held.generation })?;
        }
        report(Report::Finished { stopped: false })
    }

    /// Asks for the lease until it is granted, waiting as long as the authority says between
    /// asks.
    fn acquire(&mut self) -> Result<Held, String> {
        // An authority that does not say when the holder's lease ends is asked again and
        // again; the history says once that the lease is busy.
        let mut told = false;
        loop {
            match self.authority.acquire()? {
                Acquired::Granted(held) => {
                    if !self.authority.lab_sees_decisions() {
                        let Held { generation, valid_until } = held;
                        report(Report::Granted { generation, valid_until })?;
                    }
                    return Ok(held);
                }
                Acquired::Busy { holder, valid_until, retry_in } => {
                    if !self.authority.lab_sees_decisions() && !told {
                        report(Report::Busy { holder, valid_until })?;
                        told = true;
                    }
                    std::thread::sleep(retry_in);
                }
            }
        }
    }

    /// Renews the lease: the renewed lease, or `None` when the authority refused.
    fn renew(&mut self, held: &Held) -> Result<Option<Held>, String> {
        let renewed = self.authority.renew(held)?;
        if !self.authority.lab_sees_decisions() {
            match &renewed {
                Ok(Held { generation, valid_until }) => {
                    report(Report::Renewed { generation: *generation, valid_until: *valid_until })?
                }
                Err(reason) => report(Report::RenewFailed { reason: reason.clone() })?,
            }
        }
        Ok(renewed.ok())
    }

    /// Writes the next value under `held`'s generation and reports what the store did.
    fn write(&mut self, held: &Held) -> Result<WriteOutcome, String> {
        self.writes += 1;
        let operation = OperationId::new(format!("{}-{}", self.name, self.writes))
            .map_err(|e| e.to_string())?;
        let value = format!("{} write {} (generation {})", self.name, self.writes, held.generation);
        let request =
            WriteRequest::new(self.resource.clone(), held.generation, operation, None, value);
        // The lab's own look at the store, before anything is sent: if it fails, no write left.
        let before = self
            .db
            .read(&self.resource)
            .map_err(|e| format!("before its write, reading {} failed: {e}", self.resource))?;
        report(Report::Sending { request: request.clone() })?;
        let outcome = match self.db.write(&request, self.fenced, self.now()) {
            Ok(outcome) => outcome,
            Err(failed) => {
                if failed.unknown {
                    report(Report::WriteUnknown)?;
                }
                return Err(failed.error);
            }
        };
        let after = self.db.read(&self.resource)?;
        let (value_after, highest_after) = after.map_or((None, None), |v| (v.value, v.highest));
        report(Report::Wrote {
            outcome: outcome.clone(),
            value_after,
            highest_before: before.and_then(|v| v.highest),
            highest_after,
        })?;
        Ok(outcome)
    }
}
