//! The scenario editor: the current scenario as JSON. A valid edit replays at once; an invalid
//! one shows the core's error with its field path, and the last valid scenario stays on screen.

use std::rc::Rc;

use fencelab_core::format::error::ScenarioError;
use wasm_bindgen::JsCast;
use web_sys::HtmlTextAreaElement;
use yew::prelude::*;

use crate::components::controls::{click, when};
use crate::components::icons::icon;
use crate::viz::state::Action;

#[derive(Properties, PartialEq)]
pub struct EditorProps {
    pub text: Rc<String>,
    pub error: Option<ScenarioError>,
    pub edited: bool,
    pub on: Callback<Action>,
}

#[component]
pub fn Editor(props: &EditorProps) -> Html {
    let on_input = when(&props.on, |e: InputEvent| {
        let area = e.target()?.dyn_into::<HtmlTextAreaElement>().ok()?;
        Some(Action::Edit(area.value()))
    });
    let status = match &props.error {
        Some(error) => html! {
            <div class="edit-error" role="alert" data-testid="editor-error">
                { icon("cross") }
                <div>
                    <code class="path" data-testid="error-path">{ error.path.clone() }</code>
                    <span>{ format!(": {}", error.problem) }</span>
                    <p class="muted">{ "The diagram still shows the last valid scenario." }</p>
                </div>
            </div>
        },
        None => html! {
            <p class="edit-ok" data-testid="editor-ok">{ icon("check") }
                { if props.edited { "Valid: the diagram shows your edit." } else { "Valid. Edit anything; the run replays as you type." } }
            </p>
        },
    };
    html! {
        <section class="card editor" aria-labelledby="editor-title">
            <h2 id="editor-title">{ icon("edit") }{ "Scenario JSON" }</h2>
            { status }
            <textarea id="scenario-json" aria-label="Scenario JSON" spellcheck="false" autocomplete="off"
                aria-invalid={props.error.is_some().to_string()}
                value={props.text.to_string()} oninput={on_input} />
            <div class="editor-actions">
                <button type="button" class="secondary" onclick={click(&props.on, Action::RevertEdit)}>
                    { "Reset to the scenario on screen" }
                </button>
            </div>
        </section>
    }
}
