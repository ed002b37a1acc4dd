//! The simulated story: picking a story, a variant, a policy and switches (each replays the
//! run, in whatever mode is on), the editor's panel over it, and the title's badge.

use std::rc::Rc;

use fencelab_core::stories::library;
use fencelab_core::{fence::register::SameGenerationPolicy, format::model::Injection, Scenario};
use fencelab_core::{stories::switches, stories::switches::Switch};

use super::{Action, Editor, Mode, Viz};
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

/// The simulated story: what a story link names, and what shows beneath a recorded history.
#[derive(Debug, Clone)]
pub struct Story {
    /// The picked case's name, or [`GENERATED`].
    pub case: String,
    /// The picked variant.
    pub variant: String,
    /// The same-generation policy choice.
    pub policy: PolicyChoice,
    /// Protections turned off ("break the protocol"), applied on every replay.
    pub switches: Vec<Switch>,
    /// Whether the scenario on screen came from the editor.
    pub edited: bool,
    /// Whether that scenario is a link's own (`custom=`, e.g. a book's inline scenario), shown as
    /// its author wrote it: it is then no reader's edit.
    pub authored: bool,
    /// The scenario before the policy choice is applied.
    pub base: Rc<Scenario>,
    /// Whether the base's schedule and injected faults are a path the reader took (links
    /// carry them then).
    pub steered: bool,
    /// The run on screen.
    pub run: RunRef,
    /// Why the last replay failed, if it did (the previous run stays on screen).
    pub error: Option<String>,
    /// The editor, a panel beside the story in every mode but a recorded history's.
    pub editor: Editor,
}

/// A library scenario, or the generated one.
pub(super) fn builtin(case: &str, variant: Option<&str>) -> Option<Scenario> {
    if case == GENERATED {
        let (w, r, n) = GENERATED_SIZE;
        return Some(library::generated(w, r, n));
    }
    library::scenario(case, variant).ok()
}

impl Story {
    /// `case`'s scenario `base` as written, played as `run`.
    pub(super) fn new(case: String, base: Scenario, run: RunRef) -> Story {
        Story {
            case,
            variant: base.variant.clone(),
            policy: PolicyChoice::AsWritten,
            switches: Vec::new(),
            edited: false,
            authored: false,
            base: Rc::new(base),
            steered: false,
            run,
            error: None,
            editor: Editor::default(),
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

    /// Makes `schedule` and `injected` the base's: a path the reader took, which links carry.
    pub(super) fn steer(&mut self, schedule: Vec<usize>, injected: Vec<Injection>) {
        let mut base = (*self.base).clone();
        base.schedule = schedule;
        base.injected = injected;
        self.base = Rc::new(base);
        self.steered = true;
        self.sync_editor();
    }

    /// The title's badge for the story's run.
    fn badge(&self) -> Badge {
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
            // Every protection on and still broken: what the story shows is where fencing ends.
            let as_told = self.switches.is_empty() && self.run.scenario.injected.is_empty();
            if as_told && self.run.scenario.fully_fenced() {
                label.push_str(" · a limit of fencing");
            }
            Tone::Breaks
        } else if self.switches.is_empty() {
            Tone::Holds
        } else {
            Tone::Weakened
        };
        Badge { label, tone }
    }
}

impl Viz {
    /// The title's badge for what is on screen: the story's run or a recorded history.
    pub fn badge(&self) -> Badge {
        let Some(opened) = self.opened() else { return self.story.badge() };
        let (label, tone) = match (opened.track.breaks, opened.track.only_possible) {
            (_, true) => ("recorded history · possibly broken", Tone::Possible),
            (true, false) => ("recorded history", Tone::Breaks),
            (false, _) => ("recorded history", Tone::Holds),
        };
        Badge { label: label.into(), tone }
    }

    /// The story's own actions: each changes the story on screen, so none means anything while
    /// a recorded history takes its place (the page hides those controls then).
    pub(super) fn story_action(&mut self, action: Action) -> bool {
        if self.opened().is_some() {
            return false;
        }
        match action {
            Action::Variant(variant) => self.switch_variant(variant),
            Action::Policy(policy) => {
                self.story.policy = policy;
                self.replay();
            }
            Action::Switches(switches) => {
                self.story.switches = switches;
                self.replay();
            }
            Action::ToggleEditor => self.story.toggle_editor(),
            Action::Edit(text) => self.edit(text),
            Action::RevertEdit => self.story.revert_edit(),
            Action::Import(json) => {
                // A link's title names the view it opened, not a run from a file.
                self.title = None;
                self.import(&json);
            }
            _ => return false,
        }
        true
    }

    /// Plays the story's scenario again under the policy choice (in "You decide" mode only as
    /// far as the reader has decided, and in compare mode under both sides' enforcement); the
    /// previous run stays on screen if that fails.
    pub(super) fn replay(&mut self) {
        let limit = match &self.mode {
            Mode::Decide(decide) => decide.steps,
            _ => MAX_VIEW_STEPS,
        };
        match Run::play_to(self.story.played(), limit) {
            Ok(run) => {
                self.story.run = RunRef(Rc::new(run));
                self.story.error = None;
                if let Mode::Compare(c) = &mut self.mode {
                    *c = c.replayed(&self.story.played());
                }
                let (at, _) = self.cursor();
                self.seek(at);
            }
            Err(e) => self.story.error = Some(e),
        }
    }

    /// Loads a built-in story in its default variant, at the start.
    pub(super) fn pick(&mut self, case: String) {
        let Some(scenario) = builtin(&case, None) else {
            self.story.error = Some(format!("there is no built-in story called “{case}”"));
            return;
        };
        let story = &mut self.story;
        story.case = case;
        story.variant = scenario.variant.clone();
        story.base = Rc::new(scenario);
        story.edited = false;
        story.steered = false;
        self.playing = false;
        self.position = 0;
        match &mut self.mode {
            Mode::Decide(decide) => decide.steps = 0,
            Mode::Compare(c) => c.cursor = 0,
            _ => {}
        }
        self.replay();
        self.story.sync_editor();
    }

    /// Switches the story's variant, keeping the schedule and the position.
    pub(super) fn switch_variant(&mut self, variant: String) {
        let story = &mut self.story;
        let Some(mut scenario) = builtin(&story.case, Some(&variant)) else {
            story.error = Some(format!("{} has no variant “{variant}”", story.case));
            return;
        };
        // The run restarts with the schedule of the one on screen, and the reader's faults.
        scenario.schedule = story.base.schedule.clone();
        if story.steered {
            scenario.injected = story.base.injected.clone();
        }
        story.variant = variant;
        story.base = Rc::new(scenario);
        story.edited = false;
        self.replay();
        self.story.sync_editor();
    }

    /// Follows a path through the story on screen: `schedule` picks where several events are
    /// due and `injected` adds faults (a link's path). A bad path says what is wrong.
    pub(super) fn follow(&mut self, schedule: Vec<usize>, injected: Vec<Injection>) {
        self.story.steer(schedule, injected);
        self.replay();
    }
}
