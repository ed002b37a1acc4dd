//! The event log: every step of the run in words. Clicking one seeks to it.

use yew::prelude::*;

use crate::components::icons::icon;
use crate::viz::history::Highlight;
use crate::viz::run::{step_no, TrackRef};
use crate::viz::window::{rows_within, LOG_ROW};
use crate::viz::words::count;
use fencelab_core::picture::layout::{num, BUCKET, LONG_RUN};

/// What the event log shows. Not a component's props: the position changes with every step, so a
/// component would re-render each time anyway; the rows below it are components and are reused.
pub struct LogProps<'a> {
    pub run: &'a TrackRef,
    pub position: usize,
    pub on_seek: Callback<usize>,
    pub node: NodeRef,
    /// The chosen finding's witness, whose entries are marked.
    pub highlight: Highlight,
    /// The band of the log's box to draw (in its content's pixels): a long run lists only the
    /// rows within it.
    pub band: (f64, f64),
    /// Whether the steps still to come are hidden: a quiz question's answer is among them.
    pub conceal: bool,
}

#[derive(Properties, PartialEq)]
struct RowsProps {
    run: TrackRef,
    on_seek: Callback<usize>,
    index: usize,
    /// The position when the current row or the first row still to come is in this bucket;
    /// `None` otherwise, so moving elsewhere leaves the bucket's rows alone.
    inside: Option<usize>,
    /// The chosen finding's witness (compared by content).
    highlight: Highlight,
    /// Whether the log lists only the rows in view, which then say where they stand in the
    /// whole list.
    windowed: bool,
}

/// [`BUCKET`] consecutive rows; only the bucket holding the current step re-renders on a step.
#[component]
fn Rows(props: &RowsProps) -> Html {
    let from = props.index * BUCKET;
    let to = (from + BUCKET).min(props.run.len());
    let total = props.run.len().to_string();
    html! {
        { for (from..to).filter_map(|index| props.run.timeline.get(index).map(|r| (index, r))).map(|(index, record)| {
            let kind = props.run.layout.step_kinds.get(index).copied().unwrap_or("");
            let state = match props.inside {
                Some(position) if step_no(index) == position => "current",
                Some(position) if index >= position => "future",
                _ => "",
            };
            let onclick = props.on_seek.reform(move |_: MouseEvent| step_no(index));
            let witness = props.highlight.step(index);
            html! {
                <div role="listitem" class={classes!("entry", (!state.is_empty()).then_some(state), (!kind.is_empty()).then_some(kind), witness.then_some("witness"))}
                    data-step={index.to_string()} aria-posinset={props.windowed.then(|| step_no(index).to_string())}
                    aria-setsize={props.windowed.then(|| total.clone())}>
                    // A long run's row is one line, cut with "…": the title shows it whole on
                    // hover, and the caption shows the current step's whole.
                    <button type="button" onclick={onclick} aria-current={(state == "current").then_some("step")}
                        title={props.windowed.then(|| record.caption.clone())}>
                        <span class="step-no mono">{ format!("#{}", count(step_no(index))) }</span>
                        if witness {
                            <span class="sr-only">{ "witness: " }</span>
                        }
                        <span class="at mono">{ format!("t={}", record.at.0) }</span>
                        <span class="glyph-slot">
                            if !kind.is_empty() { { icon(kind) } }
                        </span>
                        <span class="text">{ record.caption.clone() }</span>
                    </button>
                </div>
            }
        }) }
    }
}

/// The event log: every step in words, the ones still to come faded. A long run's log lists
/// the rows in view, each in its place in a list as tall as the whole run.
pub fn log(props: &LogProps) -> Html {
    let position = props.position;
    let len = props.run.len();
    let current = position.checked_sub(1).map_or_else(|| "none".to_string(), |c| c.to_string());
    let windowed = len > LONG_RUN;
    let buckets = if windowed {
        let rows = rows_within(props.band, LOG_ROW, len);
        rows.start / BUCKET..rows.end.div_ceil(BUCKET)
    } else {
        0..len.div_ceil(BUCKET)
    };
    let bucket = |index: usize| {
        let from = index * BUCKET;
        let inside = (from <= position && position <= from + BUCKET).then_some(position);
        let style = windowed.then(|| format!("top:{}px", num(from as f64 * LOG_ROW)));
        html! {
            <div key={index} class={classes!("rows", (position < from).then_some("future"))} role="presentation" style={style}>
                <Rows run={props.run.clone()} on_seek={props.on_seek.clone()} index={index} inside={inside}
                    highlight={props.highlight.clone()} windowed={windowed} />
            </div>
        }
    };
    html! {
        <section class="card log-card" aria-labelledby="log-title">
            <h2 id="log-title">{ icon("list") }{ "Event log" }
                <span class="count">{ format!("{} steps", count(len)) }</span></h2>
            <p class="hint">
                if props.conceal {
                    { "Click a step to jump to it. Steps still to come stay hidden until the quiz's questions are answered." }
                } else {
                    { "Click a step to jump to it. Steps still to come are faded." }
                }
                if windowed {
                    { " This run is long: the log lists the steps in view as you scroll, each on one line; \
                       hover a step for its whole text, or choose it to read it whole in the caption." }
                }
            </p>
            <div class={classes!("log", windowed.then_some("windowed"), props.conceal.then_some("conceal"))} role="list" ref={props.node.clone()}
                data-testid="log" data-current={current}>
                if windowed {
                    <div class="log-window" role="presentation" style={format!("height:{}px", num(len as f64 * LOG_ROW))}>
                        { for buckets.map(bucket) }
                    </div>
                } else {
                    { for buckets.map(bucket) }
                }
            </div>
        </section>
    }
}
