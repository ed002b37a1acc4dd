//! Keys: Space play/pause, Left/Right step, Home/End jump.

use gloo_events::{EventListener, EventListenerOptions};
use wasm_bindgen::JsCast;
use web_sys::{Element, KeyboardEvent};
use yew::prelude::*;

use crate::viz::state::{Action, Tab, Viz};

/// Maps a key press to an action, unless it belongs to a text field or a focused control.
fn key_action(event: &KeyboardEvent) -> Option<Action> {
    if event.ctrl_key() || event.meta_key() || event.alt_key() {
        return None;
    }
    let tag = event
        .target()
        .and_then(|t| t.dyn_into::<Element>().ok())
        .map(|e| e.tag_name().to_ascii_lowercase())
        .unwrap_or_default();
    if matches!(tag.as_str(), "input" | "textarea" | "select") {
        return None;
    }
    match event.key().as_str() {
        // A focused button already answers Space with a click.
        " " if tag == "button" => None,
        " " | "Spacebar" => Some(Action::TogglePlay),
        "ArrowLeft" => Some(Action::Back),
        "ArrowRight" => Some(Action::Forward),
        "Home" => Some(Action::ToStart),
        "End" => Some(Action::ToEnd),
        _ => None,
    }
}

/// Dispatches the keys' actions while `tab` is the visualizer. One listener for the page's life:
/// it reads the tab from a cell each render updates, so changing tabs adds no listener.
#[hook]
pub fn use_keys(dispatcher: UseReducerDispatcher<Viz>, tab: Tab) {
    let current = use_mut_ref(|| tab);
    *current.borrow_mut() = tab;
    use_effect_with((), move |_| {
        let document = web_sys::window().and_then(|w| w.document());
        let listener = document.map(|document| {
            // Not passive: a handled key must not also scroll the page.
            let options = EventListenerOptions::enable_prevent_default();
            EventListener::new_with_options(&document, "keydown", options, move |event| {
                let Some(event) = event.dyn_ref::<KeyboardEvent>() else {
                    return;
                };
                if *current.borrow() != Tab::Visualizer {
                    return;
                }
                if let Some(action) = key_action(event) {
                    event.prevent_default();
                    dispatcher.dispatch(action);
                }
            })
        });
        move || drop(listener)
    });
}
