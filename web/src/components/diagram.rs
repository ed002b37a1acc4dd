//! The swimlane diagram: lane headers with each actor's live status, then an SVG where time runs
//! down the page. Items are small components with cheap props, so a step re-renders only what
//! changed (a mark appearing, a message moving, the current row).

use fencelab_core::clock::RunStep;
use fencelab_core::draw::LaneKind;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::components::decide::DecideView;
use crate::components::icons::{glyph, icon};
use crate::viz::frame::Frame;
use crate::viz::history::{Highlight, FEW_LANES};
use crate::viz::run::{step_no, TrackRef};
use crate::viz::state::{Action, DecideAction};
use crate::viz::words::{count, diagram_summary, pill_width};
use fencelab_core::picture::layout::{
    clip, decimal, num, ArrowGeom, Fit, Layout, LegendEntry, MarkGeom, Settled, SpanGeom, BUCKET,
    CHAR_W, GUTTER, LONG_RUN, MONO_W, ROW,
};

/// What a diagram shows. Not a component's props: the position moves with every step, so a
/// component would re-render each time anyway; the costly parts below (the backdrop and the
/// buckets of settled items) are components and are reused.
pub struct DiagramProps<'a> {
    pub run: &'a TrackRef,
    pub position: usize,
    pub frame: &'a Frame,
    /// Makes SVG ids unique when two diagrams share the page.
    pub id: AttrValue,
    /// Seeks to a position (the number of a mark's step) when a mark is clicked.
    pub on_seek: Callback<usize>,
    pub node: NodeRef,
    /// The width of the diagram's pane in pixels, which the lanes stretch to fill (0: the
    /// natural width).
    pub width: f64,
    /// What a chosen finding highlights: its witness and its own mark.
    pub highlight: Highlight,
    /// The band of the diagram's box to draw (in its content's pixels): a long run draws only
    /// what reaches into it.
    pub band: (f64, f64),
    /// In "You decide" mode: the lanes' menus of faults and "deliver now" on messages.
    pub decide: Option<&'a DecideView>,
}

/// A label that shows `short` (when the text had to be cut) until its mark or message is hovered
/// or focused, and then the whole `text`.
fn label(
    class: &'static str,
    x: f64,
    y: f64,
    anchor: &'static str,
    text: &str,
    short: Option<String>,
) -> Html {
    let clipped = short.is_some();
    html! {
        <text class={classes!(class, clipped.then_some("clipped"))} x={num(x)} y={num(y)}
            text-anchor={(anchor != "start").then_some(anchor)}>
            if let Some(short) = short {
                <tspan class="short">{ short }</tspan><tspan class="full">{ text.to_string() }</tspan>
            } else {
                { text.to_string() }
            }
        </text>
    }
}

/// A lane kind's short name, used both as its CSS class and as its icon's name.
fn lane_class(kind: LaneKind) -> &'static str {
    match kind {
        LaneKind::Authority => "authority",
        LaneKind::Worker => "worker",
        LaneKind::Store => "store",
        LaneKind::Gateway => "gateway",
        LaneKind::Partner => "partner",
    }
}

/// What a lane's header says about its actor right now.
fn lane_status(id: &str, frame: &Frame) -> Html {
    if id == "authority" {
        return html! {
            { for frame.authority.iter().map(|a| {
                let text = match (a.generation, &a.holder) {
                    (Some(g), Some(holder)) => format!("g{g} → {holder}"),
                    (Some(g), None) => format!("g{g}, lease over"),
                    (None, _) => "no lease granted yet".to_string(),
                };
                html! { <span class="status-line">{ text }</span> }
            }) }
        };
    }
    if let Some(name) = id.strip_prefix("worker:") {
        let Some(w) = frame.workers.iter().find(|w| w.name == name) else { return html! {} };
        let (glyph_name, word) = match w.status {
            "paused" => ("frozen", "frozen"),
            "finished" => ("check", "done"),
            "stopped" => ("stopped", "stopped"),
            "waiting" => ("clock", "waiting"),
            _ => ("play", "running"),
        };
        return html! {
            <>
                <span class={classes!("pill", w.status)} data-testid="worker-status">
                    { icon(glyph_name) }{ word }
                </span>
                { for w.beliefs.iter().map(|b| html! {
                    <span class={classes!("status-line", (!b.authority_agrees).then_some("stale"))}>
                        { format!("believes g{}", b.generation) }
                        if !b.authority_agrees {
                            <span class="says">{ match (&b.authority_holder, b.authority_generation) {
                                (Some(h), Some(g)) => format!(" · authority: g{g} → {h}"),
                                _ => " · lease over".to_string(),
                            } }</span>
                        }
                    </span>
                }) }
            </>
        };
    }
    if let Some(rest) = id.strip_prefix("store:") {
        let (store, path) = rest.split_once('/').unwrap_or((rest, "primary"));
        let cells: Vec<_> = frame
            .stores
            .iter()
            .filter(|s| s.name == store)
            .flat_map(|s| s.cells.iter())
            .filter(|c| c.path == path)
            .collect();
        return html! {
            { for cells.iter().map(|c| html! {
                <span class="status-line">
                    { format!("{}: {}", c.resource, c.kept.short()) }
                    <span class="rev">{ format!(" {}", c.revision) }</span>
                </span>
            }) }
        };
    }
    if id == "gateway" || id == "partner" {
        if let Some(g) = &frame.gateway {
            let text = if id == "gateway" {
                g.enforcement.to_string()
            } else {
                format!("received {}", g.received.len())
            };
            return html! { <span class="status-line">{ text }</span> };
        }
    }
    html! {}
}

#[derive(Properties, PartialEq)]
struct BackdropProps {
    run: TrackRef,
    id: AttrValue,
    fit: Fit,
    /// The band of the diagram drawn, `None` for all of it.
    band: Option<(f64, f64)>,
}

#[derive(Properties, PartialEq)]
struct TimeColumnProps {
    run: TrackRef,
    /// The band of the diagram drawn, `None` for all of it.
    band: Option<(f64, f64)>,
}

/// The time column: a label at each new tick within the band drawn, over a background, drawn
/// after the marks so that, kept at the box's left edge while the lanes scroll sideways
/// (style.css), it covers what passes beneath rather than mixing with it.
#[component]
fn TimeColumn(props: &TimeColumnProps) -> Html {
    let layout = &props.run.layout;
    let ticks = match props.band {
        Some(band) => layout.ticks_within(band),
        None => &layout.ticks,
    };
    html! {
        <g class="time-column" aria-hidden="true">
            <rect class="time-bg" x="0" y="0" width={num(GUTTER - 2.0)} height={num(layout.height)} />
            { for ticks.iter().map(|(y, t)| html! {
                <text class="tick-label" x={num(GUTTER - 8.0)} y={num(y + 4.0)}>{ format!("t={t}") }</text>
            }) }
        </g>
    }
}

/// The SVG definitions, the time axis's rules (a line at each new tick, within the band drawn)
/// and the lane lines: drawn again only when the run or the band changes.
#[component]
fn Backdrop(props: &BackdropProps) -> Html {
    let layout = &props.run.layout;
    let bottom = layout.height - 10.0;
    let id = &props.id;
    let fit = props.fit;
    let ticks = match props.band {
        Some(band) => layout.ticks_within(band),
        None => &layout.ticks,
    };
    html! {
        <>
            <defs>
                <pattern id={format!("{id}-hatch")} patternUnits="userSpaceOnUse" width="6" height="6"
                    patternTransform="rotate(45)">
                    <line x1="0" y1="0" x2="0" y2="6" class="hatch-line" />
                </pattern>
                { for ["grant", "write", "effect"].iter().map(|kind| html! {
                    <marker id={format!("{id}-head-{kind}")} class={classes!("head", *kind)} viewBox="0 0 10 10"
                        refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
                        <path d="M0 0L10 5L0 10z" />
                    </marker>
                }) }
            </defs>
            <g class="axis" aria-hidden="true">
                { for ticks.iter().map(|(y, _)| html! {
                    <line class="tick-rule" x1={num(GUTTER)} x2={num(fit.width() - fit.right)}
                        y1={num(y - ROW / 2.0 + 2.0)} y2={num(y - ROW / 2.0 + 2.0)} />
                }) }
            </g>
            <g class="lane-lines" aria-hidden="true">
                { for props.run.diagram.lanes.iter().zip(&layout.lane_x).map(|(lane, x)| html! {
                    <line class={classes!("lane-line", lane_class(lane.kind))}
                        x1={num(fit.x(*x))} x2={num(fit.x(*x))} y1="0" y2={num(bottom)} />
                }) }
            </g>
        </>
    }
}

fn span_view(span: &SpanGeom, shown_to: f64, id: &str, fit: Fit) -> Html {
    // Not `clamp`, which panics when a span's ends are out of order.
    let shown = shown_to.max(span.y1).min(span.y2);
    let centre = fit.x(span.x);
    let (width, x) = match span.kind {
        "pause" => (20.0, centre - 10.0),
        _ => (5.0, centre - 2.5),
    };
    let ongoing = shown < span.y2;
    let height = (shown - span.y1).max(2.0);
    let title = format!("{} (from step {})", span.label, count(step_no(span.start_step)));
    html! {
        <g class={classes!("span", span.kind, ongoing.then_some("ongoing"))} data-kind={span.kind}
            aria-hidden="true">
            <title>{ title }</title>
            if span.kind == "lease" {
                // The whole validity the authority granted, faint; the elapsed part solid.
                <rect class="validity" x={num(x)} y={num(span.y1)}
                    width={num(width)} height={num((span.y2 - span.y1).max(2.0))} rx="2" />
                <line class="expiry" x1={num(x - 4.0)} x2={num(x + width + 4.0)}
                    y1={num(span.y2)} y2={num(span.y2)} />
            }
            <rect class="fill" x={num(x)} y={num(span.y1)} width={num(width)}
                height={num(height)} rx="2"
                fill={(span.kind == "pause").then(|| format!("url(#{id}-hatch)"))} />
            if span.kind == "pause" {
                { glyph("pause", centre, span.y1 + 9.0, 0.7) }
                <text class="span-label" x={num(centre + 14.0)} y={num(span.y1 + 13.0)}>
                    { span.label.clone() }
                </text>
            } else if span.kind == "lease" {
                <text class="span-label lease-label" x={num(centre - 6.0)}
                    y={num(span.y1 + 20.0)} text-anchor="end">{ span.label.replace("lease ", "") }</text>
            }
        </g>
    }
}

/// A message's line at `progress` (0 just sent, 1 delivered); `witness` highlights it.
fn arrow_view(a: &ArrowGeom, progress: f64, id: &str, fit: Fit, witness: bool) -> Html {
    let delivered = progress >= 1.0;
    let (x1, x2) = (fit.x(a.x1), fit.x(a.x2));
    // Stop short of the receiving lane's mark.
    let (dx, dy) = (x2 - x1, a.y2 - a.y1);
    let length = (dx * dx + dy * dy).sqrt().max(1.0);
    let trim = 10.0 / length;
    let (end_x, end_y) = (x2 - dx * trim, a.y2 - dy * trim);
    let badge = if delivered { 0.72 } else { progress * 0.72 };
    let (bx, by) = (x1 + (end_x - x1) * badge, a.y1 + (end_y - a.y1) * badge);
    let d = format!("M{} {}L{} {}", num(x1), num(a.y1), num(end_x), num(end_y));
    let forged = a.token != "lease";
    let (label_x, anchor) = if dx >= 0.0 { (x1 + 8.0, "start") } else { (x1 - 8.0, "end") };
    let title =
        format!("{} · generation {} · {}", a.label, a.generation, a.token.replace('_', " "));
    let pill = format!("g{}", a.generation);
    let pill_w = pill_width(&pill);
    html! {
        <g class={classes!("arrow", a.kind.clone(), (!delivered).then_some("in-flight"), forged.then_some("forged"), witness.then_some("witness"), a.lost.then_some("lost"))}
            data-kind={a.kind.clone()} data-token={a.token.clone()}
            data-state={match (delivered, a.lost) { (true, true) => "lost", (true, false) => "delivered", _ => "in-flight" }} aria-hidden="true">
            <title>{ title }</title>
            // The style sheet dashes the wire by its length; the offset shows how far it got.
            <path class="wire" d={d} pathLength="1"
                style={(!delivered).then(|| format!("stroke-dashoffset:{}", decimal(1.0 - progress, 3)))}
                marker-end={(delivered && !a.lost).then(|| format!("url(#{id}-head-{})", a.kind))} />
            if a.kind != "grant" {
                // Cut to the way across to the receiving lane; hovering shows it whole.
                { label("arrow-label", label_x, a.y1 - 5.0, anchor, &a.label,
                    clip(&a.label, dx.abs() - 16.0, CHAR_W)) }
            }
            // The pill's shape is in the style sheet.
            <g class="token" style={format!("transform:translate({}px,{}px)", num(bx), num(by))}>
                <rect x={num(-pill_w / 2.0)} width={num(pill_w)} />
                <text y="4">{ pill }</text>
            </g>
        </g>
    }
}

/// How far right of its mark a mark's label starts: clear of the current step's ring.
const LABEL_DX: f64 = 16.0;

fn mark_view(m: &MarkGeom, on_seek: &Callback<usize>, fit: Fit, witness: bool) -> Html {
    let violation = m.kind == "violation";
    let text = match (violation, m.possible) {
        (true, true) => format!("possibly violated: {}", m.label.replace('_', " ")),
        (true, false) => format!("violated: {}", m.label.replace('_', " ")),
        _ => m.label.clone(),
    };
    let step = m.step;
    let x = fit.x(m.x);
    // The accessible name, from the `<title>`: the whole label and note, however cut on screen.
    let whole = match &m.note {
        Some(note) => format!("step {}: {text} {note}", count(step_no(step))),
        None => format!("step {}: {text}", count(step_no(step))),
    };
    // The player's position once the step has played is its number.
    let position = RunStep::new(step).number();
    let onclick = on_seek.reform(move |_: MouseEvent| position);
    // A mark is a button: Enter or Space jumps to its step, like a click, and neither reaches
    // the page's own keys (Space would also start playing).
    let onkeydown = {
        let on_seek = on_seek.clone();
        Callback::from(move |event: KeyboardEvent| {
            if matches!(event.key().as_str(), "Enter" | " ") {
                event.prevent_default();
                event.stop_propagation();
                on_seek.emit(position);
            }
        })
    };
    // Violation labels are bold, so wider.
    let char_w = if violation { CHAR_W * 1.12 } else { CHAR_W };
    let room = fit.room(x, LABEL_DX);
    // A grant's label sits above the row, clear of the arrow that leaves downwards.
    let label_y = if m.kind == "granted" { m.y - 6.0 } else { m.y + 4.0 };
    html! {
        <g class={classes!("mark", m.kind.clone(), m.possible.then_some("possible"), witness.then_some("witness"))}
            data-kind={m.kind.clone()} data-step={step.to_string()} data-finding={m.finding.map(|i| i.to_string())}
            tabindex="-1" role="button" onclick={onclick} onkeydown={onkeydown}>
            <title>{ whole }</title>
            // A touch target of 44 px around the mark, drawn (transparent) only where the pointer
            // is coarse or the screen narrow (style.css).
            <rect class="hit" x={num(x - 22.0)} y={num(m.y - 22.0)} width="44" height="44" />
            <circle cx={num(x)} cy={num(m.y)} r={if violation { "9" } else { "8" }} />
            { glyph(&m.kind, x, m.y, if violation { 0.72 } else { 0.62 }) }
            { label("mark-label", x + LABEL_DX, label_y, "start", &text, clip(&text, room, char_w)) }
            if let Some(note) = &m.note {
                // What the store holds now, just above the decision.
                { label("mark-note", x + LABEL_DX, m.y - 10.0, "start", note, clip(note, room, MONO_W)) }
            }
        </g>
    }
}

#[derive(Properties, PartialEq)]
struct BucketProps {
    run: TrackRef,
    id: AttrValue,
    on_seek: Callback<usize>,
    fit: Fit,
    /// Which bucket: steps `index * BUCKET ..`.
    index: usize,
    /// The position when the bucket holds steps still to come or the step just played; `None`
    /// otherwise, so moving elsewhere leaves its props (and its items) alone.
    inside: Option<usize>,
    /// What is highlighted (compared by content, so a step leaves it alone).
    highlight: Highlight,
}

/// The settled items of [`BUCKET`] consecutive steps: marks, delivered messages, finished
/// periods, each shown once its step has happened (those of the step just played marked `now`,
/// which the style sheet animates). They stay in the page, hidden until then, so stepping or
/// seeking mostly flips one class per bucket.
#[component]
fn Bucket(props: &BucketProps) -> Html {
    let layout = &props.run.layout;
    let from = props.index * BUCKET;
    let to = (from + BUCKET).min(layout.settled.len());
    let item = |item: &Settled| match *item {
        Settled::Span(i) => layout.spans.get(i).map(|s| span_view(s, s.y2, &props.id, props.fit)),
        Settled::Arrow(i) => layout.arrows.get(i).map(|a| {
            let witness = props.highlight.step(a.sent_step)
                || a.arrived_step.is_some_and(|s| props.highlight.step(s));
            arrow_view(a, 1.0, &props.id, props.fit, witness)
        }),
        Settled::Mark(i) => layout
            .marks
            .get(i)
            .map(|m| mark_view(m, &props.on_seek, props.fit, props.highlight.mark(m))),
    };
    // One group per step that settles anything, which the step's state hides or animates.
    let steps = (from..to).filter_map(|step| Some((step, layout.settled.get(step)?)));
    html! {
        { for steps.filter(|(_, items)| !items.is_empty()).map(|(step, items)| {
            let state = match props.inside {
                Some(position) if step >= position => Some("future"),
                Some(position) if RunStep::new(step).number() == position => Some("now"),
                _ => None,
            };
            html! { <g class={classes!(state)}>{ for items.iter().filter_map(item) }</g> }
        }) }
    }
}

/// A message in flight that the engine can deliver next, as a button that does.
fn deliverable(
    key: String,
    arrow: Html,
    on: &Callback<Action>,
    choice: usize,
    what: String,
) -> Html {
    let onclick = on.reform(move |_: MouseEvent| Action::InDecide(DecideAction::Choose(choice)));
    let onkeydown = {
        let on = on.clone();
        Callback::from(move |event: KeyboardEvent| {
            if matches!(event.key().as_str(), "Enter" | " ") {
                event.prevent_default();
                event.stop_propagation();
                on.emit(Action::InDecide(DecideAction::Choose(choice)));
            }
        })
    };
    html! {
        <g key={key} class="deliverable" role="button" tabindex="0" data-deliver={choice.to_string()}
            aria-label={format!("Deliver now: {what}")} onclick={onclick} onkeydown={onkeydown}>
            <title>{ format!("Deliver now: {what}") }</title>
            { arrow }
        </g>
    }
}

/// The diagram is one Tab stop: the arrow keys up and down move the focus between the marks
/// shown (from the diagram itself, to the latest), so a reader reaches any mark without tabbing
/// through every one.
fn between_marks(e: KeyboardEvent) {
    let forward = match e.key().as_str() {
        "ArrowDown" => true,
        "ArrowUp" => false,
        _ => return,
    };
    let from = e.target().and_then(|t| t.dyn_into::<web_sys::Element>().ok());
    let diagram = from.as_ref().and_then(|f| f.closest(".diagram").ok().flatten());
    let (Some(from), Some(diagram)) = (from, diagram) else { return };
    // Only from a mark or the diagram itself: a lane's menu has arrow keys of its own.
    if !from.matches(".mark").unwrap_or(false) && from != diagram {
        return;
    }
    let Ok(all) = diagram.query_selector_all(".settled .mark") else { return };
    let shown: Vec<web_sys::Element> = (0..all.length())
        .filter_map(|i| all.item(i)?.dyn_into::<web_sys::Element>().ok())
        .filter(|m| m.closest(".future").ok().flatten().is_none())
        .collect();
    let at = shown.iter().position(|m| *m == from);
    let to = match (at, forward) {
        (Some(i), true) => shown.get(i + 1),
        (Some(i), false) => i.checked_sub(1).and_then(|i| shown.get(i)),
        (None, _) => shown.last(),
    };
    let Some(to) = to.and_then(|t| t.dyn_ref::<web_sys::SvgElement>()) else { return };
    // The arrows move between the marks here, not the diagram's scroll.
    e.prevent_default();
    let _ = to.focus();
}

/// The diagram of one run at one position.
pub fn diagram_view(props: &DiagramProps) -> Html {
    let run = props.run;
    let layout = &run.layout;
    let position = props.position;
    let now = run.tick_at(position);
    let now_y = layout.now_y(position);
    let lanes = &run.diagram.lanes;
    let fit = Fit::new(lanes.len(), props.width);
    let width = fit.width();
    let id = props.id.as_str();
    let head_style = format!(
        "grid-template-columns:{}px repeat({}, {}px) {}px",
        num(GUTTER),
        lanes.len(),
        num(fit.lane_w),
        num(fit.right + 8.0)
    );
    let names: Vec<&str> = lanes.iter().map(|l| l.label.as_str()).collect();
    let caption = position
        .checked_sub(1)
        .and_then(|i| run.timeline.get(i))
        .map_or("", |r| r.caption.as_str());
    let summary = diagram_summary(&names, position, run.len(), caption);
    let ongoing = layout.ongoing(position);
    let in_flight = layout.in_flight(position);
    let current_marks = position.checked_sub(1).into_iter().flat_map(|step| layout.marks_at(step));
    // A long run draws the buckets in view; a short one all of them.
    let band = (run.len() > LONG_RUN).then_some(props.band);
    let buckets: Vec<usize> = match band {
        Some(band) => layout.buckets_within(band).collect(),
        None => (0..layout.bucket_extent.len()).collect(),
    };
    html! {
        <>
        // Above the box, not in it: the box scrolls sideways, and would cut the note.
        if band.is_some() {
                <p class="long-run">{ "A long run: the diagram draws the part in view as you scroll, up to \
                    the current step (what comes later appears as you play or scrub to it); the \
                    scrubber, the keys and the log reach every step." }</p>
        }
        <div class="diagram" ref={props.node.clone()} data-testid="diagram" id={format!("diagram-{id}")}
            style={format!("--gutter:{}px", num(GUTTER))}
            data-position={position.to_string()} tabindex="0" role="region" onkeydown={between_marks}
            aria-label="Swimlane diagram (scrollable; click a mark, or reach it with the up and down arrow keys, to jump to its step)">
            // Many lanes' heads would be read, one by one, before the summary that names the
            // first of them: the summary and the side panels say it for assistive technology.
            <div class="lane-heads" style={head_style} role="list" aria-label="Actors"
                aria-hidden={(lanes.len() > FEW_LANES && props.decide.is_none()).then_some("true")}>
                <div class="gutter-head" aria-hidden="true">{ "time" }</div>
                { for lanes.iter().map(|lane| {
                    let frozen = lane.id.strip_prefix("worker:")
                        .and_then(|n| props.frame.workers.iter().find(|w| w.name == n))
                        .is_some_and(|w| w.paused());
                    html! {
                        <div class={classes!("lane-head", lane_class(lane.kind), frozen.then_some("frozen"))}
                            role="listitem" data-lane={lane.id.clone()}>
                            { match props.decide.and_then(|d| d.lane_menu(&lane.id, lane_class(lane.kind), &lane.label)) {
                                Some(menu) => menu,
                                None => html! {
                                    <span class="lane-name">{ icon(lane_class(lane.kind)) }{ lane.label.clone() }</span>
                                },
                            } }
                            { lane_status(&lane.id, props.frame) }
                        </div>
                    }
                }) }
            </div>
            // A group, not an image: its marks are buttons a reader can focus.
            <svg class="swimlanes" width={num(width)} height={num(layout.height)}
                viewBox={format!("0 0 {} {}", num(width), num(layout.height))} role="group" aria-label={summary}>
                <Backdrop run={run.clone()} id={props.id.clone()} fit={fit} band={band} />
                <rect class="now-band" x="0" y="0" width={num(width)} height={num(ROW)} aria-hidden="true"
                    style={format!("transform:translateY({}px)", num(now_y - ROW / 2.0))}
                    visibility={if position == 0 { "hidden" } else { "visible" }} />
                <g class="settled">
                    { for buckets.into_iter().map(|index| {
                        let from = index * BUCKET;
                        let inside = (from < position && position <= from + BUCKET).then_some(position);
                        html! {
                            <g key={index} class={classes!("bucket", (position <= from).then_some("future"))}>
                                <Bucket run={run.clone()} id={props.id.clone()} on_seek={props.on_seek.clone()}
                                    fit={fit} index={index} inside={inside} highlight={props.highlight.clone()} />
                            </g>
                        }
                    }) }
                </g>
                <g class="live">
                    <g class="live-spans">
                        { for ongoing.map(|s| html! {
                            <g key={format!("s{}-{}", s.start_step, num(s.x))}>{ span_view(s, now_y, id, fit) }</g>
                        }) }
                    </g>
                    <g class="live-arrows">
                        { for in_flight.map(|a| {
                            let progress = a.progress(position, now).unwrap_or(0.0);
                            let witness = props.highlight.step(a.sent_step);
                            let arrow = arrow_view(a, progress, id, fit, witness);
                            let key = format!("a{}-{}", a.sent_step, num(a.x2));
                            match props.decide.and_then(|d| Some((d, d.deliver(a.message)?))) {
                                Some((d, (choice, what))) => deliverable(key, arrow, &d.on, choice, what),
                                None => html! { <g key={key}>{ arrow }</g> },
                            }
                        }) }
                    </g>
                    // In a group of their own: Yew matches a list's unkeyed children from its end, so
                    // a varying number of rings beside the groups above would redraw those.
                    <g class="rings">
                        { for current_marks.map(|m| html! {
                            <circle class={classes!("current-ring", m.kind.clone())} cx={num(fit.x(m.x))}
                                cy={num(m.y)} r="12" aria-hidden="true" />
                        }) }
                    </g>
                </g>
                <TimeColumn run={run.clone()} band={band} />
            </svg>
        </div>
        </>
    }
}

/// A legend entry's sample: the mark's glyph in its circle, a token pill in its message's
/// colour (dashed for a token not from the authority), or a period's bar.
fn swatch(entry: &LegendEntry) -> Html {
    let (class, inside) = match entry.group {
        "mark" => ("swatch", icon(entry.kind)),
        "arrow" => ("token-pill", Html::from("g2")),
        "token" => ("token-pill forged", Html::from("g")),
        _ => ("bar", Html::default()),
    };
    html! { <span class={class}>{ inside }</span> }
}

/// What the shapes of the diagram on screen mean: exactly the kinds its story draws (the layout
/// lists them), each with its glyph, pill or bar, so colour is never the only cue, and the
/// highlight while a finding is chosen (`witness`). A plain function: it has no state, so a
/// component would only add Yew's per-component code.
pub fn legend(layout: &Layout, witness: bool) -> Html {
    html! {
        <ul class="legend" aria-label="Legend: what this diagram's shapes mean">
            { for layout.legend.iter().map(|entry| html! {
                <li class="legend-item" data-group={entry.group} data-legend={entry.kind}>
                    { swatch(entry) }{ entry.text }
                </li>
            }) }
            if witness {
                <li class="legend-item" data-group="mark" data-legend="witness">
                    <span class="swatch witness" />{ "the chosen finding and its witness: the entries that prove it" }
                </li>
            }
        </ul>
    }
}
