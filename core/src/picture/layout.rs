//! Where everything in a diagram sits: time runs down the page, one column per lane, one row
//! per step, with extra room where logical time jumps. Pure geometry; nothing here knows HTML.

use crate::draw::{Diagram, Lane, LaneKind, MarkKind, SpanKind};
use crate::fence::idempotency::WriteOutcome;
use crate::format::model::{Enforcement, PauseReason};
use crate::history::event::Event;
use crate::invariant::Violation;
use crate::names::Named;
use crate::record::StepRecord;

/// Width of the time axis on the left.
pub const GUTTER: f64 = 52.0;
/// Width of one lane.
pub const LANE_W: f64 = 136.0;
/// Room above the first row.
pub const TOP: f64 = 22.0;
/// Height of one step's row.
pub const ROW: f64 = 30.0;
/// Extra room per tick of logical time between two rows, up to [`MAX_GAP`].
pub const GAP_PER_TICK: f64 = 5.0;
/// The most extra room a jump in time gets.
pub const MAX_GAP: f64 = 40.0;
/// How far apart marks stacked on one lane in one step are: more than a mark's circle and its
/// 12 px label are tall, so stacked marks never overlap.
pub const STACK: f64 = 24.0;
/// Room below the last row.
pub const BOTTOM: f64 = 36.0;
/// Room on the right of the last lane for its labels, at the natural width: the last lane is
/// usually the store, whose decisions are the story's key moments.
pub const RIGHT_ROOM: f64 = 150.0;
/// The least room on the right: a pane just too narrow for [`RIGHT_ROOM`] gives up some of it
/// rather than scroll sideways.
pub const MIN_RIGHT: f64 = 96.0;
/// The widest a lane gets when the diagram stretches to fill a wide pane.
pub const MAX_LANE_W: f64 = 280.0;
/// The most room on the right of the last lane when stretched.
pub const MAX_RIGHT: f64 = 320.0;
/// An upper estimate of a 12 px label's average character width (DejaVu Sans, the widest of
/// the usual system fonts), so a label clipped to its room does not run into the next lane.
pub const CHAR_W: f64 = 6.3;
/// The same for the monospaced notes.
pub const MONO_W: f64 = 7.3;
/// Steps per bucket: the diagram and the log draw and reuse items in buckets of this many steps.
pub const BUCKET: usize = 4;
/// Runs longer than this draw only the part of the diagram and the log that is on screen (see
/// `viz::window`); shorter ones draw everything, so the page looks the same however it scrolls.
pub const LONG_RUN: usize = 240;

/// A message's line.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrowGeom {
    /// `grant`, `write` or `effect`.
    pub kind: String,
    /// `lease`, `wall_clock` or `forged`.
    pub token: String,
    /// The generation it carries.
    pub generation: u64,
    /// Its label.
    pub label: String,
    /// Start and end points.
    pub x1: f64,
    /// See `x1`.
    pub y1: f64,
    /// See `x1`.
    pub x2: f64,
    /// See `x1`.
    pub y2: f64,
    /// The engine's message id, which a reader's "deliver now" names.
    pub message: u64,
    /// The step that sent it.
    pub sent_step: usize,
    /// The step that delivered it, if any; for a lost message, the step that lost it.
    pub arrived_step: Option<usize>,
    /// Whether the network lost it: it ends halfway, at the step that lost it.
    pub lost: bool,
    /// When it was sent.
    pub sent_at: u64,
    /// When it arrives.
    pub arrives_at: u64,
}

impl ArrowGeom {
    /// Where the message is at `position` steps and logical time `now`: `None` before it is
    /// sent, `Some(1.0)` once delivered, in between while travelling (by logical time, so a
    /// message sent now is shown just leaving).
    pub fn progress(&self, position: usize, now: u64) -> Option<f64> {
        if position <= self.sent_step {
            return None;
        }
        if self.arrived_step.is_some_and(|a| a < position) {
            return Some(1.0);
        }
        let span = self.arrives_at.saturating_sub(self.sent_at) as f64;
        let done = now.saturating_sub(self.sent_at) as f64;
        Some(((done + 0.5) / (span + 1.0)).clamp(0.0, 0.9))
    }
}

/// A mark's spot.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkGeom {
    /// The core's name of its kind: `applied`, `rejected`, `violation`, ...
    pub kind: String,
    /// Its label.
    pub label: String,
    /// Where.
    pub x: f64,
    /// See `x`.
    pub y: f64,
    /// The step it belongs to.
    pub step: usize,
    /// For a store's decision: its value and highest generation afterwards, e.g. `= B: 120 · g2`
    /// (no generation for an unfenced path, which keeps none).
    pub note: Option<String>,
    /// For a violation: the index of the finding it marks.
    pub finding: Option<usize>,
    /// For a violation: whether that finding is only possible.
    pub possible: bool,
}

/// What a store holds after the write that `record` decided, if it is one. The core's diagram
/// marks say what was decided; the step record says what the store then holds.
fn store_note(record: &StepRecord) -> Option<String> {
    let gen = |g: &Option<crate::fence::generation::Generation>| {
        g.map_or_else(String::new, |g| format!(" · g{g}"))
    };
    match &record.event {
        Event::WriteArrived { outcome, value_after, highest_after, enforcement, .. } => {
            let verb = if matches!(outcome, WriteOutcome::Rejected(_)) { "kept" } else { "=" };
            let value = value_after.as_deref().unwrap_or("(empty)");
            // An unfenced path keeps no fencing record, so the note shows none.
            let kept = match enforcement {
                Enforcement::Unfenced => String::new(),
                _ => gen(highest_after),
            };
            Some(format!("{verb} {value}{kept}"))
        }
        Event::WriteCommitted { request, .. } => Some(format!("= {}", request.value)),
        _ => None,
    }
}

/// A period's bar.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanGeom {
    /// `lease`, `belief` or `pause`.
    pub kind: &'static str,
    /// A short label.
    pub label: String,
    /// The bar's horizontal position.
    pub x: f64,
    /// Top and bottom.
    pub y1: f64,
    /// See `y1`.
    pub y2: f64,
    /// The step that starts it.
    pub start_step: usize,
    /// The first step by which it is over, if the run gets that far.
    pub end_step: Option<usize>,
}

impl SpanGeom {
    /// Whether the period is under way but not over after `position` steps.
    pub fn ongoing(&self, position: usize) -> bool {
        self.start_step < position && self.end_step.is_none_or(|end| end >= position)
    }
}

impl ArrowGeom {
    /// Whether the message has been sent but not delivered after `position` steps.
    pub fn in_flight(&self, position: usize) -> bool {
        self.sent_step < position && self.arrived_step.is_none_or(|arrived| arrived >= position)
    }
}

/// The whole layout of a diagram.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layout {
    /// Total size.
    pub width: f64,
    /// See `width`.
    pub height: f64,
    /// Centre of each lane.
    pub lane_x: Vec<f64>,
    /// Centre of each step's row.
    pub rows: Vec<f64>,
    /// Time axis labels: (y, tick), one per distinct tick.
    pub ticks: Vec<(f64, u64)>,
    /// Messages, in the order they were sent (as the core draws them).
    pub arrows: Vec<ArrowGeom>,
    /// Marks.
    pub marks: Vec<MarkGeom>,
    /// Periods, in the order they began (as the core draws them).
    pub spans: Vec<SpanGeom>,
    /// What each step settles for good, in drawing order: periods that end, messages that
    /// arrive, marks.
    pub settled: Vec<Vec<Settled>>,
    /// The vertical extent of what each [`BUCKET`] of steps settles, so a long run can draw
    /// only the buckets on screen.
    pub bucket_extent: Vec<(f64, f64)>,
    /// The periods and messages that may be under way at the positions of each [`BUCKET`]
    /// (`live[p / BUCKET]` holds every one under way at position `p`), so drawing a position
    /// looks at a few items however long the run is.
    pub live: Vec<Vec<Settled>>,
    /// The most telling mark kind of each step (`""` for none), for the log's and caption's glyph.
    pub step_kinds: Vec<&'static str>,
    /// The entries of [`LEGEND`] this diagram draws, in the table's order.
    pub legend: Vec<&'static LegendEntry>,
}

/// One thing the diagram can draw and what the legend says about it.
#[derive(Debug, PartialEq, Eq)]
pub struct LegendEntry {
    /// `mark`, `arrow`, `token` or `span`.
    pub group: &'static str,
    /// The kind within the group, as the diagram's `data-kind` (or, for a token, `data-token`)
    /// names it.
    pub kind: &'static str,
    /// What it means.
    pub text: &'static str,
}

const fn entry(group: &'static str, kind: &'static str, text: &'static str) -> LegendEntry {
    LegendEntry { group, kind, text }
}

/// Everything the diagram can draw, in the order the legend lists it: messages and their
/// tokens, periods, then marks roughly in the order a story meets them. A lease token needs no
/// entry of its own: the messages' entries show it.
pub const LEGEND: [LegendEntry; 29] = [
    entry("arrow", "grant", "lease grant with its generation"),
    entry("arrow", "write", "write with its generation"),
    entry("arrow", "effect", "side effect with its generation"),
    entry("token", "wall_clock", "token read off a wall clock"),
    entry("token", "forged", "forged token"),
    entry("span", "lease", "lease valid (authority), up to its expiry line"),
    entry("span", "belief", "what the worker believes it holds"),
    entry("span", "pause", "worker frozen"),
    entry("mark", "granted", "lease granted"),
    entry("mark", "busy", "lease busy: held by another"),
    entry("mark", "renewed", "lease renewed"),
    entry("mark", "released", "lease released"),
    entry("mark", "expired", "lease expired"),
    entry("mark", "read", "value read"),
    entry("mark", "lease_checked", "lease checked on the worker's own clock"),
    entry("mark", "slowed", "network slowed down"),
    entry("mark", "lost", "message lost by the network"),
    entry("mark", "skewed", "worker's clock jumped"),
    entry("mark", "checked", "check passed; the write comes later"),
    entry("mark", "applied", "write accepted"),
    entry("mark", "rejected", "write rejected, with the reason"),
    entry("mark", "replayed", "retry answered from the stored result"),
    entry("mark", "delivered", "effect passed on / received"),
    entry("mark", "dropped", "effect dropped"),
    entry("mark", "unknown", "outcome never learned: it may or may not have happened"),
    entry("mark", "restarted", "restart"),
    entry("mark", "stopped", "worker stopped"),
    entry("mark", "violation", "invariant broken"),
    entry("mark", "possible", "invariant possibly broken: depends on an outcome nobody learned"),
];

/// How the diagram's columns stretch to fill its pane. Only the horizontal positions change:
/// rows keep their height and text keeps its size, so a wide screen gets roomier lanes and
/// whole labels, and a narrow one keeps the natural width and scrolls sideways.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// The width of one lane.
    pub lane_w: f64,
    /// The room on the right of the last lane.
    pub right: f64,
    /// How many lanes.
    pub lanes: usize,
}

impl Fit {
    /// The natural size: what a pane too narrow for it scrolls through.
    pub fn natural(lanes: usize) -> Fit {
        Fit { lane_w: LANE_W, right: RIGHT_ROOM, lanes }
    }

    /// The columns for a pane `available` pixels wide (0 when unknown): the spare width goes to
    /// the lanes and, twice a lane's share, to the room right of the last lane (usually the
    /// store's, where the story's verdicts are written), up to [`MAX_LANE_W`] and [`MAX_RIGHT`].
    /// A pane a little narrower than the natural width takes it out of the room on the right,
    /// down to [`MIN_RIGHT`]; a narrower one scrolls.
    pub fn new(lanes: usize, available: f64) -> Fit {
        let natural = Fit::natural(lanes);
        let spare = available.floor() - natural.width();
        if lanes == 0 || spare < MIN_RIGHT - RIGHT_ROOM {
            return natural;
        }
        if spare <= 0.0 {
            return Fit { right: RIGHT_ROOM + spare, ..natural };
        }
        let share = spare / (lanes as f64 + 2.0);
        Fit {
            lane_w: (LANE_W + share).min(MAX_LANE_W).floor(),
            right: (RIGHT_ROOM + 2.0 * share).min(MAX_RIGHT).floor(),
            lanes,
        }
    }

    /// The whole width: the time axis, the lanes, the room on the right.
    pub fn width(&self) -> f64 {
        GUTTER + self.lane_w * self.lanes as f64 + 8.0 + self.right
    }

    /// Where `x`, laid out at the natural width, falls: its lane's centre moves, its offset from
    /// that centre (a lease bar beside the lane line) stays.
    pub fn x(&self, x: f64) -> f64 {
        if x <= GUTTER || self.lanes == 0 {
            return x;
        }
        let lane = (((x - GUTTER) / LANE_W).floor() as usize).min(self.lanes - 1);
        let centre = |w: f64| GUTTER + w * (lane as f64 + 0.5);
        centre(self.lane_w) + (x - centre(LANE_W))
    }

    /// The room for a label that starts `from` pixels right of a lane centre at fitted `x`:
    /// up to the next lane's marks, or to the right edge after the last lane.
    pub fn room(&self, x: f64, from: f64) -> f64 {
        let lane = ((x - GUTTER) / self.lane_w).floor().max(0.0) as usize;
        let next = if lane + 1 >= self.lanes { self.width() - 4.0 } else { x + self.lane_w - 12.0 };
        next - x - from
    }
}

/// `text` cut to `room` pixels of characters about `char_w` wide, with an ellipsis; `None` when
/// it fits whole.
pub fn clip(text: &str, room: f64, char_w: f64) -> Option<String> {
    let max = ((room / char_w) as usize).max(6);
    text.char_indices().nth(max)?;
    let (end, _) = text.char_indices().nth(max - 1)?;
    let mut cut = text[..end].to_string();
    cut.push('…');
    Some(cut)
}

/// An item of the diagram that, once its step has happened, never changes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// `spans[i]`, finished.
    Span(usize),
    /// `arrows[i]`, delivered.
    Arrow(usize),
    /// `marks[i]`.
    Mark(usize),
}

/// Mark kinds in order of how much they matter to a learner.
const PRIORITY: [&str; 9] = [
    "violation",
    "rejected",
    "dropped",
    "applied",
    "delivered",
    "replayed",
    "granted",
    "expired",
    "busy",
];

/// An SVG coordinate with at most one decimal, formatted through integers.
pub fn num(v: f64) -> String {
    decimal(v, 1)
}

/// `v` rounded to `places` decimals (trailing zeros dropped), formatted through integers.
pub fn decimal(v: f64, places: u32) -> String {
    let scale = 10_i64.pow(places);
    let n = (v * scale as f64).round() as i64;
    let sign = if n < 0 { "-" } else { "" };
    let (whole, frac) = (n.abs() / scale, n.abs() % scale);
    if frac == 0 {
        return format!("{sign}{whole}");
    }
    let digits = format!("{frac:0width$}", width = places as usize);
    format!("{sign}{whole}.{}", digits.trim_end_matches('0'))
}

impl Layout {
    /// Lays out `diagram`, whose steps are `timeline` and whose violation marks stand for
    /// `findings`.
    pub fn new(diagram: &Diagram, timeline: &[StepRecord], findings: &[Violation]) -> Layout {
        let lane_x: Vec<f64> =
            (0..diagram.lanes.len()).map(|i| GUTTER + LANE_W * (i as f64 + 0.5)).collect();
        // A step with several marks on one lane gets room for the stack below its row.
        let mut stacks: litemap::LiteMap<(usize, usize), usize> = Default::default();
        let mut extra = vec![0.0; timeline.len()];
        for m in &diagram.marks {
            let n = stacks.entry((m.step, m.lane)).or_insert(0);
            *n += 1;
            if let Some(room) = extra.get_mut(m.step) {
                *room = f64::max(*room, STACK * (*n - 1) as f64);
            }
        }
        let mut rows = Vec::with_capacity(timeline.len());
        let mut ticks = Vec::new();
        let mut y = TOP + ROW / 2.0;
        let mut last: Option<u64> = None;
        for (i, record) in timeline.iter().enumerate() {
            let at = record.at.0;
            if let Some(prev) = last {
                y += ROW + (at.saturating_sub(prev) as f64 * GAP_PER_TICK).min(MAX_GAP);
                y += i.checked_sub(1).and_then(|p| extra.get(p)).copied().unwrap_or(0.0);
            }
            if last != Some(at) {
                ticks.push((y, at));
            }
            rows.push(y);
            last = Some(at);
        }
        let mut layout = Layout {
            width: GUTTER + LANE_W * diagram.lanes.len() as f64 + 8.0,
            height: 0.0,
            lane_x,
            rows,
            ticks,
            ..Layout::default()
        };
        let x = |lane: usize| layout.lane_x.get(lane).copied().unwrap_or(GUTTER);
        let mut arrows = Vec::with_capacity(diagram.arrows.len());
        for a in &diagram.arrows {
            let (x1, mut x2) = (x(a.from), x(a.to));
            let y1 = layout.row(a.sent_step);
            let y2 = match (a.lost_step, a.arrived_step) {
                (Some(step), _) => {
                    x2 = (x1 + x2) / 2.0;
                    layout.row(step)
                }
                (None, Some(step)) => layout.row(step),
                (None, None) => layout.y_of_tick(timeline, a.arrives_at.0),
            };
            arrows.push(ArrowGeom {
                kind: a.kind.name().into(),
                token: a.token.name().into(),
                generation: a.generation.get(),
                label: a.label.clone(),
                x1,
                y1,
                x2,
                y2: y2.max(y1),
                message: a.message,
                sent_step: a.sent_step,
                arrived_step: a.lost_step.or(a.arrived_step),
                lost: a.lost_step.is_some(),
                sent_at: a.sent_at.0,
                arrives_at: a.arrives_at.0,
            });
        }
        // Several marks on one lane in one step stack downwards instead of overlapping.
        let mut stacks: litemap::LiteMap<(usize, usize), usize> = Default::default();
        let mut marks: Vec<MarkGeom> = Vec::with_capacity(diagram.marks.len());
        // A violation mark names its invariant and step; findings of the same invariant at the
        // same step are matched in order, as the core draws them.
        let mut used = vec![false; findings.len()];
        for m in &diagram.marks {
            let finding = (m.kind == MarkKind::Violation)
                .then(|| {
                    (0..findings.len()).find(|&i| {
                        !used[i]
                            && findings[i].step.index() == m.step
                            && findings[i].invariant.to_string() == m.label
                    })
                })
                .flatten();
            if let Some(i) = finding {
                used[i] = true;
            }
            let stacked = stacks.entry((m.step, m.lane)).or_insert(0);
            marks.push(MarkGeom {
                kind: m.kind.name().into(),
                label: m.label.clone(),
                x: x(m.lane),
                y: layout.row(m.step) + STACK * *stacked as f64,
                step: m.step,
                note: (*stacked == 0)
                    .then(|| timeline.get(m.step).and_then(store_note))
                    .flatten()
                    .filter(|_| {
                        matches!(
                            m.kind,
                            MarkKind::Applied | MarkKind::Rejected | MarkKind::Replayed
                        )
                    }),
                finding,
                possible: finding.is_some_and(|i| findings[i].possible),
            });
            *stacked += 1;
        }
        let mut spans = Vec::with_capacity(diagram.spans.len());
        for s in &diagram.spans {
            let (kind, label, dx) = match &s.kind {
                SpanKind::Lease { generation } => ("lease", format!("lease g{generation}"), -9.0),
                SpanKind::Belief { generation } => {
                    ("belief", format!("believes g{generation}"), 9.0)
                }
                SpanKind::Pause { reason } => ("pause", pause_label(*reason), 0.0),
            };
            let y1 = layout.row(s.start_step);
            let y2 = layout.y_of_tick(timeline, s.to.0).max(y1);
            let end = timeline.partition_point(|r| r.at < s.to).max(s.start_step);
            spans.push(SpanGeom {
                kind,
                label,
                x: x(s.lane) + dx,
                y1,
                y2,
                start_step: s.start_step,
                end_step: (end < timeline.len()).then_some(end),
            });
        }
        let bottom = layout.rows.last().copied().unwrap_or(TOP);
        let lowest = arrows
            .iter()
            .map(|a| a.y2)
            .chain(spans.iter().map(|s| s.y2))
            .chain(marks.iter().map(|m| m.y))
            .fold(bottom, f64::max);
        layout.height = lowest + BOTTOM;
        layout.arrows = arrows;
        layout.marks = marks;
        layout.spans = spans;
        let mut step_kinds = vec![""; timeline.len()];
        for m in &layout.marks {
            if let (Some(slot), Some(rank)) =
                (step_kinds.get_mut(m.step), PRIORITY.iter().position(|k| *k == m.kind))
            {
                let current = PRIORITY.iter().position(|k| k == slot).unwrap_or(PRIORITY.len());
                if rank < current {
                    *slot = PRIORITY[rank];
                }
            }
        }
        // A step whose violations are all possible reads as possible in the caption and log.
        let mut certain = vec![false; timeline.len()];
        for m in layout.marks.iter().filter(|m| m.kind == "violation" && !m.possible) {
            if let Some(c) = certain.get_mut(m.step) {
                *c = true;
            }
        }
        for (slot, certain) in step_kinds.iter_mut().zip(certain) {
            if *slot == "violation" && !certain {
                *slot = "possible";
            }
        }
        layout.step_kinds = step_kinds;
        layout.legend = LEGEND
            .iter()
            .filter(|e| match (e.group, e.kind) {
                // Certain and possible violations are told apart.
                ("mark", "violation" | "possible") => layout
                    .marks
                    .iter()
                    .any(|m| m.kind == "violation" && m.possible == (e.kind == "possible")),
                ("mark", _) => layout.marks.iter().any(|m| m.kind == e.kind),
                ("arrow", _) => layout.arrows.iter().any(|a| a.kind == e.kind),
                ("token", _) => layout.arrows.iter().any(|a| a.token == e.kind),
                _ => layout.spans.iter().any(|s| s.kind == e.kind),
            })
            .collect();
        let mut settled = vec![Vec::new(); timeline.len()];
        for (i, s) in layout.spans.iter().enumerate() {
            if let Some(slot) = s.end_step.and_then(|end| settled.get_mut(end)) {
                slot.push(Settled::Span(i));
            }
        }
        for (i, a) in layout.arrows.iter().enumerate() {
            if let Some(slot) = a.arrived_step.and_then(|arrived| settled.get_mut(arrived)) {
                slot.push(Settled::Arrow(i));
            }
        }
        for (i, m) in layout.marks.iter().enumerate() {
            if let Some(slot) = settled.get_mut(m.step) {
                slot.push(Settled::Mark(i));
            }
        }
        let extent = |item: &Settled, row: f64| match *item {
            Settled::Span(i) => layout.spans.get(i).map_or((row, row), |s| (s.y1, s.y2)),
            Settled::Arrow(i) => layout.arrows.get(i).map_or((row, row), |a| (a.y1, a.y2)),
            Settled::Mark(i) => layout.marks.get(i).map_or((row, row), |m| (m.y, m.y)),
        };
        layout.bucket_extent = settled
            .chunks(BUCKET)
            .enumerate()
            .map(|(bucket, steps)| {
                let row = layout.row(bucket * BUCKET);
                steps.iter().flatten().map(|item| extent(item, row)).fold(
                    (row, layout.row(bucket * BUCKET + steps.len() - 1)),
                    |(lo, hi), (a, b)| (lo.min(a), hi.max(b)),
                )
            })
            .collect();
        layout.live = live_index(&layout, timeline.len());
        layout.settled = settled;
        layout
    }

    /// The centre of step `step`'s row (the top for an unknown step).
    pub fn row(&self, step: usize) -> f64 {
        self.rows.get(step).copied().unwrap_or(TOP)
    }

    /// Where tick `t` falls: on the row of the first step at or after it, between rows where no
    /// step happens at exactly `t`, and below the last row after the run.
    pub fn y_of_tick(&self, timeline: &[StepRecord], t: u64) -> f64 {
        let i = timeline.partition_point(|r| r.at.0 < t);
        match (i.checked_sub(1).and_then(|p| timeline.get(p)), timeline.get(i)) {
            (_, Some(next)) if next.at.0 == t => self.row(i),
            (Some(prev), Some(next)) => {
                let (a, b) = (prev.at.0 as f64, next.at.0 as f64);
                let f = if b > a { (t as f64 - a) / (b - a) } else { 0.0 };
                self.row(i - 1) + f * (self.row(i) - self.row(i - 1))
            }
            (Some(prev), None) => {
                self.row(i - 1) + (t.saturating_sub(prev.at.0) as f64 * GAP_PER_TICK).min(MAX_GAP)
            }
            (None, _) => TOP,
        }
    }

    /// The horizontal extent of what step `step` drew (marks, messages sent, periods begun or
    /// ended), so a narrow screen can scroll it into view.
    pub fn focus_x(&self, step: usize) -> Option<(f64, f64)> {
        let sent = self.arrows.partition_point(|a| a.sent_step < step);
        let begun = self.spans.partition_point(|s| s.start_step < step);
        let xs = self
            .marks_at(step)
            .map(|m| m.x)
            .chain(
                self.arrows[sent..]
                    .iter()
                    .take_while(|a| a.sent_step == step)
                    .flat_map(|a| [a.x1, a.x2]),
            )
            .chain(self.spans[begun..].iter().take_while(|s| s.start_step == step).map(|s| s.x))
            // A worker resuming after its pause draws only the pause's end.
            .chain(self.spans[..begun].iter().filter(|s| s.end_step == Some(step)).map(|s| s.x));
        xs.fold(None, |range, x| match range {
            None => Some((x, x)),
            Some((lo, hi)) => Some((f64::min(lo, x), f64::max(hi, x))),
        })
    }

    /// The buckets of settled items that reach into the band `(from, to)` of the diagram.
    pub fn buckets_within(&self, (from, to): (f64, f64)) -> impl Iterator<Item = usize> + '_ {
        let within = move |(top, bottom): (f64, f64)| bottom >= from && top <= to;
        (0..self.bucket_extent.len()).filter(move |&b| within(self.bucket_extent[b]))
    }

    /// The time axis labels within the band `(from, to)`.
    pub fn ticks_within(&self, (from, to): (f64, f64)) -> &[(f64, u64)] {
        let first = self.ticks.partition_point(|(y, _)| *y + ROW < from);
        let last = self.ticks.partition_point(|(y, _)| *y - ROW <= to).max(first);
        &self.ticks[first..last]
    }

    /// The periods under way but not over after `position` steps.
    pub fn ongoing(&self, position: usize) -> impl Iterator<Item = &SpanGeom> + '_ {
        self.live_at(position)
            .filter_map(|item| match *item {
                Settled::Span(i) => self.spans.get(i),
                _ => None,
            })
            .filter(move |s| s.ongoing(position))
    }

    /// The messages sent but not delivered after `position` steps.
    pub fn in_flight(&self, position: usize) -> impl Iterator<Item = &ArrowGeom> + '_ {
        self.live_at(position)
            .filter_map(|item| match *item {
                Settled::Arrow(i) => self.arrows.get(i),
                _ => None,
            })
            .filter(move |a| a.in_flight(position))
    }

    fn live_at(&self, position: usize) -> impl Iterator<Item = &Settled> + '_ {
        self.live.get(position / BUCKET).into_iter().flatten()
    }

    /// The marks of step `step`.
    pub fn marks_at(&self, step: usize) -> impl Iterator<Item = &MarkGeom> + '_ {
        self.settled.get(step).into_iter().flatten().filter_map(|item| match *item {
            Settled::Mark(i) => self.marks.get(i),
            _ => None,
        })
    }

    /// Where the marks and messages of `steps` (a chosen finding's witness, sorted) sit across
    /// the lanes, at the natural width: those in workers' lanes when there are any (the writers
    /// the finding is about, whom a wide history's lanes may put far from the stores), else all.
    pub fn witness_xs(&self, steps: &[usize], lanes: &[Lane]) -> Vec<f64> {
        let lane = |x: f64| lanes.get(((x - GUTTER) / LANE_W).max(0.0) as usize);
        let sent = self.arrows.iter().filter(|a| steps.binary_search(&a.sent_step).is_ok());
        let xs: Vec<(f64, bool)> = steps
            .iter()
            .flat_map(|&step| self.marks_at(step))
            .map(|m| m.x)
            .chain(sent.flat_map(|a| [a.x1, a.x2]))
            .map(|x| (x, lane(x).is_some_and(|l| l.kind == LaneKind::Worker)))
            .collect();
        let workers = xs.iter().any(|(_, worker)| *worker);
        xs.into_iter().filter(|(_, worker)| *worker || !workers).map(|(x, _)| x).collect()
    }

    /// Where finding `finding`'s own violation mark sits, at the natural width.
    pub fn finding_x(&self, finding: usize) -> Option<f64> {
        self.marks.iter().find(|m| m.kind == "violation" && m.finding == Some(finding)).map(|m| m.x)
    }

    /// The row of the step just played at `position` (the top before anything happened).
    pub fn now_y(&self, position: usize) -> f64 {
        match position.checked_sub(1) {
            Some(step) => self.row(step),
            None => TOP,
        }
    }
}

/// [`Layout::live`]: each period and message listed in the bucket of every position at which it
/// may be under way, from the step after it begins to the step that ends it (or the end of the
/// run).
fn live_index(layout: &Layout, steps: usize) -> Vec<Vec<Settled>> {
    let buckets = steps / BUCKET + 1;
    let mut live = vec![Vec::new(); buckets];
    let mut add = |item: Settled, begins: usize, ends: Option<usize>| {
        let last = ends.map_or(buckets - 1, |end| (end / BUCKET).min(buckets - 1));
        for bucket in live.iter_mut().take(last + 1).skip((begins + 1) / BUCKET) {
            bucket.push(item);
        }
    };
    for (i, s) in layout.spans.iter().enumerate() {
        add(Settled::Span(i), s.start_step, s.end_step);
    }
    for (i, a) in layout.arrows.iter().enumerate() {
        add(Settled::Arrow(i), a.sent_step, a.arrived_step);
    }
    live
}

fn pause_label(reason: PauseReason) -> String {
    let why = match reason {
        PauseReason::GcPause => "GC pause",
        PauseReason::Descheduled => "descheduled",
        PauseReason::NetworkStall => "network stall",
        PauseReason::Rescheduled => "rescheduled",
        PauseReason::OverloadedEventLoop => "busy event loop",
    };
    format!("frozen: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::ArrowKind;
    use crate::history::event::TokenKind;
    use crate::picture::Played;
    use crate::stories::library;

    fn play(scenario: crate::Scenario) -> Played {
        Played::play(scenario, 4_000).unwrap()
    }

    fn run(name: &str, variant: &str) -> Played {
        play(library::scenario(name, Some(variant)).expect("a built-in story"))
    }

    #[test]
    fn a_witness_is_placed_by_its_workers_marks_when_it_has_any() {
        let run = run("paused-worker", "broken");
        let track = &run;
        let lanes = &track.diagram.lanes;
        let kind = |x: f64| lanes[((x - GUTTER) / LANE_W) as usize].kind;
        let every: Vec<usize> = (0..track.len()).collect();
        let all: Vec<f64> =
            every.iter().flat_map(|&s| track.layout.marks_at(s)).map(|m| m.x).collect();
        assert!(all.iter().any(|&x| kind(x) != LaneKind::Worker), "marks in other lanes");
        let xs = track.layout.witness_xs(&every, lanes);
        assert!(!xs.is_empty() && xs.iter().all(|&x| kind(x) == LaneKind::Worker), "{xs:?}");
        // Without workers' marks, every mark counts.
        let stores: Vec<usize> = every
            .iter()
            .copied()
            .filter(|&s| track.layout.marks_at(s).all(|m| kind(m.x) != LaneKind::Worker))
            .filter(|&s| track.layout.marks_at(s).next().is_some())
            .filter(|&s| track.layout.arrows.iter().all(|a| a.sent_step != s))
            .collect();
        assert!(!stores.is_empty());
        assert_eq!(
            track.layout.witness_xs(&stores, lanes).len(),
            stores.iter().flat_map(|&s| track.layout.marks_at(s)).count()
        );
    }

    #[test]
    fn a_step_that_only_ends_a_period_is_found_where_the_period_is() {
        let run = run("paused-worker", "broken");
        let pause = run.layout.spans.iter().find(|s| s.kind == "pause").expect("A's pause");
        let end = pause.end_step.expect("A resumes");
        assert_eq!(run.layout.marks_at(end).count(), 0, "the step draws no mark of its own");
        let (from, to) = run.layout.focus_x(end).expect("the step has a place");
        assert!(from <= pause.x && pause.x <= to, "{from}..{to} holds {}", pause.x);
    }

    #[test]
    fn a_narrow_pane_keeps_the_natural_width_and_a_wide_one_is_filled() {
        let natural = Fit::natural(4);
        assert_eq!(natural.width(), GUTTER + 4.0 * LANE_W + 8.0 + RIGHT_ROOM);
        // A phone: the diagram keeps its width and scrolls.
        assert_eq!(Fit::new(4, 320.0), natural);
        assert_eq!(Fit::new(4, 0.0), natural);
        // A pane a little narrower: the room on the right gives way, down to its least.
        assert_eq!(Fit::new(4, natural.width() - 20.0).width(), natural.width() - 20.0);
        let tight = natural.width() - (RIGHT_ROOM - MIN_RIGHT);
        assert_eq!(Fit::new(4, tight).right, MIN_RIGHT);
        assert_eq!(Fit::new(4, tight - 1.0), natural);
        // A desktop pane: lanes and the right-hand room share the spare width, within it.
        let wide = Fit::new(4, 1022.0);
        assert!(wide.lane_w > LANE_W && wide.right > RIGHT_ROOM);
        assert!(wide.width() <= 1022.0 && wide.width() > 1010.0, "{}", wide.width());
        // A very wide pane: lanes stop growing.
        let huge = Fit::new(3, 5000.0);
        assert_eq!((huge.lane_w, huge.right), (MAX_LANE_W, MAX_RIGHT));
    }

    #[test]
    fn fitting_moves_lane_centres_and_keeps_offsets_beside_them() {
        let fit = Fit::new(4, 1022.0);
        let centre = |i: f64| GUTTER + LANE_W * (i + 0.5);
        for lane in 0..4 {
            let x = centre(lane as f64);
            let moved = GUTTER + fit.lane_w * (lane as f64 + 0.5);
            assert_eq!(fit.x(x), moved);
            // A lease bar 9 px left of the lane line stays 9 px left of it.
            assert_eq!(fit.x(x - 9.0), moved - 9.0);
            assert_eq!(fit.x(x + 9.0), moved + 9.0);
        }
        assert_eq!(fit.x(10.0), 10.0, "the time axis does not move");
        // A label on the last lane may use the room on the right; others stop before the next.
        let last = fit.x(centre(3.0));
        assert_eq!(fit.room(last, 13.0), fit.width() - 4.0 - last - 13.0);
        assert_eq!(fit.room(fit.x(centre(1.0)), 13.0), fit.lane_w - 25.0);
    }

    #[test]
    fn a_label_is_clipped_only_when_it_does_not_fit() {
        assert_eq!(clip("stale: 1 < 2", 200.0, CHAR_W), None);
        let cut = clip("violated: stale write accepted", 100.0, CHAR_W).unwrap();
        assert!(cut.ends_with('…') && cut.chars().count() <= (100.0 / CHAR_W) as usize, "{cut}");
        assert!("violated: stale write accepted".starts_with(cut.trim_end_matches('…')));
        // Never less than a few characters, however tight.
        assert_eq!(clip("gen 2 expired", 1.0, CHAR_W).unwrap().chars().count(), 6);
    }

    #[test]
    fn marks_stacked_on_one_lane_in_one_step_are_a_full_mark_apart() {
        let run = run("paused-worker", "broken");
        let step = run.layout.marks.iter().find(|m| m.kind == "violation").unwrap().step;
        let mut ys: Vec<f64> =
            run.layout.marks.iter().filter(|m| m.step == step).map(|m| m.y).collect();
        ys.sort_by(f64::total_cmp);
        assert_eq!(ys.len(), 3, "the applied write and two broken invariants");
        assert!(ys.windows(2).all(|w| w[1] - w[0] >= STACK), "{ys:?}");
        // The row below starts after the stack.
        assert!(run.layout.row(step + 1) > ys[2] + ROW / 2.0);
    }

    #[test]
    fn the_legend_lists_exactly_what_each_story_draws() {
        for scenario in library::all() {
            let run = play(scenario);
            let layout = &run.layout;
            let listed = |group: &str| -> Vec<&str> {
                let mut kinds: Vec<&str> =
                    layout.legend.iter().filter(|e| e.group == group).map(|e| e.kind).collect();
                kinds.sort_unstable();
                kinds
            };
            fn drawn(mut kinds: Vec<&str>) -> Vec<&str> {
                kinds.sort_unstable();
                kinds.dedup();
                kinds
            }
            let name = format!("{}/{}", run.scenario.name, run.scenario.variant);
            let marks = drawn(layout.marks.iter().map(|m| m.kind.as_str()).collect());
            assert_eq!(listed("mark"), marks, "{name}");
            let arrows = drawn(layout.arrows.iter().map(|a| a.kind.as_str()).collect());
            assert_eq!(listed("arrow"), arrows, "{name}");
            let tokens = drawn(
                layout.arrows.iter().map(|a| a.token.as_str()).filter(|t| *t != "lease").collect(),
            );
            assert_eq!(listed("token"), tokens, "{name}");
            let spans = drawn(layout.spans.iter().map(|s| s.kind).collect());
            assert_eq!(listed("span"), spans, "{name}");
        }
    }

    #[test]
    fn messages_and_periods_are_in_the_order_they_began_and_each_step_finds_its_own() {
        for scenario in library::all().into_iter().chain([library::generated(20, 5, 6)]) {
            let run = play(scenario);
            let layout = &run.layout;
            let name = format!("{}/{}", run.scenario.name, run.scenario.variant);
            assert!(layout.arrows.windows(2).all(|w| w[0].sent_step <= w[1].sent_step), "{name}");
            assert!(layout.spans.windows(2).all(|w| w[0].start_step <= w[1].start_step), "{name}");
            for position in 0..=run.len() {
                // What the index finds is what a scan of everything finds.
                let ongoing: Vec<&SpanGeom> = layout.ongoing(position).collect();
                let all: Vec<&SpanGeom> =
                    layout.spans.iter().filter(|s| s.ongoing(position)).collect();
                assert_eq!(ongoing, all, "{name} at {position}");
                let flying: Vec<&ArrowGeom> = layout.in_flight(position).collect();
                let all: Vec<&ArrowGeom> =
                    layout.arrows.iter().filter(|a| a.in_flight(position)).collect();
                assert_eq!(flying, all, "{name} at {position}");
            }
            for step in 0..run.len() {
                let marks: Vec<&MarkGeom> = layout.marks_at(step).collect();
                let all: Vec<&MarkGeom> = layout.marks.iter().filter(|m| m.step == step).collect();
                assert_eq!(marks, all, "{name} at {step}");
            }
        }
    }

    #[test]
    fn a_band_draws_the_buckets_and_ticks_that_reach_into_it() {
        let run = play(library::generated(20, 5, 6));
        let layout = &run.layout;
        assert_eq!(layout.bucket_extent.len(), run.len().div_ceil(BUCKET));
        let band = (layout.row(400), layout.row(440));
        let buckets: Vec<usize> = layout.buckets_within(band).collect();
        assert!(buckets.contains(&(400 / BUCKET)) && buckets.contains(&(440 / BUCKET)));
        assert!(buckets.len() <= 40 / BUCKET + 3, "{buckets:?}");
        // Every bucket left out has nothing in the band.
        for b in (0..layout.bucket_extent.len()).filter(|b| !buckets.contains(b)) {
            let (top, bottom) = layout.bucket_extent[b];
            assert!(bottom < band.0 || top > band.1, "bucket {b}");
        }
        let ticks = layout.ticks_within(band);
        assert!(!ticks.is_empty());
        assert!(ticks.iter().all(|(y, _)| *y >= band.0 - ROW && *y <= band.1 + ROW));
        let all = layout.ticks.iter().filter(|(y, _)| *y >= band.0 && *y <= band.1).count();
        assert!(ticks.len() >= all);
    }

    #[test]
    fn the_legend_can_explain_every_kind_of_thing_the_diagram_draws() {
        let has =
            |group: &str, kind: &str| LEGEND.iter().any(|e| e.group == group && e.kind == kind);
        for kind in MarkKind::VARIANTS {
            assert!(has("mark", kind.name()), "{}", kind.name());
        }
        for kind in ArrowKind::VARIANTS {
            assert!(has("arrow", kind.name()), "{}", kind.name());
        }
        for kind in TokenKind::VARIANTS.iter().filter(|k| **k != TokenKind::Lease) {
            assert!(has("token", kind.name()), "{}", kind.name());
        }
        for kind in ["lease", "belief", "pause"] {
            assert!(has("span", kind), "{kind}");
        }
        // Possible violations have an entry of their own.
        assert!(has("mark", "possible"));
        assert_eq!(LEGEND.len(), MarkKind::VARIANTS.len() + 1 + ArrowKind::VARIANTS.len() + 2 + 3);
    }
}
