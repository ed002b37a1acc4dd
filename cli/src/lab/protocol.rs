//! The lines the lab and its workers exchange: one JSON object per line, the worker's to the
//! lab on the worker's standard output, the lab's to the worker on its standard input (see the
//! module doc of [`super`] for the conversation).

use fencelab_core::{Generation, Tick, WriteOutcome, WriteRequest};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// A line from a worker to the lab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToLab {
    /// A question for the built-in lease authority, which the lab answers with
    /// [`ToWorker::Answer`].
    Ask(Ask),
    /// What the worker did or learned, at `wall_ns` (nanoseconds since the Unix epoch).
    Report {
        /// When it happened, by the worker's clock.
        wall_ns: u64,
        /// What happened.
        what: Report,
    },
}

/// A question for the built-in authority about the lab's one resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ask {
    /// A new lease.
    Acquire,
    /// One more TTL for the lease under `generation`.
    Renew {
        /// The generation the worker holds.
        generation: Generation,
    },
    /// Give the lease under `generation` back.
    Release {
        /// The generation the worker holds.
        generation: Generation,
    },
}

/// The built-in authority's answer to an [`Ask`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// A lease: its generation and the tick at which it ends unless renewed.
    Granted {
        /// The fencing token.
        generation: Generation,
        /// The first tick at which the lease is no longer valid.
        valid_until: Tick,
    },
    /// Someone else holds the lease; ask again in `retry_in_ms`.
    Busy {
        /// The holder.
        holder: String,
        /// When its lease ends unless renewed.
        valid_until: Tick,
        /// How long to wait before asking again.
        retry_in_ms: u64,
    },
    /// The renewal or release was refused: the worker no longer holds that lease.
    Refused {
        /// The authority's reason.
        reason: String,
    },
    /// The lease was given back.
    Released,
}

/// What a worker tells the lab it did or learned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Report {
    /// The worker has connected to the store and waits for [`ToWorker::Start`].
    Ready,
    /// An authority the lab does not serve granted a lease.
    Granted {
        /// The fencing token.
        generation: Generation,
        /// When the lease ends unless renewed.
        valid_until: Tick,
    },
    /// An authority the lab does not serve said someone else holds the lease.
    Busy {
        /// The holder, as far as the authority says.
        holder: String,
        /// When its lease ends, if the authority says; otherwise the history takes the end the
        /// holder's own grant or renewal reported.
        valid_until: Option<Tick>,
    },
    /// An authority the lab does not serve renewed the lease.
    Renewed {
        /// The generation, unchanged.
        generation: Generation,
        /// The new end of the lease.
        valid_until: Tick,
    },
    /// An authority the lab does not serve refused a renewal.
    RenewFailed {
        /// Its reason.
        reason: String,
    },
    /// An authority the lab does not serve took the lease back.
    Released {
        /// The generation given back.
        generation: Generation,
    },
    /// The worker checked its lease against its own clock; when it believes the lease valid it
    /// now waits for [`ToWorker::Proceed`] before it writes.
    Checked {
        /// The worker's clock, in ticks.
        local_time: u64,
        /// When it believes its lease ends.
        valid_until: Tick,
        /// Whether it goes ahead.
        believes_valid: bool,
    },
    /// A write is about to leave for the store.
    Sending {
        /// The request.
        request: WriteRequest,
    },
    /// The store answered the write the worker sent last.
    Wrote {
        /// The store's decision.
        outcome: WriteOutcome,
        /// The value afterwards.
        value_after: Option<String>,
        /// The highest generation just before.
        highest_before: Option<Generation>,
        /// The highest generation afterwards.
        highest_after: Option<Generation>,
    },
    /// The write the worker sent last failed with an error that leaves its outcome unknown
    /// (the connection broke, perhaps during the commit). The worker fails next.
    WriteUnknown,
    /// The worker is done: at the end of its script, or stopped because it learned it lost its
    /// lease (`stopped`). It exits next.
    Finished {
        /// Whether it stopped early, having learned it lost its lease.
        stopped: bool,
    },
    /// Something failed that the worker cannot go on after (the store is unreachable, the
    /// authority failed). It exits next.
    Failed {
        /// What failed, for the lab's error.
        error: String,
    },
}

/// A line from the lab to a worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToWorker {
    /// Begin the script.
    Start,
    /// Go on after [`Report::Checked`]: write, without checking the lease again.
    Proceed,
    /// The built-in authority's answer.
    Answer(Answer),
}

/// Writes `message` as one line and flushes it.
pub fn send<T: Serialize>(out: &mut impl Write, message: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_string(message).map_err(std::io::Error::other)?;
    line.push('\n');
    out.write_all(line.as_bytes())?;
    out.flush()
}

/// Reads the next line as a `T`; `None` when the other side closed the pipe.
pub fn receive<T: for<'de> Deserialize<'de>>(
    input: &mut impl BufRead,
) -> std::io::Result<Option<T>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    serde_json::from_str(&line).map(Some).map_err(std::io::Error::other)
}

/// Nanoseconds since the Unix epoch (0 if the clock is set before it).
pub fn wall_ns() -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The lab's tick at `wall_ns`: whole milliseconds since `start_ns`, the lab's start.
pub fn tick_at(start_ns: u64, wall_ns: u64) -> Tick {
    Tick(wall_ns.saturating_sub(start_ns) / 1_000_000)
}
