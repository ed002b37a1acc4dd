//! A history opened from a file or a link: read through [`read_history`], judged by the core's
//! checker and drawn by the core's diagram, with lanes the reader can hide. Plain data; the
//! reducer (`state/history.rs`) decides when to open, close and highlight.

use std::rc::Rc;

use fencelab_core::invariant::narrate;
use fencelab_core::{draw::diagram, draw::Diagram, draw::Lane};
use fencelab_core::{record::StepRecord, Checker, History, Violation};

use crate::viz::frame::{Frame, ViolationRow};
use crate::viz::run::{Track, TrackRef};
use fencelab_core::picture::layout::MarkGeom;

/// What a chosen finding highlights: the entries of its witness (their event marks and
/// messages, and their rows in the log) and its own violation mark. Other findings' violation
/// marks at those steps are not its proof, so they stay plain.
#[derive(Debug, Clone, PartialEq)]
pub struct Highlight {
    /// The witness's steps, sorted, without repeats.
    pub steps: Rc<[usize]>,
    /// The chosen finding.
    pub finding: Option<usize>,
}

impl Default for Highlight {
    fn default() -> Self {
        Highlight { steps: Rc::from([]), finding: None }
    }
}

impl Highlight {
    /// Whether the entry at `step` is part of the witness.
    pub fn step(&self, step: usize) -> bool {
        self.steps.binary_search(&step).is_ok()
    }

    /// Whether `mark` is highlighted: an event mark of the witness, or the finding's own
    /// violation mark.
    pub fn mark(&self, mark: &MarkGeom) -> bool {
        match mark.kind.as_str() {
            "violation" => mark.finding.is_some() && mark.finding == self.finding,
            _ => self.step(mark.step),
        }
    }

    /// Whether anything is highlighted.
    pub fn is_empty(&self) -> bool {
        self.finding.is_none()
    }
}

/// Reads a recorded history called `name` (a file name or a link), whatever its format. Every
/// format the page reads goes through here; today that is Fencelab's JSON Lines, as
/// `fencelab run NAME --format jsonl` writes it. The error names the file and, from the core's
/// reader, the line and the field.
pub fn read_history(name: &str, text: &str) -> Result<History, String> {
    if text.trim().is_empty() {
        return Err(format!("{name} is empty: a history starts with its setup line"));
    }
    // Other tools' files are read by the command line, which converts them; the page would
    // need their readers too, at several times the size of this one.
    let start = text.trim_start();
    let foreign = if start.starts_with("{\"resourceSpans\"") {
        Some("an OpenTelemetry trace")
    } else if start.starts_with('[') || start.starts_with("{:") || start.starts_with(';') {
        Some("a Jepsen history")
    } else {
        None
    };
    if let Some(kind) = foreign {
        return Err(format!(
            "{name} looks like {kind}: the page reads Fencelab histories, so convert it first with `fencelab export {name} --to jsonl > history.jsonl`"
        ));
    }
    // A file that is not JSON at all is most likely a log, which needs a pattern to be read.
    if !start.starts_with('{') {
        return Err(format!(
            "{name} is not JSON and looks like a text log: the page reads Fencelab histories, so \
             convert it first with `fencelab export {name} --pattern RE --to jsonl > history.jsonl`, \
             where RE names the fields of a line (the README's “Importing histories” shows one)"
        ));
    }
    History::from_jsonl(text).map_err(|e| {
        // A line that stops short is most likely a file copied or written only in part.
        if e.problem.starts_with("the line is cut off") {
            return format!(
                "{name} is cut off at line {}: the line is incomplete JSON (was the file copied \
                 or written only in part?)",
                e.line
            );
        }
        format!("{name} is not a Fencelab history (JSON Lines, as `fencelab run NAME --format jsonl` writes it): {e}")
    })
}

/// A mark under the scrubber: where one finding, or several close together, are along the
/// history.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrubMark {
    /// Where along the scrubber, from 0 (the start) to 1 (the end): the position just after
    /// the first finding's step, where the player shows it.
    pub at: f64,
    /// The first finding it stands for (by index); choosing the mark chooses it.
    pub finding: usize,
    /// How many findings it stands for.
    pub count: usize,
    /// The step of the last finding it stands for.
    pub last: usize,
    /// Whether every one of them is only possible.
    pub possible: bool,
}

/// The width of a mark under the scrubber in pixels: a touch target (44 px, as tall on a phone or
/// a touch screen). Marks closer than this share one, so none overlaps another.
pub const MARK_PX: f64 = 44.0;

/// The width of the scrubber's thumb in pixels, a touch target too (style.css draws it so): its
/// centre travels the scrubber's width less this.
pub const THUMB_PX: f64 = 44.0;

/// The travel assumed before the scrubber is measured.
const UNMEASURED_TRAVEL: f64 = 240.0 * MARK_PX;

/// The marks under the scrubber for `findings` (in step order, as the checker reports them) in
/// a history of `len` entries, on a scrubber whose thumb travels `travel` pixels, in order along
/// it: one per finding, or per group of findings whose marks would overlap (closer than
/// [`MARK_PX`]), placed at the group's first.
pub fn scrub_marks(findings: &[Violation], len: usize, travel: f64) -> Vec<ScrubMark> {
    let len = len.max(1) as f64;
    let travel = if travel > 0.0 { travel } else { UNMEASURED_TRAVEL };
    let mut marks: Vec<ScrubMark> = Vec::new();
    for (i, finding) in findings.iter().enumerate() {
        let at = (finding.step.number() as f64 / len).min(1.0);
        match marks.last_mut() {
            Some(mark) if (at - mark.at) * travel < MARK_PX => {
                mark.count += 1;
                mark.last = finding.step.index();
                mark.possible &= finding.possible;
            }
            _ => marks.push(ScrubMark {
                at,
                finding: i,
                count: 1,
                last: finding.step.index(),
                possible: finding.possible,
            }),
        }
    }
    marks
}

/// Where an opened history came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A file the reader chose or dropped: the address cannot name it.
    File,
    /// A link's `history=` parameter, as written in the link.
    Link(String),
}

/// A history on screen.
#[derive(Debug, Clone)]
pub struct Opened {
    /// Its file name or link.
    pub name: String,
    /// Where it came from.
    pub origin: Origin,
    /// The diagram with every lane.
    pub full: Rc<Diagram>,
    /// The checker's findings on the whole history.
    pub findings: Rc<Vec<Violation>>,
    /// What the player shows: the steps, and the diagram without the hidden lanes.
    pub track: TrackRef,
    /// Which lanes of [`full`](Self::full) are hidden.
    pub hidden: Vec<bool>,
    /// The finding the reader chose, whose witness is highlighted.
    pub chosen: Option<usize>,
    /// How many times the reader chose a finding: each choice brings its mark into view.
    pub choices: usize,
    /// Why the last lane chip pressed did nothing, if it did nothing.
    pub lane_note: Option<&'static str>,
    /// The text the lane chips are filtered by (empty: every lane is listed).
    pub lane_filter: String,
}

/// Beyond this many lanes, the lane chips fold into a disclosure with a filter.
pub const FEW_LANES: usize = 8;

impl Opened {
    /// Judges and draws `history`, every entry of it: the page draws only what is on screen,
    /// so a long history costs memory for its entries, not elements on the page.
    pub fn new(name: String, origin: Origin, history: History) -> Opened {
        let findings = Checker::judge(&history);
        let full = diagram(&history, &findings);
        // Each entry's caption ends with what it broke. The checker reports findings in step
        // order, as it judges the entries, so one pass hands each entry its own.
        let mut found = findings.iter().peekable();
        let timeline: Vec<StepRecord> = history
            .entries
            .into_iter()
            .enumerate()
            .map(|(index, entry)| {
                let broken: Vec<Violation> =
                    std::iter::from_fn(|| found.next_if(|f| f.step.index() <= index).cloned())
                        .collect();
                StepRecord {
                    index,
                    at: entry.at,
                    caption: narrate(entry.event.caption(), &broken),
                    event: entry.event,
                    enabled: 1,
                    chosen: 0,
                }
            })
            .collect();
        let hidden = vec![false; full.lanes.len()];
        let full = Rc::new(full);
        let track = Track::new(Rc::new(timeline), full.clone(), &findings);
        Opened {
            name,
            origin,
            full,
            findings: Rc::new(findings),
            track: TrackRef(Rc::new(track)),
            hidden,
            chosen: None,
            choices: 0,
            lane_note: None,
            lane_filter: String::new(),
        }
    }

    /// Hides lane `lane` if it shows, shows it if hidden, and draws the diagram again. The last
    /// lane shown stays: a diagram needs one.
    pub fn toggle_lane(&mut self, lane: usize) {
        let Some(hidden) = self.hidden.get(lane).copied() else { return };
        if self.last_shown(lane) {
            self.lane_note = Some("the last lane shown stays: a diagram needs one");
            return;
        }
        self.lane_note = None;
        self.hidden[lane] = !hidden;
        self.redraw();
    }

    /// Draws the diagram again without the hidden lanes.
    fn redraw(&mut self) {
        let diagram = Rc::new(without_lanes(&self.full, &self.hidden));
        let track = Track::new(self.track.timeline.clone(), diagram, &self.findings);
        self.track = TrackRef(Rc::new(track));
    }

    /// Which lanes' chips the filter lists: only workers are filtered (the authority, the stores
    /// and the gateway always stay), each by [`filter_lists`].
    pub fn listed(&self) -> Vec<bool> {
        let workers: Vec<&str> = self.full.lanes.iter().filter_map(worker_name).collect();
        self.full
            .lanes
            .iter()
            .map(|l| {
                worker_name(l).is_none_or(|name| filter_lists(&self.lane_filter, name, &workers))
            })
            .collect()
    }

    /// Shows every lane (`true`), or only the workers the filter lists and the other lanes
    /// (`false`). Showing no worker is refused.
    pub fn show_lanes(&mut self, all: bool) {
        let listed = self.listed();
        let workers = self.full.lanes.iter().map(|l| worker_name(l).is_some());
        if !all && !listed.iter().zip(workers).any(|(l, w)| *l && w) {
            self.lane_note = Some("no worker matches the filter, so every lane stays as it was");
            return;
        }
        self.lane_note = None;
        self.hidden = listed.iter().map(|l| !all && !l).collect();
        self.redraw();
    }

    /// Whether `lane` is the only lane shown, which cannot be hidden.
    pub fn last_shown(&self, lane: usize) -> bool {
        self.hidden.get(lane) == Some(&false) && self.hidden.iter().filter(|h| !**h).count() <= 1
    }

    /// The chosen finding in words, as the Findings list gives it, for an export's heading.
    pub fn chosen_finding(&self) -> Option<String> {
        let f = self.findings.get(self.chosen?)?;
        Some(format!(
            "{}: {} at step {}: {}",
            if f.possible { "Possible finding" } else { "Finding" },
            f.invariant.to_string().replace('_', " "),
            crate::viz::words::count(f.step.number()),
            f.detail
        ))
    }

    /// What the chosen finding highlights: its witness (or its own step when it has none) and
    /// its own violation mark.
    pub fn highlight(&self) -> Highlight {
        let Some(finding) = self.chosen.and_then(|i| self.findings.get(i)) else {
            return Highlight::default();
        };
        let mut steps = if finding.witness.is_empty() {
            vec![finding.step.index()]
        } else {
            finding.witness.clone()
        };
        steps.sort_unstable();
        steps.dedup();
        Highlight { steps: Rc::from(steps), finding: self.chosen }
    }

    /// How many findings there are, in words, saying which are only possible: "2 possible
    /// findings", "3 findings, 1 of them possible".
    pub fn findings_summary(&self) -> String {
        let total = self.findings.len();
        let possible = self.findings.iter().filter(|f| f.possible).count();
        let plural = |n: usize| if n == 1 { "finding" } else { "findings" };
        match (total, possible) {
            (0, _) => "no invariant is broken".into(),
            (n, 0) => format!("{n} {}", plural(n)),
            (n, p) if p == n => format!("{n} possible {}", plural(n)),
            (n, p) => format!("{n} {}, {p} of them possible", plural(n)),
        }
    }

    /// How many findings the player has reached after `position` steps: those found at the
    /// steps played (the checker reports findings in step order).
    pub fn reached(&self, position: usize) -> usize {
        self.findings.partition_point(|f| f.step.index() < position)
    }

    /// What the panels show after `position` steps: the findings reached so far.
    pub fn frame(&self, position: usize) -> Frame {
        let position = position.min(self.track.len());
        Frame {
            position,
            now: self.track.tick_at(position),
            violations: self
                .findings
                .iter()
                .filter(|f| f.step.index() < position)
                .map(|f| ViolationRow {
                    step: f.step,
                    invariant: f.invariant.to_string(),
                    detail: f.detail.clone(),
                })
                .collect(),
            finished: position >= self.track.len(),
            ..Frame::default()
        }
    }
}

/// A worker lane's name (`w1` for `worker:w1`), or `None` for the other lanes.
fn worker_name(lane: &Lane) -> Option<&str> {
    lane.id.strip_prefix("worker:")
}

/// Whether the lane filter `filter` lists the worker `name`, one of `workers`. The filter is
/// names separated by spaces or commas, in any case: a term equal to a worker's whole name
/// lists only that worker (`w1` is not `w10`), any other term every name that contains it.
pub fn filter_lists(filter: &str, name: &str, workers: &[&str]) -> bool {
    let mut terms = filter.split([' ', ',']).filter(|t| !t.is_empty()).peekable();
    terms.peek().is_none()
        || terms.any(|term| {
            if workers.iter().any(|w| w.eq_ignore_ascii_case(term)) {
                name.eq_ignore_ascii_case(term)
            } else {
                name.to_ascii_lowercase().contains(&term.to_ascii_lowercase())
            }
        })
}

/// `diagram` without the lanes `hidden` marks: their marks and periods, and the messages to or
/// from them, go too; the other lanes are numbered again from 0.
pub fn without_lanes(diagram: &Diagram, hidden: &[bool]) -> Diagram {
    let shown = |lane: usize| !hidden.get(lane).copied().unwrap_or(false);
    let mut index = Vec::with_capacity(diagram.lanes.len());
    let mut next = 0;
    for lane in 0..diagram.lanes.len() {
        index.push(next);
        next += usize::from(shown(lane));
    }
    let to = |lane: usize| index.get(lane).copied().unwrap_or(0);
    let mut out = diagram.clone();
    out.lanes = diagram
        .lanes
        .iter()
        .enumerate()
        .filter(|(i, _)| shown(*i))
        .map(|(_, l)| l.clone())
        .collect();
    out.arrows.retain(|a| shown(a.from) && shown(a.to));
    out.marks.retain(|m| shown(m.lane));
    out.spans.retain(|s| shown(s.lane));
    for a in &mut out.arrows {
        (a.from, a.to) = (to(a.from), to(a.to));
    }
    for m in &mut out.marks {
        m.lane = to(m.lane);
    }
    for s in &mut out.spans {
        s.lane = to(s.lane);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencelab_core::stories::library;
    use fencelab_core::{clock::RunStep, invariant::InvariantKind, Engine};

    fn recorded(name: &str, variant: &str) -> String {
        let scenario = library::scenario(name, Some(variant)).expect("a built-in story");
        let mut engine = Engine::new(scenario).expect("valid");
        engine.run().expect("plays");
        engine.history().to_jsonl()
    }

    #[test]
    fn a_recorded_history_opens_with_the_checkers_findings_and_captions() {
        let text = recorded("paused-worker", "broken");
        let history = read_history("paused.jsonl", &text).expect("reads");
        let opened = Opened::new("paused.jsonl".into(), Origin::File, history.clone());
        assert_eq!(opened.track.len(), history.entries.len());
        assert!(opened.track.breaks);
        let stale = opened
            .findings
            .iter()
            .find(|f| f.invariant == InvariantKind::StaleWriteAccepted)
            .expect("the stale write is found");
        let caption = &opened.track.timeline[stale.step.index()].caption;
        assert!(caption.contains("Broken: a stale write was accepted"), "{caption}");
        assert!(opened
            .track
            .layout
            .marks
            .iter()
            .any(|m| m.kind == "violation" && m.step == stale.step.index()));
        // The panels count the findings as the reader reaches them.
        assert!(opened.frame(stale.step.index()).violations.iter().all(|v| v.step < stale.step));
        assert!(opened.frame(stale.step.number()).violations.iter().any(|v| v.step == stale.step));
        let fenced = Opened::new(
            "f".into(),
            Origin::File,
            read_history("f", &recorded("paused-worker", "fenced")).unwrap(),
        );
        assert!(fenced.findings.is_empty() && !fenced.track.breaks);
    }

    #[test]
    fn a_bad_file_says_what_and_where() {
        let empty = read_history("x.jsonl", " \n").unwrap_err();
        assert!(empty.contains("x.jsonl is empty"), "{empty}");
        let text = recorded("paused-worker", "broken");
        let mut lines: Vec<&str> = text.lines().collect();
        lines[2] = "{\"at\": 3, \"event\": \"nonsense\"}";
        let error = read_history("bad.jsonl", &lines.join("\n")).unwrap_err();
        assert!(error.starts_with("bad.jsonl is not a Fencelab history"), "{error}");
        assert!(error.contains("line 3"), "{error}");
        let json = read_history("run.json", "{\"scenario\": {}}").unwrap_err();
        assert!(json.contains("line 1"), "{json}");
        // Other tools' files are named as such, with the command that converts them.
        let jepsen = read_history("h.edn", "[{:type :invoke, :process 0}]").unwrap_err();
        assert!(jepsen.starts_with("h.edn looks like a Jepsen history"), "{jepsen}");
        assert!(jepsen.contains("fencelab export h.edn --to jsonl"), "{jepsen}");
        let trace = read_history("t.json", "{\"resourceSpans\": []}").unwrap_err();
        assert!(trace.contains("looks like an OpenTelemetry trace"), "{trace}");
        // A text log is named as one, with the command that converts it.
        let log = include_str!("../../../examples/histories/app.log");
        let log = read_history("app.log", log).unwrap_err();
        assert!(log.starts_with("app.log is not JSON and looks like a text log"), "{log}");
        assert!(log.contains("`fencelab export app.log --pattern RE --to jsonl"), "{log}");
        // A file cut off in the middle of a line says so, with the line.
        let cut = &text[..text.len() - 40];
        let last = cut.lines().count();
        let cut = read_history("cut.jsonl", cut).unwrap_err();
        assert_eq!(
            cut,
            format!(
                "cut.jsonl is cut off at line {last}: the line is incomplete JSON (was the file \
                 copied or written only in part?)"
            )
        );
    }

    #[test]
    fn hidden_lanes_take_their_marks_and_messages_with_them() {
        let text = recorded("paused-worker", "broken");
        let mut opened = Opened::new("p".into(), Origin::File, read_history("p", &text).unwrap());
        let lanes = opened.full.lanes.len();
        let worker = opened.full.lanes.iter().position(|l| l.id.starts_with("worker:")).unwrap();
        opened.toggle_lane(worker);
        let shown = &opened.track.diagram;
        assert_eq!(shown.lanes.len(), lanes - 1);
        assert!(shown.lanes.iter().all(|l| l.id != opened.full.lanes[worker].id));
        assert!(shown.arrows.iter().all(|a| a.from < lanes - 1 && a.to < lanes - 1));
        assert!(shown.marks.len() < opened.full.marks.len());
        assert_eq!(opened.track.len(), text.lines().count() - 1, "every step stays");
        opened.toggle_lane(worker);
        assert_eq!(opened.track.diagram, opened.full);
        // The last lane shown cannot be hidden.
        for lane in 0..lanes {
            opened.toggle_lane(lane);
        }
        assert_eq!(opened.hidden.iter().filter(|h| !**h).count(), 1);
        let last = opened.hidden.iter().position(|h| !*h).unwrap();
        assert!(opened.last_shown(last) && opened.lane_note.is_some());
        opened.toggle_lane((last + 1) % lanes);
        assert!(!opened.last_shown(last) && opened.lane_note.is_none());
    }

    #[test]
    fn the_filter_shows_only_the_workers_it_lists_and_all_brings_them_back() {
        let text = recorded("paused-worker", "broken");
        let mut opened = Opened::new("p".into(), Origin::File, read_history("p", &text).unwrap());
        let lanes = opened.full.lanes.len();
        let workers: Vec<usize> =
            (0..lanes).filter(|&i| worker_name(&opened.full.lanes[i]).is_some()).collect();
        assert!(workers.len() >= 2);
        let first = worker_name(&opened.full.lanes[workers[0]]).unwrap().to_ascii_uppercase();
        opened.lane_filter = first;
        let listed = opened.listed();
        assert_eq!(listed.iter().filter(|l| **l).count(), lanes - workers.len() + 1);
        opened.show_lanes(false);
        let shown = &opened.track.diagram.lanes;
        assert_eq!(shown.len(), lanes - workers.len() + 1);
        assert!(shown.iter().any(|l| l.id == "authority" || !l.id.starts_with("worker:")));
        opened.lane_filter = "no such lane".into();
        opened.show_lanes(false);
        assert!(opened.lane_note.is_some());
        assert_eq!(opened.track.diagram.lanes.len(), lanes - workers.len() + 1, "nothing changed");
        opened.show_lanes(true);
        assert_eq!(opened.track.diagram, opened.full);
        assert!(opened.lane_note.is_none());
    }

    #[test]
    fn a_whole_name_lists_only_its_worker_and_part_of_one_every_worker_containing_it() {
        let workers = ["w1", "w10", "w11", "w2", "w21"];
        let lists = |filter: &str| -> Vec<&str> {
            workers.iter().copied().filter(|w| filter_lists(filter, w, &workers)).collect()
        };
        assert_eq!(lists(""), workers);
        assert_eq!(lists("  "), workers);
        assert_eq!(lists("w1"), ["w1"]);
        assert_eq!(lists("W1, w2"), ["w1", "w2"]);
        assert_eq!(lists("1"), ["w1", "w10", "w11", "w21"]);
        assert_eq!(lists("w1 21"), ["w1", "w21"]);
        assert!(lists("w3").is_empty());
    }

    #[test]
    fn a_chosen_finding_highlights_its_witness_or_its_own_step() {
        let text = recorded("paused-worker", "broken");
        let mut opened = Opened::new("p".into(), Origin::File, read_history("p", &text).unwrap());
        assert!(opened.highlight().is_empty());
        assert_eq!(opened.chosen_finding(), None);
        opened.chosen = Some(0);
        let named = opened.chosen_finding().unwrap();
        assert!(named.starts_with("Finding: stale write accepted at step "), "{named}");
        assert!(named.ends_with(&opened.findings[0].detail), "{named}");
        let finding = opened.findings[0].clone();
        let lit = opened.highlight().steps;
        if finding.witness.is_empty() {
            assert_eq!(&*lit, &[finding.step.index()]);
        } else {
            let at = finding.step.index();
            assert!(lit.contains(&at) || lit.iter().all(|s| *s <= at));
            assert!(lit.windows(2).all(|w| w[0] < w[1]));
        }
        let mut with_witness = (*opened.findings).clone();
        with_witness[0].witness = vec![7, 2, 7];
        opened.findings = Rc::new(with_witness);
        assert_eq!(&*opened.highlight().steps, &[2, 7]);
    }

    #[test]
    fn the_scrubber_marks_each_finding_and_merges_those_that_would_overlap() {
        let text = recorded("paused-worker", "broken");
        let opened = Opened::new("p".into(), Origin::File, read_history("p", &text).unwrap());
        let len = opened.track.len();
        // On a wide scrubber, findings at one step share a mark; other steps have their own.
        let marks = scrub_marks(&opened.findings, len, 100.0 * MARK_PX * len as f64);
        let mut steps: Vec<usize> = opened.findings.iter().map(|f| f.step.index()).collect();
        assert_eq!(marks.iter().map(|m| m.count).sum::<usize>(), steps.len());
        steps.sort_unstable();
        steps.dedup();
        assert_eq!(marks.len(), steps.len());
        for mark in &marks {
            let first = &opened.findings[mark.finding];
            assert_eq!(mark.at, first.step.number() as f64 / len as f64);
            assert_eq!(mark.last, first.step.index(), "one step per mark here");
        }
        // On any scrubber, marks are at least a touch target apart, and every finding is in one.
        let spread: Vec<Violation> = (0..2_000)
            .map(|i| Violation { step: RunStep::new(i * 50), ..opened.findings[0].clone() })
            .collect();
        for travel in [200.0, 344.0, 700.0, 1_300.0] {
            let marks = scrub_marks(&spread, 100_000, travel);
            assert!(marks.windows(2).all(|w| (w[1].at - w[0].at) * travel >= MARK_PX), "{travel}");
            assert!(marks.len() as f64 <= travel / MARK_PX + 1.0, "{travel}: {}", marks.len());
            assert_eq!(marks.iter().map(|m| m.count).sum::<usize>(), 2_000);
            assert!(marks.iter().all(|m| spread[m.finding].step.index() <= m.last));
        }
        // 2,000 findings within the first fiftieth of a long history share one mark on a phone.
        let close: Vec<Violation> = (0..2_000)
            .map(|i| Violation { step: RunStep::new(i), ..opened.findings[0].clone() })
            .collect();
        let marks = scrub_marks(&close, 100_000, 300.0);
        assert_eq!(marks.len(), 1);
        assert_eq!((marks[0].finding, marks[0].count, marks[0].last), (0, 2_000, 1_999));
    }

    fn possible() -> Opened {
        let text = include_str!("../../../browser-tests/fixtures/possible.jsonl");
        Opened::new("t".into(), Origin::File, read_history("t", text).unwrap())
    }

    #[test]
    fn possible_findings_are_counted_and_marked_as_possible() {
        let opened = possible();
        assert_eq!(opened.findings.len(), 3);
        assert_eq!(opened.findings_summary(), "3 possible findings");
        assert!(opened.track.breaks && opened.track.only_possible);
        let marks: Vec<&MarkGeom> =
            opened.track.layout.marks.iter().filter(|m| m.kind == "violation").collect();
        assert_eq!(marks.len(), 3);
        assert!(marks.iter().all(|m| m.possible));
        let legend: Vec<&str> = opened.track.layout.legend.iter().map(|e| e.kind).collect();
        assert!(legend.contains(&"possible") && !legend.contains(&"violation"), "{legend:?}");
        assert_eq!(opened.track.layout.step_kinds[opened.findings[0].step.index()], "possible");
        let mut mixed = possible();
        let mut findings = (*mixed.findings).clone();
        findings[0].possible = false;
        mixed.findings = Rc::new(findings);
        assert_eq!(mixed.findings_summary(), "3 findings, 2 of them possible");
    }

    #[test]
    fn a_chosen_finding_lights_its_own_violation_mark_and_not_the_others_at_its_step() {
        let mut opened = possible();
        // The three findings share one step, with different witnesses.
        assert!(opened.findings.iter().all(|f| f.step == opened.findings[0].step));
        let outside = opened
            .findings
            .iter()
            .position(|f| f.invariant.to_string() == "write_outside_lease")
            .unwrap();
        opened.chosen = Some(outside);
        let lit = opened.highlight();
        let marks = &opened.track.layout.marks;
        let violations: Vec<&MarkGeom> = marks.iter().filter(|m| lit.mark(m)).collect();
        let own: Vec<&MarkGeom> =
            violations.iter().copied().filter(|m| m.kind == "violation").collect();
        assert_eq!(own.len(), 1);
        assert_eq!(own[0].label, "write_outside_lease");
        // Every highlighted event mark is on a witness step, and every witness step's event
        // marks are highlighted.
        let witness = &opened.findings[outside].witness;
        for m in marks.iter().filter(|m| m.kind != "violation") {
            assert_eq!(lit.mark(m), witness.contains(&m.step), "{m:?}");
        }
    }
}
