//! The register playground's shell: its reducer, the flash of a fresh outcome and the focus on a
//! field to fix. Everything it renders comes from `components/register.rs`.

use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::components::register as view;
use crate::hooks::{use_flash, use_focus_on_error};
use crate::playground::{Action, RegisterView};

/// Reads the text of the `<input>` an event came from.
fn input_text(event: &InputEvent) -> Option<String> {
    let input = event.target()?.dyn_into::<HtmlInputElement>().ok()?;
    Some(input.value())
}

/// The single-register playground, with its own reducer and flash timer.
#[component]
pub fn Playground() -> Html {
    let state = use_reducer(RegisterView::new);

    use_flash(state.dispatcher(), state.flashing());
    let field = use_node_ref();
    use_focus_on_error(field.clone(), state.input_errors());

    let on_generation = {
        let dispatcher = state.dispatcher();
        Callback::from(move |event: InputEvent| {
            if let Some(text) = input_text(&event) {
                dispatcher.dispatch(Action::SetGeneration(text));
            }
        })
    };
    let on_value = {
        let dispatcher = state.dispatcher();
        Callback::from(move |event: InputEvent| {
            if let Some(text) = input_text(&event) {
                dispatcher.dispatch(Action::SetValue(text));
            }
        })
    };
    let on_submit = {
        let dispatcher = state.dispatcher();
        Callback::from(move |event: SubmitEvent| {
            event.prevent_default();
            dispatcher.dispatch(Action::Write);
        })
    };

    html! {
        <div class="playground">
            { view::masthead() }
            <div class="grid">
                { view::register_card(&state) }
                { view::write_form(&state, &field, on_generation, on_value, on_submit) }
            </div>
            { view::outcome(&state) }
            { view::history(&state) }
        </div>
    }
}
