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

/// Opens a new view as a new page would, each time `moves` grows past zero: the page at its top
/// and the focus on the view's title (`#story-title`, which can take it). After a history opens
/// from a file, the reader goes back to the stories or follows a link to the next story, the
/// control pressed is gone and the focus would fall to the page's body, wherever it was scrolled.
#[hook]
pub fn use_focus_title(moves: usize) {
    use_effect_with(moves, |moves| {
        let Some(window) = web_sys::window().filter(|_| *moves > 0) else { return };
        let title = window
            .document()
            .and_then(|d| d.get_element_by_id("story-title"))
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
        if let Some(title) = title {
            window.scroll_to_with_x_and_y(0.0, 0.0);
            let _ = title.focus();
        }
    });
}
