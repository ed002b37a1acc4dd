//! The write boundary: [`decide`], the one decision of what a write does, and
//! [`FencedResource`], the in-memory boundary that applies it.
//!
//! The decision is a pure function of what the boundary holds for the resource and of the
//! request, so every store takes it from here: the in-memory reference, the SQLite store and
//! the PostgreSQL store read what they hold (under their lock), call [`decide`], and apply the
//! [`Decision`] with absolute values. None of them restates the order of checks; each keeps
//! its own atomicity.
//!
//! # Writing a store of your own with it
//!
//! For each write, in one transaction of your database:
//!
//! 1. Take a lock that covers the resource's fence record and its operation ids, and that every
//!    other writer of the resource takes too (a row lock on the resource's row, the database's
//!    write lock). Operation ids are per resource.
//! 2. Read [`Held`] under it: the fence record (highest generation and `acted`), the revision,
//!    and the stored result of the request's operation id, expired or not.
//! 3. Call [`decide`] with the store's [`Rules`] and the time `now`.
//! 4. [`Decision::Unchanged`]: roll back and answer its outcome. [`Decision::Commit`]: in this
//!    order, forget the ids [`Commit::expire`] names (recording each as forgotten if you keep
//!    such a record; an expired `remembered` id is among them, so it is gone before the same id
//!    is recorded again); store the fence record ([`Commit::highest`], [`Commit::acted`]), and
//!    the value and revision when the effect is [`CommitEffect::Apply`]; record the operation id
//!    with [`CommitEffect::Apply`]'s `record`; keep only the newest `trim` ids (forgotten for
//!    [`ForgetReason::Capacity`]); commit; answer [`Decision::outcome`]. The commit must be
//!    durable before the answer (see the conformance kit's documentation).
//!
//! `now` is the caller's logical time ([`Tick`]): any unit that every writer of the store
//! shares and that does not go backwards for one writer (milliseconds since the epoch from the
//! writers' clocks is common). Only the retention's maximum age reads it.

use crate::clock::Tick;
use crate::fence::generation::Generation;
use crate::fence::idempotency::{
    ForgetReason, IdempotencyStore, Retention, StoredResult, WriteOutcome,
};
use crate::fence::register::{
    Applied, Fence, FencedRegister, Revision, SameGenerationPolicy, WriteRejection, WriteRequest,
};
use crate::memory::HeapSize;
use serde::{Deserialize, Serialize};
use std::num::NonZeroUsize;

/// What a boundary holds for one resource when a write arrives, read under the lock that
/// makes the write one step (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Held {
    /// The fence record: the highest generation that has passed, and whether it has acted.
    pub fence: Fence,
    /// The resource's revision (0 before any write applied).
    pub revision: Revision,
    /// The stored result of the request's operation id on this resource, if one is recorded,
    /// expired or not: the decision applies the retention. (An expired id that no write has
    /// forgotten yet is still returned by [`FencedStore::lookup`](crate::FencedStore::lookup),
    /// as the reference returns it.)
    pub remembered: Option<StoredResult>,
}

/// The rules a boundary enforces: the same-generation policy and the retention of operation
/// ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Rules {
    /// Whether the highest generation may write again.
    pub policy: SameGenerationPolicy,
    /// How long operation ids are remembered.
    pub retention: Retention,
}

/// What a write does, in the terms a store acts on: roll back or commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The fence did not admit the request: change nothing at all (roll back) and answer this: a
    /// stale refusal, or the strict policy's own retry answered from its stored result.
    Unchanged(WriteOutcome),
    /// The request passed the fence: store what [`Commit`] says and commit, whatever its effect
    /// (a replay or a refusal after the fence still commits the raised fence).
    Commit(Commit),
}

/// A request that passed the fence. A newer owner has shown its generation, so the raised fence
/// is kept even when the write is then answered from the replay record or refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The fence record's highest generation to store: the larger of the stored one and the
    /// presented one.
    pub highest: Generation,
    /// Whether a request under `highest` has acted, to store: set when this write applies.
    pub acted: bool,
    /// Operation ids to forget for their age, before the operation id is looked at.
    pub expire: Option<Expiry>,
    /// What the write does past the fence.
    pub effect: CommitEffect,
}

/// Forget every operation id of the resource recorded at or before `up_to`, for `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expiry {
    /// The newest recording time that has expired.
    pub up_to: Tick,
    /// Why (the maximum age).
    pub reason: ForgetReason,
}

/// What a write that passed the fence does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitEffect {
    /// The operation id is remembered: answer its stored result and apply nothing.
    Replay(StoredResult),
    /// Refused after the fence (a revision conflict, an exhausted revision counter): the value
    /// and the revision stay.
    Reject(WriteRejection),
    /// Apply: the request's value with this revision, record the operation id with `record`,
    /// then keep only the newest operation ids if `trim` says so.
    Apply {
        /// The revision after the write.
        revision: Revision,
        /// The stored result to record under the request's operation id.
        record: StoredResult,
        /// How many of the resource's operation ids to keep, newest first, after recording;
        /// the older ones are forgotten for [`ForgetReason::Capacity`] with this maximum.
        trim: Option<NonZeroUsize>,
    },
}

impl Commit {
    /// The fence record to store.
    pub fn fence(&self) -> Fence {
        Fence { highest: Some(self.highest), acted: self.acted }
    }
}

impl Decision {
    /// What the writer is answered.
    pub fn outcome(&self) -> WriteOutcome {
        match self {
            Decision::Unchanged(outcome) => outcome.clone(),
            Decision::Commit(commit) => match &commit.effect {
                CommitEffect::Replay(stored) => WriteOutcome::Replayed(*stored),
                CommitEffect::Reject(rejection) => WriteOutcome::Rejected(rejection.clone()),
                CommitEffect::Apply { record, .. } => WriteOutcome::Applied(record.applied),
            },
        }
    }
}

impl WriteOutcome {
    /// Whether the request behind this outcome got past the generation check, so that the
    /// boundary raised its fence to the request's generation ([`decide`]'s
    /// [`Decision::Commit`]): an applied write, a replay, and a refusal after the fence (a
    /// revision conflict, an exhausted revision counter). For readers of a history that only see
    /// outcomes. The strict policy's own retry is answered as a replay without passing, but it
    /// presents the highest generation, so raising the fence to it changes nothing.
    pub fn passed_fence(&self) -> bool {
        match self {
            WriteOutcome::Applied(_) | WriteOutcome::Replayed(_) => true,
            WriteOutcome::Rejected(rejection) => matches!(
                rejection,
                WriteRejection::RevisionConflict { .. } | WriteRejection::RevisionExhausted { .. }
            ),
        }
    }
}

/// Decides what `request` does at a boundary that holds `held`, at logical time `now`.
///
/// The checks run in this order:
/// 1. the generation: a stale owner is refused even when its operation id is new or
///    remembered, and the refusal changes nothing at all. The one exception is the strict
///    policy's own retry, which presents the generation that has already written and gets its
///    stored result back (unless it has expired; it is not forgotten either, as a refusal
///    changes nothing);
/// 2. the request has passed the fence, so the fence is raised to its generation whatever
///    happens next: a newer owner's replay or refused write still supersedes every older one;
/// 3. operation ids past their retention are forgotten;
/// 4. the operation id: a remembered operation returns its stored result and applies nothing;
/// 5. the expected revision, if given;
/// 6. the write applies (unless the revision counter would wrap), its result is remembered and
///    the oldest ids beyond the capacity are forgotten.
///
/// The generation comes before the operation id so that a stale owner cannot use a remembered
/// id to learn anything or to slip past the fence, and the fence is raised before the replay so
/// that a newer owner's retry of an old operation still fences the old owner out.
pub fn decide(held: &Held, request: &WriteRequest, rules: Rules, now: Tick) -> Decision {
    let Rules { policy, retention } = rules;
    let presented = request.generation;
    let remembered = held.remembered.filter(|stored| !retention.expired(stored, now));
    if let Some(highest) = held.fence.highest.filter(|_| !policy.admits(held.fence, presented)) {
        let own_retry = remembered.filter(|s| presented == highest && s.generation == presented);
        return Decision::Unchanged(match own_retry {
            Some(stored) => WriteOutcome::Replayed(stored),
            None => WriteOutcome::Rejected(WriteRejection::Stale { presented, highest }),
        });
    }
    let mut fence = held.fence;
    fence.pass(presented);
    let expire = retention.max_age.and_then(|max_age| {
        Some(Expiry { up_to: retention.cutoff(now)?, reason: ForgetReason::Age { max_age } })
    });
    let effect = if let Some(stored) = remembered {
        CommitEffect::Replay(stored)
    } else if let Some(expected) = request.expected_revision.filter(|&e| e != held.revision) {
        CommitEffect::Reject(WriteRejection::RevisionConflict { expected, actual: held.revision })
    } else if let Some(next) = held.revision.0.checked_add(1) {
        fence.act(presented);
        let applied = Applied { generation: presented, revision: Revision(next) };
        let record = StoredResult { generation: presented, applied, recorded_at: now };
        CommitEffect::Apply { revision: applied.revision, record, trim: retention.max_entries }
    } else {
        CommitEffect::Reject(WriteRejection::RevisionExhausted { revision: held.revision })
    };
    // `Fence::pass` has set the highest, so the fallback is never taken.
    let highest = fence.highest.unwrap_or(presented);
    Decision::Commit(Commit { highest, acted: fence.acted, expire, effect })
}

/// A fenced register with an idempotency store in front of it: the complete write boundary in
/// memory, the reference every other store is compared with. It takes every decision from
/// [`decide`].
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

    /// Decides with [`decide`] and applies the decision; a request naming another resource is
    /// refused first and changes nothing.
    pub fn write(&mut self, request: &WriteRequest, now: Tick) -> WriteOutcome {
        if let Err(rejection) = self.register.check_resource(&request.resource) {
            return WriteOutcome::Rejected(rejection);
        }
        let held = Held {
            fence: self.register.fence(),
            revision: self.register.revision(),
            remembered: self.idempotency.lookup(&request.operation).copied(),
        };
        let rules =
            Rules { policy: self.register.policy(), retention: self.idempotency.retention() };
        let decision = decide(&held, request, rules, now);
        if let Decision::Commit(commit) = &decision {
            if let Some(Expiry { up_to, reason }) = commit.expire {
                self.idempotency.forget_up_to(up_to, reason, now);
            }
            match &commit.effect {
                CommitEffect::Apply { revision, record, trim } => {
                    self.register.settle(commit.fence(), Some((&request.value, *revision)));
                    self.idempotency.record_keeping(request.operation.clone(), *record, *trim);
                }
                CommitEffect::Replay(_) | CommitEffect::Reject(_) => {
                    self.register.settle(commit.fence(), None)
                }
            }
        }
        decision.outcome()
    }
}

impl FencedRegister {
    /// The register alone, without operation ids: decides with [`decide`] (nothing is
    /// remembered, so nothing is replayed) and applies the decision. A request that passed the
    /// fence raises it even when it is then refused for a revision conflict.
    pub fn write(&mut self, request: &WriteRequest) -> Result<Applied, WriteRejection> {
        self.check_resource(&request.resource)?;
        let held = Held { fence: self.fence(), revision: self.revision(), remembered: None };
        let rules = Rules { policy: self.policy(), retention: Retention::FOREVER };
        // No operation id is remembered and nothing expires, so the time does not matter.
        let decision = decide(&held, request, rules, Tick(0));
        if let Decision::Commit(commit) = &decision {
            let write = match &commit.effect {
                CommitEffect::Apply { revision, .. } => Some((request.value.as_str(), *revision)),
                CommitEffect::Replay(_) | CommitEffect::Reject(_) => None,
            };
            self.settle(commit.fence(), write);
        }
        match decision.outcome() {
            WriteOutcome::Applied(applied) => Ok(applied),
            WriteOutcome::Rejected(rejection) => Err(rejection),
            WriteOutcome::Replayed(stored) => Ok(stored.applied),
        }
    }
}

impl HeapSize for FencedResource {
    fn heap_bytes(&self) -> usize {
        self.register.heap_bytes() + self.idempotency.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{OperationId, ResourceId};

    fn g(n: u64) -> Generation {
        Generation::new(n).unwrap()
    }

    fn request(generation: u64, expected: Option<u64>) -> WriteRequest {
        let (resource, operation) =
            (ResourceId::new("r").unwrap(), OperationId::new("op").unwrap());
        WriteRequest::new(resource, g(generation), operation, expected.map(Revision), "v")
    }

    fn stored(generation: u64, revision: u64, at: u64) -> StoredResult {
        let applied = Applied { generation: g(generation), revision: Revision(revision) };
        StoredResult { generation: g(generation), applied, recorded_at: Tick(at) }
    }

    fn held(highest: u64, acted: bool, revision: u64, remembered: Option<StoredResult>) -> Held {
        Held {
            fence: Fence { highest: Some(g(highest)), acted },
            revision: Revision(revision),
            remembered,
        }
    }

    const STRICT: Rules = Rules {
        policy: SameGenerationPolicy::StrictlyNewer,
        retention: Retention { max_entries: None, max_age: Some(5) },
    };

    /// What a history's reader infers from an outcome agrees with the decision that gave it.
    #[test]
    fn an_outcome_passed_the_fence_exactly_when_its_decision_commits() {
        let cases = [
            (held(8, true, 3, None), request(7, None), Rules::default()),
            (held(8, true, 3, Some(stored(8, 3, 10))), request(8, None), STRICT),
            (held(7, true, 3, Some(stored(7, 3, 10))), request(8, None), STRICT),
            (held(7, true, 3, None), request(8, Some(2)), Rules::default()),
            (held(7, true, u64::MAX, None), request(8, None), Rules::default()),
            (Held::default(), request(1, None), Rules::default()),
        ];
        for (held, request, rules) in cases {
            let decision = decide(&held, &request, rules, Tick(12));
            let own_retry = matches!(decision, Decision::Unchanged(WriteOutcome::Replayed(_)));
            let commits = matches!(decision, Decision::Commit(_));
            assert_eq!(decision.outcome().passed_fence(), commits || own_retry, "{decision:?}");
        }
    }

    #[test]
    fn a_stale_request_is_refused_and_changes_nothing() {
        let decision =
            decide(&held(8, true, 3, None), &request(7, None), Rules::default(), Tick(1));
        let stale = WriteRejection::Stale { presented: g(7), highest: g(8) };
        assert_eq!(decision, Decision::Unchanged(WriteOutcome::Rejected(stale)));
    }

    #[test]
    fn the_strict_policys_own_retry_is_answered_until_its_id_expires() {
        let own = held(8, true, 3, Some(stored(8, 3, 10)));
        let retry = decide(&own, &request(8, None), STRICT, Tick(14));
        assert_eq!(retry, Decision::Unchanged(WriteOutcome::Replayed(stored(8, 3, 10))));
        // At age 5 the id has expired: the retry is refused, and nothing is forgotten.
        let late = decide(&own, &request(8, None), STRICT, Tick(15));
        let stale = WriteRejection::Stale { presented: g(8), highest: g(8) };
        assert_eq!(late, Decision::Unchanged(WriteOutcome::Rejected(stale)));
    }

    #[test]
    fn a_newer_owners_replay_raises_the_fence_and_expires_old_ids_first() {
        let decision =
            decide(&held(7, true, 3, Some(stored(7, 3, 10))), &request(8, None), STRICT, Tick(12));
        let Decision::Commit(commit) = decision else { panic!("{decision:?}") };
        assert_eq!((commit.highest, commit.acted), (g(8), false));
        assert_eq!(
            commit.expire,
            Some(Expiry { up_to: Tick(7), reason: ForgetReason::Age { max_age: 5 } })
        );
        assert_eq!(commit.effect, CommitEffect::Replay(stored(7, 3, 10)));
    }

    #[test]
    fn a_revision_conflict_and_an_exhausted_counter_raise_the_fence_and_write_nothing() {
        let conflict =
            decide(&held(7, true, 3, None), &request(8, Some(2)), Rules::default(), Tick(1));
        let Decision::Commit(commit) = conflict else { panic!("{conflict:?}") };
        assert_eq!((commit.highest, commit.acted), (g(8), false));
        let expected =
            WriteRejection::RevisionConflict { expected: Revision(2), actual: Revision(3) };
        assert_eq!(commit.effect, CommitEffect::Reject(expected));

        let full =
            decide(&held(7, true, u64::MAX, None), &request(8, None), Rules::default(), Tick(1));
        let Decision::Commit(commit) = full else { panic!("{full:?}") };
        let exhausted = WriteRejection::RevisionExhausted { revision: Revision(u64::MAX) };
        assert_eq!((commit.acted, commit.effect), (false, CommitEffect::Reject(exhausted)));
    }

    #[test]
    fn an_applied_write_acts_records_its_id_and_trims_to_the_capacity() {
        let rules = Rules {
            policy: SameGenerationPolicy::AllowSame,
            retention: Retention { max_entries: NonZeroUsize::new(2), max_age: None },
        };
        let decision = decide(&Held::default(), &request(1, Some(0)), rules, Tick(4));
        let Decision::Commit(commit) = decision else { panic!("{decision:?}") };
        assert_eq!((commit.highest, commit.acted, commit.expire), (g(1), true, None));
        let record = stored(1, 1, 4);
        let apply =
            CommitEffect::Apply { revision: Revision(1), record, trim: NonZeroUsize::new(2) };
        assert_eq!(commit.effect, apply);
        assert_eq!(Decision::Commit(commit).outcome(), WriteOutcome::Applied(record.applied));
    }
}
