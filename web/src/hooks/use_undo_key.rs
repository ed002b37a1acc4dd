//! Ctrl+Z (Cmd+Z on a Mac) undoes the last decided step in "You decide" mode.

use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use web_sys::{Element, KeyboardEvent};
use yew::prelude::*;

use crate::viz::state::{Action, DecideAction, Viz};

/// Whether a key press is an undo the page should take: not one for a text field's own undo.
fn is_undo(event: &KeyboardEvent) -> bool {
    let in_field = event.target().and_then(|t| t.dyn_into::<Element>().ok()).is_some_and(|e| {
        matches!(e.tag_name().to_ascii_lowercase().as_str(), "input" | "textarea")
    });
    (event.ctrl_key() || event.meta_key())
        && !event.shift_key()
        && !event.alt_key()
        && event.key().eq_ignore_ascii_case("z")
        && !in_field
}

/// Listens for undo while `on`; the listener goes away when the mode is left.
#[hook]
pub fn use_undo_key(dispatcher: UseReducerDispatcher<Viz>, on: bool) {
    use_effect_with(on, move |on| {
        let document = web_sys::window().and_then(|w| w.document()).filter(|_| *on);
        let listener = document.map(|document| {
            let options = EventListenerOptions::enable_prevent_default();
            EventListener::new_with_options(&document, "keydown", options, move |event| {
                if let Some(event) = event.dyn_ref::<KeyboardEvent>().filter(|e| is_undo(e)) {
                    event.prevent_default();
                    dispatcher.dispatch(Action::InDecide(DecideAction::Undo));
                }
            })
        });
        move || drop(listener)
    });
}
