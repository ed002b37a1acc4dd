//! The story on screen and the reader's place in it: picking a story, a variant, a policy and
//! switches (each replays the run), stepping, seeking, autoplay and the title's badge.

use std::rc::Rc;

use fencelab_core::stories::library;
use fencelab_core::stories::switches;
use fencelab_core::{SameGenerationPolicy, Scenario};

use super::{Compare, Viz};
use crate::viz::run::{Run, RunRef, MAX_VIEW_STEPS};

/// The picker's entry for the generated benchmark scenario (links name it the same way).
pub use fencelab_links::{GENERATED, GENERATED_SIZE};
/// Autoplay speeds: label, milliseconds between ticks and steps per tick. The fast ones, for
/// long histories, take several steps per tick: a browser's timer cannot fire much more often.
pub const SPEEDS: [(&str, u32, usize); 7] = [
    ("0.5×", 1400, 1),
    ("1×", 800, 1),
    ("2×", 400, 1),
    ("4×", 180, 1),
    // 20, 100 and 800 steps a second; the labels stay short, so the bar keeps its width.
    ("16×", 50, 1),
    ("80×", 50, 5),
    ("640×", 50, 40),
];
/// The speed of each entry of [`SPEEDS`] in percent of normal, as share links carry it.
pub const SPEED_PERCENT: [u16; 7] = [50, 100, 200, 400, 1_600, 8_000, 64_000];
/// The speed a fresh page starts at.
pub const DEFAULT_SPEED: usize = 1;

/// Which same-generation policy the stores and gateway use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PolicyChoice {
    /// Whatever the scenario says.
    #[default]
    AsWritten,
    /// Force one policy everywhere.
    Force(SameGenerationPolicy),
}

/// How the run on screen fares, as the title's badge says it: from the core's verdict on the
/// whole run and the protections the reader switched off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Every invariant holds in this run, with every protection on.
    Holds,
    /// Every invariant holds in this run, though a protection is switched off.
    Weakened,
    /// This run breaks an invariant.
    Breaks,
    /// Every finding in this run is only possible: it depends on an outcome nobody learned.
    Possible,
}

impl Tone {
    /// The badge's CSS classes: the tone's picks the colour.
    pub fn class(self) -> &'static str {
        match self {
            Tone::Holds => "badge ok",
            Tone::Weakened => "badge warn",
            Tone::Breaks => "badge bad",
            Tone::Possible => "badge warn possible",
        }
    }

    /// Its glyph, so the colour is never the only cue: a tick, an open padlock, a warning.
    pub fn glyph(self) -> &'static str {
        match self {
            Tone::Holds => "check",
            Tone::Weakened => "released",
            Tone::Breaks => "violation",
            Tone::Possible => "unknown",
        }
    }

    /// What it means, in words for screen readers, read after the badge's label.
    pub fn says(self) -> &'static str {
        match self {
            Tone::Holds => " (every invariant holds in this run)",
            Tone::Weakened => " (a protection is off, though this run breaks no invariant)",
            Tone::Breaks => " (this run breaks an invariant)",
            Tone::Possible => {
                " (this run possibly breaks an invariant: every finding depends on an outcome nobody learned)"
            }
        }
    }
}

/// The title's badge: what runs now (the variant, `edited` or `custom scenario`, any switches on
/// and the reader's injected faults) and how it fares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Badge {
    /// E.g. `fenced + unfenced store`.
    pub label: String,
    /// How the run fares.
    pub tone: Tone,
}

/// A library scenario, or the generated one.
pub(super) fn builtin(case: &str, variant: Option<&str>) -> Option<Scenario> {
    if case == GENERATED {
        let (w, r, n) = GENERATED_SIZE;
        return Some(library::generated(w, r, n));
    }
    library::scenario(case, variant).ok()
}

impl Viz {
    /// The title's badge for the run on screen.
    pub fn badge(&self) -> Badge {
        if let Some(opened) = &self.opened {
            let (label, tone) = match (opened.track.breaks, opened.track.only_possible) {
                (_, true) => ("recorded history · possibly broken", Tone::Possible),
                (true, false) => ("recorded history", Tone::Breaks),
                (false, _) => ("recorded history", Tone::Holds),
            };
            return Badge { label: label.into(), tone };
        }
        let mut label = match (self.edited, self.authored) {
            (true, true) => "custom scenario".to_string(),
            (true, false) => "edited".to_string(),
            (false, _) => self.variant.clone(),
        };
        for switch in &self.switches {
            label.push_str(" + ");
            label.push_str(switch.label());
        }
        // The reader's own faults change the run, so the badge says so rather than the plain
        // variant's name.
        match self.run.scenario.injected.len() {
            0 => {}
            1 => label.push_str(" + 1 injected fault"),
            n => label.push_str(&format!(" + {n} injected faults")),
        }
        let tone = if self.run.track.only_possible {
            label.push_str(" · possibly broken");
            Tone::Possible
        } else if self.run.breaks {
            Tone::Breaks
        } else if self.switches.is_empty() {
            Tone::Holds
        } else {
            Tone::Weakened
        };
        Badge { label, tone }
    }

    /// Moves to `to` (steps in single mode, ticks in compare mode), clamped to the end.
    pub(super) fn seek(&mut self, to: usize) {
        match &mut self.compare {
            Some(c) => c.seek(to),
            None => {
                self.position = to.min(self.track().len());
                self.frame = Rc::new(match &self.opened {
                    Some(opened) => opened.frame(self.position),
                    None => self.run.frame(self.position),
                });
                self.refresh_options();
            }
        }
    }

    /// Plays the base scenario again under the policy choice; the previous run stays on screen
    /// if that fails.
    pub(super) fn replay(&mut self) {
        let scenario = self.played();
        // A reader who decides sees the steps decided so far, and no more.
        let limit = self.decide.as_ref().map_or(MAX_VIEW_STEPS, |d| d.steps);
        match Run::play_to(scenario, limit) {
            Ok(run) => {
                self.run = RunRef(Rc::new(run));
                self.error = None;
                if let Some(c) = &self.compare {
                    let scenario = self.played();
                    let mut next = Compare::new(&scenario, c.left.mode, c.right.mode);
                    next.seek(c.cursor);
                    self.compare = Some(next);
                }
                let (at, _) = self.cursor();
                self.seek(at);
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The scenario as played: the base with the policy choice and the switches applied.
    pub(super) fn played(&self) -> Scenario {
        match self.policy {
            PolicyChoice::AsWritten => switches::broken(&self.base, &self.switches),
            PolicyChoice::Force(policy) => {
                switches::broken(&switches::with_policy(&self.base, policy), &self.switches)
            }
        }
    }

    /// Loads a built-in story in its default variant, at the start.
    pub(super) fn pick(&mut self, case: String) {
        let Some(scenario) = builtin(&case, None) else {
            self.error = Some(format!("there is no built-in story called “{case}”"));
            return;
        };
        self.case = case;
        self.variant = scenario.variant.clone();
        self.base = Rc::new(scenario);
        self.edited = false;
        self.steered = false;
        self.playing = false;
        if let Some(decide) = &mut self.decide {
            decide.steps = 0;
        }
        if let Some(c) = &mut self.compare {
            c.cursor = 0;
        }
        self.position = 0;
        self.replay();
        self.sync_editor();
    }

    /// Switches the story's variant, keeping the schedule and the position.
    pub(super) fn switch_variant(&mut self, variant: String) {
        let Some(mut scenario) = builtin(&self.case, Some(&variant)) else {
            self.error = Some(format!("{} has no variant “{variant}”", self.case));
            return;
        };
        // The run restarts with the schedule of the one on screen, and the reader's faults.
        scenario.schedule = self.base.schedule.clone();
        if self.steered {
            scenario.injected = self.base.injected.clone();
        }
        self.variant = variant;
        self.base = Rc::new(scenario);
        self.edited = false;
        self.replay();
        self.sync_editor();
    }

    /// Follows a path through the story on screen: `schedule` picks where several events are
    /// due and `injected` adds faults (a link's path). A bad path says what is wrong.
    pub(super) fn follow(&mut self, schedule: Vec<usize>, injected: Vec<fencelab_core::Injection>) {
        let mut base = (*self.base).clone();
        base.schedule = schedule;
        base.injected = injected;
        self.base = Rc::new(base);
        self.steered = true;
        self.replay();
        self.sync_editor();
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
