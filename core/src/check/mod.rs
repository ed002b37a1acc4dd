//! Judging what happened: the invariants ([`invariant`]), the streaming [`Checker`] over a
//! history, the [`explore`]r that searches every schedule of a scenario for a broken invariant,
//! and the [`conformance`] kit that holds any store to the reference.

mod checker;
pub mod conformance;
pub mod explore;
pub mod invariant;

pub(crate) use checker::{
    CellCheck, CheckState, Done, Live, Rank, Reached, Recent, Sender, Sent, Steps,
};
pub use checker::{Checker, Judgement, OPS_REMEMBERED, SENDS_REMEMBERED};
