//! The protected resource: a register that remembers the highest generation it has accepted.

use crate::fence::generation::{Generation, TokenError};
use crate::ids::{OperationId, ResourceId};
use crate::memory::{block, no_heap, HeapSize};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How many writes a register has applied. Clients use it as an expected revision to make a
/// write conditional on the state they read.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Revision(pub u64);

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}", self.0)
    }
}

/// Whether a register accepts a second write carrying the generation it already accepted.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum SameGenerationPolicy {
    /// One owner may write several times under its generation (`presented >= highest`). This does
    /// not suppress duplicates or order them: pair it with operation ids or expected revisions.
    /// Also read as `allow-same`, the spelling share links used to write.
    #[default]
    #[serde(alias = "allow-same")]
    AllowSame,
    /// Each generation may write once (`presented > highest`), e.g. for a single final result.
    /// Also read as `strict`, the spelling share links used to write.
    #[serde(alias = "strict")]
    StrictlyNewer,
}

impl SameGenerationPolicy {
    /// The policy `name` spells, in any spelling a scenario file reads (`allow_same` or
    /// `allow-same`, `strictly_newer` or `strict`): serde's derive holds the spellings, so share
    /// links read exactly what files do.
    pub fn read(name: &str) -> Option<Self> {
        use serde::de::IntoDeserializer;
        let name: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
            name.into_deserializer();
        Self::deserialize(name).ok()
    }

    /// The fencing rule itself: may a request carrying `presented` act, given what the fence
    /// remembers? The register, the side-effect gateway and the SQLite store all ask this one
    /// function, so the rule exists in one place.
    ///
    /// A generation newer than the fence's highest is always admitted. The highest generation
    /// itself is admitted under [`AllowSame`](Self::AllowSame), and under
    /// [`StrictlyNewer`](Self::StrictlyNewer) only until a request under it has acted: its owner
    /// may have raised the fence with a replayed or refused request and still be owed its one
    /// write. Anything older is refused.
    pub fn admits(self, fence: Fence, presented: Generation) -> bool {
        match fence.highest {
            None => true,
            Some(highest) => {
                presented > highest
                    || (presented == highest
                        && (self == SameGenerationPolicy::AllowSame || !fence.acted))
            }
        }
    }
}

/// What a fenced boundary remembers about generations: the highest one that has passed its
/// check, and whether a request under that generation has acted (a write applied, an effect
/// delivered).
///
/// The fence is raised by every request that passes the generation check, even one that is then
/// answered from the replay record or refused for a revision conflict: the newer owner has shown
/// its generation, so every older one is superseded from that moment on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Fence {
    /// The highest generation that has passed the check, if any.
    pub highest: Option<Generation>,
    /// Whether a request under `highest` has acted.
    #[serde(default)]
    pub acted: bool,
}

impl Fence {
    /// Records that a request under `generation` passed the check: the highest becomes the
    /// larger of the two, and a newer highest has not acted yet.
    pub fn pass(&mut self, generation: Generation) {
        if self.highest.is_none_or(|highest| generation > highest) {
            *self = Fence { highest: Some(generation), acted: false };
        }
    }

    /// Records that a request under `generation` acted after passing the check.
    pub fn act(&mut self, generation: Generation) {
        self.pass(generation);
        if self.highest == Some(generation) {
            self.acted = true;
        }
    }
}

/// A write as it arrives at the protected resource.
///
/// The fields are deliberately separate, and each is checked by a different component:
/// - `resource` routes the request to the register (and lease) that guard it; it authorizes nothing;
/// - `generation` is issued by the [`LeaseAuthority`](crate::fence::authority::LeaseAuthority) and checked by the
///   [`FencedRegister`] against the highest generation it has accepted;
/// - `operation` names the logical operation and is checked by the
///   [`IdempotencyStore`](crate::fence::idempotency::IdempotencyStore), which recognises retries;
/// - `expected_revision`, when present, is checked by the register against its current revision,
///   so the write applies only to the state the writer read;
/// - `value` is the payload and is never interpreted.
///
/// Merging any two of them (say, using the generation as the operation id) either rejects valid
/// updates by one owner or lets duplicates through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(deny_unknown_fields)]
pub struct WriteRequest {
    /// Which resource to write.
    pub resource: ResourceId,
    /// The writer's fencing token.
    pub generation: Generation,
    /// Which logical operation this is.
    pub operation: OperationId,
    /// The revision the writer read, if the write is conditional on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<Revision>,
    /// The new value.
    pub value: String,
}

impl WriteRequest {
    /// Builds a request from its five separate fields.
    pub fn new(
        resource: ResourceId,
        generation: Generation,
        operation: OperationId,
        expected_revision: Option<Revision>,
        value: impl Into<String>,
    ) -> Self {
        WriteRequest { resource, generation, operation, expected_revision, value: value.into() }
    }
}

/// The request in words, as the conformance kit reports it: `generation 3, operation b-1,
/// expecting r2, value "x"`. The resource is left out: messages name it in their own terms.
impl fmt::Display for WriteRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "generation {}, operation {}", self.generation, self.operation)?;
        if let Some(revision) = self.expected_revision {
            write!(f, ", expecting {revision}")?;
        }
        write!(f, ", value {:?}", self.value)
    }
}

/// A write the register applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct Applied {
    /// The generation the write carried, now the register's highest.
    pub generation: Generation,
    /// The register's revision after the write.
    pub revision: Revision,
}

/// Why a write was not applied. No variant changes the value or the revision; a request refused
/// for a revision conflict has passed the generation check, so it has raised the fence (see
/// [`Fence`]), and every other refusal changes nothing at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WriteRejection {
    /// The writer's generation has been superseded: a newer owner has presented its generation
    /// (or, under the strict policy, this generation has written already).
    #[error("{}", stale_message(*.presented, *.highest))]
    Stale {
        /// The generation the writer presented.
        presented: Generation,
        /// The highest generation the register had accepted.
        highest: Generation,
    },
    /// The token is not a generation at all (zero, negative, not a number, too large).
    #[error("invalid token: {0}")]
    InvalidToken(#[source] TokenError),
    /// The register changed since the writer read it.
    #[error("revision conflict: expected {expected}, found {actual}")]
    RevisionConflict {
        /// The revision the writer read.
        expected: Revision,
        /// The register's revision now.
        actual: Revision,
    },
    /// The request names a different resource than this register guards.
    #[error("wrong resource: this register guards {expected}, the request names {got}")]
    WrongResource {
        /// The resource this register guards.
        expected: ResourceId,
        /// The resource the request named.
        got: ResourceId,
    },
    /// The revision counter is at its maximum; applying would wrap it and break expected-revision
    /// checks.
    #[error("revision counter exhausted at {revision}")]
    RevisionExhausted {
        /// The last revision.
        revision: Revision,
    },
}

/// The words for a generation the fence refused, shared by the register and the gateway.
pub(crate) fn stale_message(presented: Generation, highest: Generation) -> String {
    match presented.cmp(&highest) {
        std::cmp::Ordering::Less => {
            format!("stale owner: generation {presented} < highest accepted {highest}")
        }
        std::cmp::Ordering::Equal => {
            format!("already written with generation {presented} (strictly-newer policy)")
        }
        // No policy refuses a newer generation: a store that says so has its comparison wrong.
        std::cmp::Ordering::Greater => {
            format!("refused generation {presented}, above the highest accepted {highest}")
        }
    }
}

/// The diagram label for a generation the fence refused, shared by the register and the gateway.
pub(crate) fn stale_short(presented: Generation, highest: Generation) -> String {
    if presented < highest {
        format!("stale: {presented} < {highest}")
    } else {
        format!("{presented} already wrote")
    }
}

impl From<TokenError> for WriteRejection {
    fn from(error: TokenError) -> Self {
        WriteRejection::InvalidToken(error)
    }
}

impl WriteRejection {
    /// A few words for a diagram label, e.g. `stale: 7 < 8`.
    pub fn short(&self) -> String {
        match self {
            WriteRejection::Stale { presented, highest } => stale_short(*presented, *highest),
            WriteRejection::InvalidToken(TokenError::Forged { .. }) => "forged token".into(),
            WriteRejection::InvalidToken(_) => "invalid token".into(),
            WriteRejection::RevisionConflict { expected, actual } => {
                format!("revision {expected} ≠ {actual}")
            }
            WriteRejection::WrongResource { .. } => "wrong resource".into(),
            WriteRejection::RevisionExhausted { .. } => "revision exhausted".into(),
        }
    }

    /// A short label for counting rejections by reason, e.g. on a dashboard.
    pub fn reason(&self) -> RejectionReason {
        match self {
            WriteRejection::Stale { .. } => RejectionReason::StaleGeneration,
            WriteRejection::InvalidToken(_) => RejectionReason::InvalidToken,
            WriteRejection::RevisionConflict { .. } => RejectionReason::RevisionConflict,
            WriteRejection::WrongResource { .. } => RejectionReason::WrongResource,
            WriteRejection::RevisionExhausted { .. } => RejectionReason::RevisionExhausted,
        }
    }
}

/// The reason of a rejected write or dropped effect, without its details; the unit of monitoring.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum RejectionReason {
    /// A superseded generation: evidence that two workers believed they owned the resource.
    StaleGeneration,
    /// A token that is not a generation.
    InvalidToken,
    /// The state changed since the writer read it.
    RevisionConflict,
    /// A request routed to the wrong register.
    WrongResource,
    /// The revision counter ran out.
    RevisionExhausted,
    /// A side effect whose operation was already delivered.
    DuplicateEffect,
}

impl fmt::Display for RejectionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RejectionReason::StaleGeneration => "stale generation",
            RejectionReason::InvalidToken => "invalid token",
            RejectionReason::RevisionConflict => "revision conflict",
            RejectionReason::WrongResource => "wrong resource",
            RejectionReason::RevisionExhausted => "revision exhausted",
            RejectionReason::DuplicateEffect => "duplicate effect",
        })
    }
}

/// The protected resource: a value guarded by the highest generation that has passed its fence.
///
/// [`FencedRegister::write`] compares and mutates in one call, so within one owner of the register
/// (a `&mut` borrow, or the lock in [`Shared`](crate::fence::shared::Shared)) no other write can slip between
/// the check and the effect.
///
/// Its limit is deliberate and documented: a fresh register, or one that lost its record, accepts
/// any generation it has not yet seen superseded. It rejects generations *known* to be old; it does
/// not know about lease expiry.
///
/// ```
/// use fencelab_core::prelude::*;
///
/// let ledger: ResourceId = "ledger".parse()?;
/// let mut register = FencedRegister::new(ledger.clone(), SameGenerationPolicy::AllowSame);
/// let write = |generation, op: &str, value: &str| -> Result<_, fencelab_core::Error> {
///     Ok(WriteRequest::new(ledger.clone(), Generation::new(generation)?, op.parse()?, None, value))
/// };
/// register.write(&write(2, "b-1", "new owner")?)?;
/// let stale = register.write(&write(1, "a-1", "old owner")?).unwrap_err();
/// assert_eq!(stale.to_string(), "stale owner: generation 1 < highest accepted 2");
/// assert_eq!(register.value(), Some("new owner"));
/// # Ok::<(), fencelab_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct FencedRegister {
    resource: ResourceId,
    policy: SameGenerationPolicy,
    fence: Fence,
    value: Option<String>,
    revision: Revision,
}

impl FencedRegister {
    /// An empty register for `resource` that has accepted nothing yet.
    pub fn new(resource: ResourceId, policy: SameGenerationPolicy) -> Self {
        FencedRegister {
            resource,
            policy,
            fence: Fence::default(),
            value: None,
            revision: Revision(0),
        }
    }

    /// Stores what a decision of the write boundary says: the fence record and, when the write
    /// applied, the value and its revision. The decision ([`crate::fence::boundary::decide`]) has
    /// checked everything; this only writes it down.
    pub(crate) fn settle(&mut self, fence: Fence, write: Option<(&str, Revision)>) {
        self.fence = fence;
        if let Some((value, revision)) = write {
            self.value = Some(value.to_string());
            self.revision = revision;
        }
    }

    /// Records that a request passed the generation check, without applying it (see [`Fence`]).
    pub fn pass_fence(&mut self, generation: Generation) {
        self.fence.pass(generation);
    }

    /// Applies a write without any check: the deliberately broken path of an unfenced or
    /// check-then-write store, kept so the failure can be shown. It records the presented
    /// generation as the highest, even when that moves the record backwards, as such stores do.
    /// Nothing that claims to be fenced calls this.
    pub fn write_unchecked(&mut self, request: &WriteRequest) -> Applied {
        self.fence = Fence { highest: Some(request.generation), acted: true };
        self.value = Some(request.value.clone());
        self.revision = Revision(self.revision.0.saturating_add(1));
        Applied { generation: request.generation, revision: self.revision }
    }

    /// Runs every check of [`FencedRegister::write`] without applying anything.
    pub fn check(&self, request: &WriteRequest) -> Result<(), WriteRejection> {
        self.check_resource(&request.resource)?;
        self.check_generation(request.generation)?;
        self.check_revision(request)
    }

    /// The expected-revision rule alone: does the request expect the current revision, if it
    /// expects any?
    pub fn check_revision(&self, request: &WriteRequest) -> Result<(), WriteRejection> {
        match request.expected_revision {
            Some(expected) if expected != self.revision => {
                Err(WriteRejection::RevisionConflict { expected, actual: self.revision })
            }
            _ => Ok(()),
        }
    }

    /// The routing rule alone: is the request addressed to this register?
    pub fn check_resource(&self, resource: &ResourceId) -> Result<(), WriteRejection> {
        if *resource == self.resource {
            Ok(())
        } else {
            Err(WriteRejection::WrongResource {
                expected: self.resource.clone(),
                got: resource.clone(),
            })
        }
    }

    /// The generation rule alone: does the policy admit `presented` at this fence?
    pub fn check_generation(&self, presented: Generation) -> Result<(), WriteRejection> {
        match self.fence.highest {
            Some(highest) if !self.policy.admits(self.fence, presented) => {
                Err(WriteRejection::Stale { presented, highest })
            }
            _ => Ok(()),
        }
    }

    /// The resource this register guards.
    pub fn resource(&self) -> &ResourceId {
        &self.resource
    }

    /// The same-generation policy in force.
    pub fn policy(&self) -> SameGenerationPolicy {
        self.policy
    }

    /// Changes the same-generation policy; accepted state is kept.
    pub fn set_policy(&mut self, policy: SameGenerationPolicy) {
        self.policy = policy;
    }

    /// The highest generation that has passed the fence so far, if any.
    pub fn highest(&self) -> Option<Generation> {
        self.fence.highest
    }

    /// What the fence remembers.
    pub fn fence(&self) -> Fence {
        self.fence
    }

    /// The current value, if anything was written.
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// How many writes have been applied.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// Simulates a store restart that kept the value but lost the highest-generation record, as
    /// happens when the record lives outside the protected state. Stale owners are re-authorized
    /// until a newer generation writes again. A failure to demonstrate, not a feature.
    pub fn forget_highest(&mut self) {
        self.fence = Fence::default();
    }
}

no_heap!(Revision, Fence, RejectionReason);

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

impl HeapSize for FencedRegister {
    fn heap_bytes(&self) -> usize {
        self.resource().heap_bytes() + self.value().map_or(0, |v| block(v.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::{stale_message, Revision, WriteRejection};
    use crate::fence::generation::Generation;
    use crate::fence::idempotency::WriteOutcome;

    /// Each refusal of a generation is worded for what it is; a store that refuses a newer
    /// generation is not described with the strict policy's words.
    #[test]
    fn a_refused_generation_is_worded_by_how_it_compares() {
        let g = |n| Generation::new(n).unwrap();
        assert_eq!(stale_message(g(2), g(3)), "stale owner: generation 2 < highest accepted 3");
        assert!(stale_message(g(3), g(3)).contains("(strictly-newer policy)"));
        assert_eq!(
            stale_message(g(10), g(9)),
            "refused generation 10, above the highest accepted 9"
        );
    }

    /// An outcome names its reason once: in brackets, unless the rejection's words begin with it.
    #[test]
    fn a_rejection_s_reason_is_said_once() {
        let conflict =
            WriteRejection::RevisionConflict { expected: Revision(1), actual: Revision(2) };
        let text = WriteOutcome::Rejected(conflict).to_string();
        assert_eq!(text.matches("revision conflict").count(), 1, "{text}");
        let g = |n| Generation::new(n).unwrap();
        let stale =
            WriteOutcome::Rejected(WriteRejection::Stale { presented: g(1), highest: g(2) });
        assert!(
            stale.to_string().starts_with("rejected (stale generation): stale owner"),
            "{stale}"
        );
    }
}
