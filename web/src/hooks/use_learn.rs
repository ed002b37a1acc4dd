//! The quiz's and the course's effects: what the reader has done kept in local storage, and the
//! focus moved to a question when it opens and to "Continue" when it is answered.

use std::rc::Rc;

use gloo_timers::callback::Timeout;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::io;
use crate::viz::state::{Progress, Shown, Viz, PROGRESS_KEY};

/// What was remembered in this browser (nothing when storage is unavailable).
pub fn remembered() -> Rc<Progress> {
    Rc::new(io::load(PROGRESS_KEY).map(|text| Progress::from_text(&text)).unwrap_or_default())
}

/// Saves the progress whenever it changes (storage that is full or unavailable keeps nothing,
/// and the quiz works on), and focuses the question or the feedback as it appears.
#[hook]
pub fn use_learn(state: &Viz) {
    // Each question takes the focus as it opens (two can wait at one step); once answered,
    // "Continue" takes it, so Enter goes on, and the status region says the verdict.
    let focus = match state.shown() {
        Some(Shown::Asking(_)) => state.learn.asking.map(|i| ("quiz-question", i)),
        Some(Shown::Answered(answered)) => Some(("quiz-continue", answered[0].0.step.index())),
        None => None,
    };
    // One effect for both keeps the page's code small; each runs only when its part changed.
    let last = use_mut_ref(|| None);
    let left = use_mut_ref(|| None);
    use_effect_with((state.learn.progress.clone(), focus), move |(progress, focus)| {
        if last.replace(Some(progress.clone())).as_ref() != Some(progress) {
            io::save(PROGRESS_KEY, &progress.to_text());
        }
        // When the card goes, its focus goes to the play button rather than to the page.
        let gone = left.replace(*focus).is_some() && focus.is_none();
        let id = match focus {
            Some((id, _)) => id,
            None if gone && lost() => "play",
            None => return,
        };
        if let Some(element) = element(id) {
            let _ = element.focus();
        }
        if let Some(("quiz-continue", step)) = *focus {
            // After this render's other effects, which scroll the diagram to the step too.
            Timeout::new(0, move || show_answer(step)).forget();
        }
    });
}

/// Shows the step that answered a question, once the answer is on screen: the card pushes the
/// diagram down, so the page moves until the step's last mark shows (the player, and the card
/// with "Continue" in it, scroll with the page while the card shows).
fn show_answer(step: usize) {
    let selector = format!("#diagram-main .mark[data-step=\"{step}\"]");
    let document = web_sys::window().and_then(|w| w.document());
    let marks = document.and_then(|d| d.query_selector_all(&selector).ok());
    let last = marks.and_then(|m| m.item(m.length().checked_sub(1)?));
    if let Some(mark) = last.and_then(|m| m.dyn_into::<web_sys::Element>().ok()) {
        let options = web_sys::ScrollIntoViewOptions::new();
        options.set_block(web_sys::ScrollLogicalPosition::Nearest);
        mark.scroll_into_view_with_scroll_into_view_options(&options);
    }
}

/// The element with `id`, if the page has it.
fn element(id: &str) -> Option<web_sys::HtmlElement> {
    web_sys::window()?.document()?.get_element_by_id(id)?.dyn_into().ok()
}

/// Whether the focus fell to the page (its element went away).
fn lost() -> bool {
    let document = web_sys::window().and_then(|w| w.document());
    let active = document.as_ref().and_then(|d| d.active_element());
    active.is_none() || active == document.and_then(|d| d.body()).map(Into::into)
}
