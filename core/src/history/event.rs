//! What can happen in a run, one variant per kind of event, each with a caption for learners.

use crate::clock::Tick;
use crate::fence::gateway::{DropReason, EffectRequest};
use crate::fence::generation::Generation;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::{Revision, WriteRequest};
use crate::format::model::{Enforcement, PauseReason};
use crate::ids::{ResourceId, WorkerId};
use crate::memory::HeapSize;
use serde::{Deserialize, Serialize};

/// How the token on a request came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum TokenKind {
    /// Issued by the lease authority with the worker's lease.
    Lease,
    /// Read off the worker's own wall clock.
    WallClock,
    /// Made up by the caller.
    Forged,
}

/// One event of a run. The engine executes exactly one per [`step`](crate::Engine::step).
///
/// Written with its fields under its kind (`{"lease_busy": {"worker": "b", ...}}`), so a
/// reader knows the kind before the fields and serde reads them without buffering.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[strum(serialize_all = "snake_case")]
pub enum Event {
    /// The authority granted a lease; the grant (with its generation) is now travelling to the
    /// worker.
    LeaseGranted {
        /// The new holder.
        worker: WorkerId,
        /// The resource.
        resource: ResourceId,
        /// The new generation.
        generation: Generation,
        /// When the lease ends unless renewed.
        valid_until: Tick,
        /// When the grant reaches the worker.
        arrives_at: Tick,
        /// The message carrying the grant.
        message: u64,
    },
    /// A worker asked for a lease someone else holds; it will ask again when that lease ends.
    LeaseBusy {
        /// The worker that asked.
        worker: WorkerId,
        /// The resource.
        resource: ResourceId,
        /// The current holder.
        holder: WorkerId,
        /// When the holder's lease ends unless renewed.
        valid_until: Tick,
    },
    /// The grant reached the worker, which now believes it owns the resource.
    GrantReceived {
        /// The worker.
        worker: WorkerId,
        /// The resource.
        resource: ResourceId,
        /// The generation it now holds.
        generation: Generation,
        /// The message that carried the grant.
        message: u64,
    },
    /// The holder extended its lease.
    Renewed {
        /// The holder.
        worker: WorkerId,
        /// The resource.
        resource: ResourceId,
        /// Its generation, unchanged.
        generation: Generation,
        /// The new end of the lease.
        valid_until: Tick,
    },
    /// A renewal failed: the worker learns it lost the lease and stops.
    RenewFailed {
        /// The worker.
        worker: WorkerId,
        /// The resource.
        resource: ResourceId,
        /// The authority's reason.
        reason: String,
    },
    /// The holder gave the lease back.
    Released {
        /// The former holder.
        worker: WorkerId,
        /// The resource.
        resource: ResourceId,
        /// The generation it held.
        generation: Generation,
    },
    /// A lease ran out. The authority stops counting the holder as owner; nobody tells the holder.
    LeaseExpired {
        /// The holder whose lease ended.
        worker: WorkerId,
        /// The resource.
        resource: ResourceId,
        /// The generation that expired.
        generation: Generation,
    },
    /// A worker froze.
    Paused {
        /// The worker.
        worker: WorkerId,
        /// For how long.
        ticks: u64,
        /// Why.
        reason: PauseReason,
        /// The generation it believes it holds, if any.
        believes: Option<Generation>,
    },
    /// A pause fault hit a worker that had already stopped, or was already frozen for longer.
    PauseIgnored {
        /// The worker.
        worker: WorkerId,
        /// How long the pause would have been.
        ticks: u64,
    },
    /// An optional pause did not happen this time.
    PauseSkipped {
        /// The worker.
        worker: WorkerId,
        /// How long the pause would have been.
        ticks: u64,
    },
    /// A worker woke up from a pause, with the same beliefs it had before.
    Resumed {
        /// The worker.
        worker: WorkerId,
        /// The generation it still believes it holds, if any.
        believes: Option<Generation>,
        /// The resource that generation is for.
        resource: Option<ResourceId>,
        /// Whether the authority still counts it as the owner.
        still_owner: bool,
        /// The authority's latest generation for that resource.
        current: Option<Generation>,
    },
    /// A worker computes for a while, touching nothing shared.
    Computing {
        /// The worker.
        worker: WorkerId,
        /// For how long.
        ticks: u64,
    },
    /// A worker read a value.
    ReadValue {
        /// The reader.
        worker: WorkerId,
        /// The store.
        store: String,
        /// The path.
        path: String,
        /// The resource.
        resource: ResourceId,
        /// What it read.
        value: Option<String>,
        /// At which revision.
        revision: Revision,
    },
    /// A worker checked its lease against its own clock.
    LeaseChecked {
        /// The worker.
        worker: WorkerId,
        /// The resource.
        resource: ResourceId,
        /// What the worker's clock said.
        local_time: u64,
        /// When it believes the lease ends.
        valid_until: Tick,
        /// Whether it concluded it still holds the lease (if not, it stops).
        believes_valid: bool,
    },
    /// A write left the worker and is travelling to the store.
    WriteSent {
        /// The sender.
        worker: WorkerId,
        /// The message.
        message: u64,
        /// The store.
        store: String,
        /// The write path.
        path: String,
        /// The request, with its separate fields.
        request: WriteRequest,
        /// Where its token came from.
        token: TokenKind,
        /// When it arrives.
        arrives_at: Tick,
        /// Whether it re-sends an earlier request.
        retry: bool,
    },
    /// A write reached its store, which decided on it in one step.
    WriteArrived {
        /// The sender.
        worker: WorkerId,
        /// The message.
        message: u64,
        /// The store.
        store: String,
        /// The write path.
        path: String,
        /// The data the path writes.
        data: String,
        /// How that path is protected.
        enforcement: Enforcement,
        /// The request.
        request: WriteRequest,
        /// The decision.
        outcome: WriteOutcome,
        /// The value afterwards.
        value_after: Option<String>,
        /// The highest generation before the request arrived.
        #[serde(default)]
        highest_before: Option<Generation>,
        /// The highest generation afterwards.
        highest_after: Option<Generation>,
        /// Set when the store refused as stale a writer that holds the newest lease to have reached
        /// this data: where the generation that outranks it came from. The store cannot tell; the
        /// checker can, and the caption says so.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        misfenced: Option<TokenKind>,
    },
    /// A check-then-write path read the highest generation and found the token acceptable; the
    /// write itself happens in a separate step, so others can run in between.
    CheckPassed {
        /// The sender.
        worker: WorkerId,
        /// The message.
        message: u64,
        /// The store.
        store: String,
        /// The path.
        path: String,
        /// The data the path writes.
        data: String,
        /// The request.
        request: WriteRequest,
        /// The highest generation the check saw.
        highest_seen: Option<Generation>,
        /// When the write will happen.
        writes_at: Tick,
    },
    /// The second half of a check-then-write: the write lands without looking again.
    WriteCommitted {
        /// The sender.
        worker: WorkerId,
        /// The message.
        message: u64,
        /// The store.
        store: String,
        /// The path.
        path: String,
        /// The data the path writes.
        data: String,
        /// The request.
        request: WriteRequest,
        /// The decision (always applied).
        outcome: WriteOutcome,
        /// The highest generation the store had just before, which may be newer than the request.
        highest_before: Option<Generation>,
    },
    /// The writer never learned what became of its write (a timeout, a lost reply, a crash): the
    /// store may or may not have applied it. Recorded histories have these (Jepsen's `info`); the
    /// checker considers both outcomes and reports what depends on this one as possible.
    WriteUnknown {
        /// The sender.
        worker: WorkerId,
        /// The message.
        message: u64,
        /// The store.
        store: String,
        /// The write path.
        path: String,
        /// The data the path writes.
        data: String,
        /// The request.
        request: WriteRequest,
    },
    /// An effect left the worker towards the gateway.
    EffectSent {
        /// The sender.
        worker: WorkerId,
        /// The message.
        message: u64,
        /// The request.
        request: EffectRequest,
        /// The resource whose lease backs it.
        resource: ResourceId,
        /// Where its token came from.
        token: TokenKind,
        /// When it arrives.
        arrives_at: Tick,
        /// Whether it re-sends an earlier request.
        retry: bool,
    },
    /// An effect reached the gateway, which delivered it to the partner or dropped it.
    EffectArrived {
        /// The sender.
        worker: WorkerId,
        /// The message.
        message: u64,
        /// The partner.
        partner: String,
        /// The request.
        request: EffectRequest,
        /// Whether the gateway checks tokens.
        enforcement: Enforcement,
        /// Why it was dropped, or `None` if the partner got it.
        dropped: Option<DropReason>,
    },
    /// The sender never learned whether the gateway delivered its effect; the partner may or may
    /// not have received it.
    EffectUnknown {
        /// The sender.
        worker: WorkerId,
        /// The message.
        message: u64,
        /// The partner.
        partner: String,
        /// The request.
        request: EffectRequest,
    },
    /// The network lost a message in flight: it never arrives, and its sender is not told.
    MessageLost {
        /// The sender (for a grant, the worker it was for).
        worker: WorkerId,
        /// The message.
        message: u64,
    },
    /// A fault was to lose a message that was not in flight (already delivered, or never sent).
    LossIgnored {
        /// The message.
        message: u64,
    },
    /// A worker's wall clock jumped.
    ClockSkewed {
        /// The worker.
        worker: WorkerId,
        /// How far it jumped (positive: ahead).
        by: i64,
        /// How far it is off now, in all.
        offset: i64,
    },
    /// The network slowed down for one worker's next messages.
    MessagesDelayed {
        /// The sender.
        worker: WorkerId,
        /// Extra ticks per message.
        ticks: u64,
        /// How many messages.
        count: u32,
    },
    /// The authority restarted.
    AuthorityRestarted {
        /// Whether its counters survived.
        counter_kept: bool,
    },
    /// A store restarted.
    StoreRestarted {
        /// The store.
        store: String,
        /// Whether its highest-generation records survived.
        highest_kept: bool,
    },
    /// A worker stopped early.
    WorkerStopped {
        /// The worker.
        worker: WorkerId,
        /// Why.
        reason: String,
    },
    /// A worker reached the end of its script.
    WorkerFinished {
        /// The worker.
        worker: WorkerId,
    },
}

impl Event {
    /// The event's kind as the history format names it (`lease_granted`).
    pub fn kind(&self) -> &'static str {
        self.into()
    }

    /// The event's own fields, as the history format writes them under its [`kind`](Self::kind),
    /// for a writer of another format.
    pub fn fields(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(kind)) => match kind.into_iter().next() {
                Some((_, serde_json::Value::Object(fields))) => fields,
                _ => serde_json::Map::new(),
            },
            _ => serde_json::Map::new(),
        }
    }

    /// An event from its kind and its own fields, as the history format reads them, for a
    /// reader of another format. The error names a missing or unexpected field, or an unknown
    /// kind.
    pub fn from_fields(
        kind: &str,
        fields: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Event, serde_json::Error> {
        let event =
            serde_json::Map::from_iter([(kind.to_string(), serde_json::Value::Object(fields))]);
        serde_json::from_value(serde_json::Value::Object(event))
    }

    /// The worker (or other actor) this event belongs to, for lanes and filters.
    pub fn actor(&self) -> &str {
        match self {
            Event::LeaseGranted { worker, .. }
            | Event::LeaseBusy { worker, .. }
            | Event::GrantReceived { worker, .. }
            | Event::Renewed { worker, .. }
            | Event::RenewFailed { worker, .. }
            | Event::Released { worker, .. }
            | Event::LeaseExpired { worker, .. }
            | Event::Paused { worker, .. }
            | Event::Resumed { worker, .. }
            | Event::Computing { worker, .. }
            | Event::ReadValue { worker, .. }
            | Event::LeaseChecked { worker, .. }
            | Event::WriteSent { worker, .. }
            | Event::WriteArrived { worker, .. }
            | Event::CheckPassed { worker, .. }
            | Event::WriteCommitted { worker, .. }
            | Event::EffectSent { worker, .. }
            | Event::EffectArrived { worker, .. }
            | Event::WriteUnknown { worker, .. }
            | Event::EffectUnknown { worker, .. }
            | Event::WorkerStopped { worker, .. }
            | Event::MessagesDelayed { worker, .. }
            | Event::MessageLost { worker, .. }
            | Event::ClockSkewed { worker, .. }
            | Event::PauseSkipped { worker, .. }
            | Event::PauseIgnored { worker, .. }
            | Event::WorkerFinished { worker } => worker.as_str(),
            Event::AuthorityRestarted { .. } => "authority",
            Event::LossIgnored { .. } => "network",
            Event::StoreRestarted { store, .. } => store,
        }
    }

    /// The fields a write shares with every event that decides or loses it at its store
    /// (arrived, check passed, committed, outcome unknown), in one piece; `None` for every other
    /// event.
    pub fn store_write(&self) -> Option<StoreWrite<'_>> {
        match self {
            Event::WriteArrived { worker, message, store, path, data, request, .. }
            | Event::CheckPassed { worker, message, store, path, data, request, .. }
            | Event::WriteCommitted { worker, message, store, path, data, request, .. }
            | Event::WriteUnknown { worker, message, store, path, data, request } => {
                Some(StoreWrite { worker, message: *message, store, path, data, request })
            }
            _ => None,
        }
    }
}

/// What the four events of a write at its store ([`WriteArrived`](Event::WriteArrived),
/// [`CheckPassed`](Event::CheckPassed), [`WriteCommitted`](Event::WriteCommitted) and
/// [`WriteUnknown`](Event::WriteUnknown)) share: who sent it, in which message, to which store,
/// path and data, with what request. A history writes these fields flat in each event, in each
/// event's own order, and its reader refuses unknown fields; a flattened struct would change
/// both, so the events keep their fields and Rust code reads them through
/// [`Event::store_write`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreWrite<'a> {
    /// The sender.
    pub worker: &'a WorkerId,
    /// The message that carried the write.
    pub message: u64,
    /// The store.
    pub store: &'a str,
    /// The write path.
    pub path: &'a str,
    /// The data the path writes.
    pub data: &'a str,
    /// The request.
    pub request: &'a WriteRequest,
}

impl HeapSize for Event {
    fn heap_bytes(&self) -> usize {
        match self {
            Event::LeaseGranted { worker, resource, .. }
            | Event::GrantReceived { worker, resource, .. }
            | Event::Renewed { worker, resource, .. }
            | Event::Released { worker, resource, .. }
            | Event::LeaseExpired { worker, resource, .. }
            | Event::LeaseChecked { worker, resource, .. } => {
                worker.heap_bytes() + resource.heap_bytes()
            }
            Event::LeaseBusy { worker, resource, holder, .. } => {
                worker.heap_bytes() + resource.heap_bytes() + holder.heap_bytes()
            }
            Event::RenewFailed { worker, resource, reason } => {
                worker.heap_bytes() + resource.heap_bytes() + reason.heap_bytes()
            }
            Event::Paused { worker, .. }
            | Event::PauseIgnored { worker, .. }
            | Event::PauseSkipped { worker, .. }
            | Event::Computing { worker, .. }
            | Event::MessagesDelayed { worker, .. }
            | Event::MessageLost { worker, .. }
            | Event::ClockSkewed { worker, .. }
            | Event::WorkerFinished { worker } => worker.heap_bytes(),
            Event::LossIgnored { .. } => 0,
            Event::Resumed { worker, resource, .. } => worker.heap_bytes() + resource.heap_bytes(),
            Event::ReadValue { worker, store, path, resource, value, .. } => {
                worker.heap_bytes()
                    + store.heap_bytes()
                    + path.heap_bytes()
                    + resource.heap_bytes()
                    + value.heap_bytes()
            }
            Event::WriteSent { worker, store, path, request, .. } => {
                worker.heap_bytes() + store.heap_bytes() + path.heap_bytes() + request.heap_bytes()
            }
            Event::CheckPassed { worker, store, path, data, request, .. } => {
                worker.heap_bytes()
                    + store.heap_bytes()
                    + path.heap_bytes()
                    + data.heap_bytes()
                    + request.heap_bytes()
            }
            Event::WriteArrived {
                worker,
                store,
                path,
                data,
                request,
                outcome,
                value_after,
                ..
            } => {
                worker.heap_bytes()
                    + store.heap_bytes()
                    + path.heap_bytes()
                    + data.heap_bytes()
                    + request.heap_bytes()
                    + outcome.heap_bytes()
                    + value_after.heap_bytes()
            }
            Event::WriteCommitted { worker, store, path, data, request, outcome, .. } => {
                worker.heap_bytes()
                    + store.heap_bytes()
                    + path.heap_bytes()
                    + data.heap_bytes()
                    + request.heap_bytes()
                    + outcome.heap_bytes()
            }
            Event::EffectSent { worker, request, resource, .. } => {
                worker.heap_bytes() + request.heap_bytes() + resource.heap_bytes()
            }
            Event::EffectArrived { worker, partner, request, dropped, .. } => {
                worker.heap_bytes()
                    + partner.heap_bytes()
                    + request.heap_bytes()
                    + dropped.heap_bytes()
            }
            Event::WriteUnknown { worker, store, path, data, request, .. } => {
                worker.heap_bytes()
                    + store.heap_bytes()
                    + path.heap_bytes()
                    + data.heap_bytes()
                    + request.heap_bytes()
            }
            Event::EffectUnknown { worker, partner, request, .. } => {
                worker.heap_bytes() + partner.heap_bytes() + request.heap_bytes()
            }
            Event::AuthorityRestarted { .. } => 0,
            Event::StoreRestarted { store, .. } => store.heap_bytes(),
            Event::WorkerStopped { worker, reason } => worker.heap_bytes() + reason.heap_bytes(),
        }
    }
}
