//! Compare mode: the same scenario and schedule under two enforcement modes, side by side and in
//! lockstep by logical time, with the final states next to each other.

use fencelab_core::format::model::Enforcement;
use yew::prelude::*;

use crate::components::controls::{event_number, when};
use crate::components::diagram::{diagram_view, DiagramProps};
use crate::components::icons::icon;
use crate::components::panels::caption;
use crate::viz::frame::{enforcement_name, Frame, Kept};
use crate::viz::state::{Action, Compare, CompareSide, Side, MODES};
use crate::viz::window::{View, MARGIN};

/// About how tall a compared diagram's box is.
const COMPARE_HEIGHT: f64 = 700.0;

/// What compare mode shows. Not a component's props: the compared runs move with every tick, so a
/// component would re-render each time anyway.
pub struct CompareProps<'a> {
    pub compare: &'a Compare,
    pub on: Callback<Action>,
    pub on_seek: Callback<usize>,
    /// The two diagrams' scrolling boxes, so the shell can keep the current time in view.
    pub nodes: (NodeRef, NodeRef),
}

fn side_view(
    side: &CompareSide,
    which: Side,
    on: &Callback<Action>,
    on_seek: &Callback<usize>,
    node: &NodeRef,
) -> Html {
    let (name, id) = match which {
        Side::Left => ("left", "cmp-left"),
        Side::Right => ("right", "cmp-right"),
    };
    let on_mode = when(on, move |e: Event| {
        event_number(&e).and_then(|i| MODES.get(i)).map(|m| Action::CompareMode(which, *m))
    });
    let body = match &side.run {
        Ok(run) => {
            let steps = side.steps_now();
            let kind = steps
                .last()
                .and_then(|r| run.layout.step_kinds.get(r.index))
                .copied()
                .unwrap_or("");
            html! {
                <>
                    { caption(steps, kind, &format!("{id}-caption"), "story") }
                    { diagram_view(&DiagramProps { run: &run.track, position: side.position, frame: &side.frame,
                        id: id.into(), on_seek: on_seek.clone(), node: node.clone(), width: 0.0,
                        highlight: Default::default(),
                        // Kept on the current time as it moves (`use_follow_step`).
                        band: View::centred(run.layout.now_y(side.position), COMPARE_HEIGHT).band(MARGIN),
                        decide: None }) }
                </>
            }
        }
        Err(e) => html! { <p class="error">{ e.clone() }</p> },
    };
    html! {
        <section class={classes!("card", "side", name, if side.mode.is_fenced() { "fenced" } else { "unfenced" })}
            data-testid={format!("compare-{name}")} aria-label={format!("{} side: {}", name, enforcement_name(side.mode))}>
            <div class="side-head">
                <label class="field">
                    <span class="field-label">{ format!("{} side enforcement", if which == Side::Left { "Left" } else { "Right" }) }</span>
                    <select id={format!("{id}-mode")} onchange={on_mode}>
                        { for MODES.iter().enumerate().map(|(i, m)| html! {
                            <option value={i.to_string()} selected={*m == side.mode}>{ enforcement_name(*m) }</option>
                        }) }
                    </select>
                </label>
            </div>
            { body }
        </section>
    }
}

fn values(frame: &Frame) -> Vec<(String, Option<String>, Kept)> {
    frame
        .cells()
        .map(|(store, c)| {
            let place = if c.path == "primary" {
                format!("{} in {store}", c.resource)
            } else {
                format!("{} in {store}/{}", c.resource, c.path)
            };
            (place, c.value.clone(), c.kept)
        })
        .collect()
}

fn final_cell(frame: &Frame, place: &str, mode: Enforcement, testid: &str) -> Html {
    let cell = values(frame).into_iter().find(|(p, _, _)| p == place);
    let broken = !frame.violations.is_empty();
    match cell {
        Some((_, value, kept)) => html! {
            <td data-testid={testid.to_string()} data-mode={enforcement_name(mode)}
                class={classes!(broken.then_some("bad"), (!broken).then_some("ok"))}>
                <span class="value">{ value.unwrap_or_else(|| "(empty)".into()) }</span>
                <span class="muted mono" data-testid="kept">{ format!(" {}", kept.short()) }</span>
            </td>
        },
        None => html! { <td class="muted">{ "–" }</td> },
    }
}

fn verdict(frame: &Frame) -> Html {
    if frame.violations.is_empty() {
        html! { <span class="verdict-ok">{ icon("check") }{ "no invariant broken" }</span> }
    } else {
        // Each broken invariant once, in the order the run broke them.
        let mut names: Vec<String> = Vec::new();
        for v in &frame.violations {
            let name = v.invariant.replace('_', " ");
            if !names.contains(&name) {
                names.push(name);
            }
        }
        html! {
            <span class="verdict-bad">{ icon("warn") }
                { format!("{} broken: {}", names.len(), names.join(", ")) }</span>
        }
    }
}

/// Both sides in lockstep and their final states side by side.
pub fn compare_view(props: &CompareProps) -> Html {
    let c = props.compare;
    let (left, right) = (&c.left.last, &c.right.last);
    let places: Vec<String> = {
        let mut seen = Vec::new();
        for (p, _, _) in values(left).into_iter().chain(values(right)) {
            if !seen.contains(&p) {
                seen.push(p);
            }
        }
        seen
    };
    let rejections = |f: &Frame| f.rejections.iter().map(|(_, n)| n).sum::<u64>();
    html! {
        <div class="compare" data-testid="compare">
            <div class="compare-grid">
                { side_view(&c.left, Side::Left, &props.on, &props.on_seek, &props.nodes.0) }
                { side_view(&c.right, Side::Right, &props.on, &props.on_seek, &props.nodes.1) }
            </div>
            <section class="card final" aria-labelledby="final-title" data-testid="final-states">
                <h2 id="final-title">{ icon("compare") }{ "Final states" }</h2>
                <div class="table-scroll">
                    <table class="final-table">
                        <thead>
                            <tr>
                                <th scope="col">{ "" }</th>
                                <th scope="col">{ enforcement_name(c.left.mode) }</th>
                                <th scope="col">{ enforcement_name(c.right.mode) }</th>
                            </tr>
                        </thead>
                        <tbody>
                            { for places.iter().map(|p| html! {
                                <tr>
                                    <th scope="row" class="mono">{ p.clone() }</th>
                                    { final_cell(left, p, c.left.mode, "final-left") }
                                    { final_cell(right, p, c.right.mode, "final-right") }
                                </tr>
                            }) }
                            <tr>
                                <th scope="row">{ "rejections" }</th>
                                <td class="mono">{ rejections(left) }</td>
                                <td class="mono">{ rejections(right) }</td>
                            </tr>
                            <tr>
                                <th scope="row">{ "invariants" }</th>
                                <td data-testid="verdict-left">{ verdict(left) }</td>
                                <td data-testid="verdict-right">{ verdict(right) }</td>
                            </tr>
                        </tbody>
                    </table>
                </div>
            </section>
        </div>
    }
}
