//! Keys: Space play/pause, Left/Right step, Shift+Left/Right and Page Up/Down jump a tenth of
//! the run, Home/End go to either end.

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
    let target = event.target().and_then(|t| t.dyn_into::<Element>().ok());
    let tag = target.as_ref().map(|e| e.tag_name().to_ascii_lowercase()).unwrap_or_default();
    if matches!(tag.as_str(), "input" | "textarea" | "select" | "summary") {
        return None;
    }
    // A log row's own action, going to its step, is where a reader who clicked it already is:
    // Space there plays or pauses, as everywhere outside a control (Enter still goes to it).
    let within = |selector: &str| {
        target.as_ref().is_some_and(|t| t.closest(selector).ok().flatten().is_some())
    };
    let log_row = within(".log .entry");
    // The diagram's and the log's boxes scroll with Page Up/Down, as a reader expects there.
    let scroller = within(".diagram, .log");
    let shift = event.shift_key();
    match event.key().as_str() {
        // Any other focused button answers Space with its own click, as buttons do.
        " " if tag == "button" && !log_row => None,
        " " | "Spacebar" => Some(Action::TogglePlay),
        "ArrowLeft" if shift => Some(Action::Jump(false)),
        "ArrowRight" if shift => Some(Action::Jump(true)),
        "PageUp" if !scroller => Some(Action::Jump(false)),
        "PageDown" if !scroller => Some(Action::Jump(true)),
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
