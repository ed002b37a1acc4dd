//! Operation ids and their stored results: how a retry is recognised instead of applied twice.

use crate::clock::Tick;
use crate::fence::generation::Generation;
use crate::fence::register::{Applied, WriteRejection};
use crate::ids::OperationId;
use crate::memory::{block, btree_nodes, buffer, no_heap, HeapSize};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
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
        self.cutoff(now).is_some_and(|cutoff| result.recorded_at <= cutoff)
    }

    /// The newest recording time that has expired at `now` (`now - max_age`), if any: an id
    /// recorded at or before it has outlived the maximum age. Stores that keep ids in a table
    /// forget them with one `recorded_at <= cutoff` condition.
    pub fn cutoff(&self, now: Tick) -> Option<Tick> {
        self.max_age.and_then(|max_age| now.0.checked_sub(max_age)).map(Tick)
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

/// `the result recorded at t5 (revision r2 under generation 3)`.
impl fmt::Display for StoredResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the result recorded at {} (revision {} under generation {})",
            self.recorded_at, self.applied.revision, self.generation
        )
    }
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
        self.record_keeping(operation, result, self.retention.max_entries)
    }

    /// Remembers an applied operation and then keeps at most `keep` entries, forgetting the
    /// oldest for the store's capacity.
    pub(crate) fn record_keeping(
        &mut self,
        operation: OperationId,
        result: StoredResult,
        keep: Option<NonZeroUsize>,
    ) -> Vec<Forgotten> {
        if self.entries.insert(operation.clone(), result).is_none() {
            self.order.push_back(operation);
        }
        let mut forgotten = Vec::new();
        if let Some(max) = keep {
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
        let (Some(max_age), Some(cutoff)) = (self.retention.max_age, self.retention.cutoff(now))
        else {
            return Vec::new();
        };
        self.forget_up_to(cutoff, ForgetReason::Age { max_age }, now)
    }

    /// Forgets every entry recorded at or before `up_to`, for `reason`, at `now`, and returns
    /// what was forgotten, oldest first.
    pub(crate) fn forget_up_to(
        &mut self,
        up_to: Tick,
        reason: ForgetReason,
        now: Tick,
    ) -> Vec<Forgotten> {
        let expired = |r: &StoredResult| r.recorded_at <= up_to;
        if !self.entries.values().any(expired) {
            return Vec::new();
        }
        let mut forgotten = Vec::new();
        let mut kept = VecDeque::with_capacity(self.order.len());
        for operation in std::mem::take(&mut self.order) {
            match self.entries.get(&operation).copied() {
                Some(result) if expired(&result) => {
                    self.entries.remove(&operation);
                    let record = Forgotten { operation, result, at: now, reason };
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

/// The outcome in words, e.g. `applied as revision r2 under generation 3`.
impl fmt::Display for WriteOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteOutcome::Applied(applied) => write!(
                f,
                "applied as revision {} under generation {}",
                applied.revision, applied.generation
            ),
            WriteOutcome::Replayed(stored) => write!(f, "replayed {stored}"),
            // The reason in brackets, unless the rejection's own words begin with it.
            WriteOutcome::Rejected(rejection) => {
                let (reason, words) = (rejection.reason().to_string(), rejection.to_string());
                if words.starts_with(&reason) {
                    write!(f, "rejected: {words}")
                } else {
                    write!(f, "rejected ({reason}): {words}")
                }
            }
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
