//! The visualizer's view state as a reducer: which story is loaded, how it is played, where the
//! reader is, compare mode and the editor. Fencing decisions all come from `fencelab-core`
//! through [`Run`]; nothing here judges a write.

use std::rc::Rc;

use fencelab_core::scenario::export::RunExport;
use fencelab_core::scenario::library::{self, CaseInfo};
use fencelab_core::scenario::model::Enforcement;
use fencelab_core::scenario::switches::{self, Switch};
use fencelab_core::share::{Embed, LinkError, LinkScenario, ShareLink};
use fencelab_core::{SameGenerationPolicy, Scenario, ScenarioError, StepRecord};
use yew::Reducible;

use crate::viz::frame::Frame;
use crate::viz::run::{Run, RunRef};
use crate::TOOLS;

/// The picker's entry for the generated benchmark scenario (links name it the same way).
pub use fencelab_core::share::{GENERATED, GENERATED_SIZE};
/// Autoplay speeds: label and milliseconds per step.
pub const SPEEDS: [(&str, u32); 4] = [("0.5×", 1400), ("1×", 800), ("2×", 400), ("4×", 180)];
/// The speed of each entry of [`SPEEDS`] in percent of normal, as share links carry it.
pub const SPEED_PERCENT: [u16; 4] = [50, 100, 200, 400];
/// The speed a fresh page starts at.
pub const DEFAULT_SPEED: usize = 1;
/// The enforcement modes compare mode offers.
pub const MODES: [Enforcement; 4] = [
    Enforcement::Unfenced,
    Enforcement::CheckThenWrite,
    Enforcement::Fenced,
    Enforcement::FencedIdempotent,
];

/// Which same-generation policy the stores and gateway use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PolicyChoice {
    /// Whatever the scenario says.
    #[default]
    AsWritten,
    /// Force one policy everywhere.
    Force(SameGenerationPolicy),
}

/// The page's top-level views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tab {
    /// The swimlane visualizer.
    #[default]
    Visualizer,
    /// Issue 2's single-register playground.
    Playground,
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
}

impl Tone {
    /// The badge's CSS classes: the tone's picks the colour.
    pub fn class(self) -> &'static str {
        match self {
            Tone::Holds => "badge ok",
            Tone::Weakened => "badge warn",
            Tone::Breaks => "badge bad",
        }
    }

    /// Its glyph, so the colour is never the only cue: a tick, an open padlock, a warning.
    pub fn glyph(self) -> &'static str {
        match self {
            Tone::Holds => "check",
            Tone::Weakened => "released",
            Tone::Breaks => "violation",
        }
    }

    /// What it means, in words for screen readers, read after the badge's label.
    pub fn says(self) -> &'static str {
        match self {
            Tone::Holds => " (every invariant holds in this run)",
            Tone::Weakened => " (a protection is off, though this run breaks no invariant)",
            Tone::Breaks => " (this run breaks an invariant)",
        }
    }
}

/// The title's badge: what runs now (the variant, or `edited`, and any switches on) and how it
/// fares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Badge {
    /// E.g. `fenced + unfenced store`.
    pub label: String,
    /// How the run fares.
    pub tone: Tone,
}

/// Which side of compare mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The left (or upper) run.
    Left,
    /// The right (or lower) run.
    Right,
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
    /// Play or pause.
    TogglePlay,
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
    /// Forget what was wrong with the opening link.
    DismissLinkError,
    /// Replay an exported run file (JSON) to the step it was exported at.
    Import(Rc<String>),
    /// The address changed under the page (a pasted link, Back, Forward): open that view.
    Open(String),
    /// The reader pressed the control with this id, whose tool the viewer does not carry: the
    /// shell loads the tools module, which takes the page over and presses it again.
    Tools(&'static str),
}

impl Action {
    /// The control to press again in the tools module, when the viewer cannot do this itself.
    pub fn tool_control(&self) -> Option<&'static str> {
        if TOOLS {
            return None;
        }
        match self {
            Action::Compare(true) => Some("compare-toggle"),
            Action::ToggleEditor => Some("editor-toggle"),
            Action::Tab(Tab::Playground) => Some("tab-playground"),
            Action::Tools(id) => Some(id),
            _ => None,
        }
    }
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
    fn new(base: &Scenario, mode: Enforcement) -> CompareSide {
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
    fn new(base: &Scenario, left: Enforcement, right: Enforcement) -> Compare {
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

    fn seek(&mut self, cursor: usize) {
        self.cursor = cursor.min(self.ticks.len());
        let tick = self.cursor.checked_sub(1).and_then(|i| self.ticks.get(i)).copied();
        self.left.seek_tick(tick);
        self.right.seek_tick(tick);
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
/// already in time order (and the page's wasm then carries no sort routine for this).
fn merge_ticks(a: impl Iterator<Item = u64>, b: impl Iterator<Item = u64>) -> Vec<u64> {
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

/// The scenario editor.
#[derive(Debug, Clone, Default)]
pub struct Editor {
    /// Whether it is open.
    pub open: bool,
    /// The text in it.
    pub text: Rc<String>,
    /// What is wrong with the text, if anything.
    pub error: Option<ScenarioError>,
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
    /// Protections turned off ("break the protocol"), applied on every replay.
    pub switches: Vec<Switch>,
    /// What was wrong with the link the page was opened with, if anything.
    pub link_error: Option<String>,
    /// The viewer opened a link that needs the tools (compare mode, the playground): the shell
    /// loads them at once and leaves the address as the link had it.
    pub wants_tools: bool,
    /// How many times the reader changed tabs. Each change is a new history entry, so Back and
    /// Forward move between the tabs; every other move replaces the current entry. The shell
    /// pushes an entry when this grows.
    pub entries: usize,
}

/// `scenario` with one same-generation policy everywhere.
pub fn with_policy(scenario: &Scenario, policy: PolicyChoice) -> Scenario {
    let mut scenario = scenario.clone();
    if let PolicyChoice::Force(policy) = policy {
        for store in &mut scenario.stores {
            store.policy = policy;
        }
        if let Some(gateway) = &mut scenario.gateway {
            gateway.policy = policy;
        }
    }
    scenario
}

/// `scenario` with one enforcement mode on every store, write path and the gateway (which only
/// knows fenced and unfenced).
pub fn with_enforcement(scenario: &Scenario, mode: Enforcement) -> Scenario {
    let mut scenario = scenario.clone();
    for store in &mut scenario.stores {
        store.enforcement = mode;
        for path in &mut store.paths {
            path.enforcement = mode;
        }
    }
    if let Some(gateway) = &mut scenario.gateway {
        gateway.enforcement =
            if mode.is_fenced() { Enforcement::Fenced } else { Enforcement::Unfenced };
    }
    scenario
}

/// A library scenario, or the generated one.
fn load(case: &str, variant: Option<&str>) -> Option<Scenario> {
    if case == GENERATED {
        let (w, r, n) = GENERATED_SIZE;
        return Some(library::generated(w, r, n));
    }
    library::scenario(case, variant)
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
        let base = load(&first, None)
            .or_else(|| load(GENERATED, None))
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
            switches: Vec::new(),
            link_error: None,
            wants_tools: false,
            entries: 0,
        }
    }

    /// The page an address fragment (without `#`) asks for; an empty one is the first story.
    pub fn open(fragment: &str) -> Viz {
        if fragment.is_empty() {
            return Viz::new();
        }
        let mut state = Viz::from_link(ShareLink::parse(fragment));
        // A link that asked to be an embed stays one, even when it cannot be opened.
        if state.link_error.is_some() {
            state.embed = ShareLink::embed_in(fragment);
        }
        state
    }

    /// The page a link asks for. A bad link opens the default story with the picker and says
    /// what was wrong with it.
    pub fn from_link(link: Result<ShareLink, LinkError>) -> Viz {
        let link = match link {
            Ok(link) => link,
            Err(e) => {
                let mut state = Viz::new();
                state.link_error = Some(e.to_string());
                return state;
            }
        };
        let mut state = Rc::new(Viz::new());
        let mut actions = Vec::new();
        match &link.scenario {
            LinkScenario::Builtin { name, variant } => {
                actions.push(Action::Pick(name.clone()));
                if name != GENERATED {
                    actions.push(Action::Variant(variant.clone()));
                }
            }
            LinkScenario::Custom(scenario) => actions.push(Action::Load(scenario.clone())),
        }
        if let Some(policy) = link.policy {
            actions.push(Action::Policy(PolicyChoice::Force(policy)));
        }
        if !link.switches.is_empty() {
            actions.push(Action::Switches(link.switches.clone()));
        }
        if let Some((left, right)) = link.compare.filter(|_| TOOLS) {
            actions.push(Action::Compare(true));
            actions.push(Action::CompareMode(Side::Left, left));
            actions.push(Action::CompareMode(Side::Right, right));
        }
        let speed = SPEED_PERCENT.iter().position(|p| *p >= link.speed).unwrap_or(SPEEDS.len() - 1);
        actions.push(Action::Speed(speed));
        actions.push(Action::Seek(link.step));
        if link.autoplay {
            actions.push(Action::TogglePlay);
        }
        // An embed has no tabs: it shows the visualizer whatever the link says.
        let playground = link.playground && link.embed.is_none();
        if playground && TOOLS {
            actions.push(Action::Tab(Tab::Playground));
        }
        for action in actions {
            state = state.reduce(action);
        }
        let mut state = Rc::unwrap_or_clone(state);
        state.wants_tools = !TOOLS && (link.compare.is_some() || playground);
        state.link_error = state.error.take();
        if state.link_error.is_none() {
            state.embed = link.embed;
        }
        state
    }

    /// The link to this view, as [`ShareLink::to_fragment`] writes it into the address.
    pub fn to_link(&self) -> ShareLink {
        let mut link = if self.edited {
            let mut link = ShareLink::builtin("", "");
            link.scenario = LinkScenario::Custom(Box::new((*self.base).clone()));
            link
        } else {
            ShareLink::builtin(&self.case, &self.variant)
        };
        if let PolicyChoice::Force(policy) = self.policy {
            link.policy = Some(policy);
        }
        link.step = self.cursor().0;
        link.compare = self.compare.as_ref().map(|c| (c.left.mode, c.right.mode));
        link.autoplay = self.playing;
        link.speed = SPEED_PERCENT.get(self.speed).copied().unwrap_or(100);
        link.switches = self.switches.clone();
        link.embed = self.embed;
        link.playground = self.tab == Tab::Playground && self.embed.is_none();
        link
    }

    /// The title's badge for the run on screen.
    pub fn badge(&self) -> Badge {
        let mut label = if self.edited { "edited".to_string() } else { self.variant.clone() };
        for switch in &self.switches {
            label.push_str(" + ");
            label.push_str(switch.label());
        }
        let tone = if self.run.breaks {
            Tone::Breaks
        } else if self.switches.is_empty() {
            Tone::Holds
        } else {
            Tone::Weakened
        };
        Badge { label, tone }
    }

    /// Whether this is an embed whose link could not be opened: it shows only what was wrong,
    /// never another story in the link's place.
    pub fn broken_embed(&self) -> Option<&str> {
        self.embed.and(self.link_error.as_deref())
    }

    /// Whether an embedded page shows `part` (the full page shows everything).
    pub fn shows(&self, part: &str) -> bool {
        self.embed.as_ref().is_none_or(|embed| embed.shows(part))
    }

    /// The step just played, if any.
    pub fn current(&self) -> Option<&StepRecord> {
        self.position.checked_sub(1).and_then(|i| self.run.timeline.get(i))
    }

    /// Where the controls are and how far they go: steps in single mode, ticks in compare mode.
    pub fn cursor(&self) -> (usize, usize) {
        match &self.compare {
            Some(c) if TOOLS => (c.cursor, c.ticks.len()),
            _ => (self.position, self.run.len()),
        }
    }

    /// Milliseconds between autoplay steps.
    pub fn interval_ms(&self) -> u32 {
        SPEEDS.get(self.speed).map_or(800, |s| s.1)
    }

    fn seek(&mut self, to: usize) {
        match &mut self.compare {
            Some(c) if TOOLS => c.seek(to),
            _ => {
                self.position = to.min(self.run.len());
                self.frame = Rc::new(self.run.frame(self.position));
            }
        }
    }

    /// Plays the base scenario again under the policy choice; the previous run stays on screen
    /// if that fails.
    fn replay(&mut self) {
        let scenario = self.played();
        match Run::play(scenario) {
            Ok(run) => {
                self.run = RunRef(Rc::new(run));
                self.error = None;
                if let Some(c) = self.compare.as_ref().filter(|_| TOOLS) {
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
    fn played(&self) -> Scenario {
        switches::broken(&with_policy(&self.base, self.policy), &self.switches)
    }

    fn sync_editor(&mut self) {
        if TOOLS && self.editor.open {
            self.editor.text = Rc::new(self.base.to_json());
        }
        self.editor.error = None;
    }

    fn pick(&mut self, case: String) {
        let Some(scenario) = load(&case, None) else {
            self.error = Some(format!("there is no built-in story called “{case}”"));
            return;
        };
        self.case = case;
        self.variant = scenario.variant.clone();
        self.base = Rc::new(scenario);
        self.edited = false;
        self.playing = false;
        if let Some(c) = &mut self.compare {
            c.cursor = 0;
        }
        self.position = 0;
        self.replay();
        self.sync_editor();
    }

    fn switch_variant(&mut self, variant: String) {
        let Some(mut scenario) = load(&self.case, Some(&variant)) else {
            self.error = Some(format!("{} has no variant “{variant}”", self.case));
            return;
        };
        // The run restarts with the schedule of the one on screen.
        scenario.schedule = self.base.schedule.clone();
        self.variant = variant;
        self.base = Rc::new(scenario);
        self.edited = false;
        self.replay();
        self.sync_editor();
    }

    fn edit(&mut self, text: String) {
        let parsed = Scenario::from_json(&text);
        self.editor.text = Rc::new(text);
        match parsed {
            Ok(scenario) => {
                self.editor.error = None;
                self.base = Rc::new(scenario);
                self.edited = true;
                self.replay();
                if let Some(e) = self.error.take() {
                    self.editor.error = Some(ScenarioError { path: ".".into(), problem: e });
                }
            }
            Err(e) => self.editor.error = Some(e),
        }
    }

    fn step_by(&mut self, forward: bool) {
        let (at, end) = self.cursor();
        let to = if forward { (at + 1).min(end) } else { at.saturating_sub(1) };
        self.seek(to);
    }
}

impl Reducible for Viz {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let (at, end) = self.cursor();
        // Actions that change nothing keep the same state, so nothing re-renders.
        match &action {
            Action::Tick if !self.playing => return self,
            Action::Forward | Action::ToEnd if at >= end && !self.playing => return self,
            Action::Back | Action::ToStart if at == 0 && !self.playing => return self,
            Action::Seek(n) if *n == at && !self.playing => return self,
            Action::Tab(tab) if *tab == self.tab => return self,
            Action::Speed(s) if *s == self.speed || *s >= SPEEDS.len() => return self,
            // A new address replaces the whole view, so nothing of this one is copied but the
            // count of history entries: the address is already in its own entry.
            Action::Open(fragment) => {
                let mut next = Viz::open(fragment);
                next.entries = self.entries;
                return Rc::new(next);
            }
            _ => {}
        }
        let mut next = (*self).clone();
        match action {
            Action::Pick(case) => next.pick(case),
            Action::Variant(variant) => next.switch_variant(variant),
            Action::Policy(policy) => {
                next.policy = policy;
                next.replay();
            }
            Action::Forward => {
                next.playing = false;
                next.step_by(true);
            }
            Action::Back => {
                next.playing = false;
                next.step_by(false);
            }
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
            Action::TogglePlay => {
                if next.playing {
                    next.playing = false;
                } else {
                    if at >= end {
                        next.seek(0);
                    }
                    next.playing = end > 0;
                }
            }
            Action::Tick => {
                next.step_by(true);
                let (at, end) = next.cursor();
                if at >= end {
                    next.playing = false;
                }
            }
            Action::Speed(speed) => next.speed = speed,
            // The tools' actions; the viewer hands them to the tools module (`tool_control`).
            Action::Compare(on) if TOOLS => {
                next.playing = false;
                // The reader stays at the same moment: compare mode steps by tick, so it opens
                // at the tick of the current step, and closing it at another tick shows every
                // step of that tick.
                let tick = next.run.tick_at(next.position);
                let was = next.compare.take();
                if on {
                    let scenario = next.played();
                    let (left, right) =
                        was.as_ref().map_or((Enforcement::Unfenced, Enforcement::Fenced), |c| {
                            (c.left.mode, c.right.mode)
                        });
                    let mut compare = Compare::new(&scenario, left, right);
                    let cursor = match &was {
                        Some(c) => c.cursor,
                        None if next.position == 0 => 0,
                        None => compare.cursor_at_tick(tick),
                    };
                    compare.seek(cursor);
                    next.compare = Some(compare);
                } else {
                    let position = match &was {
                        Some(c) if c.cursor == 0 => 0,
                        Some(c) if c.now() != tick => next.run.position_at_tick(c.now()),
                        _ => next.position,
                    };
                    next.seek(position);
                }
            }
            Action::CompareMode(side, mode) if TOOLS => {
                let scenario = next.played();
                if let Some(c) = &mut next.compare {
                    let fresh = CompareSide::new(&scenario, mode);
                    match side {
                        Side::Left => c.left = fresh,
                        Side::Right => c.right = fresh,
                    }
                    c.retick();
                }
            }
            Action::ToggleEditor if TOOLS => {
                next.editor.open = !next.editor.open;
                next.sync_editor();
            }
            Action::Edit(text) if TOOLS => next.edit(text),
            Action::RevertEdit if TOOLS => {
                next.editor.open = true;
                next.sync_editor();
            }
            Action::Tab(tab) if TOOLS => {
                next.tab = tab;
                next.playing = false;
                next.entries += 1;
            }
            Action::Load(scenario) => {
                next.base = Rc::new(*scenario);
                next.edited = true;
                next.policy = PolicyChoice::AsWritten;
                next.switches.clear();
                next.playing = false;
                next.position = 0;
                if let Some(c) = &mut next.compare {
                    c.cursor = 0;
                }
                next.replay();
                next.sync_editor();
            }
            Action::Switches(switches) => {
                next.switches = switches;
                next.replay();
            }
            Action::DismissLinkError => next.link_error = None,
            Action::Import(json) if TOOLS => match RunExport::import(&json) {
                Ok((export, _)) => {
                    let position = export.position;
                    let mut state = Rc::new(next).reduce(Action::Load(Box::new(export.scenario)));
                    if state.compare.is_some() {
                        state = state.reduce(Action::Compare(false));
                    }
                    return state.reduce(Action::Seek(position));
                }
                Err(e) => next.error = Some(format!("That file could not be imported: {e}")),
            },
            Action::Compare(_)
            | Action::CompareMode(..)
            | Action::ToggleEditor
            | Action::Edit(_)
            | Action::RevertEdit
            | Action::Tab(_)
            | Action::Import(_)
            | Action::Tools(_)
            | Action::Open(_) => return self,
        }
        Rc::new(next)
    }
}

/// The viewer's side of the hand-over (`cargo test -p fencelab-web --no-default-features`).
#[cfg(all(test, not(feature = "tools")))]
mod viewer_tests {
    use super::*;

    #[test]
    fn the_viewer_names_the_control_for_each_tool_and_changes_nothing_itself() {
        let start = Rc::new(Viz::new());
        let tools = [
            (Action::Compare(true), Some("compare-toggle")),
            (Action::ToggleEditor, Some("editor-toggle")),
            (Action::Tab(Tab::Playground), Some("tab-playground")),
            (Action::Tools("export-json"), Some("export-json")),
            (Action::Compare(false), None),
            (Action::Edit("{}".into()), None),
            (Action::RevertEdit, None),
            (Action::Import(Rc::new("{}".into())), None),
        ];
        for (action, control) in tools {
            assert_eq!(action.tool_control(), control, "{action:?}");
            let after = Rc::clone(&start).reduce(action.clone());
            assert!(Rc::ptr_eq(&after, &start), "{action:?} changed the viewer's state");
        }
        // What the viewer does itself stays its own.
        for action in [Action::Forward, Action::Switches(vec![]), Action::Speed(2)] {
            assert_eq!(action.tool_control(), None, "{action:?}");
        }
        assert!(start.compare.is_none() && !start.editor.open);
    }

    #[test]
    fn a_compare_link_waits_for_the_tools_and_keeps_the_rest_of_the_view() {
        let state = Viz::from_link(ShareLink::parse(
            "scenario=paused-worker&variant=broken&step=5&compare=unfenced,fenced",
        ));
        assert!(state.wants_tools);
        assert!(state.compare.is_none());
        assert_eq!((state.variant.as_str(), state.position), ("broken", 5));
        assert!(state.link_error.is_none());
        let plain = Viz::from_link(ShareLink::parse("scenario=paused-worker&step=5"));
        assert!(!plain.wants_tools);
        // The playground is one of the tools too; the viewer keeps the link's address for them.
        let playground = Viz::from_link(ShareLink::parse("scenario=paused-worker&tab=playground"));
        assert!(playground.wants_tools && playground.tab == Tab::Visualizer);
        // An embed has no tabs, so it needs no tools for one.
        let embedded = "scenario=paused-worker&tab=playground&embed=caption";
        assert!(!Viz::from_link(ShareLink::parse(embedded)).wants_tools);
    }
}

#[cfg(all(test, feature = "tools"))]
mod tests {
    use super::*;
    use crate::viz::frame::Kept;
    use fencelab_core::scenario::library;

    #[test]
    fn a_new_address_opens_its_view_whatever_was_on_screen() {
        let before = apply(Rc::new(Viz::new()), [Action::Pick("check-then-write".into())]);
        let after = apply(
            before,
            [Action::Open("scenario=paused-worker&variant=broken&step=5&compare=1".into())],
        );
        assert_eq!((after.case.as_str(), after.variant.as_str()), ("paused-worker", "broken"));
        assert!(after.compare.is_some());
        assert_eq!(after.cursor().0, 5);
        let first = apply(after, [Action::Open(String::new())]);
        let fresh = Viz::new();
        assert_eq!((&first.case, &first.variant, first.position), (&fresh.case, &fresh.variant, 0));
        assert!(first.compare.is_none() && first.link_error.is_none());
        let bad = apply(first, [Action::Open("scenario=paused-worker&step=lots".into())]);
        assert!(bad.link_error.as_deref().is_some_and(|e| e.contains("step")));
    }

    #[test]
    fn with_the_tools_every_action_is_handled_here() {
        for action in [Action::Compare(true), Action::ToggleEditor, Action::Tools("export-json")] {
            assert_eq!(action.tool_control(), None, "{action:?}");
        }
        let state = Viz::from_link(ShareLink::parse("scenario=paused-worker&compare=1"));
        assert!(!state.wants_tools && state.compare.is_some());
    }

    #[test]
    fn merged_ticks_are_the_sorted_distinct_union() {
        let cases: [(&[u64], &[u64]); 5] = [
            (&[], &[]),
            (&[1, 1, 3], &[]),
            (&[], &[0, 2, 2]),
            (&[1, 4, 4, 9], &[0, 4, 5, 9, 12]),
            (&[7], &[7]),
        ];
        for (a, b) in cases {
            let mut want: Vec<u64> = a.iter().chain(b).copied().collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(merge_ticks(a.iter().copied(), b.iter().copied()), want, "{a:?} + {b:?}");
        }
    }

    fn apply(state: Rc<Viz>, actions: impl IntoIterator<Item = Action>) -> Rc<Viz> {
        actions.into_iter().fold(state, Reducible::reduce)
    }

    fn value(frame: &Frame) -> Option<String> {
        frame.cells().next().and_then(|(_, c)| c.value.clone())
    }

    #[test]
    fn starts_on_the_paused_worker_at_the_start() {
        let state = Viz::new();
        assert_eq!(state.case, "paused-worker");
        assert_eq!(state.variant, "fenced");
        assert_eq!(state.cursor(), (0, 20));
        assert!(state.current().is_none());
        assert!(!state.playing);
    }

    #[test]
    fn stepping_to_the_stale_write_shows_the_rejection_and_keeps_the_value() {
        let state = apply(Rc::new(Viz::new()), [Action::Seek(18)]);
        let before = value(&state.frame);
        let state = apply(state, [Action::Forward]);
        let current = state.current().expect("a step");
        assert!(current.caption.contains("stale owner: generation 1 < highest accepted 2"));
        assert_eq!(state.run.layout.step_kinds[current.index], "rejected");
        assert_eq!(value(&state.frame), before);
        assert_eq!(value(&state.frame).as_deref(), Some("B: total=120"));
        assert_eq!(state.frame.rejections, vec![("stale generation".to_string(), 1)]);
        let back = apply(state.clone(), [Action::Back]);
        assert_ne!(back.current().map(|r| &r.caption), state.current().map(|r| &r.caption));
        let again = apply(back, [Action::Forward]);
        assert_eq!(again.current().map(|r| &r.caption), state.current().map(|r| &r.caption));
    }

    #[test]
    fn a_paused_worker_believes_what_the_authority_no_longer_says() {
        let state = apply(Rc::new(Viz::new()), [Action::Seek(11)]);
        let a = state.frame.workers.iter().find(|w| w.name == "A").expect("worker A");
        assert!(a.paused());
        assert!(a.stale());
        assert_eq!(a.beliefs[0].generation, 1);
        assert_eq!(a.beliefs[0].authority_generation, Some(2));
        assert_eq!(a.beliefs[0].authority_holder.as_deref(), Some("B"));
    }

    #[test]
    fn autoplay_ticks_to_the_end_and_stops() {
        let mut state = apply(Rc::new(Viz::new()), [Action::TogglePlay]);
        assert!(state.playing);
        for _ in 0..100 {
            state = state.reduce(Action::Tick);
        }
        assert_eq!(state.cursor(), (20, 20));
        assert!(!state.playing);
        // A stray tick after the end changes nothing.
        let same = Rc::clone(&state).reduce(Action::Tick);
        assert!(Rc::ptr_eq(&same, &state));
        // Play at the end starts over.
        let again = state.reduce(Action::TogglePlay);
        assert_eq!(again.cursor(), (0, 20));
        assert!(again.playing);
    }

    #[test]
    fn manual_steps_pause_autoplay() {
        let state = apply(Rc::new(Viz::new()), [Action::TogglePlay, Action::Tick, Action::Forward]);
        assert!(!state.playing);
        assert_eq!(state.position, 2);
    }

    #[test]
    fn switching_variant_or_policy_replays_with_the_same_schedule() {
        let state = apply(Rc::new(Viz::new()), [Action::ToEnd, Action::Variant("broken".into())]);
        assert_eq!(state.variant, "broken");
        assert_eq!(state.cursor(), (20, 20));
        assert_eq!(value(&state.frame).as_deref(), Some("A: total=90 (from stale inputs)"));
        assert!(!state.frame.violations.is_empty());
        let strict = apply(
            state,
            [
                Action::Variant("fenced".into()),
                Action::Policy(PolicyChoice::Force(SameGenerationPolicy::StrictlyNewer)),
            ],
        );
        assert!(strict
            .run
            .scenario
            .stores
            .iter()
            .all(|s| s.policy == SameGenerationPolicy::StrictlyNewer));
        assert_eq!(strict.error, None);
    }

    #[test]
    fn compare_mode_opens_and_closes_at_the_same_moment() {
        // Step 11 (t=11): A is frozen and B holds generation 2.
        let state = apply(Rc::new(Viz::new()), [Action::Seek(11)]);
        let tick = state.run.tick_at(11);
        let state = apply(state, [Action::Compare(true)]);
        let compare = state.compare.as_ref().expect("compare mode");
        assert_eq!(compare.now(), tick);
        assert!(compare.cursor > 0);
        // Closing it at the same tick keeps the step.
        let same = apply(Rc::clone(&state), [Action::Compare(false)]);
        assert_eq!(same.position, 11);
        // Moving in compare mode and closing it shows every step of the tick it was at.
        let state = apply(state, [Action::Forward]);
        let now = state.compare.as_ref().expect("compare mode").now();
        let state = apply(state, [Action::Compare(false)]);
        assert_eq!(state.run.tick_at(state.position), now);
        assert_eq!(state.position, state.run.position_at_tick(now));
        // At the start it stays at the start.
        let state = apply(state, [Action::ToStart, Action::Compare(true)]);
        assert_eq!(state.cursor().0, 0);
        let state = apply(state, [Action::Compare(false)]);
        assert_eq!(state.position, 0);
    }

    #[test]
    fn the_badge_says_what_runs_and_how_it_fares() {
        let badge = |state: &Viz| {
            let b = state.badge();
            (b.label, b.tone)
        };
        let fenced = Rc::new(Viz::new());
        assert_eq!(badge(&fenced), ("fenced".into(), Tone::Holds));
        let broken = apply(Rc::clone(&fenced), [Action::Variant("broken".into())]);
        assert_eq!(badge(&broken), ("broken".into(), Tone::Breaks));
        let switched = apply(Rc::clone(&fenced), [Action::Switches(vec![Switch::UnfencedStore])]);
        assert_eq!(badge(&switched), ("fenced + unfenced store".into(), Tone::Breaks));
        // A protection off that this schedule does not expose still shows.
        let strict = apply(
            Rc::new(Viz::new()),
            [Action::Pick("paused-worker".into()), Action::Switches(vec![Switch::StrictlyNewer])],
        );
        assert!(!strict.run.breaks);
        assert_eq!(
            badge(&strict),
            ("fenced + strictly newer generations only".into(), Tone::Weakened)
        );
        let edited = apply(
            fenced,
            [Action::Edit(library::scenario("paused-worker", Some("broken")).unwrap().to_json())],
        );
        assert_eq!(badge(&edited), ("edited".into(), Tone::Breaks));
        // Each tone has its own glyph and words, not only its colour.
        let tones = [Tone::Holds, Tone::Weakened, Tone::Breaks];
        for (i, a) in tones.iter().enumerate() {
            for b in &tones[i + 1..] {
                assert_ne!(a.glyph(), b.glyph());
                assert_ne!(a.says(), b.says());
                assert_ne!(a.class(), b.class());
            }
        }
    }

    #[test]
    fn each_write_path_shows_what_it_keeps() {
        let kept = |case: &str, variant: &str| {
            let state = apply(
                Rc::new(Viz::new()),
                [Action::Pick(case.into()), Action::Variant(variant.into()), Action::ToEnd],
            );
            let cell = state.frame.cells().next().map(|(_, c)| c.kept).expect("a cell");
            (cell.label(), cell.value(), cell.short())
        };
        // The unfenced store applied generation 1 after 2, yet keeps no fencing record.
        assert_eq!(
            kept("paused-worker", "broken"),
            ("highest gen", "none: unfenced".into(), "unfenced".into())
        );
        assert_eq!(kept("paused-worker", "fenced"), ("highest gen", "2".into(), "g2".into()));
        let (label, _, short) = kept("check-then-write", "check-then-write");
        assert_eq!(label, "last written gen");
        assert!(short.starts_with("last g"), "{short}");
        assert_eq!(Kept::of(Enforcement::FencedIdempotent, Some(3)), Kept::Highest(Some(3)));
        assert_eq!(Kept::of(Enforcement::CheckThenWrite, None).short(), "last –");
        assert_eq!(Kept::Highest(None).value(), "none");
    }

    #[test]
    fn changing_tabs_is_a_new_history_entry_and_links_carry_the_tab() {
        let state = apply(Rc::new(Viz::new()), [Action::Seek(5), Action::Tab(Tab::Playground)]);
        assert_eq!(state.entries, 1);
        let fragment = state.to_link().to_fragment();
        assert_eq!(fragment, "scenario=paused-worker&variant=fenced&step=5&tab=playground");
        // Opening an address (Back, Forward) is no new entry.
        let back = apply(Rc::clone(&state), [Action::Open("scenario=paused-worker&step=5".into())]);
        assert_eq!((back.tab, back.entries, back.position), (Tab::Visualizer, 1, 5));
        let forward = apply(back, [Action::Open(fragment)]);
        assert_eq!((forward.tab, forward.entries), (Tab::Playground, 1));
        // Moving within a tab replaces the entry.
        let moved = apply(forward, [Action::Tab(Tab::Visualizer), Action::Forward]);
        assert_eq!(moved.entries, 2);
    }

    #[test]
    fn a_bad_embed_link_stays_an_embed_and_says_what_is_wrong() {
        let state = Viz::open("scenario=paused-worker&variant=brokn&embed=controls,caption");
        let error = state.broken_embed().expect("an error to show in the embed");
        assert!(error.contains("`variant`"), "{error}");
        assert!(state.shows("controls") && !state.shows("picker"));
        let page = Viz::open("scenario=paused-worker&variant=brokn");
        assert!(page.broken_embed().is_none() && page.link_error.is_some() && page.embed.is_none());
        let fine = Viz::open("scenario=paused-worker&variant=broken&embed=controls");
        assert!(fine.broken_embed().is_none() && fine.embed.is_some());
    }

    #[test]
    fn compare_mode_shows_corruption_unfenced_and_the_right_value_fenced() {
        let state = apply(Rc::new(Viz::new()), [Action::Compare(true)]);
        let compare = state.compare.as_ref().expect("compare mode");
        assert_eq!(compare.left.mode, Enforcement::Unfenced);
        assert_eq!(compare.right.mode, Enforcement::Fenced);
        assert_eq!(value(&compare.left.last).as_deref(), Some("A: total=90 (from stale inputs)"));
        assert_eq!(value(&compare.right.last).as_deref(), Some("B: total=120"));
        assert!(compare.right.last.violations.is_empty());
        // Lockstep by time: both sides are at the same tick.
        let state = apply(state, [Action::Seek(5)]);
        let compare = state.compare.as_ref().expect("compare mode");
        let tick = |side: &CompareSide| side.steps_now().last().map(|r| r.at);
        assert_eq!(tick(&compare.left), tick(&compare.right));
        let state = apply(state, [Action::Compare(false)]);
        assert!(state.compare.is_none());
    }

    #[test]
    fn an_invalid_edit_shows_the_field_and_keeps_the_last_valid_run() {
        let state = apply(Rc::new(Viz::new()), [Action::ToggleEditor, Action::Seek(3)]);
        let json = state.editor.text.to_string();
        let run = state.run.clone();
        let broken = json.replacen("\"resource\": \"totals\"", "\"resource\": \"ledgr\"", 1);
        let state = apply(state, [Action::Edit(broken)]);
        let error = state.editor.error.as_ref().expect("an error");
        assert!(error.path.starts_with("workers[0].script[0]"), "{error:?}");
        assert_eq!(state.run, run);
        assert_eq!(state.position, 3);
        let fixed = json.replace("B: total=120", "B: total=121");
        let state = apply(state, [Action::Edit(fixed), Action::ToEnd]);
        assert!(state.editor.error.is_none());
        assert!(state.edited);
        assert_eq!(value(&state.frame).as_deref(), Some("B: total=121"));
    }

    #[test]
    fn garbage_in_the_editor_never_panics() {
        let mut state = apply(Rc::new(Viz::new()), [Action::ToggleEditor]);
        for text in
            ["", "{", "null", "[]", "{\"name\": 3}", "\u{0}", "{\"name\":\"x\",\"title\":\"t\"}"]
        {
            state = state.reduce(Action::Edit(text.into()));
            assert!(state.editor.error.is_some(), "{text:?}");
            assert_eq!(state.run.scenario.name, "paused-worker");
        }
    }

    #[test]
    fn unknown_picks_and_variants_are_errors_not_panics() {
        let state = apply(Rc::new(Viz::new()), [Action::Pick("nope".into())]);
        assert!(state.error.is_some());
        assert_eq!(state.case, "paused-worker");
        let state = apply(state, [Action::Variant("nope".into())]);
        assert!(state.error.is_some());
        let state = apply(state, [Action::Seek(usize::MAX), Action::Speed(99)]);
        assert_eq!(state.cursor(), (20, 20));
        assert_eq!(state.speed, DEFAULT_SPEED);
    }

    #[test]
    fn every_library_story_plays_and_every_position_has_a_frame() {
        for case in library::cases() {
            for variant in &case.variants {
                let scenario = library::scenario(&case.name, Some(variant)).expect("built in");
                let run = Run::play(scenario).expect("plays");
                assert!(run.stopped.is_none(), "{}/{variant}", case.name);
                assert_eq!(run.layout.rows.len(), run.len());
                assert_eq!(run.layout.settled.len(), run.len());
                for position in 0..=run.len() {
                    let frame = run.frame(position);
                    assert_eq!(frame.error, None, "{}/{variant} at {position}", case.name);
                    assert_eq!(frame.position, position);
                }
                // The rows go down the page.
                assert!(run.layout.rows.windows(2).all(|w| w[0] < w[1]));
            }
        }
    }

    #[test]
    fn links_pick_the_story_variant_and_parts_and_round_trip() {
        let link =
            ShareLink::parse("#scenario=paused-worker&variant=broken&embed=controls,caption");
        let state = Viz::from_link(link);
        assert_eq!(state.variant, "broken");
        assert!(state.shows("controls") && state.shows("caption"));
        assert!(!state.shows("log"));
        let fragment = "scenario=paused-worker&variant=fenced&policy=strict&step=9\
                        &compare=check_then_write,fenced_idempotent&play=1&speed=200";
        let state = Viz::from_link(ShareLink::parse(fragment));
        let compare = state.compare.as_ref().expect("compare mode");
        assert_eq!(
            (compare.left.mode, compare.right.mode),
            (Enforcement::CheckThenWrite, Enforcement::FencedIdempotent)
        );
        assert_eq!(state.cursor().0, 9);
        assert!(state.playing);
        assert_eq!(state.policy, PolicyChoice::Force(SameGenerationPolicy::StrictlyNewer));
        assert!(state.shows("log"));
        assert_eq!(state.to_link().to_fragment(), fragment);
        let edited = apply(
            Rc::new(state),
            [
                Action::Compare(false),
                Action::Edit(library::scenario("paused-worker", Some("broken")).unwrap().to_json()),
            ],
        );
        let back = Viz::from_link(ShareLink::parse(&edited.to_link().to_fragment()));
        assert!(back.edited);
        assert_eq!(back.base, edited.base);
        for junk in ["&&&", "scenario=nope&variant=&step=x", "embed", "=="] {
            let state = Viz::from_link(ShareLink::parse(junk));
            assert_eq!(state.case, "paused-worker", "{junk:?}");
            assert!(state.link_error.is_some(), "{junk:?}");
            assert!(state.embed.is_none());
        }
    }

    #[test]
    fn the_generated_benchmark_scenario_has_about_a_thousand_events() {
        let state = apply(Rc::new(Viz::new()), [Action::Pick(GENERATED.into())]);
        assert!(state.run.len() >= 1_000, "{}", state.run.len());
        assert!(state.run.stopped.is_none());
        let state = apply(state, [Action::Seek(700), Action::Back, Action::Seek(10)]);
        assert_eq!(state.position, 10);
    }
}
