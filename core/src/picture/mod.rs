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
        let (engine, mut stopped) = play(scenario.clone(), limit)?;
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

/// Plays at most `limit` steps of `scenario` as the page and the stills do, reading its schedule
/// leniently so one schedule replays on any variant or policy. Returns the engine where it
/// stopped and, when a step failed, why.
pub fn play(scenario: Scenario, limit: usize) -> Result<(Engine, Option<String>), ScenarioError> {
    let mut engine = Engine::new(scenario)?.with_schedule_mode(ScheduleMode::Lenient);
    while engine.position() < limit {
        match engine.step() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => return Ok((engine, Some(e.to_string()))),
        }
    }
    Ok((engine, None))
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
        svg::diagram(self.played, self.position, scheme, true)
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
    Auto,
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
mod tests {
    use super::*;
    use crate::stories::library;

    fn played(name: &str, variant: &str) -> Played {
        Played::play(library::scenario(name, Some(variant)).unwrap(), MAX_STEPS).unwrap()
    }

    /// The elements of `xml` with `class` among their classes.
    fn with_class<'a>(doc: &'a roxmltree::Document, class: &str) -> Vec<roxmltree::Node<'a, 'a>> {
        doc.descendants()
            .filter(|n| n.attribute("class").is_some_and(|c| c.split(' ').any(|c| c == class)))
            .collect()
    }

    #[test]
    fn every_story_draws_well_formed_svg_at_every_step_with_only_what_has_happened() {
        for scenario in library::all() {
            let name = scenario.full_title();
            let played = Played::play(scenario, MAX_STEPS).unwrap();
            for position in 0..=played.len() {
                let svg = played.still(position).svg(Scheme::Auto);
                let doc = roxmltree::Document::parse(&svg)
                    .unwrap_or_else(|e| panic!("{name} at {position}: {e}"));
                let marks = with_class(&doc, "mark").len();
                let happened = played.layout.marks.iter().filter(|m| m.step < position).count();
                assert_eq!(marks, happened, "{name} at {position}");
                let lanes = with_class(&doc, "head").len();
                assert_eq!(lanes, played.diagram.lanes.len(), "{name}");
                assert_eq!(with_class(&doc, "now").len(), usize::from(position > 0), "{name}");
            }
        }
    }

    #[test]
    fn the_key_step_is_just_after_the_first_broken_invariant_else_the_first_refusal() {
        let broken = played("paused-worker", "broken");
        let violation = broken.layout.marks.iter().find(|m| m.kind == "violation").unwrap();
        assert_eq!(broken.key_position(), violation.step + 1);
        let fenced = played("paused-worker", "fenced");
        let refused = fenced.layout.marks.iter().find(|m| m.kind == "rejected").unwrap();
        assert_eq!(fenced.key_position(), refused.step + 1);
        assert!(fenced.still(fenced.key_position()).caption().contains("rejects"));
    }

    #[test]
    fn the_verdict_names_what_broke_and_a_limit_of_fencing() {
        let broken = played("paused-worker", "broken");
        let verdict = broken.still(0).verdict();
        assert!(verdict.starts_with("Broken: stale write accepted"), "{verdict}");
        assert!(!verdict.contains("limit"), "{verdict}");
        assert_eq!(
            played("paused-worker", "fenced").still(3).verdict(),
            "Holds: every invariant holds in this run."
        );
        let limits: Vec<String> = library::all()
            .into_iter()
            .map(|s| Played::play(s, MAX_STEPS).unwrap())
            .filter(|p| p.scenario.fully_fenced() && !p.findings.is_empty())
            .map(|p| p.still(0).verdict())
            .collect();
        assert!(!limits.is_empty(), "a story shows a limit of fencing");
        assert!(limits.iter().all(|v| v.ends_with("(a limit of fencing).")), "{limits:?}");
    }

    #[test]
    fn the_figure_escapes_what_it_quotes_and_links_where_it_is_told() {
        let mut scenario = library::scenario("paused-worker", Some("broken")).unwrap();
        scenario.title = "Tom & Jerry's <lease>".into();
        let played = Played::play(scenario, MAX_STEPS).unwrap();
        let html = played
            .still(played.key_position())
            .html(Some("player.html#a=1&b=\"2\""), Scheme::Light);
        let doc = roxmltree::Document::parse(&html).unwrap();
        let caption = doc.descendants().find(|n| n.has_tag_name("figcaption")).unwrap();
        let text: String = caption.descendants().filter_map(|n| n.text()).collect();
        assert!(text.starts_with("Tom & Jerry's <lease> (broken)"), "{text}");
        let link = doc.descendants().find(|n| n.has_tag_name("a")).unwrap();
        assert_eq!(link.attribute("href"), Some("player.html#a=1&b=\"2\""));
        assert!(played.still(0).html(None, Scheme::Light).matches("<a ").count() == 0);
    }

    #[test]
    fn a_figure_keeps_the_lanes_names_at_the_top_of_its_scrolling_box() {
        let played = played("paused-worker", "broken");
        let html = played.still(played.key_position()).html(None, Scheme::Dark);
        let doc = roxmltree::Document::parse(&html).unwrap();
        let scroll = doc.descendants().find(|n| n.attribute("class") == Some("fl-scroll")).unwrap();
        let pictures: Vec<_> = scroll.children().filter(|n| n.has_tag_name("svg")).collect();
        assert_eq!(pictures.len(), 2, "a strip of names, then the picture");
        let names = |svg: roxmltree::Node| -> Vec<String> {
            svg.descendants()
                .filter(|n| n.attribute("class") == Some("head"))
                .filter_map(|n| n.text().map(str::to_string))
                .collect()
        };
        assert_eq!(names(pictures[0]), ["lease authority", "A", "B", "db"]);
        assert_eq!(
            names(pictures[0]),
            names(pictures[1]),
            "the strip repeats the picture's own names"
        );
        let strip = pictures[0].attribute("style").unwrap();
        assert!(strip.contains("position:sticky;top:0"), "{strip}");
        assert_eq!(pictures[0].attribute("aria-hidden"), Some("true"), "read once, in the picture");
        assert!(pictures[0].attribute("class").unwrap().contains("fl-dark"));
        // Without script the box first scrolls to the step; at step 0 nothing is drawn to aim at.
        assert!(html.contains("scroll-initial-target:nearest"), "{html}");
        assert!(!played.still(0).html(None, Scheme::Dark).contains("scroll-initial-target"));
        // A picture on its own has no box to scroll, and no strip.
        assert_eq!(played.still(5).svg(Scheme::Light).matches("<svg").count(), 1);
    }

    #[test]
    fn each_scheme_is_the_picture_s_own_class_and_print_outranks_them_all() {
        let played = played("paused-worker", "broken");
        for (scheme, class) in [
            (Scheme::Auto, "fl-auto"),
            (Scheme::Light, "fl-light"),
            (Scheme::Dark, "fl-dark"),
            (Scheme::Book, "fl-book"),
        ] {
            let svg = played.still(5).svg(scheme);
            let root =
                format!("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"fl-still {class}\"");
            assert!(svg.starts_with(&root), "{svg}");
            // Every still brings the same rules, so stills of other schemes on the page agree.
            assert!(svg.contains(".fl-still.fl-dark{--bg:#161c23"));
            assert!(
                svg.contains("@media (prefers-color-scheme:dark){.fl-still.fl-auto{--bg:#161c23")
            );
            let book = "html.coal .fl-still.fl-book,html.navy .fl-still.fl-book,html.ayu .fl-still.fl-book{--bg:#161c23";
            assert!(svg.contains(book));
            // Paper is white under a dark book too.
            assert!(
                svg.contains("@media print{:root .fl-still.fl-still.fl-still{--bg:#fff"),
                "{scheme:?}"
            );
        }
    }
}
