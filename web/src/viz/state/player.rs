//! The player, in every mode: stepping, seeking, big jumps, autoplay and its speed. It moves
//! through the story's run, a recorded history or, in compare mode, compare mode's ticks.

use std::rc::Rc;

use super::{Action, Mode, Viz, SPEEDS};
use crate::viz::words::big_jump;

impl Viz {
    /// Applies a move of the player; `false` when it changes nothing (a step past either end
    /// while paused, a tick while paused, the speed already chosen).
    pub(super) fn play(&mut self, action: Action) -> bool {
        let (at, end) = self.cursor();
        let paused = !self.playing;
        match action {
            Action::Tick if paused => return false,
            Action::Forward | Action::ToEnd | Action::Jump(true) | Action::TogglePlay
                if at >= end && paused =>
            {
                return false
            }
            Action::Back | Action::ToStart | Action::Jump(false) if at == 0 && paused => {
                return false
            }
            Action::Seek(n) if n == at && paused => return false,
            Action::Speed(s) if s == self.speed || s >= SPEEDS.len() => return false,
            Action::Forward => {
                self.playing = false;
                self.forward_or_ask(false);
            }
            Action::Back => {
                self.playing = false;
                self.step_by(false, 1);
            }
            Action::Jump(forward) => {
                self.playing = false;
                self.step_by(forward, big_jump(end));
            }
            Action::Replay => self.replay_from_start(),
            Action::ToStart => {
                self.playing = false;
                self.seek(0);
            }
            Action::ToEnd => {
                self.playing = false;
                self.end_or_ask(end);
            }
            Action::Seek(n) => {
                self.playing = false;
                self.seek(n);
            }
            Action::TogglePlay => self.toggle_play(at, end),
            Action::Tick => self.forward_or_ask(true),
            Action::Speed(speed) => self.speed = speed,
            _ => return false,
        }
        true
    }

    /// Moves to `to` (steps in single mode, ticks in compare mode), clamped to the end.
    pub(super) fn seek(&mut self, to: usize) {
        if let Mode::Compare(c) = &mut self.mode {
            c.seek(to);
            return;
        }
        self.position = to.min(self.track().len());
        self.frame = Rc::new(match &self.mode {
            Mode::History(opened) => opened.frame(self.position),
            _ => self.story.run.frame(self.position),
        });
        if let Mode::Decide(decide) = &mut self.mode {
            decide.offer(&self.story.run, self.position);
        }
    }

    /// `steps` steps (or ticks) forward or back, stopping at either end.
    pub(super) fn step_by(&mut self, forward: bool, steps: usize) {
        let (at, end) = self.cursor();
        let to = if forward { at.saturating_add(steps).min(end) } else { at.saturating_sub(steps) };
        self.seek(to);
    }

    /// Play, or pause. At the end there is nothing left to play, so it does nothing there: the
    /// reader's place is kept, and [`replay`](Self::replay_from_start) starts over.
    pub(super) fn toggle_play(&mut self, at: usize, end: usize) {
        if self.playing {
            self.playing = false;
        } else {
            self.playing = at < end;
        }
    }

    /// Plays from the start again.
    pub(super) fn replay_from_start(&mut self) {
        self.seek(0);
        let (_, end) = self.cursor();
        self.playing = end > 0;
    }

    /// The autoplay timer's steps, which stop at the end, and at `stop` if given.
    pub(super) fn tick(&mut self, stop: Option<usize>) {
        let steps = SPEEDS.get(self.speed).map_or(1, |s| s.2);
        let steps = stop.map_or(steps, |stop| steps.min(stop.saturating_sub(self.position)));
        self.step_by(true, steps);
        let (at, end) = self.cursor();
        if at >= end {
            self.playing = false;
        }
    }
}
