//! The "Break the protocol" panel: the switches that apply to the story on screen, the button
//! that searches every interleaving, the search's progress with a Cancel button, and the result.
//! It renders its props and dispatches actions; the shell runs the search.

use std::rc::Rc;

use fencelab_core::memory::Bytes;
use fencelab_core::names::Named;
use fencelab_core::stories::switches::Switch;
use fencelab_core::{drive::explore::Bound, drive::explore::ExploreStats};
use yew::prelude::*;

use crate::components::controls::click;
use crate::components::icons::icon;
use crate::viz::explore::{config, explain, toggled, Counterexample, ExploreAction, Offer};
use crate::viz::explore::{Outcome, Status};
use crate::viz::state::Action;

/// What the explorer panel shows. Not a component's props: the panel is drawn by the explorer's
/// own component whenever its search moves, so a second component would only add Yew's code.
pub struct ExploreProps {
    /// The switches that change something for the story on screen.
    pub offers: Vec<Offer>,
    /// The switches the reader turned on.
    pub switches: Vec<Switch>,
    /// Where the search is.
    pub status: Status,
    /// The visualizer's actions (switches, loading and playing the counterexample).
    pub on: Callback<Action>,
    /// The panel's own actions (start, cancel).
    pub on_explore: Callback<ExploreAction>,
}

/// `n` with thousands separators, as the README prints figures.
fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn counts(stats: &ExploreStats) -> String {
    format!(
        "{} unique states, {} transitions, max depth {}",
        count(stats.unique_states),
        count(stats.transitions),
        stats.max_depth
    )
}

fn switch_view(offer: Offer, switches: &[Switch], busy: bool, on: &Callback<Action>) -> Html {
    let id = format!("switch-{}", offer.switch.name());
    let next = toggled(switches, offer.switch);
    let onchange = on.reform(move |_: Event| Action::Switches(next.clone()));
    html! {
        <li class={classes!("switch", (offer.on || offer.built_in).then_some("on"))}>
            <input type="checkbox" id={id.clone()} checked={offer.on || offer.built_in}
                disabled={offer.built_in || busy} onchange={onchange}
                aria-describedby={format!("{id}-help")} />
            <label for={id.clone()}>
                <span class="switch-label">{ offer.switch.label() }</span>
                if offer.built_in {
                    <span class="badge edited">{ "already part of this story" }</span>
                }
                <span class="switch-help" id={format!("{id}-help")}>{ explain(offer.switch) }</span>
            </label>
        </li>
    }
}

fn progress(stats: &ExploreStats, on_explore: &Callback<ExploreAction>) -> Html {
    // Explored states out of all seen so far: it reaches the end as the frontier empties.
    let done = stats.unique_states.saturating_sub(stats.frontier);
    let max = stats.unique_states.max(1);
    html! {
        <div class="explore-progress" id="explore-progress">
            <progress value={done.to_string()} max={max.to_string()} aria-label="Search progress" />
            <p class="explore-counts" role="status">
                { format!("Exploring: {}; {} waiting.", counts(stats), count(stats.frontier)) }
            </p>
            <button type="button" id="explore-cancel" class="chip"
                onclick={on_explore.reform(|_: MouseEvent| ExploreAction::Cancel)}>
                { icon("stopped") }{ "Cancel" }
            </button>
        </div>
    }
}

fn broken_view(stats: &ExploreStats, found: &Rc<Counterexample>, on: &Callback<Action>) -> Html {
    let step = found.step;
    // The player's position once the breaking step has played.
    let steps = step.number();
    let replay = {
        let on = on.clone();
        Callback::from(move |_: MouseEvent| {
            on.emit(Action::ToStart);
            on.emit(Action::TogglePlay);
        })
    };
    // The story as the library tells it, without the switches or the schedule of the search.
    let back = {
        let on = on.clone();
        let (name, variant) = (found.scenario.name.clone(), found.scenario.variant.clone());
        Callback::from(move |_: MouseEvent| {
            on.emit(Action::Pick(name.clone()));
            on.emit(Action::Variant(variant.clone()));
        })
    };
    html! {
        <div class="explore-result broken" id="explore-result" data-outcome="violation"
            data-step={step.index().to_string()} data-invariant={found.invariant.name()} role="status">
            <p class="explore-verdict">
                { icon("violation") }
                <span>
                    <strong>{ format!("Broken at step {step}: ") }</strong>
                    { found.invariant.broken() }
                </span>
            </p>
            <p class="detail">{ found.detail.clone() }</p>
            <p class="explore-counts">
                { format!("A shortest interleaving, found after {}. It is now in the diagram, at the step that broke the invariant (the red warning mark).", counts(stats)) }
            </p>
            <div class="explore-actions">
                <button type="button" id="explore-replay" class="chip" onclick={replay}>
                    { icon("play") }{ "Play it from the start" }
                </button>
                <button type="button" id="explore-jump" class="chip"
                    onclick={click(on, Action::Seek(steps))}>
                    { icon("warn") }{ "Jump to the break" }
                </button>
                <button type="button" id="explore-back" class="chip" onclick={back}>
                    { "Back to the story" }
                </button>
            </div>
        </div>
    }
}

/// A search that found nothing but did not try everything: it must not read as "safe".
fn inconclusive_view(stats: &ExploreStats, bound: Bound) -> Html {
    let limits = config();
    let stopped = "stopped the search before every interleaving was checked";
    let why = match bound {
        Bound::Depth => format!(
            "{} (runs of {} steps) cut runs short before every interleaving was checked",
            bound.describe(),
            limits.max_depth
        ),
        Bound::States => {
            format!("{} ({} states) {stopped}", bound.describe(), count(limits.max_states))
        }
        Bound::Memory => {
            format!("{} ({}) {stopped}", bound.describe(), Bytes(limits.max_memory))
        }
    };
    html! {
        <div class="explore-result inconclusive" id="explore-result" data-outcome="inconclusive"
            data-bound={bound.name()} data-states={stats.unique_states.to_string()} role="status">
            <p class="explore-verdict">
                { icon("warn") }
                <span>
                    <strong>{ "Inconclusive: " }</strong>
                    { format!("no violation in {} states, but {why}.", count(stats.unique_states)) }
                </span>
            </p>
            <p class="explore-counts">
                { format!("{}. This proves nothing about the interleavings it did not reach; ", counts(stats)) }
                <code>{ "fencelab check" }</code>
                { " on the command line can search with larger bounds." }
            </p>
        </div>
    }
}

fn result(status: &Status, on: &Callback<Action>, on_explore: &Callback<ExploreAction>) -> Html {
    match status {
        Status::Idle => Html::default(),
        Status::Running(stats) => progress(stats, on_explore),
        Status::Cancelled(stats) => html! {
            <p class="explore-result cancelled" id="explore-result" data-outcome="cancelled" role="status">
                { icon("stopped") }
                { format!("Cancelled after {}. Nothing was found so far.", counts(stats)) }
            </p>
        },
        Status::Done(Outcome::Safe(stats)) => html! {
            <p class="explore-result safe" id="explore-result" data-outcome="safe"
                data-states={stats.unique_states.to_string()} role="status">
                { icon("check") }
                <span>
                    <strong>{ "No violation within bounds: " }</strong>
                    { counts(stats) }{ "; every interleaving was tried." }
                </span>
            </p>
        },
        Status::Done(Outcome::Inconclusive(stats, bound)) => inconclusive_view(stats, *bound),
        Status::Done(Outcome::Broken(stats, found)) => broken_view(stats, found, on),
        Status::Done(Outcome::Failed(stats, message)) => html! {
            <p class="explore-result error" id="explore-result" data-outcome="error" role="alert">
                { format!("The search stopped after {}: {message}", counts(stats)) }
            </p>
        },
    }
}

/// The "break the protocol" panel: switches, the search and its outcome.
pub fn explore_panel(props: &ExploreProps) -> Html {
    let busy = matches!(props.status, Status::Running(_));
    let find = props.on_explore.reform(|_: MouseEvent| ExploreAction::Start);
    html! {
        <section class="card explore" id="explore" aria-labelledby="explore-title">
            <h2 id="explore-title">{ icon("warn") }{ "Break the protocol" }</h2>
            <p class="explore-intro">
                { "Turn a protection off, then let the explorer try every interleaving (which of two simultaneous events goes first, whether a worker pauses, whether a message is late) until an invariant breaks." }
            </p>
            if props.offers.is_empty() {
                <p class="explore-intro">{ "No switch changes anything in this story." }</p>
            } else {
                <ul class="switches">
                    { for props.offers.iter().map(|o| switch_view(*o, &props.switches, busy, &props.on)) }
                </ul>
            }
            <div class="explore-actions">
                <button type="button" id="explore-find" class="primary" disabled={busy} onclick={find}>
                    { icon("read") }{ "Find a counterexample" }
                </button>
            </div>
            { result(&props.status, &props.on, &props.on_explore) }
        </section>
    }
}
