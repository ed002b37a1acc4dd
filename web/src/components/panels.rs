//! The caption and the state panels: authority, workers, stores, gateway, rejections and
//! invariants, all read from a [`Frame`].

use fencelab_core::record::StepRecord;
use yew::prelude::*;

use crate::components::icons::icon;
use crate::viz::frame::Frame;
use crate::viz::run::step_no;
use crate::viz::state::Badge;
use crate::viz::words::count;

/// The core's caption of the steps shown (the current one; in compare mode, every step of the
/// current tick), announced to screen readers as it changes. `kind` picks the glyph: the most
/// telling mark of the step, e.g. `rejected`; `what` is what plays (`story` or `history`), or
/// `decide` while the reader decides what happens. A
/// plain function rather than a component: the caption changes with every step, so a component
/// would re-render each time anyway.
pub fn caption(steps: &[StepRecord], kind: &str, id: &str, what: &str) -> Html {
    let kind = if kind.is_empty() { "plain" } else { kind };
    html! {
        <div id={id.to_string()} class={classes!("caption", kind.to_string())} data-testid="caption"
            data-kind={kind.to_string()} aria-live="polite" aria-atomic="true"
            // On a phone a long caption scrolls in its box, which keys reach by focusing it.
            tabindex="0">
            if steps.is_empty() && what == "decide" {
                // Nothing plays by itself while the reader decides: the first event is theirs.
                <p class="muted">{ "You decide: choose the first event under “What can happen next”, or inject a fault." }</p>
            } else if steps.is_empty() {
                <p class="muted">{ format!("Press play, or step forward (the → key on a keyboard), to start the {what}.") }</p>
            } else {
                { for steps.iter().map(|r| html! {
                    <p>
                        <span class="step-no mono">{ format!("#{} · t={}", count(step_no(r.index)), r.at.0) }</span>
                        { r.caption.clone() }
                    </p>
                }) }
            }
        </div>
    }
}

/// The title's badge: what runs now and, by colour, glyph and words, how it fares.
pub fn run_badge(badge: &Badge) -> Html {
    html! {
        <span class={badge.tone.class()}>
            { icon(badge.tone.glyph()) }{ badge.label.clone() }
            <span class="sr-only">{ badge.tone.says() }</span>
        </span>
    }
}

fn gen(g: Option<u64>) -> String {
    g.map_or_else(|| "none".into(), |g| g.to_string())
}

/// The state panels after a step, read from its frame. A plain function: the frame is new at
/// every step, so a component would re-render each time anyway.
///
/// The caption already announces a broken invariant at the step that breaks it (the core ends
/// that step's caption with "Broken: …"), so the invariants list announces what is added to it
/// only when `announce` is set: in an embed that shows the panels without the caption.
pub fn panels(f: &Frame, announce: bool) -> Html {
    if let Some(error) = &f.error {
        return html! { <p class="error">{ error.clone() }</p> };
    }
    let total: u64 = f.rejections.iter().map(|(_, n)| n).sum();
    html! {
        <div class="panels">
            <section class="panel" aria-label="Lease authority" data-testid="authority-panel">
                <h3>{ icon("authority") }{ "Lease authority" }</h3>
                <table class="kv">
                    <thead><tr><th>{ "resource" }</th><th>{ "holder" }</th><th>{ "gen" }</th><th>{ "valid until" }</th></tr></thead>
                    <tbody>
                        { for f.authority.iter().map(|a| html! {
                            <tr>
                                <td class="mono">{ a.resource.clone() }</td>
                                <td>{ a.holder.clone().unwrap_or_else(|| "nobody".into()) }</td>
                                <td class="mono">{ gen(a.generation) }</td>
                                <td class="mono">{ a.valid_until.map_or("–".into(), |t| format!("t={t}")) }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            </section>
            <section class="panel" aria-label="Workers" data-testid="workers-panel">
                <h3>{ icon("worker") }{ "Workers" }</h3>
                <ul class="workers">
                    { for f.workers.iter().map(|w| html! {
                        <li class={classes!("worker", w.status, w.stale().then_some("stale"))} data-worker={w.name.clone()}>
                            <span class="who">
                                { icon(if w.paused() { "frozen" } else { "worker" }) }
                                <strong>{ w.name.clone() }</strong>
                                <span class="muted">{ w.status_text.clone() }</span>
                            </span>
                            { for w.beliefs.iter().map(|b| html! {
                                <span class={classes!("belief", (!b.authority_agrees).then_some("wrong"))}>
                                    { format!("believes g{} on {} (until t={})", b.generation, b.resource, b.valid_until) }
                                    <span class="says">
                                        { icon(if b.authority_agrees { "check" } else { "cross" }) }
                                        { if b.authority_agrees {
                                            "authority agrees".to_string()
                                        } else {
                                            match &b.authority_holder {
                                                Some(h) => format!("authority says g{} → {h}", gen(b.authority_generation)),
                                                None => "authority: the lease is over".to_string(),
                                            }
                                        } }
                                    </span>
                                </span>
                            }) }
                        </li>
                    }) }
                </ul>
            </section>
            { for f.stores.iter().map(|s| html! {
                <section class="panel store" aria-label={format!("Store {}", s.name)} data-testid="store-panel" data-store={s.name.clone()}>
                    <h3>{ icon("store") }{ format!("Store {}", s.name) }</h3>
                    if s.cells.is_empty() {
                        <p class="muted">{ "nothing written yet" }</p>
                    }
                    { for s.cells.iter().map(|c| html! {
                        <div class="cell" data-resource={c.resource.clone()} data-path={c.path.clone()}>
                            <div class="cell-title">
                                <span class="mono">{ if c.path == "primary" { c.resource.clone() } else { format!("{} · {}", c.resource, c.path) } }</span>
                                <span class={classes!("badge", if c.fenced { "ok" } else { "bad" })}>{ c.enforcement }</span>
                            </div>
                            <dl class="cell-facts">
                            <div><dt>{ c.kept.label() }</dt><dd class="mono" data-testid="highest">{ c.kept.value() }</dd></div>
                            <div><dt>{ "revision" }</dt><dd class="mono">{ c.revision.clone() }</dd></div>
                            <div class="wide"><dt>{ "value" }</dt>
                                <dd class="value" data-testid="store-value">{ c.value.clone().unwrap_or_else(|| "(empty)".into()) }</dd></div>
                            if c.remembered_count > 0 {
                                <div class="wide"><dt>{ format!("remembered operations ({})", c.remembered_count) }</dt>
                                    <dd class="mono ops">
                                        { if c.remembered_count > c.remembered.len() { "…, " } else { "" } }
                                        { c.remembered.join(", ") }
                                    </dd></div>
                            }
                            </dl>
                        </div>
                    }) }
                </section>
            }) }
            if let Some(g) = &f.gateway {
                <section class="panel" aria-label="Gateway" data-testid="gateway-panel">
                    <h3>{ icon("gateway") }{ format!("Gateway → {}", g.partner) }
                        <span class={classes!("badge", if g.fenced { "ok" } else { "bad" })}>{ g.enforcement }</span></h3>
                    if g.received.is_empty() {
                        <p class="muted">{ format!("{} has received nothing yet", g.partner) }</p>
                    } else {
                        <ol class="received">
                            { for g.received.iter().map(|(gen, effect, at)| html! {
                                <li>{ icon("delivered") }<span class="mono">{ format!("t={at} g{gen}") }</span>{ format!(" {effect}") }</li>
                            }) }
                        </ol>
                    }
                </section>
            }
            <section class="panel" aria-label="Rejections" data-testid="rejections-panel">
                <h3>{ icon("rejected") }{ "Rejections" }<span class="count">{ total }</span></h3>
                if f.rejections.is_empty() {
                    <p class="muted">{ "none so far" }</p>
                } else {
                    <ul class="counts">
                        { for f.rejections.iter().map(|(reason, n)| html! {
                            <li><span>{ reason.clone() }</span><span class="mono">{ *n }</span></li>
                        }) }
                    </ul>
                }
            </section>
            <section class={classes!("panel", (!f.violations.is_empty()).then_some("alarm"))} aria-label="Invariants"
                data-testid="violations-panel">
                <h3>{ icon(if f.violations.is_empty() { "check" } else { "warn" }) }{ "Invariants" }</h3>
                // The live region stays in place while its content changes, or nothing would
                // be announced.
                <div aria-live={announce.then_some("polite")} aria-relevant={announce.then_some("additions")}>
                    if f.violations.is_empty() {
                        // Once the run has ended nothing more can break: then they all hold.
                        <p class="ok-text">{ if f.finished { "all hold" } else { "all hold so far" } }</p>
                    } else {
                        <ul class="violations">
                            { for f.violations.iter().map(|v| html! {
                                <li><strong>{ v.invariant.replace('_', " ") }</strong>
                                    <span class="muted">{ format!(" at step {}: {}", count(v.step.number()), v.detail) }</span></li>
                            }) }
                        </ul>
                    }
                </div>
            </section>
        </div>
    }
}
