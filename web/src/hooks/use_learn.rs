//! The quiz's and the course's effects: what the reader has done kept in local storage, and the
//! focus moved to a question when it opens and to "Continue" when it is answered.

use std::rc::Rc;

use gloo_timers::callback::Timeout;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::use_follow_step::{scroll_page, show_row, viewport};
use crate::io;
use crate::viz::state::{Progress, Shown, Viz, PROGRESS_KEY};
use crate::viz::window::keep_in_view;

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
        // When the card goes, its focus goes to the play button rather than to the page, and
        // the player sticks to the window's top again: the answering step stays in sight below.
        let was = left.replace(*focus);
        let gone = was.is_some() && focus.is_none();
        if let (true, Some((_, step))) = (gone, was) {
            Timeout::new(0, move || show_marks(step)).forget();
        }
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

/// The marks the diagram drew for `step` (from 0), first to last.
fn marks(step: usize) -> Option<(web_sys::DomRect, web_sys::DomRect)> {
    let document = web_sys::window()?.document()?;
    let selector = format!("#diagram-main .mark[data-step=\"{step}\"]");
    let marks = document.query_selector_all(&selector).ok()?;
    let rect = |i: u32| marks.item(i)?.dyn_into::<web_sys::Element>().ok();
    let (first, last) = (rect(0)?, rect(marks.length().checked_sub(1)?)?);
    Some((first.get_bounding_client_rect(), last.get_bounding_client_rect()))
}

/// Room kept around what the page brings into view.
const PAD: f64 = 8.0;

/// Brings `step`'s marks on screen below the sticky player, as stepping does.
fn show_marks(step: usize) {
    let Some((first, last)) = marks(step) else { return };
    let half = (last.bottom() - first.top()) / 2.0;
    show_row(first.top() + half, half + PAD);
}

/// Shows the step that answered a question, once the answer is on screen: the card pushes the
/// diagram down, so the page moves until the step's last mark shows with the caption that
/// explains it, or the caption alone where both do not fit (the player, and the card with
/// "Continue" in it, scroll with the page while the card shows).
fn show_answer(step: usize) {
    let Some(window) = web_sys::window() else { return };
    let caption = window.document().and_then(|d| d.get_element_by_id("caption"));
    let (Some(caption), Some((_, last))) = (caption, marks(step)) else { return };
    let top = caption.get_bounding_client_rect().top() - PAD;
    scroll_page(&window, keep_in_view(top, last.bottom() + PAD, viewport(&window)));
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
