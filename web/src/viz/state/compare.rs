//! Compare mode: one scenario and schedule under two enforcement modes, in lockstep by time.

use std::rc::Rc;

use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::switches::with_enforcement;
use fencelab_core::{record::StepRecord, Scenario};

use super::{Mode, Viz};
use crate::viz::frame::Frame;
use crate::viz::run::{Run, RunRef};

/// The enforcement modes compare mode offers.
pub const MODES: [Enforcement; 4] = [
    Enforcement::Unfenced,
    Enforcement::CheckThenWrite,
    Enforcement::Fenced,
    Enforcement::FencedIdempotent,
];

/// Which side of compare mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The left (or upper) run.
    Left,
    /// The right (or lower) run.
    Right,
}

/// One side of compare mode.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareSide {
    /// The enforcement forced on every store, path and the gateway.
    pub mode: Enforcement,
    /// The run, or why it could not be played.
    pub run: Result<RunRef, String>,
    /// Where it is.
    pub position: usize,
    /// Its panels.
    pub frame: Rc<Frame>,
    /// Its panels at the end of the run.
    pub last: Rc<Frame>,
}

impl CompareSide {
    pub(super) fn new(base: &Scenario, mode: Enforcement) -> CompareSide {
        let run = Run::play(with_enforcement(base, mode)).map(|r| RunRef(Rc::new(r)));
        let last = match &run {
            Ok(run) => Rc::new(run.frame(run.len())),
            Err(e) => Rc::new(Frame::failed(0, e.clone())),
        };
        CompareSide { mode, run, position: 0, frame: Rc::new(Frame::default()), last }
    }

    fn ticks(&self) -> impl Iterator<Item = u64> + '_ {
        self.run.iter().flat_map(|r| r.timeline.iter().map(|s| s.at.0))
    }

    fn seek_tick(&mut self, tick: Option<u64>) {
        if let Ok(run) = &self.run {
            self.position = tick.map_or(0, |t| run.position_at_tick(t));
            self.frame = Rc::new(run.frame(self.position));
        }
    }

    /// The steps that happened at the current tick, for captions.
    pub fn steps_now(&self) -> &[StepRecord] {
        let Ok(run) = &self.run else { return &[] };
        let end = self.position.min(run.len());
        let Some(last) = end.checked_sub(1).and_then(|i| run.timeline.get(i)) else { return &[] };
        let start = run.timeline[..end].partition_point(|r| r.at < last.at);
        &run.timeline[start..end]
    }
}

/// Compare mode: one scenario and schedule under two enforcement modes, in lockstep by time.
#[derive(Debug, Clone, PartialEq)]
pub struct Compare {
    /// The left side.
    pub left: CompareSide,
    /// The right side.
    pub right: CompareSide,
    /// Every tick at which either side does something, in order.
    pub ticks: Rc<Vec<u64>>,
    /// How many of those ticks have passed.
    pub cursor: usize,
}

impl Compare {
    pub(super) fn new(base: &Scenario, left: Enforcement, right: Enforcement) -> Compare {
        let mut compare = Compare {
            left: CompareSide::new(base, left),
            right: CompareSide::new(base, right),
            ticks: Rc::new(Vec::new()),
            cursor: 0,
        };
        compare.retick();
        compare
    }

    fn retick(&mut self) {
        self.ticks = Rc::new(merge_ticks(self.left.ticks(), self.right.ticks()));
        self.cursor = self.cursor.min(self.ticks.len());
        self.seek(self.cursor);
    }

    pub(super) fn seek(&mut self, cursor: usize) {
        self.cursor = cursor.min(self.ticks.len());
        let tick = self.cursor.checked_sub(1).and_then(|i| self.ticks.get(i)).copied();
        self.left.seek_tick(tick);
        self.right.seek_tick(tick);
    }

    /// The same sides played from `base` (the story replayed), at the same cursor.
    pub(super) fn replayed(&self, base: &Scenario) -> Compare {
        let mut next = Compare::new(base, self.left.mode, self.right.mode);
        next.seek(self.cursor);
        next
    }

    /// The cursor that shows tick `t`, or the last tick before it when neither side does
    /// anything at `t` (0 before the first tick).
    fn cursor_at_tick(&self, t: u64) -> usize {
        self.ticks.partition_point(|tick| *tick <= t)
    }

    /// The logical time shown.
    pub fn now(&self) -> u64 {
        self.cursor.checked_sub(1).and_then(|i| self.ticks.get(i)).copied().unwrap_or(0)
    }
}

/// The distinct ticks of two ascending sequences, ascending. A merge, not a sort: timelines are
/// already in time order.
pub(super) fn merge_ticks(a: impl Iterator<Item = u64>, b: impl Iterator<Item = u64>) -> Vec<u64> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let mut ticks = Vec::new();
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(&x), Some(&y)) if x <= y => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        };
        let Some(t) = next else { return ticks };
        if ticks.last() != Some(&t) {
            ticks.push(t);
        }
    }
}

impl Viz {
    /// Turns compare mode on (leaving "You decide" mode or a history link on its way) or off;
    /// `false` when it is already so, or a recorded history is on screen.
    pub(super) fn set_compare(&mut self, on: bool) -> bool {
        let comparing = self.compare().is_some();
        if on == comparing || self.opened().is_some() {
            return false;
        }
        if on {
            // The path decided so far plays on, as the story's run both sides start from.
            self.leave_decide();
        }
        self.playing = false;
        // The reader stays at the same moment: compare mode steps by tick, so it opens
        // at the tick of the current step, and closing it at another tick shows every
        // step of that tick.
        let tick = self.story.run.tick_at(self.position);
        match std::mem::take(&mut self.mode) {
            Mode::Compare(was) => {
                let position = match was.cursor {
                    0 => 0,
                    _ if was.now() != tick => self.story.run.position_at_tick(was.now()),
                    _ => self.position,
                };
                self.seek(position);
            }
            _ => {
                let scenario = self.story.played();
                let mut compare =
                    Compare::new(&scenario, Enforcement::Unfenced, Enforcement::Fenced);
                let cursor = match self.position {
                    0 => 0,
                    _ => compare.cursor_at_tick(tick),
                };
                compare.seek(cursor);
                self.mode = Mode::Compare(compare);
            }
        }
        true
    }

    /// Chooses the enforcement one side of compare mode forces; `false` outside the mode.
    pub(super) fn set_compare_mode(&mut self, side: Side, mode: Enforcement) -> bool {
        if self.compare().is_none() {
            return false;
        }
        let fresh = CompareSide::new(&self.story.played(), mode);
        if let Mode::Compare(c) = &mut self.mode {
            match side {
                Side::Left => c.left = fresh,
                Side::Right => c.right = fresh,
            }
            c.retick();
        }
        true
    }
}
