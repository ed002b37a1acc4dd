//! Where everything in a diagram sits: time runs down the page, one column per lane, one row
//! per step, with extra room where logical time jumps. Pure geometry; nothing here knows HTML.

use fencelab_core::scenario::diagram::{Diagram, MarkKind, SpanKind};
use fencelab_core::scenario::model::PauseReason;
use fencelab_core::Named;
use fencelab_core::{Event, StepRecord, WriteOutcome};

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
/// How far apart marks stacked on one lane in one step are.
pub const STACK: f64 = 14.0;
/// Room below the last row.
pub const BOTTOM: f64 = 36.0;

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
    /// The step that sent it.
    pub sent_step: usize,
    /// The step that delivered it, if any.
    pub arrived_step: Option<usize>,
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
    /// For a store's decision: its value and highest generation afterwards, e.g. `= B: 120 · g2`.
    pub note: Option<String>,
}

/// What a store holds after the write that `record` decided, if it is one. The core's diagram
/// marks say what was decided; the step record says what the store then holds.
fn store_note(record: &StepRecord) -> Option<String> {
    let gen =
        |g: &Option<fencelab_core::Generation>| g.map_or_else(String::new, |g| format!(" · g{g}"));
    match &record.event {
        Event::WriteArrived { outcome, value_after, highest_after, .. } => {
            let verb = if matches!(outcome, WriteOutcome::Rejected(_)) { "kept" } else { "=" };
            let value = value_after.as_deref().unwrap_or("(empty)");
            Some(format!("{verb} {value}{}", gen(highest_after)))
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
    /// Messages.
    pub arrows: Vec<ArrowGeom>,
    /// Marks.
    pub marks: Vec<MarkGeom>,
    /// Periods.
    pub spans: Vec<SpanGeom>,
    /// What each step settles for good, in drawing order: periods that end, messages that
    /// arrive, marks.
    pub settled: Vec<Vec<Settled>>,
    /// The vertical extent of what each step settles, so a long run can draw only what lies
    /// near the current step.
    pub settled_extent: Vec<(f64, f64)>,
    /// The most telling mark kind of each step (`""` for none), for the log's and caption's glyph.
    pub step_kinds: Vec<&'static str>,
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

/// An SVG coordinate with at most one decimal, formatted through integers: the float formatter
/// alone adds several kilobytes to the bundle.
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
    /// Lays out `diagram`, whose steps are `timeline`.
    pub fn new(diagram: &Diagram, timeline: &[StepRecord]) -> Layout {
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
            let (x1, x2) = (x(a.from), x(a.to));
            let y1 = layout.row(a.sent_step);
            let y2 = match a.arrived_step {
                Some(step) => layout.row(step),
                None => layout.y_of_tick(timeline, a.arrives_at.0),
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
                sent_step: a.sent_step,
                arrived_step: a.arrived_step,
                sent_at: a.sent_at.0,
                arrives_at: a.arrives_at.0,
            });
        }
        // Several marks on one lane in one step stack downwards instead of overlapping.
        let mut stacks: litemap::LiteMap<(usize, usize), usize> = Default::default();
        let mut marks: Vec<MarkGeom> = Vec::with_capacity(diagram.marks.len());
        for m in &diagram.marks {
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
        layout.step_kinds = step_kinds;
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
        layout.settled_extent = settled
            .iter()
            .enumerate()
            .map(|(step, items)| {
                let row = layout.row(step);
                items.iter().fold((row, row), |(lo, hi), item| {
                    let (a, b) = match *item {
                        Settled::Span(i) => {
                            layout.spans.get(i).map_or((row, row), |s| (s.y1, s.y2))
                        }
                        Settled::Arrow(i) => {
                            layout.arrows.get(i).map_or((row, row), |a| (a.y1, a.y2))
                        }
                        Settled::Mark(i) => layout.marks.get(i).map_or((row, row), |m| (m.y, m.y)),
                    };
                    (lo.min(a), hi.max(b))
                })
            })
            .collect();
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

    /// The horizontal extent of what step `step` drew (marks, messages sent, periods begun), so a
    /// narrow screen can scroll it into view.
    pub fn focus_x(&self, step: usize) -> Option<(f64, f64)> {
        let xs = self
            .marks
            .iter()
            .filter(|m| m.step == step)
            .map(|m| m.x)
            .chain(self.arrows.iter().filter(|a| a.sent_step == step).flat_map(|a| [a.x1, a.x2]))
            .chain(self.spans.iter().filter(|s| s.start_step == step).map(|s| s.x));
        xs.fold(None, |range, x| match range {
            None => Some((x, x)),
            Some((lo, hi)) => Some((f64::min(lo, x), f64::max(hi, x))),
        })
    }

    /// The vertical extent of the settled items of steps `from..to`.
    pub fn extent(&self, from: usize, to: usize) -> Option<(f64, f64)> {
        let steps = self.settled_extent.get(from..to.min(self.settled_extent.len()))?;
        steps.iter().copied().reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }

    /// The row of the step just played at `position` (the top before anything happened).
    pub fn now_y(&self, position: usize) -> f64 {
        match position.checked_sub(1) {
            Some(step) => self.row(step),
            None => TOP,
        }
    }
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
