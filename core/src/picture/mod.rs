//! Pictures of a played run: where everything in its diagram sits ([`layout`]), and a still of
//! it at one step ([`Still`]) as self-contained SVG and HTML, for pages that show a story before
//! any script runs, without scripts, and on paper. The page draws from the same layout.

pub mod layout;
mod svg;

use crate::draw::{diagram, Diagram, MarkKind};
use crate::format::error::ScenarioError;
use crate::format::model::Scenario;
use crate::invariant::Violation;
use crate::record::{Engine, ScheduleMode, StepRecord};
use layout::Layout;

/// The most steps a picture or the page plays of one scenario, so an edited scenario that runs
/// for ever is cut off with a notice rather than freezing its reader.
pub const MAX_STEPS: usize = 4_000;

/// A scenario played to its end (or to a limit), with its diagram laid out.
#[derive(Debug)]
pub struct Played {
    /// The scenario as played.
    pub scenario: Scenario,
    /// Every step, in order.
    pub timeline: Vec<StepRecord>,
    /// The swimlane diagram of the whole run.
    pub diagram: Diagram,
    /// What the checker found in the whole run.
    pub findings: Vec<Violation>,
    /// Where everything in the diagram sits.
    pub layout: Layout,
    /// Why the run stopped before its end, if it did.
    pub stopped: Option<String>,
}

impl Played {
    /// Plays at most `limit` steps of `scenario`, reading its schedule leniently (as the page
    /// does, so one schedule replays on any variant). A scenario that does not hold together is
    /// an error; a step that fails ends the run early and says why in [`Played::stopped`].
    pub fn play(scenario: Scenario, limit: usize) -> Result<Played, ScenarioError> {
        let mut engine = Engine::new(scenario.clone())?.with_schedule_mode(ScheduleMode::Lenient);
        let mut stopped = None;
        while engine.position() < limit {
            match engine.step() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    stopped = Some(e.to_string());
                    break;
                }
            }
        }
        if stopped.is_none() && !engine.is_finished() {
            stopped = Some(format!("the first {limit} steps only"));
        }
        let timeline = engine.timeline().to_vec();
        let findings = engine.verdict().violations;
        let diagram = diagram(&engine.history(), engine.violations());
        let layout = Layout::new(&diagram, &timeline, &findings);
        Ok(Played { scenario, timeline, diagram, findings, layout, stopped })
    }

    /// The story's title and variant, as the page names it.
    pub fn title(&self) -> String {
        self.scenario.full_title()
    }

    /// How many steps were played.
    pub fn len(&self) -> usize {
        self.timeline.len()
    }

    /// Whether nothing was played.
    pub fn is_empty(&self) -> bool {
        self.timeline.is_empty()
    }

    /// The step a picture of the whole story shows when none is chosen: just after the first
    /// broken invariant, else just after the first refused write, else the end. That is the
    /// moment each story is told for.
    pub fn key_position(&self) -> usize {
        let first = |kind: MarkKind| {
            self.diagram.marks.iter().filter(|m| m.kind == kind).map(|m| m.step).min()
        };
        first(MarkKind::Violation)
            .or_else(|| first(MarkKind::Rejected))
            .map_or(self.len(), |step| step + 1)
    }

    /// The still of this run after `position` steps (clamped to the run).
    pub fn still(&self, position: usize) -> Still<'_> {
        Still { played: self, position: position.min(self.len()) }
    }
}

/// What a run's verdict is, in a word a reader can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// No invariant broke.
    Holds,
    /// Something broke for certain.
    Breaks,
    /// Something broke only if an outcome nobody learned went one way.
    PossiblyBreaks,
}

/// A run drawn as it stands after some steps: the same layout the page draws, with the title,
/// the step's caption and the run's verdict.
#[derive(Debug, Clone, Copy)]
pub struct Still<'a> {
    played: &'a Played,
    position: usize,
}

impl Still<'_> {
    /// How many steps the still shows.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The caption of the last step shown, or the story's introduction before any.
    pub fn caption(&self) -> &str {
        match self.position.checked_sub(1).and_then(|i| self.played.timeline.get(i)) {
            Some(record) => &record.caption,
            None => &self.played.scenario.intro,
        }
    }

    /// How the whole run ends.
    pub fn outcome(&self) -> Outcome {
        let findings = &self.played.findings;
        if findings.is_empty() {
            Outcome::Holds
        } else if findings.iter().all(|f| f.possible) {
            Outcome::PossiblyBreaks
        } else {
            Outcome::Breaks
        }
    }

    /// The verdict of the whole run in words: what broke, or that everything held, and when
    /// every protection was on and it still broke, that the story shows a limit of fencing.
    pub fn verdict(&self) -> String {
        let played = self.played;
        let mut kinds: Vec<String> = Vec::new();
        for f in &played.findings {
            let name = f.invariant.to_string().replace('_', " ");
            if !kinds.contains(&name) {
                kinds.push(name);
            }
        }
        match self.outcome() {
            Outcome::Holds => "Holds: every invariant holds in this run.".to_string(),
            Outcome::PossiblyBreaks => format!("Possibly broken: {}.", kinds.join(", ")),
            Outcome::Breaks if played.scenario.fully_fenced() => {
                format!("Broken: {} (a limit of fencing).", kinds.join(", "))
            }
            Outcome::Breaks => format!("Broken: {}.", kinds.join(", ")),
        }
    }

    /// The diagram as a self-contained SVG document in `scheme`: its own styles, no scripts,
    /// nothing fetched.
    pub fn svg(&self, scheme: Scheme) -> String {
        svg::diagram(self.played, self.position, scheme)
    }

    /// A `<figure>` with the title, the SVG, the step's caption, the verdict and, when `link` is
    /// given, a link to play the story. It needs no style sheet and no script, and prints.
    pub fn html(&self, link: Option<&str>, scheme: Scheme) -> String {
        svg::figure(self, link, scheme)
    }
}

/// Which colours a still takes. Whatever the scheme, it prints light.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheme {
    /// The reader's system setting (`prefers-color-scheme`).
    #[default]
    System,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
    /// The mdBook theme around it: dark under [`BOOK_DARK`], light otherwise.
    Book,
}

/// The mdBook themes that are dark, by the class mdBook puts on `<html>`; the player element
/// reads the same classes (`web/fencelab-player.js`).
pub const BOOK_DARK: [&str; 3] = ["coal", "navy", "ayu"];

pub use svg::escape;

#[cfg(test)]
mod tests;
