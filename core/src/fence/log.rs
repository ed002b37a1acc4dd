//! The operation log: every attempt to change protected state, and what became of it.

use crate::clock::Tick;
use crate::fence::gateway::{DropReason, EffectRequest, GatewayOutcome};
use crate::fence::idempotency::{StoredResult, WriteOutcome};
use crate::fence::register::{Applied, RejectionReason, WriteRejection, WriteRequest};
use crate::ids::WorkerId;
use crate::memory::HeapSize;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What was attempted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Attempt {
    /// A write to a protected resource.
    Write(WriteRequest),
    /// A side effect through the gateway.
    Effect(EffectRequest),
}

/// What became of an attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum LoggedOutcome {
    /// A write changed the resource.
    Applied(Applied),
    /// A retry returned the stored result of an earlier application; nothing changed.
    Replayed(StoredResult),
    /// A write was refused; nothing changed.
    Rejected(WriteRejection),
    /// An effect was let through to the partner.
    Delivered,
    /// An effect was dropped before the partner was called.
    Dropped(DropReason),
}

impl LoggedOutcome {
    /// The rejection or drop reason, if the attempt failed.
    pub fn rejection_reason(&self) -> Option<RejectionReason> {
        match self {
            LoggedOutcome::Rejected(rejection) => Some(rejection.reason()),
            LoggedOutcome::Dropped(reason) => Some(reason.reason()),
            LoggedOutcome::Applied(_) | LoggedOutcome::Replayed(_) | LoggedOutcome::Delivered => {
                None
            }
        }
    }
}

impl From<WriteOutcome> for LoggedOutcome {
    fn from(outcome: WriteOutcome) -> Self {
        match outcome {
            WriteOutcome::Applied(applied) => LoggedOutcome::Applied(applied),
            WriteOutcome::Replayed(stored) => LoggedOutcome::Replayed(stored),
            WriteOutcome::Rejected(rejection) => LoggedOutcome::Rejected(rejection),
        }
    }
}

impl From<GatewayOutcome> for LoggedOutcome {
    fn from(outcome: GatewayOutcome) -> Self {
        match outcome {
            GatewayOutcome::Delivered(_) => LoggedOutcome::Delivered,
            GatewayOutcome::Dropped(reason) => LoggedOutcome::Dropped(reason),
        }
    }
}

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// Position in the log, from 0.
    pub seq: u64,
    /// Logical time of the attempt.
    pub at: Tick,
    /// Who attempted it.
    pub actor: WorkerId,
    /// What was attempted.
    pub attempt: Attempt,
    /// What became of it.
    pub outcome: LoggedOutcome,
}

/// An append-only record of attempts. Rejections are kept, not discarded: each stale rejection is
/// evidence that two workers believed they owned the same resource, and worth monitoring.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OperationLog {
    entries: Vec<LogEntry>,
}

impl OperationLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends an attempt and its outcome; returns the new entry.
    pub fn record(
        &mut self,
        at: Tick,
        actor: WorkerId,
        attempt: Attempt,
        outcome: impl Into<LoggedOutcome>,
    ) -> &LogEntry {
        let seq = self.entries.len() as u64;
        self.entries.push(LogEntry { seq, at, actor, attempt, outcome: outcome.into() });
        &self.entries[self.entries.len() - 1]
    }

    /// Drops every entry from `len` on. Only a replaying driver uses this, to go back in time and
    /// re-run the same steps, which append the same entries again.
    pub fn rewind_to(&mut self, len: usize) {
        self.entries.truncate(len);
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> &[LogEntry] {
        &self.entries
    }

    /// How many entries the log holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many entries the log can hold before it must grow.
    pub fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Makes room for exactly `additional` more entries, so a driver that keeps a memory budget
    /// decides when and by how much the log grows.
    pub fn reserve_exact(&mut self, additional: usize) {
        self.entries.reserve_exact(additional);
    }

    /// How many attempts failed, per reason. Reasons that never occurred are absent.
    pub fn rejections_by_reason(&self) -> BTreeMap<RejectionReason, u64> {
        rejections_by_reason(&self.entries)
    }

    /// The log as JSON, for export and for pinning in tests.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Reads a log exported by [`OperationLog::to_json`]. Sequence numbers must run 0, 1, 2, ...
    pub fn from_json(json: &str) -> Result<Self, LogError> {
        let log: OperationLog =
            serde_json::from_str(json).map_err(|e| LogError::Json(e.to_string()))?;
        for (index, entry) in log.entries.iter().enumerate() {
            if entry.seq != index as u64 {
                return Err(LogError::Sequence { index, seq: entry.seq });
            }
        }
        Ok(log)
    }
}

/// How many of `entries` failed, per reason; reasons that never occurred are absent.
pub fn rejections_by_reason(entries: &[LogEntry]) -> BTreeMap<RejectionReason, u64> {
    let mut counts = BTreeMap::new();
    for reason in entries.iter().filter_map(|e| e.outcome.rejection_reason()) {
        *counts.entry(reason).or_insert(0) += 1;
    }
    counts
}

/// Why a log could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    /// The text is not a valid log.
    #[error("invalid operation log JSON: {0}")]
    Json(String),
    /// An entry is out of order or missing; the log is append-only.
    #[error("entry {index} has seq {seq}; sequence numbers must run 0, 1, 2, ...")]
    Sequence {
        /// Position in the file.
        index: usize,
        /// The seq it carries.
        seq: u64,
    },
}

impl HeapSize for LoggedOutcome {
    fn heap_bytes(&self) -> usize {
        match self {
            LoggedOutcome::Rejected(rejection) => rejection.heap_bytes(),
            LoggedOutcome::Dropped(reason) => reason.heap_bytes(),
            LoggedOutcome::Applied(_) | LoggedOutcome::Replayed(_) | LoggedOutcome::Delivered => 0,
        }
    }
}

impl HeapSize for LogEntry {
    fn heap_bytes(&self) -> usize {
        let attempt = match &self.attempt {
            Attempt::Write(request) => request.heap_bytes(),
            Attempt::Effect(request) => request.heap_bytes(),
        };
        self.actor.heap_bytes() + attempt + self.outcome.heap_bytes()
    }
}
