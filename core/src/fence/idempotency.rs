//! Operation ids and their stored results: how a retry is recognised instead of applied twice.

use crate::clock::Tick;
use crate::fence::generation::Generation;
use crate::fence::register::{Applied, FencedRegister, WriteRejection, WriteRequest};
use crate::ids::OperationId;
use crate::memory::{block, btree_nodes, buffer, no_heap, HeapSize};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::num::NonZeroUsize;

/// How long operation ids are remembered. Memory is finite, so every real store forgets
/// eventually; what matters is knowing when, and what a retry gets afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Hash)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Retention {
    /// Keep at most this many operation ids; the oldest is forgotten first.
    #[serde(default)]
    pub max_entries: Option<NonZeroUsize>,
    /// Forget an operation id this many ticks after it was recorded.
    #[serde(default)]
    pub max_age: Option<u64>,
}

impl Retention {
    /// Remember everything (fine for tests and short scenarios, not for production).
    pub const FOREVER: Retention = Retention { max_entries: None, max_age: None };

    /// Whether `result` has outlived the maximum age at `now`. Results recorded "after" `now`
    /// (a caller whose clock went back) have not.
    pub fn expired(&self, result: &StoredResult, now: Tick) -> bool {
        self.max_age.is_some_and(|max_age| {
            now.0.checked_sub(result.recorded_at.0).is_some_and(|age| age >= max_age)
        })
    }
}

/// The remembered result of an applied operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct StoredResult {
    /// The generation the operation was applied under.
    pub generation: Generation,
    /// What the register reported when it applied the operation.
    pub applied: Applied,
    /// When it was recorded.
    pub recorded_at: Tick,
}

/// Why an operation id was forgotten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ForgetReason {
    /// The store was full and this was the oldest entry.
    Capacity {
        /// The configured maximum.
        max_entries: NonZeroUsize,
    },
    /// The entry outlived the maximum age.
    Age {
        /// The configured maximum age in ticks.
        max_age: u64,
    },
    /// A caller asked for it to be forgotten.
    Explicit,
}

/// A record that an operation id was forgotten: after this, a retry of it is treated as new.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct Forgotten {
    /// The forgotten operation.
    pub operation: OperationId,
    /// Its stored result, now gone.
    pub result: StoredResult,
    /// When it was forgotten.
    pub at: Tick,
    /// Why.
    pub reason: ForgetReason,
}

/// Remembers applied operations so a retry returns the stored result instead of applying again.
///
/// Forgetting never happens silently: every forgotten id is returned to the caller and kept in
/// [`IdempotencyStore::forgotten`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, Hash)]
pub struct IdempotencyStore {
    retention: Retention,
    entries: BTreeMap<OperationId, StoredResult>,
    /// Operation ids in the order they were recorded, oldest first.
    order: VecDeque<OperationId>,
    forgotten: Vec<Forgotten>,
}

impl IdempotencyStore {
    /// An empty store with the given retention.
    pub fn new(retention: Retention) -> Self {
        IdempotencyStore { retention, ..Default::default() }
    }

    /// The stored result of `operation`, if it is still remembered.
    pub fn lookup(&self, operation: &OperationId) -> Option<&StoredResult> {
        self.entries.get(operation)
    }

    /// Remembers an applied operation, forgetting the oldest entries if that exceeds the capacity.
    pub fn record(&mut self, operation: OperationId, result: StoredResult) -> Vec<Forgotten> {
        if self.entries.insert(operation.clone(), result).is_none() {
            self.order.push_back(operation);
        }
        let mut forgotten = Vec::new();
        if let Some(max) = self.retention.max_entries {
            while self.entries.len() > max.get() {
                let reason = ForgetReason::Capacity { max_entries: max };
                forgotten.extend(self.forget_oldest(result.recorded_at, reason));
            }
        }
        forgotten
    }

    /// Forgets every entry older than the maximum age at `now` and returns what was forgotten.
    ///
    /// An entry expires once `max_age` ticks have passed since it was recorded; entries
    /// recorded "after" `now` (a caller whose clock went back) are kept. Every entry is looked
    /// at, so the rule holds even when calls do not come in time order.
    pub fn expire(&mut self, now: Tick) -> Vec<Forgotten> {
        let Some(max_age) = self.retention.max_age else { return Vec::new() };
        let retention = self.retention;
        let expired = |r: &StoredResult| retention.expired(r, now);
        if !self.entries.values().any(expired) {
            return Vec::new();
        }
        let mut forgotten = Vec::new();
        let mut kept = VecDeque::with_capacity(self.order.len());
        for operation in std::mem::take(&mut self.order) {
            match self.entries.get(&operation).copied() {
                Some(result) if expired(&result) => {
                    self.entries.remove(&operation);
                    let record = Forgotten {
                        operation,
                        result,
                        at: now,
                        reason: ForgetReason::Age { max_age },
                    };
                    self.forgotten.push(record.clone());
                    forgotten.push(record);
                }
                Some(_) => kept.push_back(operation),
                None => {}
            }
        }
        self.order = kept;
        forgotten
    }

    /// Forgets one operation id on request, e.g. when its workflow is known to be finished.
    pub fn forget(&mut self, operation: &OperationId, now: Tick) -> Option<Forgotten> {
        let result = self.entries.remove(operation)?;
        self.order.retain(|op| op != operation);
        let record = Forgotten {
            operation: operation.clone(),
            result,
            at: now,
            reason: ForgetReason::Explicit,
        };
        self.forgotten.push(record.clone());
        Some(record)
    }

    /// Remembered operation ids, oldest first.
    pub fn remembered(&self) -> impl Iterator<Item = (&OperationId, &StoredResult)> {
        self.order.iter().filter_map(|op| self.entries.get_key_value(op))
    }

    /// How many operation ids are remembered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every id forgotten so far, in order.
    pub fn forgotten(&self) -> &[Forgotten] {
        &self.forgotten
    }

    /// The retention policy in force.
    pub fn retention(&self) -> Retention {
        self.retention
    }

    fn forget_oldest(&mut self, now: Tick, reason: ForgetReason) -> Option<Forgotten> {
        let operation = self.order.pop_front()?;
        let result = self.entries.remove(&operation)?;
        let record = Forgotten { operation, result, at: now, reason };
        self.forgotten.push(record.clone());
        Some(record)
    }
}

/// What happened to a write at a resource that combines the fence with idempotency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum WriteOutcome {
    /// The write passed every check and changed the register.
    Applied(Applied),
    /// The operation had been applied before; its stored result is returned and value and
    /// revision are unchanged (the request has still raised the fence to its generation).
    Replayed(StoredResult),
    /// The write failed a check; value and revision are unchanged (a request that passed the
    /// generation check has still raised the fence).
    Rejected(WriteRejection),
}

impl WriteOutcome {
    /// Whether the register changed.
    pub fn is_applied(&self) -> bool {
        matches!(self, WriteOutcome::Applied(_))
    }
}

/// A fenced register with an idempotency store in front of it: the complete write boundary.
///
/// Checks run in this order, all inside one call:
/// 1. the resource and the generation: a stale owner is refused even when its operation id is
///    new or remembered, and the refusal changes nothing at all. The one exception is the strict
///    policy's own retry, which presents the generation that has already written and gets its
///    stored result back;
/// 2. the request has now passed the fence, so the fence is raised to its generation (see
///    [`Fence`](crate::Fence)), whatever happens next: a newer owner's replay or refused write
///    still supersedes every older generation;
/// 3. operation ids past their retention are forgotten;
/// 4. the operation id: a remembered operation returns its stored result and applies nothing;
/// 5. the expected revision, if given;
/// 6. then the write applies and its result is remembered.
///
/// The generation comes before the operation id so that a stale owner cannot use a remembered
/// id to learn anything or to slip past the fence, and the fence is raised before the replay so
/// that a newer owner's retry of an old operation still fences the old owner out.
///
/// A retry that arrives after its operation id was forgotten is indistinguishable from a new
/// operation. With an expected revision it fails with a revision conflict (the first attempt moved
/// the revision on); without one it applies a second time. That double application is the price of
/// bounded retention, and why conditional writes matter.
///
/// ```
/// use fencelab_core::prelude::*;
///
/// let ledger: ResourceId = "ledger".parse()?;
/// let register = FencedRegister::new(ledger.clone(), SameGenerationPolicy::AllowSame);
/// let mut resource = FencedResource::new(register, Retention::FOREVER);
/// let request = WriteRequest::new(ledger, Generation::new(3)?, "deposit-1".parse()?, None, "100");
/// assert!(resource.write(&request, Tick(0)).is_applied());
/// // The retry of the same operation gets its stored result back and applies nothing.
/// assert!(matches!(resource.write(&request, Tick(1)), WriteOutcome::Replayed(_)));
/// assert_eq!(resource.register.revision(), Revision(1));
/// # Ok::<(), fencelab_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct FencedResource {
    /// The fenced register.
    pub register: FencedRegister,
    /// The operation ids it has applied.
    pub idempotency: IdempotencyStore,
}

impl FencedResource {
    /// Combines a register with an empty idempotency store.
    pub fn new(register: FencedRegister, retention: Retention) -> Self {
        FencedResource { register, idempotency: IdempotencyStore::new(retention) }
    }

    /// Runs every check and applies the write if all pass; see the type's documentation.
    pub fn write(&mut self, request: &WriteRequest, now: Tick) -> WriteOutcome {
        let fence = self.register.check_resource(&request.resource);
        if let Err(rejection) =
            fence.and_then(|()| self.register.check_generation(request.generation))
        {
            // Under the strict policy the owner's own retry presents the generation that has
            // already written. It is a retry, not a second write: return what the first one got.
            // A refusal changes nothing, so an id past its retention is not forgotten here; it is
            // only not answered, as it would not be after the expiry a passing request runs.
            let own_retry = matches!(rejection, WriteRejection::Stale { presented, highest } if presented == highest);
            match self.idempotency.lookup(&request.operation) {
                Some(stored)
                    if own_retry
                        && stored.generation == request.generation
                        && !self.idempotency.retention().expired(stored, now) =>
                {
                    return WriteOutcome::Replayed(*stored)
                }
                _ => return WriteOutcome::Rejected(rejection),
            }
        }
        self.register.pass_fence(request.generation);
        self.idempotency.expire(now);
        if let Some(stored) = self.idempotency.lookup(&request.operation) {
            return WriteOutcome::Replayed(*stored);
        }
        match self.register.check_revision(request).and_then(|()| self.register.apply(request)) {
            Ok(applied) => {
                let stored =
                    StoredResult { generation: request.generation, applied, recorded_at: now };
                self.idempotency.record(request.operation.clone(), stored);
                WriteOutcome::Applied(applied)
            }
            Err(rejection) => WriteOutcome::Rejected(rejection),
        }
    }
}

impl From<WriteRejection> for WriteOutcome {
    fn from(rejection: WriteRejection) -> Self {
        WriteOutcome::Rejected(rejection)
    }
}

no_heap!(StoredResult);

impl HeapSize for WriteOutcome {
    fn heap_bytes(&self) -> usize {
        match self {
            WriteOutcome::Rejected(rejection) => rejection.heap_bytes(),
            WriteOutcome::Applied(_) | WriteOutcome::Replayed(_) => 0,
        }
    }
}

impl HeapSize for Forgotten {
    fn heap_bytes(&self) -> usize {
        self.operation.heap_bytes()
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
