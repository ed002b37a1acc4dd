//! The scenario picker: every built-in case, its variants and the same-generation policy.

use std::rc::Rc;

use fencelab_core::stories::library::CaseInfo;
use fencelab_core::{fence::register::SameGenerationPolicy, names::Named};
use wasm_bindgen::JsCast;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::components::controls::{click, when};

use crate::viz::state::{Action, PolicyChoice, GENERATED, GENERATED_SIZE};

/// The policy menu's value for the story's own policy.
const AS_WRITTEN: &str = "as_written";

#[derive(Properties, PartialEq)]
pub struct PickerProps {
    pub cases: Rc<Vec<CaseInfo>>,
    pub case: AttrValue,
    pub variant: AttrValue,
    pub policy: PolicyChoice,
    pub edited: bool,
    pub on: Callback<Action>,
}

fn select_value(event: &Event) -> Option<String> {
    Some(event.target()?.dyn_into::<HtmlSelectElement>().ok()?.value())
}

#[component]
pub fn Picker(props: &PickerProps) -> Html {
    let on = &props.on;
    let on_case = when(on, |e: Event| select_value(&e).map(Action::Pick));
    // The options' values are the core's policy names; the story's own choice is the one
    // value that names no policy.
    let on_policy = when(on, |e: Event| {
        select_value(&e).map(|v| {
            Action::Policy(match SameGenerationPolicy::from_name(&v) {
                Some(policy) => PolicyChoice::Force(policy),
                None => PolicyChoice::AsWritten,
            })
        })
    });
    let policy = match props.policy {
        PolicyChoice::AsWritten => AS_WRITTEN,
        PolicyChoice::Force(policy) => policy.name(),
    };
    let variants = props
        .cases
        .iter()
        .find(|c| c.name == props.case.as_str())
        .map(|c| c.variants.clone())
        .unwrap_or_default();
    let (w, r, n) = GENERATED_SIZE;
    // On a phone the fields fold behind one line, so a story opens on its diagram; wider
    // screens show them always (style.css).
    html! {
        <details class="pick">
        <summary>{ "Another story, variant or policy" }</summary>
        <div class="picker">
            <label class="field grow">
                <span class="field-label">{ "Story" }</span>
                <select id="case" onchange={on_case}>
                    { for props.cases.iter().map(|c| html! {
                        <option value={c.name.clone()} selected={c.name == props.case.as_str()}>{ c.title.clone() }</option>
                    }) }
                    <option value={GENERATED} selected={props.case == GENERATED}>
                        { format!("Generated load: {w} workers, {r} resources, {n} rounds (benchmark)") }
                    </option>
                </select>
            </label>
            if variants.len() > 1 {
                <div class="field">
                    <span class="field-label" id="variant-label">{ "Variant" }</span>
                    <div class="segmented" role="radiogroup" aria-labelledby="variant-label">
                        { for variants.iter().map(|v| {
                            let checked = !props.edited && *v == props.variant.as_str();
                            let value = v.clone();
                            html! {
                                <button type="button" role="radio" aria-checked={checked.to_string()}
                                    class={classes!("seg", checked.then_some("on"))} data-variant={v.clone()}
                                    onclick={click(on, Action::Variant(value.clone()))}>
                                    { v.clone() }
                                </button>
                            }
                        }) }
                    </div>
                </div>
            }
            <label class="field">
                <span class="field-label">{ "Same-generation policy" }</span>
                <select id="policy" onchange={on_policy}>
                    <option value={AS_WRITTEN} selected={policy == AS_WRITTEN}>{ "as the story says" }</option>
                    { for SameGenerationPolicy::VARIANTS.iter().map(|p| html! {
                        <option value={p.name()} selected={policy == p.name()}>{ policy_label(*p) }</option>
                    }) }
                </select>
            </label>
        </div>
        </details>
    }
}

/// The policy menu's words for a policy, with the comparison it makes.
fn policy_label(policy: SameGenerationPolicy) -> &'static str {
    match policy {
        SameGenerationPolicy::AllowSame => "allow same (≥)",
        SameGenerationPolicy::StrictlyNewer => "strictly newer (>)",
    }
}
