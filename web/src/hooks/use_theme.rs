//! A colour scheme forced by the link, on the root element where the style sheet looks for it,
//! and the document's title when the view has its own.

use fencelab_core::names::Named;
use fencelab_links::Theme;
use yew::prelude::*;

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

/// Sets the document's title to `title`, or back to the page's own when it is `None`.
#[hook]
pub fn use_document_title(title: Option<String>) {
    let document = web_sys::window().and_then(|w| w.document());
    // The page's own title, as the page loaded with it.
    let own = use_memo((), {
        let document = document.clone();
        move |_| document.map(|d| d.title()).unwrap_or_default()
    });
    use_effect_with(title, move |title| {
        if let Some(document) = document {
            document.set_title(title.as_deref().unwrap_or(&own));
        }
    });
}

/// Tells the page around an embed what the embed shows (`None`: nothing to name, e.g. outside
/// an embed), each time that changes.
#[hook]
pub fn use_report_title(title: Option<String>) {
    use_effect_with(title, |title| {
        if let Some(title) = title {
            crate::io::report_title(title);
        }
    });
}
