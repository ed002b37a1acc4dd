//! The quiz's and the course's effects: what the reader has done kept in local storage, and the
//! focus moved to a question when it opens and to "Continue" when it is answered.

use std::rc::Rc;

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
    use_effect_with((state.learn.progress.clone(), focus), move |(progress, focus)| {
        if last.replace(Some(progress.clone())).as_ref() != Some(progress) {
            io::save(PROGRESS_KEY, &progress.to_text());
        }
        let element =
            focus.and_then(|(id, _)| web_sys::window()?.document()?.get_element_by_id(id));
        if let Some(element) = element.and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok()) {
            let _ = element.focus();
        }
    });
}
