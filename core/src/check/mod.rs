//! Judging what happened: the streaming [`Checker`] over a history, which finds the
//! [`invariant`](crate::invariant)s a run breaks, and [`checkpoint`], which finds where a story's
//! questions are answered in it. It reads histories only; the searches that drive the simulator
//! and judge its runs are in [`drive`](crate::drive).

mod checker;
pub mod checkpoint;

pub use checker::{Checker, Judgement, OPS_REMEMBERED, SENDS_REMEMBERED};
