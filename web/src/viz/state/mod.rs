//! The visualizer's view state as one reducer ([`Viz`], `impl Reducible`). The page always has a
//! simulated [`Story`] (what a story link names, and what shows beneath a recorded history) and
//! is in one [`Mode`] at a time: the story on its own, compare mode, "You decide", a history
//! link being fetched, or a recorded history. Each mode owns its fields and its reducer in a
//! submodule (`story`: the story and its editor; `player`: stepping, seeking and autoplay, in
//! every mode; `compare`; `decide`; `history`; `learn`: the quiz and the course, over a story;
//! `address`: links), so no two modes can be on at once and the reducer here only routes
//! actions. Fencing decisions all come from `fencelab-core` through [`Run`]; nothing here
//! judges a write.

mod address;
mod compare;
mod decide;
mod editor;
mod history;
mod learn;
mod player;
mod story;
#[cfg(test)]
mod tests;

use std::rc::Rc;

use fencelab_core::format::model::Enforcement;
use fencelab_core::stories::switches::Switch;
use fencelab_core::{record::StepRecord, Scenario};
use fencelab_core::{stories::library, stories::library::CaseInfo};
use yew::Reducible;

use crate::viz::frame::Frame;
use crate::viz::history::{Opened, Origin};
use crate::viz::run::{Run, RunRef, TrackRef};
use crate::viz::words::file_size;
use fencelab_links::{Embed, Theme};

pub use compare::{Compare, CompareSide, Side, MODES};
pub use decide::{Decide, DecideAction};
pub use editor::Editor;
pub use history::{Fetch, HistoryAction};
pub use learn::{Learn, LearnAction, Place, Progress, Shown, PROGRESS_KEY};
pub use story::{
    Badge, PolicyChoice, Story, DEFAULT_SPEED, GENERATED, GENERATED_SIZE, SPEEDS, SPEED_PERCENT,
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

/// What the visualizer is doing with its story. One at a time: entering a mode leaves the one
/// before, and its state goes with it.
#[derive(Debug, Clone, Default)]
pub enum Mode {
    /// The story played on its own (the quiz may stop it at its checkpoints).
    #[default]
    Story,
    /// The story under two enforcement modes side by side, in lockstep by time.
    Compare(Compare),
    /// "You decide": the run on screen is the path the reader has taken so far.
    Decide(Decide),
    /// A `history=` link's file on its way, or failed; the story stands in until it comes.
    Fetching(Fetch),
    /// A recorded history in the player, in the story's place.
    History(Box<Opened>),
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
    /// A file is being read to be opened as a history: its name and size in bytes.
    Opening(String, f64),
    /// Something within the recorded history on screen.
    InHistory(HistoryAction),
    /// Turn "You decide" mode on or off.
    Decide(bool),
    /// Something within "You decide" mode.
    InDecide(DecideAction),
    /// Something about the quiz or the course.
    Learn(LearnAction),
}

/// Everything the visualizer shows.
#[derive(Debug, Clone)]
pub struct Viz {
    /// The library's cases, for the picker.
    pub cases: Rc<Vec<CaseInfo>>,
    /// The simulated story, beneath whatever mode is on.
    pub story: Story,
    /// What the page is doing with the story.
    pub mode: Mode,
    /// How many steps the player has played (of the story's run, or of the recorded history;
    /// compare mode keeps its own cursor).
    pub position: usize,
    /// The panels at `position`.
    pub frame: Rc<Frame>,
    /// Whether autoplay is on.
    pub playing: bool,
    /// The index into [`SPEEDS`].
    pub speed: usize,
    /// The page's view.
    pub tab: Tab,
    /// Embedded mode: which parts to show besides the diagram (`None`: the full page).
    pub embed: Option<Embed>,
    /// The colour scheme the link forced, if any (`None` follows the reader's setting).
    pub theme: Option<Theme>,
    /// Whether a `<fencelab-player>` element opened this view (`host=element`): problems with
    /// its link are the element's attributes.
    pub element: bool,
    /// What was wrong with the link the page was opened with, if anything.
    pub link_error: Option<String>,
    /// What the link asked for that the page could not give (a step past the end, story-only
    /// parameters on a history link).
    pub link_note: Option<String>,
    /// The title a link gave, shown instead of the story's or the history's own.
    pub title: Option<String>,
    /// Why the last file the reader chose or dropped could not be opened as a history (the
    /// view stays as it was).
    pub file_error: Option<String>,
    /// What the page's status line says: a history being opened, opened, or left.
    pub status: Option<String>,
    /// How many times the reader changed tabs. Each change is a new history entry, so Back and
    /// Forward move between the tabs; every other move replaces the current entry. The shell
    /// pushes an entry when this grows.
    pub entries: usize,
    /// How many times the view changed so that focus belongs on the title (a history opened
    /// from a file, or left); the shell moves focus there when this grows.
    pub focus_title: usize,
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
            story: Story::new(first, base, run),
            mode: Mode::Story,
            position: 0,
            frame,
            playing: false,
            speed: DEFAULT_SPEED,
            tab: Tab::Visualizer,
            embed: None,
            theme: None,
            element: false,
            link_error: None,
            link_note: None,
            title: None,
            file_error: None,
            status: None,
            entries: 0,
            focus_title: 0,
            learn: Learn::default(),
        }
    }

    /// Compare mode's state, while it is on.
    pub fn compare(&self) -> Option<&Compare> {
        match &self.mode {
            Mode::Compare(compare) => Some(compare),
            _ => None,
        }
    }

    /// "You decide" mode's state, while it is on.
    pub fn decide(&self) -> Option<&Decide> {
        match &self.mode {
            Mode::Decide(decide) => Some(decide),
            _ => None,
        }
    }

    /// The recorded history on screen, if one is.
    pub fn opened(&self) -> Option<&Opened> {
        match &self.mode {
            Mode::History(opened) => Some(opened),
            _ => None,
        }
    }

    /// The `history=` link being fetched (or that failed), if one is.
    pub fn fetch(&self) -> Option<&Fetch> {
        match &self.mode {
            Mode::Fetching(fetch) => Some(fetch),
            _ => None,
        }
    }

    /// What the player shows: the recorded history when one is open, else the story's run.
    pub fn track(&self) -> &TrackRef {
        match &self.mode {
            Mode::History(opened) => &opened.track,
            _ => &self.story.run.track,
        }
    }

    /// The step just played, if any.
    pub fn current(&self) -> Option<&StepRecord> {
        self.position.checked_sub(1).and_then(|i| self.track().timeline.get(i))
    }

    /// Where the controls are and how far they go: steps in single mode, ticks in compare mode.
    pub fn cursor(&self) -> (usize, usize) {
        match &self.mode {
            Mode::Compare(c) => (c.cursor, c.ticks.len()),
            _ => (self.position, self.track().len()),
        }
    }

    /// Milliseconds between autoplay ticks.
    pub fn interval_ms(&self) -> u32 {
        SPEEDS.get(self.speed).map_or(800, |s| s.1)
    }

    /// The title shown: the link's, else the history's name or the story's title.
    pub fn title(&self) -> String {
        match (&self.title, self.opened()) {
            (Some(title), _) => title.clone(),
            (None, Some(opened)) => format!("History: {}", opened.name),
            (None, None) => self.story.run.scenario.title.clone(),
        }
    }

    /// What an embed tells the page around it it shows, for its frame's name: a story's title
    /// with its variant, else [`Viz::embed_title`].
    pub fn frame_name(&self) -> String {
        match (&self.title, self.opened(), self.story.edited) {
            (None, None, false) => {
                format!("{} ({})", self.story.run.scenario.title, self.story.variant)
            }
            _ => self.embed_title(),
        }
    }

    /// The title an embed's frame is named by: the shown title, with a history's file named
    /// without its folders (a relative address means nothing on another page).
    pub fn embed_title(&self) -> String {
        match (&self.title, self.opened()) {
            (None, Some(opened)) => {
                format!("History: {}", opened.name.rsplit('/').next().unwrap_or_default())
            }
            _ => self.title(),
        }
    }

    /// The document's title when the view has a title of its own (a link's or a history's):
    /// `<title> · Fencelab`; a story keeps the page's title.
    pub fn document_title(&self) -> Option<String> {
        (self.title.is_some() || self.opened().is_some())
            .then(|| format!("{} · Fencelab", self.title()))
    }

    /// Applies `action` to this copy of the state; `false` when it changes nothing, so the
    /// state before it is kept and nothing re-renders.
    fn apply(&mut self, action: Action) -> bool {
        match action {
            Action::Forward
            | Action::Back
            | Action::ToStart
            | Action::ToEnd
            | Action::Seek(_)
            | Action::TogglePlay
            | Action::Replay
            | Action::Jump(_)
            | Action::Tick
            | Action::Speed(_) => self.play(action),
            Action::Tab(tab) => {
                if tab == self.tab {
                    return false;
                }
                self.tab = tab;
                self.playing = false;
                self.entries += 1;
                true
            }
            // Another story, or a scenario from elsewhere, takes the place of a history; a
            // link's title names the view it opened, not another story or file.
            Action::Pick(case) => {
                self.title = None;
                self.leave_history();
                self.pick(case);
                true
            }
            Action::Load(scenario) => {
                self.title = None;
                self.leave_history();
                self.load(*scenario);
                true
            }
            Action::Variant(_)
            | Action::Policy(_)
            | Action::Switches(_)
            | Action::ToggleEditor
            | Action::Edit(_)
            | Action::RevertEdit
            | Action::Import(_) => self.story_action(action),
            Action::Compare(on) => self.set_compare(on),
            Action::CompareMode(side, mode) => self.set_compare_mode(side, mode),
            Action::Decide(on) => self.set_decide(on),
            Action::InDecide(action) => self.decide_action(action),
            Action::OpenHistory(name, text, origin) => {
                if origin == Origin::File {
                    self.title = None;
                }
                self.open_history(name, &text, origin);
                true
            }
            Action::HistoryFailed(address, problem) => self.history_failed(&address, problem),
            Action::CloseHistory => {
                let left = self.leave_history();
                if left {
                    self.title = None;
                }
                left
            }
            Action::InHistory(action) => self.history_action(action),
            Action::Opening(name, bytes) => {
                self.status = Some(format!("Opening {name} ({})…", file_size(bytes)));
                true
            }
            Action::DismissLinkError => {
                self.dismiss_link_problems();
                true
            }
            Action::Learn(action) => {
                self.learn(action);
                true
            }
            // Handled before the copy: a new address replaces the whole view.
            Action::Open(_) => false,
        }
    }
}

impl Reducible for Viz {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        // A new address replaces the whole view, so nothing of this one is copied but the
        // count of history entries: the address is already in its own entry.
        if let Action::Open(fragment) = &action {
            let mut next = Viz::open_with(fragment, self.learn.progress.clone());
            next.entries = self.entries;
            // A link to another story (the course's Next) opens it as a new page would.
            let other = |a: &Viz, b: &Viz| {
                (a.title(), &a.story.case, &a.story.variant)
                    != (b.title(), &b.story.case, &b.story.variant)
            };
            let moved = next.embed.is_none() && other(&next, &self);
            next.focus_title = self.focus_title + usize::from(moved);
            return Rc::new(next);
        }
        let by_learning = matches!(action, Action::Learn(_));
        let mut next = (*self).clone();
        // Actions that change nothing keep the same state, so nothing re-renders.
        if !next.apply(action) {
            return self;
        }
        next.settle_learning(&self, by_learning);
        Rc::new(next)
    }
}
