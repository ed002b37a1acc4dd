//! The properties a run is checked against after every step, and what a broken one is reported
//! as. They are shared vocabulary: the scenario format names them in its expectations, the
//! checker finds them, and the recorder and the diagram show them.

use crate::clock::RunStep;
use crate::memory::{no_heap, HeapSize};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A property of a correct fencing design. The first six are the safety properties fencing exists
/// for; the last two are stronger promises that fencing alone does *not* make, kept so the limits
/// can be shown.
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
pub enum InvariantKind {
    /// A store accepted a write from an older lease after a write under a newer lease had reached
    /// the same data, whatever the store did with that newer write (applied it, refused it,
    /// answered it from the replay record, or was about to apply it). Writes that no lease backs
    /// count as the oldest.
    StaleWriteAccepted,
    /// One operation changed a store twice.
    OperationAppliedTwice,
    /// The partner received the same irreversible effect twice.
    EffectDeliveredTwice,
    /// The partner received an effect from an older lease after an effect under a newer lease had
    /// reached the gateway for the same workflow, whether the gateway delivered or dropped it.
    EffectFromSupersededOwner,
    /// The authority issued a generation at or below one it had issued before.
    GenerationReissued,
    /// When the run ended, the value of a critical store's data was last written under an older
    /// lease than the newest lease whose write to that data was applied, or refused by the fence
    /// (a stale generation or an invalid token) although no newer lease had reached that data.
    /// Writes refused because a newer lease had shown up, refused for a revision conflict,
    /// answered from the replay record, or never delivered do not count: there the store worked
    /// as designed.
    FinalValueNotFromLatestOwner,
    /// A write was accepted from a worker whose lease had already expired. Fencing does not
    /// prevent this when no newer owner has written yet: the documented limit.
    WriteOutsideLease,
    /// Two writes from one owner applied in the opposite order to the one it sent them in. Equal
    /// generations do not order writes; expected revisions do.
    WritesReordered,
    /// The authority granted a lease while, by its own record, another worker's lease on the
    /// same resource was still valid: two holders at once, whatever the tokens say.
    LeasesOverlap,
    /// A store applied a write, or the partner received an effect, carrying a generation higher
    /// than any the authority had issued for that resource: a forged or invented token (a clock
    /// reading, say). Judged only when the history shows the authority's grants.
    TokenNeverIssued,
}

impl InvariantKind {
    /// The safety properties fencing exists for; the explorer looks for these by default.
    pub const SAFETY: [InvariantKind; 6] = [
        InvariantKind::StaleWriteAccepted,
        InvariantKind::OperationAppliedTwice,
        InvariantKind::EffectDeliveredTwice,
        InvariantKind::EffectFromSupersededOwner,
        InvariantKind::GenerationReissued,
        InvariantKind::FinalValueNotFromLatestOwner,
    ];

    /// Every invariant, in report order.
    pub const ALL: [InvariantKind; 10] = [
        InvariantKind::StaleWriteAccepted,
        InvariantKind::OperationAppliedTwice,
        InvariantKind::EffectDeliveredTwice,
        InvariantKind::EffectFromSupersededOwner,
        InvariantKind::GenerationReissued,
        InvariantKind::FinalValueNotFromLatestOwner,
        InvariantKind::WriteOutsideLease,
        InvariantKind::WritesReordered,
        InvariantKind::LeasesOverlap,
        InvariantKind::TokenNeverIssued,
    ];

    /// The property, stated for a learner.
    pub fn statement(self) -> &'static str {
        match self {
            InvariantKind::StaleWriteAccepted => {
                "no write is accepted from an older lease once a newer lease's write has reached the same data"
            }
            InvariantKind::OperationAppliedTwice => "no operation is applied twice",
            InvariantKind::EffectDeliveredTwice => "no irreversible effect is delivered twice",
            InvariantKind::EffectFromSupersededOwner => {
                "no irreversible effect is delivered from an older lease once a newer lease's request has reached the gateway"
            }
            InvariantKind::GenerationReissued => {
                "the authority never issues a generation at or below one it issued before"
            }
            InvariantKind::FinalValueNotFromLatestOwner => {
                "the final value comes from the newest lease whose write was applied or fenced out"
            }
            InvariantKind::WriteOutsideLease => {
                "every accepted write was sent under a lease that was still valid (fencing alone does not promise this)"
            }
            InvariantKind::WritesReordered => "one owner's writes apply in the order it sent them",
            InvariantKind::LeasesOverlap => {
                "the authority never grants a lease while another holder's lease is still valid"
            }
            InvariantKind::TokenNeverIssued => {
                "every accepted generation is one the lease authority issued"
            }
        }
    }
}

impl InvariantKind {
    /// The property as broken, for the step that broke it: "a stale write was accepted".
    pub fn broken(self) -> &'static str {
        match self {
            InvariantKind::StaleWriteAccepted => "a stale write was accepted",
            InvariantKind::OperationAppliedTwice => "an operation was applied twice",
            InvariantKind::EffectDeliveredTwice => "an irreversible effect was delivered twice",
            InvariantKind::EffectFromSupersededOwner => {
                "an irreversible effect came from a superseded owner"
            }
            InvariantKind::GenerationReissued => "the authority issued an old generation again",
            InvariantKind::FinalValueNotFromLatestOwner => {
                "now that the run is over, the final value is not the latest owner's"
            }
            InvariantKind::WriteOutsideLease => "a write was accepted outside its lease",
            InvariantKind::WritesReordered => "one owner's writes were applied out of order",
            InvariantKind::LeasesOverlap => "two holders' leases overlapped",
            InvariantKind::TokenNeverIssued => {
                "a generation the authority never issued was accepted"
            }
        }
    }
}

/// A step's caption followed by what it broke (or may have broken), so that every reader of the caption (the live
/// region, the transcript, the command line) learns the lesson at the step that teaches it.
pub fn narrate(caption: String, broken: &[Violation]) -> String {
    let mut caption = caption;
    for violation in broken {
        // A finding that depends on an outcome nobody learned is said to be possible, never
        // announced as certain.
        caption.push_str(if violation.possible { " Possibly broken: " } else { " Broken: " });
        caption.push_str(violation.headline(broken));
        caption.push_str(": ");
        caption.push_str(&violation.detail);
        caption.push('.');
    }
    caption
}

impl fmt::Display for InvariantKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(crate::names::Named::name(*self))
    }
}

/// A broken invariant, with the step that broke it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Hash)]
pub struct Violation {
    /// Which invariant.
    pub invariant: InvariantKind,
    /// The step (event) that broke it.
    pub step: RunStep,
    /// What exactly happened, in words.
    pub detail: String,
    /// Where it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<Place>,
    /// Whether it depends on what the history does not show: a write or an effect whose outcome
    /// nobody learned, or the order of calls that were in progress at once. A finding that
    /// holds whatever the outcome and whatever order the calls allow is certain.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub possible: bool,
    /// The steps of the entries that prove it, in order, ending with [`step`](Self::step) or
    /// before it: with the history's setup they form a history that shows the same finding on its
    /// own. Empty when the checker ran without witnesses (the explorer's search).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub witness: Vec<usize>,
}

impl Violation {
    /// What broke, as a step's caption says it, given every finding of that step: the
    /// invariant's [`broken`](InvariantKind::broken) phrase, except that a write accepted over
    /// a newer lease's write with a token the authority never issued (forged, or a clock
    /// reading) is named for its token, since calling it merely stale hides what went wrong.
    pub fn headline(&self, at_step: &[Violation]) -> &'static str {
        let unissued = |other: &Violation| {
            other.invariant == InvariantKind::TokenNeverIssued && other.place == self.place
        };
        match self.invariant {
            InvariantKind::StaleWriteAccepted if at_step.iter().any(unissued) => {
                "a write with a token the authority never issued was accepted over a newer lease's write"
            }
            kind => kind.broken(),
        }
    }
}

/// Where in the system an invariant broke.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// At the lease authority.
    Authority,
    /// At the partner behind the side-effect gateway.
    Partner,
    /// In one store's data, reached through one of its paths.
    Store {
        /// The store.
        store: String,
        /// The write path.
        path: String,
        /// The data the path writes.
        data: String,
        /// The resource.
        resource: String,
    },
}

no_heap!(InvariantKind);

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
