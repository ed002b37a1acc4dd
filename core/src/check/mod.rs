//! Judging what happened: the invariants ([`invariant`]), the streaming [`Checker`] over a
//! history, the [`explore`]r that searches every schedule of a scenario for a broken invariant,
//! and the [`conformance`] kit that holds any store to the reference.

mod checker;
pub mod checkpoint;
pub mod conformance;
pub mod explore;
pub mod invariant;

pub(crate) use checker::{
    CellCheck, CheckState, Done, Live, Rank, Reached, Recent, Sender, Sent, Steps,
};
pub use checker::{Checker, Judgement, OPS_REMEMBERED, SENDS_REMEMBERED};

/// The hasher of the explorer's fingerprints: foldhash tuned for quality, whose 64-bit hashes
/// collide as rarely as a strong hash's (a collision would skip a state unseen), with a fixed
/// seed so that fingerprints are the same on every run and the core draws no random numbers.
pub(crate) const FINGERPRINTS: foldhash::quality::FixedState =
    foldhash::quality::FixedState::with_seed(0x5eed_f3c3_fe0c_e1ab);
