//! Memory estimates: what a run's bookkeeping and a search's states take, in bytes, so that the
//! engine and the explorer stop within a budget instead of exhausting the machine.
//!
//! The estimate is read off the data itself (string lengths, entry counts, the inline size of
//! each element, a typical allocator's header and rounding), not measured, so the core stays
//! pure: no allocator hooks and no reading of the process's memory. Strings and lists count
//! their length rather than their spare capacity, so that the figures depend on the content alone
//! (a copy of a scenario gives the same ones); the engine's and the explorer's own growing lists
//! count their capacity, which they control. Parts of a state kept behind `Arc` (workers, store
//! cells, the checker's cells) are charged to the state that allocated them and never twice;
//! `SimState::heap_bytes_beyond` says what one state holds that another does not share.
//!
//! Why not a crate: `deepsize` and `get-size2` derive this walk, but support neither `litemap`
//! (which the orphan rule keeps us from adding), nor a question like "what does this state hold
//! that its parent does not", which snapshots and the explorer's frontier need; they would also
//! put a derive on every model type and a proc-macro in the page's build.

use crate::check::{
    CellCheck, CheckState, Checker, Done, Live, Rank, Reached, Recent, Sender, Sent, Steps,
};
use crate::fence::authority::LeaseAuthority;
use crate::fence::gateway::{Delivery, DropReason, Effect, EffectRequest, SideEffectGateway};
use crate::fence::generation::TokenError;
use crate::fence::idempotency::{FencedResource, Forgotten, IdempotencyStore, WriteOutcome};
use crate::fence::log::{Attempt, LogEntry, LoggedOutcome};
use crate::fence::register::{FencedRegister, WriteRejection, WriteRequest};
use crate::format::model::{Checkpoint, Fault, Scenario, Step, StoreSpec, WorkerSpec};
use crate::history::event::Event;
use crate::ids::{OperationId, ResourceId, WorkerId, WorkflowKey};
use crate::invariant::{Place, Violation};
use crate::sim::compiled::{Compiled, CompiledFault, EffectOp, Op, Route, Worker, WriteOp};
use crate::sim::state::*;
use litemap::LiteMap;
use std::collections::BTreeMap;
use std::fmt;
use std::mem::size_of;
use std::sync::Arc;

/// One kibibyte.
pub const KIB: usize = 1 << 10;
/// One mebibyte.
pub const MIB: usize = 1 << 20;
/// One gibibyte.
pub const GIB: usize = 1 << 30;

/// The memory budget of a run or a search unless the caller sets one: well under what a laptop or
/// a CI machine has, and far more than any built-in story needs.
pub const DEFAULT_MEMORY_BUDGET: usize = 512 * MIB;

/// A number of bytes, shown and read the way people write memory sizes (`512 MiB`, `2GiB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some((unit, size)) = [("GiB", GIB), ("MiB", MIB), ("KiB", KIB)]
            .into_iter()
            .find(|(_, size)| self.0 >= *size)
        else {
            return write!(f, "{} bytes", self.0);
        };
        // Whole units and rounded tenths in integers, in u64, as ten times a remainder can
        // overflow a 32-bit usize.
        let (mut whole, rest, size) =
            (self.0 as u64 / size as u64, (self.0 % size) as u64, size as u64);
        let mut tenths = (rest * 10 + size / 2) / size;
        if tenths == 10 {
            (whole, tenths) = (whole + 1, 0);
        }
        if tenths == 0 {
            write!(f, "{whole} {unit}")
        } else {
            write!(f, "{whole}.{tenths} {unit}")
        }
    }
}

/// Why a memory size could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BytesError {
    /// Nothing was given.
    #[error("no memory size given; write a number and a unit, e.g. 256MiB or 2GiB")]
    Empty,
    /// The text does not start with a number.
    #[error("{text:?} is not a memory size; write a number and a unit, e.g. 256MiB or 2GiB")]
    NotANumber {
        /// What was given.
        text: String,
    },
    /// The unit is not one of the known ones.
    #[error("unknown unit {unit:?} in {text:?}; use B, KiB, MiB, GiB or TiB (or KB, MB, GB, TB for powers of 1000)")]
    UnknownUnit {
        /// The unit as written.
        unit: String,
        /// What was given.
        text: String,
    },
    /// The size does not fit in this machine's address space.
    #[error("{text:?} is more memory than this machine can address")]
    TooLarge {
        /// What was given.
        text: String,
    },
}

impl std::str::FromStr for Bytes {
    type Err = BytesError;

    fn from_str(text: &str) -> Result<Bytes, BytesError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(BytesError::Empty);
        }
        let split =
            trimmed.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(trimmed.len());
        let (number, unit) = trimmed.split_at(split);
        let not_a_number = || BytesError::NotANumber { text: text.to_string() };
        let value: f64 = number.parse().map_err(|_| not_a_number())?;
        let unit = unit.trim();
        let multiplier: f64 = match unit.to_ascii_lowercase().as_str() {
            "" | "b" => 1.0,
            "k" | "kib" => KIB as f64,
            "m" | "mib" => MIB as f64,
            "g" | "gib" => GIB as f64,
            "t" | "tib" => GIB as f64 * 1024.0,
            "kb" => 1e3,
            "mb" => 1e6,
            "gb" => 1e9,
            "tb" => 1e12,
            _ => {
                return Err(BytesError::UnknownUnit {
                    unit: unit.to_string(),
                    text: text.to_string(),
                })
            }
        };
        let bytes = value * multiplier;
        if !bytes.is_finite() || bytes >= usize::MAX as f64 {
            return Err(BytesError::TooLarge { text: text.to_string() });
        }
        Ok(Bytes(bytes as usize))
    }
}

/// What `bytes` cost as one heap allocation: a typical allocator adds an 8-byte header and rounds
/// up to 16 bytes, with 32 bytes at least. Nothing is allocated for zero bytes.
pub(crate) fn block(bytes: usize) -> usize {
    if bytes == 0 {
        0
    } else {
        (bytes + 8).next_multiple_of(16).max(32)
    }
}

/// The bytes of a buffer of `capacity` elements of type `T`.
pub(crate) fn buffer<T>(capacity: usize) -> usize {
    block(capacity.saturating_mul(size_of::<T>()))
}

/// The bytes of a `BTreeMap<K, V>`'s nodes for `len` entries. A node holds up to 11 entries;
/// filled by inserts, nodes are half to two thirds full (7 entries are assumed), and internal
/// nodes (one per six or so below) add 12 child pointers.
fn btree_nodes<K, V>(len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    let leaf = 16 + 11 * (size_of::<K>() + size_of::<V>());
    let leaves = len.div_ceil(7);
    let internal = if leaves > 1 { leaves.div_ceil(6) } else { 0 };
    leaves * block(leaf) + internal * block(leaf + 12 * size_of::<usize>())
}

/// The bytes of a `HashSet<u64>`-like table that can hold `capacity` entries without growing:
/// a power of two of buckets (an eighth kept free), a control byte each and one group of 16.
pub(crate) fn hash_table<T>(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        (capacity + 1).next_power_of_two()
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    block(buckets * (size_of::<T>() + 1) + 16)
}

/// What a value owns on the heap, in bytes, beyond its own inline size.
pub(crate) trait HeapSize {
    /// Whether a value of this type can own anything on the heap. Collections of types that
    /// cannot skip the walk over their elements (the agenda's thousands of keys, say).
    const OWNS_HEAP: bool = true;

    /// The estimate, allocator overhead included.
    fn heap_bytes(&self) -> usize;
}

macro_rules! no_heap {
    ($($ty:ty),+ $(,)?) => {$(
        impl HeapSize for $ty {
            const OWNS_HEAP: bool = false;

            fn heap_bytes(&self) -> usize {
                0
            }
        }
    )+};
}

/// The heap bytes of the elements `items`, not walked when no element can own any.
fn owned<'a, T: HeapSize + 'a>(items: impl Iterator<Item = &'a T>) -> usize {
    if T::OWNS_HEAP {
        items.map(T::heap_bytes).sum()
    } else {
        0
    }
}

/// Like [`owned`], for the entries of a map.
fn owned_entries<'a, K: HeapSize + 'a, V: HeapSize + 'a>(
    entries: impl Iterator<Item = (&'a K, &'a V)>,
) -> usize {
    if K::OWNS_HEAP || V::OWNS_HEAP {
        entries.map(|(k, v)| k.heap_bytes() + v.heap_bytes()).sum()
    } else {
        0
    }
}

no_heap!(
    u32,
    u64,
    usize,
    bool,
    crate::clock::Tick,
    crate::fence::generation::Generation,
    crate::fence::register::Revision,
    crate::fence::register::Fence,
    crate::fence::register::RejectionReason,
    crate::fence::idempotency::StoredResult,
    crate::invariant::InvariantKind,
    HeldLease,
    AgendaKey,
    Pending,
    Sent,
    Steps,
    Rank,
    Reached,
    Live,
    Done,
);

impl HeapSize for String {
    fn heap_bytes(&self) -> usize {
        block(self.len())
    }
}

macro_rules! string_ids {
    ($($ty:ty),+) => {$(
        impl HeapSize for $ty {
            fn heap_bytes(&self) -> usize {
                block(self.as_str().len())
            }
        }
    )+};
}

string_ids!(ResourceId, WorkerId, OperationId, WorkflowKey);

impl<T: HeapSize> HeapSize for Option<T> {
    const OWNS_HEAP: bool = T::OWNS_HEAP;

    fn heap_bytes(&self) -> usize {
        self.as_ref().map_or(0, T::heap_bytes)
    }
}

impl<T: HeapSize> HeapSize for Vec<T> {
    fn heap_bytes(&self) -> usize {
        buffer::<T>(self.len()) + owned(self.iter())
    }
}

impl<K: HeapSize, V: HeapSize> HeapSize for BTreeMap<K, V> {
    fn heap_bytes(&self) -> usize {
        btree_nodes::<K, V>(self.len()) + owned_entries(self.iter())
    }
}

impl<K: HeapSize + Ord, V: HeapSize> HeapSize for LiteMap<K, V> {
    fn heap_bytes(&self) -> usize {
        buffer::<(K, V)>(self.len()) + owned_entries(self.iter())
    }
}

impl<A: HeapSize, B: HeapSize> HeapSize for (A, B) {
    const OWNS_HEAP: bool = A::OWNS_HEAP || B::OWNS_HEAP;

    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes() + self.1.heap_bytes()
    }
}

impl<A: HeapSize, B: HeapSize, C: HeapSize> HeapSize for (A, B, C) {
    const OWNS_HEAP: bool = A::OWNS_HEAP || B::OWNS_HEAP || C::OWNS_HEAP;

    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes() + self.1.heap_bytes() + self.2.heap_bytes()
    }
}

/// The whole allocation behind an `Arc`: its two counts, the value and what the value owns.
/// Callers that share `Arc`s between states decide whether a holder pays for it.
impl<T: HeapSize> HeapSize for Arc<T> {
    fn heap_bytes(&self) -> usize {
        block(2 * size_of::<usize>() + size_of::<T>()) + (**self).heap_bytes()
    }
}

impl HeapSize for TokenError {
    fn heap_bytes(&self) -> usize {
        match self {
            TokenError::NotPositive { got } | TokenError::TooLarge { got } => got.heap_bytes(),
            TokenError::Forged { .. } | TokenError::Exhausted => 0,
        }
    }
}

impl HeapSize for WriteRequest {
    fn heap_bytes(&self) -> usize {
        self.resource.heap_bytes() + self.operation.heap_bytes() + self.value.heap_bytes()
    }
}

impl HeapSize for WriteRejection {
    fn heap_bytes(&self) -> usize {
        match self {
            WriteRejection::InvalidToken(error) => error.heap_bytes(),
            WriteRejection::WrongResource { expected, got } => {
                expected.heap_bytes() + got.heap_bytes()
            }
            WriteRejection::Stale { .. }
            | WriteRejection::RevisionConflict { .. }
            | WriteRejection::RevisionExhausted { .. } => 0,
        }
    }
}

impl HeapSize for WriteOutcome {
    fn heap_bytes(&self) -> usize {
        match self {
            WriteOutcome::Rejected(rejection) => rejection.heap_bytes(),
            WriteOutcome::Applied(_) | WriteOutcome::Replayed(_) => 0,
        }
    }
}

impl HeapSize for Effect {
    fn heap_bytes(&self) -> usize {
        match self {
            Effect::CapturePayment { .. } => 0,
            Effect::SendEmail { to, subject } => to.heap_bytes() + subject.heap_bytes(),
            Effect::CallWebhook { endpoint, payload } => {
                endpoint.heap_bytes() + payload.heap_bytes()
            }
        }
    }
}

impl HeapSize for EffectRequest {
    fn heap_bytes(&self) -> usize {
        self.workflow.heap_bytes() + self.operation.heap_bytes() + self.effect.heap_bytes()
    }
}

impl HeapSize for DropReason {
    fn heap_bytes(&self) -> usize {
        match self {
            DropReason::Stale { .. } => 0,
            DropReason::InvalidToken { error } => error.heap_bytes(),
            DropReason::Duplicate { operation, .. } => operation.heap_bytes(),
        }
    }
}

impl HeapSize for Delivery {
    fn heap_bytes(&self) -> usize {
        self.request.heap_bytes()
    }
}

impl HeapSize for Forgotten {
    fn heap_bytes(&self) -> usize {
        self.operation.heap_bytes()
    }
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

impl HeapSize for Violation {
    fn heap_bytes(&self) -> usize {
        self.detail.heap_bytes() + self.place.heap_bytes() + self.witness.heap_bytes()
    }
}

impl HeapSize for Place {
    fn heap_bytes(&self) -> usize {
        match self {
            Place::Authority | Place::Partner => 0,
            Place::Store { store, path, data, resource } => {
                store.heap_bytes() + path.heap_bytes() + data.heap_bytes() + resource.heap_bytes()
            }
        }
    }
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

impl HeapSize for Step {
    fn heap_bytes(&self) -> usize {
        match self {
            Step::Acquire { resource }
            | Step::Renew { resource }
            | Step::Release { resource }
            | Step::CheckLease { resource } => resource.heap_bytes(),
            Step::Retry { operation } => operation.heap_bytes(),
            Step::Read { resource, store, path } => {
                resource.heap_bytes() + store.heap_bytes() + path.heap_bytes()
            }
            Step::Compute { .. } | Step::Pause { .. } => 0,
            Step::Write(write) => {
                write.resource.heap_bytes()
                    + write.value.heap_bytes()
                    + write.operation.heap_bytes()
                    + write.store.heap_bytes()
                    + write.path.heap_bytes()
            }
            Step::Effect(effect) => {
                effect.resource.heap_bytes()
                    + effect.workflow.heap_bytes()
                    + effect.effect.heap_bytes()
                    + effect.operation.heap_bytes()
            }
        }
    }
}

impl HeapSize for WorkerSpec {
    fn heap_bytes(&self) -> usize {
        self.name.heap_bytes() + self.script.heap_bytes()
    }
}

impl HeapSize for StoreSpec {
    fn heap_bytes(&self) -> usize {
        let paths: usize =
            self.paths.iter().map(|p| p.name.heap_bytes() + p.data.heap_bytes()).sum();
        self.name.heap_bytes() + buffer::<crate::format::model::PathSpec>(self.paths.len()) + paths
    }
}

impl HeapSize for Fault {
    fn heap_bytes(&self) -> usize {
        match self {
            Fault::PauseWorker { worker, .. }
            | Fault::DelayMessages { worker, .. }
            | Fault::SkewClock { worker, .. } => worker.heap_bytes(),
            Fault::RestartStore { store } => store.heap_bytes(),
            Fault::RestartAuthority | Fault::LoseMessage { .. } => 0,
        }
    }
}

impl HeapSize for Scenario {
    fn heap_bytes(&self) -> usize {
        let faults: usize = self.faults.iter().map(|f| f.fault.heap_bytes()).sum();
        let injected: usize = self.injected.iter().map(|f| f.fault.heap_bytes()).sum();
        let checkpoints: usize = (self.checkpoints.iter())
            .map(|c| match c {
                Checkpoint::WriteAccepted { worker, .. }
                | Checkpoint::EffectDelivered { worker, .. } => worker.heap_bytes(),
                Checkpoint::FinalValue { store, data } => store.heap_bytes() + data.heap_bytes(),
            })
            .sum();
        self.name.heap_bytes()
            + self.variant.heap_bytes()
            + self.title.heap_bytes()
            + self.intro.heap_bytes()
            + self.outcome.heap_bytes()
            + self.resources.heap_bytes()
            + self.stores.heap_bytes()
            + self.gateway.as_ref().map_or(0, |g| g.partner.heap_bytes())
            + self.workers.heap_bytes()
            + buffer::<crate::format::model::FaultSpec>(self.faults.len())
            + faults
            + buffer::<crate::format::model::Injection>(self.injected.len())
            + injected
            + buffer::<Checkpoint>(self.checkpoints.len())
            + checkpoints
            + self.expect.violations.heap_bytes()
            + self.expect.rejections.heap_bytes()
            + self.schedule.heap_bytes()
    }
}

impl HeapSize for LeaseAuthority {
    fn heap_bytes(&self) -> usize {
        let mut len = 0;
        let mut owned = 0;
        for (resource, record) in self.records() {
            len += 1;
            let lease = record.lease.as_ref();
            owned += resource.heap_bytes()
                + lease.map_or(0, |l| l.resource.heap_bytes() + l.holder.heap_bytes());
        }
        buffer::<(ResourceId, crate::fence::authority::ResourceRecord)>(len) + owned
    }
}

impl HeapSize for FencedRegister {
    fn heap_bytes(&self) -> usize {
        self.resource().heap_bytes() + self.value().map_or(0, |v| block(v.len()))
    }
}

impl HeapSize for IdempotencyStore {
    fn heap_bytes(&self) -> usize {
        // Each remembered id is held twice: in the map of results and in the queue that orders
        // them for forgetting.
        let ids: usize = self.remembered().map(|(id, _)| id.heap_bytes()).sum();
        let queue = self.len().max(1).next_power_of_two() * size_of::<OperationId>();
        let forgotten = self.forgotten();
        btree_nodes::<OperationId, crate::fence::idempotency::StoredResult>(self.len())
            + if self.is_empty() { 0 } else { block(queue) }
            + 2 * ids
            + buffer::<Forgotten>(forgotten.len())
            + forgotten.iter().map(Forgotten::heap_bytes).sum::<usize>()
    }
}

impl HeapSize for FencedResource {
    fn heap_bytes(&self) -> usize {
        self.register.heap_bytes() + self.idempotency.heap_bytes()
    }
}

impl HeapSize for SideEffectGateway {
    fn heap_bytes(&self) -> usize {
        // The gateway keeps each delivery and an index of delivered operations by workflow; its
        // per-workflow fences are a handful and left out.
        let delivered = self.delivered();
        let ids: usize = delivered
            .iter()
            .map(|d| d.request.workflow.heap_bytes() + d.request.operation.heap_bytes())
            .sum();
        buffer::<Delivery>(delivered.len())
            + delivered.iter().map(Delivery::heap_bytes).sum::<usize>()
            + btree_nodes::<(WorkflowKey, OperationId), crate::clock::Tick>(delivered.len())
            + ids
    }
}

impl HeapSize for WorkerStatus {
    fn heap_bytes(&self) -> usize {
        match self {
            WorkerStatus::WaitingForLease { resource, .. }
            | WorkerStatus::AwaitingGrant { resource } => resource.heap_bytes(),
            WorkerStatus::Stopped { reason } => reason.heap_bytes(),
            WorkerStatus::NotStarted
            | WorkerStatus::Running
            | WorkerStatus::Busy { .. }
            | WorkerStatus::Paused { .. }
            | WorkerStatus::Finished => 0,
        }
    }
}

impl HeapSize for MessageBody {
    fn heap_bytes(&self) -> usize {
        match self {
            MessageBody::Grant { resource, .. } => resource.heap_bytes(),
            MessageBody::Write { path, request, .. } => path.heap_bytes() + request.heap_bytes(),
            MessageBody::Effect { request, resource, .. } => {
                request.heap_bytes() + resource.heap_bytes()
            }
        }
    }
}

impl HeapSize for Message {
    fn heap_bytes(&self) -> usize {
        self.worker.heap_bytes() + self.body.heap_bytes()
    }
}

impl HeapSize for WorkerState {
    fn heap_bytes(&self) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let WorkerState {
            name,
            status,
            pc: _,
            leases,
            clock_offset: _,
            last_read,
            sent,
            pending: _,
            slowed: _,
            awaiting_grant,
        } = self;
        name.heap_bytes()
            + status.heap_bytes()
            + leases.heap_bytes()
            + last_read.heap_bytes()
            + sent.heap_bytes()
            + awaiting_grant.heap_bytes()
    }
}

impl HeapSize for Cell {
    fn heap_bytes(&self) -> usize {
        self.resource.heap_bytes()
    }
}

impl HeapSize for GatewayState {
    fn heap_bytes(&self) -> usize {
        self.partner.heap_bytes() + self.gateway.heap_bytes() + self.received.heap_bytes()
    }
}

impl HeapSize for Compiled {
    fn heap_bytes(&self) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let Compiled { resources, workers, stores, faults, injected, branching: _ } = self;
        let ops = |script: &Vec<Op>| -> usize {
            buffer::<Op>(script.len())
                + script
                    .iter()
                    .map(|op| match op {
                        Op::Write(w) => {
                            block(size_of::<WriteOp>())
                                + w.operation.heap_bytes()
                                + w.value.heap_bytes()
                        }
                        Op::Effect(e) => {
                            block(size_of::<EffectOp>())
                                + e.workflow.heap_bytes()
                                + e.operation.heap_bytes()
                                + e.effect.heap_bytes()
                        }
                        Op::Retry(operation) => operation.heap_bytes(),
                        _ => 0,
                    })
                    .sum::<usize>()
        };
        resources.heap_bytes()
            + buffer::<Worker>(workers.len())
            + workers.iter().map(|w| w.id.heap_bytes() + ops(&w.script)).sum::<usize>()
            + buffer::<Vec<Route>>(stores.len())
            + stores
                .iter()
                .map(|routes| {
                    buffer::<Route>(routes.len())
                        + routes
                            .iter()
                            .map(|r| r.name.heap_bytes() + r.data.heap_bytes())
                            .sum::<usize>()
                })
                .sum::<usize>()
            + buffer::<CompiledFault>(faults.len())
            + buffer::<(usize, CompiledFault)>(injected.len())
    }
}

impl HeapSize for crate::maps::StringSet {
    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

impl<V: HeapSize, const CAP: usize> HeapSize for Recent<V, CAP> {
    fn heap_bytes(&self) -> usize {
        // The hash table: a slot per bucket (with a control byte), buckets a power of two with
        // room to spare; each id once, shared by the table and the order it was seen in (its
        // two reference counts beside it).
        let slots = self.seen.capacity().next_power_of_two();
        let ids: usize = self.order().iter().map(|op| block(16 + op.len())).sum();
        block(slots * (size_of::<(std::sync::Arc<str>, V)>() + 1))
            + self.seen.values().map(HeapSize::heap_bytes).sum::<usize>()
            + buffer::<std::sync::Arc<str>>(self.order().capacity())
            + ids
    }
}

impl HeapSize for CellCheck {
    fn heap_bytes(&self) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let CellCheck {
            max_presented,
            maybe_presented,
            last,
            maybe_last,
            applied_ops,
            max_attempted,
            last_seq,
            highest_token: _,
        } = self;
        max_presented.heap_bytes()
            + maybe_presented.heap_bytes()
            + last.heap_bytes()
            + maybe_last.heap_bytes()
            + applied_ops.heap_bytes()
            + max_attempted.heap_bytes()
            + last_seq.heap_bytes()
    }
}

impl HeapSize for Sender {
    fn heap_bytes(&self) -> usize {
        self.ops.heap_bytes()
    }
}

impl Checker {
    /// What this checker holds that `base` (the checker it was cloned from, if any) does not
    /// share, in estimated bytes; like [`SimState::heap_bytes_beyond`].
    pub(crate) fn heap_bytes_beyond(&self, base: Option<&Checker>) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let CheckState {
            epochs,
            max_issued,
            live,
            live_why,
            grants,
            held,
            let_go,
            senders,
            messages,
            cells,
            partner_ops,
            effect_presented,
            effect_maybe,
            broken: _,
        } = self.state();
        epochs.heap_bytes()
            + max_issued.heap_bytes()
            + live.heap_bytes()
            + live_why.heap_bytes()
            + grants.heap_bytes()
            + held.heap_bytes()
            + let_go.0.heap_bytes()
            + buffer::<Arc<Sender>>(senders.len())
            + senders
                .iter()
                .enumerate()
                .filter(|(i, sender)| {
                    let theirs = base.and_then(|b| b.state().senders.get(*i));
                    !theirs.is_some_and(|b| Arc::ptr_eq(b, sender))
                })
                .map(|(_, sender)| sender.heap_bytes())
                .sum::<usize>()
            + messages.heap_bytes()
            + shared_map(cells, base.map(|b| &b.state().cells))
            + partner_ops.heap_bytes()
            + effect_presented.heap_bytes()
            + effect_maybe.heap_bytes()
    }
}

/// The heap bytes of a map of shared values that `base` (the same map in another state) does not
/// share: the map's own buffer and keys always, a value only when `base` holds another one.
fn shared_map<K: HeapSize + Ord, V: HeapSize>(
    map: &LiteMap<K, Arc<V>>,
    base: Option<&LiteMap<K, Arc<V>>>,
) -> usize {
    let entries: usize = map
        .iter()
        .map(|(key, value)| {
            let shared = base.and_then(|b| b.get(key)).is_some_and(|b| Arc::ptr_eq(b, value));
            key.heap_bytes() + if shared { 0 } else { value.heap_bytes() }
        })
        .sum();
    buffer::<(K, Arc<V>)>(map.len()) + entries
}

/// The heap bytes that dropping `shared` frees: the whole allocation when this was the last
/// holder, else nothing. Asking as the reference is dropped, rather than reading the count first,
/// gives each allocation to exactly one holder even when threads drop holders at once.
fn freed<T: HeapSize>(shared: Arc<T>) -> usize {
    Arc::into_inner(shared)
        .map_or(0, |value| block(2 * size_of::<usize>() + size_of::<T>()) + value.heap_bytes())
}

impl Checker {
    /// Drops the checker and returns the heap bytes of the shared per-worker and per-cell
    /// records that it was the last to hold (those [`Checker::heap_bytes_beyond`] counts apart).
    pub(crate) fn drop_shared(self) -> usize {
        let CheckState { senders, cells, .. } = self.into_state();
        let senders: usize = senders.into_iter().map(freed).sum();
        senders + cells.into_iter().map(|(_, cell)| freed(cell)).sum::<usize>()
    }
}

impl SimState {
    /// Drops the state and returns the heap bytes of the workers and cells that it was the last
    /// to hold (those [`SimState::heap_bytes_beyond`] counts apart).
    pub(crate) fn drop_shared(self) -> usize {
        let workers: usize = self.workers.into_iter().map(freed).sum();
        let cells = self.stores.into_iter().flat_map(|store| store.cells.into_iter());
        workers + cells.map(|(_, cell)| freed(cell)).sum::<usize>()
    }
}

impl SimState {
    /// The heap bytes this state holds that `base` does not share with it: its own maps and
    /// lists in full (a clone copies them), and only those workers and cells that are not the
    /// very same `Arc` as in `base`. With `base` a state it was cloned from (a snapshot, the
    /// explorer's parent), that is what keeping this state costs on top of keeping `base`; with
    /// no `base`, it is everything.
    pub(crate) fn heap_bytes_beyond(&self, base: Option<&SimState>) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let SimState {
            now: _,
            position: _,
            cursor: _,
            authority,
            workers,
            stores,
            gateway,
            in_flight,
            checked,
            finished: _,
            agenda,
            due: _,
            expiry,
            next_message: _,
            injected: _,
            next_injection: _,
        } = self;
        let workers_bytes: usize = workers
            .iter()
            .enumerate()
            .map(|(i, worker)| {
                let theirs = base.and_then(|b| b.workers.get(i));
                if theirs.is_some_and(|b| Arc::ptr_eq(b, worker)) {
                    0
                } else {
                    worker.heap_bytes()
                }
            })
            .sum();
        let stores_bytes: usize = stores
            .iter()
            .enumerate()
            .map(|(s, store)| {
                let theirs = base.and_then(|b| b.stores.get(s)).map(|b| &b.cells);
                store.name.heap_bytes() + shared_map(&store.cells, theirs)
            })
            .sum();
        authority.heap_bytes()
            + buffer::<Arc<WorkerState>>(workers.len())
            + workers_bytes
            + buffer::<StoreState>(stores.len())
            + stores_bytes
            + gateway.heap_bytes()
            + in_flight.heap_bytes()
            + checked.heap_bytes()
            + agenda.heap_bytes()
            + expiry.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_in_the_largest_unit_that_fits() {
        assert_eq!(Bytes(512 * MIB).to_string(), "512 MiB");
        assert_eq!(Bytes(2 * GIB).to_string(), "2 GiB");
        assert_eq!(Bytes(MIB + MIB / 2).to_string(), "1.5 MiB");
        assert_eq!(Bytes(1000).to_string(), "1000 bytes");
        assert_eq!(Bytes(3 * KIB).to_string(), "3 KiB");
        assert_eq!(Bytes(MIB - 1).to_string(), "1024 KiB");
        assert_eq!(Bytes(GIB + 999 * MIB).to_string(), "2 GiB");
        assert_eq!(Bytes(GIB + 900 * MIB).to_string(), "1.9 GiB");
    }

    #[test]
    fn sizes_read_with_binary_and_decimal_units() {
        let read = |s: &str| s.parse::<Bytes>().map(|b| b.0);
        assert_eq!(read("256MiB"), Ok(256 * MIB));
        assert_eq!(read("2GiB"), Ok(2 * GIB));
        assert_eq!(read(" 2 gib "), Ok(2 * GIB));
        assert_eq!(read("1.5G"), Ok(GIB + GIB / 2));
        assert_eq!(read("512MB"), Ok(512_000_000));
        assert_eq!(read("4096"), Ok(4096));
        assert_eq!(read(""), Err(BytesError::Empty));
        let unknown = read("12XB").unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "unknown unit \"XB\" in \"12XB\"; use B, KiB, MiB, GiB or TiB (or KB, MB, GB, TB for powers of 1000)"
        );
        assert!(matches!(read("lots"), Err(BytesError::NotANumber { .. })));
        assert!(matches!(read("1.2.3MiB"), Err(BytesError::NotANumber { .. })));
        assert!(matches!(read("99999999999TiB"), Err(BytesError::TooLarge { .. })));
    }

    #[test]
    fn strings_and_lists_count_their_length_and_the_allocators_share() {
        assert_eq!(String::new().heap_bytes(), 0);
        assert_eq!(String::with_capacity(100).heap_bytes(), 0, "spare capacity is not content");
        assert_eq!("x".repeat(100).heap_bytes(), 112);
        let v: Vec<u64> = (0..10).collect();
        assert_eq!(v.heap_bytes(), 96);
        let names = vec!["a".to_string(); 3];
        assert_eq!(names.heap_bytes(), block(3 * size_of::<String>()) + 3 * 32);
    }
}
