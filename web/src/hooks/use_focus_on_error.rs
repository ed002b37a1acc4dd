//! The focus goes to a field the reader has to fix.

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
