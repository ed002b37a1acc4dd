//! A colour scheme forced by the link, on the root element where the style sheet looks for it.

use yew::prelude::*;

use crate::share::Theme;

/// Sets `data-theme` on `<html>` to the forced theme, or removes it to follow the reader's
/// setting.
#[hook]
pub fn use_theme(theme: Option<Theme>) {
    use_effect_with(theme, |theme| {
        let root = web_sys::window().and_then(|w| w.document()).and_then(|d| d.document_element());
        if let Some(root) = root {
            let _ = match theme {
                Some(theme) => root.set_attribute("data-theme", theme.name()),
                None => root.remove_attribute("data-theme"),
            };
        }
    });
}
