//! Logical time. The core never reads a wall clock: every caller says what time it is.

use crate::memory::no_heap;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A moment on the logical clock, counted in ticks from the start of a run.
///
/// Ticks have no fixed length; a scenario decides what one tick means (say, 100 ms). Using logical
/// time keeps every run replayable.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Tick(pub u64);

impl Tick {
    /// The start of every run.
    pub const ZERO: Tick = Tick(0);

    /// The moment `ticks` after this one, saturating at the end of time instead of wrapping, so a
    /// huge TTL means "never expires" rather than "already expired".
    pub fn after(self, ticks: u64) -> Tick {
        Tick(self.0.saturating_add(ticks))
    }

    /// Ticks elapsed since `earlier`, or zero if `earlier` is in the future.
    pub fn since(self, earlier: Tick) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Display for Tick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", self.0)
    }
}

no_heap!(Tick);
