//! The focus goes where the reader needs it: to a field to fix, or to the title of a new view.

use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Focuses `field` each time `errors` (a count of input errors) grows past zero: a press of Write
/// that found no token puts the focus on the field to fix.
#[hook]
pub fn use_focus_on_error(field: NodeRef, errors: u64) {
    use_effect_with(errors, move |errors| {
        if *errors > 0 {
            if let Some(input) = field.cast::<HtmlInputElement>() {
                let _ = input.focus();
            }
        }
    });
}

/// Moves the focus to the view's title (`#story-title`, which can take it) each time `moves`
/// grows past zero: after a history opens from a file, or the reader goes back to the stories,
/// the control pressed is gone and the focus would fall to the page's body.
#[hook]
pub fn use_focus_title(moves: usize) {
    use_effect_with(moves, |moves| {
        let title = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id("story-title"))
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
        if let (true, Some(title)) = (*moves > 0, title) {
            let _ = title.focus();
        }
    });
}
