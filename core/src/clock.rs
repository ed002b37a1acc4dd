//! Logical time, and the steps of a run. The core never reads a wall clock: every caller says
//! what time it is.

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

    /// A moment never reached, for what a history does not know: a lease of unknown length
    /// lasts until then unless released, and an answer nobody heard came by then. Written `t=?`.
    pub const UNKNOWN: Tick = Tick(u64::MAX);

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
        match *self {
            Tick::UNKNOWN => f.write_str("t=?"),
            Tick(t) => write!(f, "t={t}"),
        }
    }
}

no_heap!(Tick);

/// One step of a run: the index of its event in the history, counted from 0 as the core counts.
/// People read steps numbered from 1 (the page, the command line, every message): after `n`
/// steps a reader is at step `n`. This type holds the index and says the number, so no caller
/// adds 1 by hand. It is written as the bare index, as before it had a type. (A worker's script
/// step is another thing: the scenario's `Step`.)
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct RunStep(usize);

impl RunStep {
    /// The step at this index, counted from 0.
    pub const fn new(index: usize) -> RunStep {
        RunStep(index)
    }

    /// The index, from 0: where the step's event sits in the history and the records.
    pub const fn index(self) -> usize {
        self.0
    }

    /// The number people read, from 1. It is also the player's position once the step has
    /// been played.
    pub const fn number(self) -> usize {
        self.0.saturating_add(1)
    }
}

impl fmt::Display for RunStep {
    /// The number people read, from 1 (width and alignment apply to it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.number(), f)
    }
}

no_heap!(RunStep);
