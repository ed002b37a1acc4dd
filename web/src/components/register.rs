//! The register playground's markup: each function turns (part of) the playground's
//! view state into markup and nothing else.

use yew::prelude::*;

use crate::playground::{Attempt, Outcome, RegisterView};

pub fn masthead() -> Html {
    html! {
        <header class="masthead">
            <p class="eyebrow">{ "Register playground" }</p>
            <h1 class="playground-title">{ "One fenced register" }</h1>
            <p class="lede">
                { "Every write carries a fencing token: the generation of the lease its writer was \
                   granted. The register remembers the highest generation it has accepted and \
                   refuses anything older, so a writer that stalled, lost its lease and woke up \
                   later cannot overwrite newer work." }
            </p>
            <p class="try">
                { "Try it: write with generation " }<kbd>{ "8" }</kbd>
                { ", then with " }<kbd>{ "7" }</kbd>{ "." }
            </p>
        </header>
    }
}

pub fn register_card(state: &RegisterView) -> Html {
    let highest = match state.highest() {
        Some(generation) => html! {
            <dd id="highest" data-testid="highest" class="mono">{ generation.to_string() }</dd>
        },
        None => html! {
            <dd id="highest" data-testid="highest" class="mono none">{ "none" }</dd>
        },
    };
    let value = match state.current_value() {
        Some(value) => html! {
            <dd id="current-value" data-testid="current-value" class="value">{ value.to_string() }</dd>
        },
        None => html! {
            <dd id="current-value" data-testid="current-value" class="none">{ "nothing written yet" }</dd>
        },
    };
    html! {
        <section class="card register" aria-labelledby="register-title">
            <h2 id="register-title">{ "Resource " }<code>{ state.resource().to_string() }</code></h2>
            <dl class="facts">
                <div class="fact">
                    <dt>{ "Highest accepted generation" }</dt>
                    { highest }
                </div>
                <div class="fact">
                    <dt>{ "Value" }</dt>
                    { value }
                </div>
                <div class="fact">
                    <dt>{ "Revision" }</dt>
                    <dd id="revision" data-testid="revision" class="mono">{ state.revision() }</dd>
                </div>
            </dl>
        </section>
    }
}

/// The write form. `field` is the generation field, which the shell focuses when a press of
/// Write finds no token in it.
pub fn write_form(
    state: &RegisterView,
    field: &NodeRef,
    on_generation: Callback<InputEvent>,
    on_value: Callback<InputEvent>,
    on_submit: Callback<SubmitEvent>,
) -> Html {
    let error = state.generation_error();
    html! {
        <form class="card write" aria-labelledby="write-title" onsubmit={on_submit}>
            <h2 id="write-title">{ "Write" }</h2>
            <label for="generation">{ "Generation (fencing token)" }</label>
            <input
                id="generation"
                data-testid="generation"
                ref={field.clone()}
                type="text"
                inputmode="numeric"
                autocomplete="off"
                spellcheck="false"
                placeholder="e.g. 8"
                aria-invalid={error.is_some().then_some("true")}
                aria-describedby={error.is_some().then_some("generation-error")}
                value={state.generation_input().to_string()}
                oninput={on_generation}
            />
            if let Some(error) = error {
                <p id="generation-error" class="field-error" data-testid="generation-error" role="alert">
                    { error.to_string() }
                </p>
            }
            <label for="value">{ "Value" }</label>
            <input
                id="value"
                data-testid="value"
                type="text"
                autocomplete="off"
                placeholder="what to store"
                value={state.value_input().to_string()}
                oninput={on_value}
            />
            <button id="write" data-testid="write" type="submit">{ "Write" }</button>
            <p class="hint">
                { "Policy: the current owner may write again with the highest generation; \
                   anything lower is a stale owner and is fenced off." }
            </p>
        </form>
    }
}

pub fn outcome(state: &RegisterView) -> Html {
    let Some(last) = state.last() else {
        return html! {
            <section id="outcome" data-testid="outcome" data-kind="none" class="card outcome"
                role="status" aria-live="polite">
                <h2>{ "Last write" }</h2>
                <p class="verdict muted">{ "No write yet." }</p>
            </section>
        };
    };
    let flash = (state.flashing() == Some(last.seq)).then_some("flash");
    let kind = last.outcome.kind();
    let verdict = match &last.outcome {
        Outcome::Applied { generation, revision } => html! {
            <p class="verdict">
                <span class="badge">{ "Applied" }</span>
                <span class="detail">
                    { format!("generation {generation} accepted; the register moved to {revision}.") }
                </span>
            </p>
        },
        Outcome::Rejected { reason } => html! {
            <p class="verdict">
                <span class="badge">{ "Rejected" }</span>
                <span class="detail reason">{ reason.clone() }</span>
            </p>
        },
    };
    html! {
        <section id="outcome" data-testid="outcome" data-kind={kind}
            class={classes!("card", "outcome", kind, flash)} role="status" aria-live="polite">
            <h2>{ format!("Last write (attempt {})", last.seq) }</h2>
            { verdict }
        </section>
    }
}

fn attempt_item(attempt: &Attempt) -> Html {
    let kind = attempt.outcome.kind();
    let generation = if attempt.generation.trim().is_empty() {
        "(empty)".to_string()
    } else {
        attempt.generation.clone()
    };
    let detail = match &attempt.outcome {
        Outcome::Applied { revision, .. } => format!("now at {revision}"),
        Outcome::Rejected { reason } => reason.clone(),
    };
    html! {
        <li key={attempt.seq} class={classes!("attempt", kind)} data-testid="attempt" data-kind={kind}>
            <span class="seq mono">{ format!("#{}", attempt.seq) }</span>
            <span class="badge">{ kind }</span>
            <span class="what">
                <span class="mono">{ format!("gen {generation}") }</span>
                <span class="value">{ attempt.value.clone() }</span>
            </span>
            <span class="detail">{ detail }</span>
        </li>
    }
}

pub fn history(state: &RegisterView) -> Html {
    let body = if state.history().len() == 0 {
        html! { <p class="muted">{ "Attempts show up here, newest first." }</p> }
    } else {
        html! {
            <ol id="history" data-testid="history" class="attempts">
                { for state.history().map(attempt_item) }
            </ol>
        }
    };
    html! {
        <section class="card history" aria-labelledby="history-title">
            <h2 id="history-title">
                { "Attempts" }
                <span class="count" data-testid="attempt-count">{ state.attempts() }</span>
            </h2>
            { body }
        </section>
    }
}
