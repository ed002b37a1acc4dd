//! The lease authority as a worker sees it: acquire, renew, release, each returning the
//! generation it holds. [`Builtin`] asks the lab, which serves the core's
//! [`LeaseAuthority`](fencelab_core::fence::authority::LeaseAuthority) over the worker's pipes; another authority
//! plugs in by implementing [`Authority`].

use super::protocol::{self, Answer, Ask, ToLab, ToWorker};
use fencelab_core::{Generation, Tick};
use std::time::Duration;

/// A lease the worker holds, as far as it knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// The fencing token every write under the lease carries.
    pub generation: Generation,
    /// The first tick at which the lease is no longer valid.
    pub valid_until: Tick,
}

/// What asking for a lease came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acquired {
    /// The lease is the worker's.
    Granted(Held),
    /// Someone else holds it until `valid_until`; ask again after `retry_in`.
    Busy {
        /// The holder, as far as the authority says.
        holder: String,
        /// When its lease ends unless renewed, if the authority says.
        valid_until: Option<Tick>,
        /// How long to wait before asking again.
        retry_in: Duration,
    },
}

/// A lease authority for the lab's one resource, as one worker uses it.
pub trait Authority {
    /// Asks for the lease.
    fn acquire(&mut self) -> Result<Acquired, String>;
    /// Extends the lease: the renewed lease, or the authority's reason for refusing (the lease
    /// expired or passed to someone else).
    fn renew(&mut self, held: &Held) -> Result<Result<Held, String>, String>;
    /// Gives the lease back.
    fn release(&mut self, held: &Held) -> Result<(), String>;
    /// Whether the lab sees this authority's decisions itself; otherwise the worker reports
    /// them, so the history has them.
    fn lab_sees_decisions(&self) -> bool;
}

/// The lab's built-in authority, asked over the worker's standard output and answered on its
/// standard input.
pub struct Builtin;

impl Builtin {
    fn ask(&mut self, ask: Ask) -> Result<Answer, String> {
        let failed = |e: std::io::Error| format!("the lab's authority: {e}");
        protocol::send(&mut std::io::stdout().lock(), &ToLab::Ask(ask)).map_err(failed)?;
        match protocol::receive(&mut std::io::stdin().lock()).map_err(failed)? {
            Some(ToWorker::Answer(answer)) => Ok(answer),
            Some(other) => Err(format!("the lab answered {other:?} to {ask:?}")),
            None => Err("the lab closed the pipe".into()),
        }
    }
}

impl Authority for Builtin {
    fn acquire(&mut self) -> Result<Acquired, String> {
        match self.ask(Ask::Acquire)? {
            Answer::Granted { generation, valid_until } => {
                Ok(Acquired::Granted(Held { generation, valid_until }))
            }
            Answer::Busy { holder, valid_until, retry_in_ms } => Ok(Acquired::Busy {
                holder,
                valid_until: Some(valid_until),
                retry_in: Duration::from_millis(retry_in_ms),
            }),
            other => Err(format!("the authority answered {other:?} to a lease request")),
        }
    }

    fn renew(&mut self, held: &Held) -> Result<Result<Held, String>, String> {
        match self.ask(Ask::Renew { generation: held.generation })? {
            Answer::Granted { generation, valid_until } => Ok(Ok(Held { generation, valid_until })),
            Answer::Refused { reason } => Ok(Err(reason)),
            other => Err(format!("the authority answered {other:?} to a renewal")),
        }
    }

    fn release(&mut self, held: &Held) -> Result<(), String> {
        match self.ask(Ask::Release { generation: held.generation })? {
            Answer::Released | Answer::Refused { .. } => Ok(()),
            other => Err(format!("the authority answered {other:?} to a release")),
        }
    }

    fn lab_sees_decisions(&self) -> bool {
        true
    }
}
