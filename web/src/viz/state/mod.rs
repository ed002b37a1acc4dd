//! The visualizer's view state as one reducer ([`Viz`], `impl Reducible`): which story is loaded,
//! how it is played, where the reader is, compare mode, the editor and the page's address. Each
//! concern keeps its state and its steps in a submodule (`story`: the story, playing and the
//! position; `compare`; `editor`: the editor and scenarios loaded from elsewhere; `address`:
//! links); the reducer here only routes actions to them. Fencing decisions all come from
//! `fencelab-core` through [`Run`]; nothing here judges a write.

mod address;
mod compare;
mod decide;
mod editor;
mod history;
mod learn;
mod story;
#[cfg(test)]
mod tests;

use std::rc::Rc;

use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::library::{self, CaseInfo};
use fencelab_core::stories::switches::Switch;
use fencelab_core::{Fault, Scenario, StepRecord};
use yew::Reducible;

use crate::viz::frame::Frame;
use crate::viz::history::{Opened, Origin};
use crate::viz::run::{Decision, Run, RunRef, TrackRef};
use crate::viz::words::{big_jump, file_size};
use fencelab_links::{Embed, Theme};

pub use compare::{Compare, CompareSide, Side, MODES};
pub use decide::Decide;
pub use editor::Editor;
pub use history::Fetch;
pub use learn::{Learn, LearnAction, Progress, Shown, PROGRESS_KEY};
pub use story::{
    Badge, PolicyChoice, DEFAULT_SPEED, GENERATED, GENERATED_SIZE, SPEEDS, SPEED_PERCENT,
};

/// The page's top-level views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    /// The swimlane visualizer.
    #[default]
    Visualizer,
    /// The single-register playground.
    Playground,
}

/// Something the reader did, or the autoplay timer.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Load a case from the library (or [`GENERATED`]) in its default variant.
    Pick(String),
    /// Switch the variant of the current case, keeping the schedule.
    Variant(String),
    /// Switch the same-generation policy, keeping the schedule.
    Policy(PolicyChoice),
    /// One step on.
    Forward,
    /// One step back.
    Back,
    /// To the start.
    ToStart,
    /// To the end.
    ToEnd,
    /// To a position (single mode: steps; compare mode: distinct ticks).
    Seek(usize),
    /// Play or pause (at the end, nothing: see [`Action::Replay`]).
    TogglePlay,
    /// Play again from the start.
    Replay,
    /// A big jump forward (`true`) or back: a tenth of the run.
    Jump(bool),
    /// The autoplay timer fired.
    Tick,
    /// Choose an entry of [`SPEEDS`].
    Speed(usize),
    /// Turn compare mode on or off.
    Compare(bool),
    /// Choose the enforcement one side of compare mode forces.
    CompareMode(Side, Enforcement),
    /// Open or close the editor.
    ToggleEditor,
    /// The editor's text changed.
    Edit(String),
    /// Put the current scenario's JSON back into the editor.
    RevertEdit,
    /// Switch the page's view.
    Tab(Tab),
    /// Show a scenario from elsewhere (a link, an imported run, local storage) as an edit.
    Load(Box<Scenario>),
    /// Turn off exactly these protections, keeping the schedule.
    Switches(Vec<Switch>),
    /// Forget what was wrong with the opening link (a history link that failed is given up).
    DismissLinkError,
    /// Replay an exported run file (JSON) to the step it was exported at.
    Import(Rc<String>),
    /// The address changed under the page (a pasted link, Back, Forward): open that view.
    Open(String),
    /// Show a recorded history: its name (file name or link), its text and where it came from.
    OpenHistory(String, Rc<String>, Origin),
    /// The history a link names could not be fetched: its address and why.
    HistoryFailed(String, String),
    /// Back from a recorded history to the stories.
    CloseHistory,
    /// Choose a finding of the history on screen: seek to it and highlight its witness.
    ChooseFinding(usize),
    /// Hide a lane of the history's diagram, or show it again.
    ToggleLane(usize),
    /// Turn "You decide" mode on or off.
    Decide(bool),
    /// Run the engine's choice `n` after the step on screen (the later steps are replaced).
    Choose(usize),
    /// Inject a fault after the step on screen (the later steps are replaced).
    Inject(Fault),
    /// Forget the last step of the path decided so far.
    Undo,
    /// How long the pauses and delays the reader injects last, and how far clocks jump, as
    /// typed in the field: text that is no whole number of at least 1 is refused and the last
    /// length stays.
    Ticks(String),
    /// Filter the history's lane chips by this text.
    LaneFilter(String),
    /// Show every lane of the history (`true`), or only those the filter lists.
    ShowLanes(bool),
    /// A file is being read to be opened as a history: its name and size in bytes.
    Opening(String, f64),
    /// Something about the quiz or the course.
    Learn(LearnAction),
}

/// Everything the visualizer shows.
#[derive(Debug, Clone)]
pub struct Viz {
    /// The library's cases, for the picker.
    pub cases: Rc<Vec<CaseInfo>>,
    /// The picked case's name, or [`GENERATED`].
    pub case: String,
    /// The picked variant.
    pub variant: String,
    /// The same-generation policy choice.
    pub policy: PolicyChoice,
    /// Whether the scenario on screen came from the editor.
    pub edited: bool,
    /// Whether a `<fencelab-player>` element opened this view (`host=element`): problems with
    /// its link are the element's attributes.
    pub element: bool,
    /// Whether that scenario is a link's own (`custom=`, e.g. a book's inline scenario), shown as
    /// its author wrote it: it is then no reader's edit.
    pub authored: bool,
    /// The scenario before the policy choice is applied.
    pub base: Rc<Scenario>,
    /// The run on screen.
    pub run: RunRef,
    /// How many steps have been played.
    pub position: usize,
    /// The panels at `position`.
    pub frame: Rc<Frame>,
    /// Whether autoplay is on.
    pub playing: bool,
    /// The index into [`SPEEDS`].
    pub speed: usize,
    /// Compare mode, when on.
    pub compare: Option<Compare>,
    /// The editor.
    pub editor: Editor,
    /// The page's view.
    pub tab: Tab,
    /// Why the last replay failed, if it did (the previous run stays on screen).
    pub error: Option<String>,
    /// Embedded mode: which parts to show besides the diagram (`None`: the full page).
    pub embed: Option<Embed>,
    /// The colour scheme the link forced, if any (`None` follows the reader's setting).
    pub theme: Option<Theme>,
    /// Protections turned off ("break the protocol"), applied on every replay.
    pub switches: Vec<Switch>,
    /// What was wrong with the link the page was opened with, if anything.
    pub link_error: Option<String>,
    /// How many times the reader changed tabs. Each change is a new history entry, so Back and
    /// Forward move between the tabs; every other move replaces the current entry. The shell
    /// pushes an entry when this grows.
    pub entries: usize,
    /// The recorded history on screen, if one is (the player shows it instead of `run`).
    pub opened: Option<Opened>,
    /// The `history=` link whose file the shell is fetching.
    pub fetching: Option<Fetch>,
    /// Why the last history could not be opened.
    pub history_error: Option<String>,
    /// What a history link asked for that does not apply to a history.
    pub link_note: Option<String>,
    /// "You decide" mode, while it is on.
    pub decide: Option<Decide>,
    /// Whether the base's schedule and injected faults are a path the reader took (links
    /// carry them then).
    pub steered: bool,
    /// What the page's status line says: a history being opened, opened, or left.
    pub status: Option<String>,
    /// How many times the view changed so that focus belongs on the title (a history opened
    /// from a file, or left); the shell moves focus there when this grows.
    pub focus_title: usize,
    /// The title a link gave, shown instead of the story's or the history's own.
    pub title: Option<String>,
    /// The quiz, the course and what the reader has done in them.
    pub learn: Learn,
}

impl Default for Viz {
    fn default() -> Self {
        Self::new()
    }
}

impl Viz {
    /// The first case of the library in its default variant, at the start.
    pub fn new() -> Viz {
        let cases = library::cases();
        let first = cases.first().map(|c| c.name.clone()).unwrap_or_else(|| GENERATED.into());
        let base = story::builtin(&first, None)
            .or_else(|| story::builtin(GENERATED, None))
            .unwrap_or_else(|| library::generated(1, 1, 1));
        let run = match Run::play(base.clone()) {
            Ok(run) => run,
            Err(_) => Run::play(library::generated(1, 1, 1)).unwrap_or_else(|e| {
                // The generator's output is valid by construction; say so loudly if not.
                panic!("the generated scenario does not play: {e}")
            }),
        };
        let run = RunRef(Rc::new(run));
        let frame = Rc::new(run.frame(0));
        Viz {
            cases: Rc::new(cases),
            case: first,
            variant: base.variant.clone(),
            policy: PolicyChoice::AsWritten,
            edited: false,
            authored: false,
            element: false,
            base: Rc::new(base),
            run,
            position: 0,
            frame,
            playing: false,
            speed: DEFAULT_SPEED,
            compare: None,
            editor: Editor::default(),
            tab: Tab::Visualizer,
            error: None,
            embed: None,
            theme: None,
            switches: Vec::new(),
            link_error: None,
            entries: 0,
            opened: None,
            fetching: None,
            history_error: None,
            link_note: None,
            decide: None,
            steered: false,
            status: None,
            focus_title: 0,
            title: None,
            learn: Learn::default(),
        }
    }

    /// What the player shows: the recorded history when one is open, else the story's run.
    pub fn track(&self) -> &TrackRef {
        match &self.opened {
            Some(opened) => &opened.track,
            None => &self.run.track,
        }
    }

    /// The step just played, if any.
    pub fn current(&self) -> Option<&StepRecord> {
        self.position.checked_sub(1).and_then(|i| self.track().timeline.get(i))
    }

    /// Where the controls are and how far they go: steps in single mode, ticks in compare mode.
    pub fn cursor(&self) -> (usize, usize) {
        match &self.compare {
            Some(c) => (c.cursor, c.ticks.len()),
            None => (self.position, self.track().len()),
        }
    }

    /// Milliseconds between autoplay ticks.
    pub fn interval_ms(&self) -> u32 {
        SPEEDS.get(self.speed).map_or(800, |s| s.1)
    }

    /// The title shown: the link's, else the history's name or the story's title.
    pub fn title(&self) -> String {
        match (&self.title, &self.opened) {
            (Some(title), _) => title.clone(),
            (None, Some(opened)) => format!("History: {}", opened.name),
            (None, None) => self.run.scenario.title.clone(),
        }
    }

    /// What an embed tells the page around it it shows, for its frame's name: a story's title
    /// with its variant, else [`Viz::embed_title`].
    pub fn frame_name(&self) -> String {
        match (&self.title, &self.opened, self.edited) {
            (None, None, false) => format!("{} ({})", self.run.scenario.title, self.variant),
            _ => self.embed_title(),
        }
    }

    /// The title an embed's frame is named by: the shown title, with a history's file named
    /// without its folders (a relative address means nothing on another page).
    pub fn embed_title(&self) -> String {
        match (&self.title, &self.opened) {
            (None, Some(opened)) => {
                format!("History: {}", opened.name.rsplit('/').next().unwrap_or_default())
            }
            _ => self.title(),
        }
    }

    /// The document's title when the view has a title of its own (a link's or a history's):
    /// `<title> · Fencelab`; a story keeps the page's title.
    pub fn document_title(&self) -> Option<String> {
        (self.title.is_some() || self.opened.is_some())
            .then(|| format!("{} · Fencelab", self.title()))
    }
}

impl Reducible for Viz {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let (at, end) = self.cursor();
        // Actions that change nothing keep the same state, so nothing re-renders.
        match &action {
            Action::Tick if !self.playing => return self,
            Action::Forward | Action::ToEnd | Action::Jump(true) | Action::TogglePlay
                if at >= end && !self.playing =>
            {
                return self
            }
            Action::Back | Action::ToStart | Action::Jump(false) if at == 0 && !self.playing => {
                return self
            }
            Action::Seek(n) if *n == at && !self.playing => return self,
            Action::Tab(tab) if *tab == self.tab => return self,
            Action::Speed(s) if *s == self.speed || *s >= SPEEDS.len() => return self,
            // What changes a simulated story means nothing to a recorded history (the page
            // hides those controls while one is shown).
            Action::Variant(_)
            | Action::Policy(_)
            | Action::Compare(_)
            | Action::CompareMode(..)
            | Action::ToggleEditor
            | Action::Edit(_)
            | Action::RevertEdit
            | Action::Switches(_)
            | Action::Import(_)
            | Action::Decide(_)
            | Action::Choose(_)
            | Action::Inject(_)
            | Action::Undo
                if self.opened.is_some() =>
            {
                return self
            }
            Action::CloseHistory
            | Action::ToggleLane(_)
            | Action::ChooseFinding(_)
            | Action::LaneFilter(_)
            | Action::ShowLanes(_)
                if self.opened.is_none() && self.fetching.is_none() =>
            {
                return self
            }
            Action::Decide(on) if *on == self.decide.is_some() => return self,
            Action::Choose(_) | Action::Inject(_) | Action::Undo | Action::Ticks(_)
                if self.decide.is_none() =>
            {
                return self
            }
            Action::Undo if self.run.len() == 0 => return self,
            // A new address replaces the whole view, so nothing of this one is copied but the
            // count of history entries: the address is already in its own entry.
            Action::Open(fragment) => {
                let mut next = Viz::open_with(fragment, self.learn.progress.clone());
                next.entries = self.entries;
                return Rc::new(next);
            }
            _ => {}
        }
        let mut next = (*self).clone();
        // A link's title names the view it opened, not another story or file.
        if matches!(
            action,
            Action::Pick(_)
                | Action::Load(_)
                | Action::Import(_)
                | Action::CloseHistory
                | Action::OpenHistory(_, _, Origin::File)
        ) {
            next.title = None;
        }
        // Another story, or a scenario from elsewhere, takes the place of a history.
        if matches!(action, Action::Pick(_) | Action::Load(_))
            && (next.opened.is_some() || next.fetching.is_some())
        {
            next.close_history();
        }
        let by_learning = matches!(action, Action::Learn(_));
        match action {
            Action::Pick(case) => next.pick(case),
            Action::Variant(variant) => next.switch_variant(variant),
            Action::Policy(policy) => {
                next.policy = policy;
                next.replay();
            }
            Action::Forward => {
                next.playing = false;
                next.forward_or_ask(false);
            }
            Action::Back => {
                next.playing = false;
                next.step_by(false, 1);
            }
            Action::Jump(forward) => {
                next.playing = false;
                next.step_by(forward, big_jump(end));
            }
            Action::Replay => next.replay_from_start(),
            Action::ToStart => {
                next.playing = false;
                next.seek(0);
            }
            Action::ToEnd => {
                next.playing = false;
                next.seek(end);
            }
            Action::Seek(n) => {
                next.playing = false;
                next.seek(n);
            }
            Action::TogglePlay => next.toggle_play(at, end),
            Action::Tick => next.forward_or_ask(true),
            Action::Speed(speed) => next.speed = speed,
            Action::Compare(on) => {
                if on {
                    next.set_decide(false);
                }
                next.set_compare(on);
            }
            Action::CompareMode(side, mode) => next.set_compare_mode(side, mode),
            Action::ToggleEditor => next.toggle_editor(),
            Action::Edit(text) => next.edit(text),
            Action::RevertEdit => next.revert_edit(),
            Action::Tab(tab) => {
                next.tab = tab;
                next.playing = false;
                next.entries += 1;
            }
            Action::Load(scenario) => next.load(*scenario),
            Action::Switches(switches) => {
                next.switches = switches;
                next.replay();
            }
            Action::DismissLinkError => next.dismiss_link_problems(),
            Action::Import(json) => return next.import(&json),
            // Handled before the copy: a new address replaces the whole view.
            Action::Open(_) => return self,
            Action::OpenHistory(name, text, origin) => next.open_history(name, &text, origin),
            Action::HistoryFailed(address, problem) => next.history_failed(&address, problem),
            Action::CloseHistory => next.close_history(),
            Action::ChooseFinding(index) => next.choose_finding(index),
            Action::ToggleLane(lane) => next.toggle_lane(lane),
            Action::Decide(on) => next.set_decide(on),
            Action::Choose(n) => next.decide_with(Decision::Choose(n)),
            Action::Inject(fault) => next.inject(fault),
            Action::Undo => next.undo(),
            Action::Ticks(ticks) => {
                if let Some(decide) = &mut next.decide {
                    let length = ticks.trim().parse::<u64>().ok().filter(|n| *n >= 1);
                    decide.refused = length.is_none();
                    decide.ticks = length.or(decide.ticks);
                    decide.typed = Some(ticks);
                }
            }
            Action::LaneFilter(text) => {
                if let Some(opened) = &mut next.opened {
                    opened.lane_filter = text;
                }
            }
            Action::ShowLanes(all) => {
                if let Some(opened) = &mut next.opened {
                    opened.show_lanes(all);
                }
            }
            Action::Opening(name, bytes) => {
                next.status = Some(format!("Opening {name} ({})…", file_size(bytes)));
            }
            Action::Learn(action) => next.learn(action),
        }
        next.settle_learning(&self, by_learning);
        Rc::new(next)
    }
}
