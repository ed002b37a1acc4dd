//! The root component: owns the reducer, wires DOM events to [`Action`]s, runs the flash timer.

use gloo_timers::callback::Timeout;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::state::{Action, RegisterView};
use crate::view;

/// How long a fresh outcome stays highlighted, in milliseconds.
const FLASH_MS: u32 = 900;

/// Reads the text of the `<input>` an event came from.
fn input_text(event: &InputEvent) -> Option<String> {
    let input = event.target()?.dyn_into::<HtmlInputElement>().ok()?;
    Some(input.value())
}

#[component]
pub fn App() -> Html {
    let state = use_reducer(RegisterView::new);

    // Highlight each new outcome briefly. Dropping the Timeout (on the next attempt, or when the
    // page goes away) cancels it; the reducer ignores an end-of-flash for an older attempt anyway.
    {
        let dispatcher = state.dispatcher();
        use_effect_with(state.flashing(), move |flashing| {
            let timer = flashing.map(|seq| {
                Timeout::new(FLASH_MS, move || dispatcher.dispatch(Action::EndFlash(seq)))
            });
            move || drop(timer)
        });
    }

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
        <main class="page">
            { view::masthead() }
            <div class="grid">
                { view::register_card(&state) }
                { view::write_form(&state, on_generation, on_value, on_submit) }
            </div>
            { view::outcome(&state) }
            { view::history(&state) }
            { view::footer() }
        </main>
    }
}
