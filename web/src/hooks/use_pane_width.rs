//! The width of the diagram's pane, the sticky player's height for what sticks below it, and an
//! embed's height for the page around it.

use std::cell::Cell;

use web_sys::Element;
use yew::prelude::*;

use crate::io;

/// The width of the element `pane` points at, measured whenever the page changes size (the body
/// is watched, not the pane, which comes and goes with compare mode and the tabs); 0 until then.
/// The player's height goes to the `--player-h` style property, so the panels that stick beside
/// the diagram stick below the player however many lines its caption takes.
/// An `embedded` page also tells the page around it its height, so that page can fit the iframe.
#[hook]
pub fn use_pane_width(pane: NodeRef, embedded: bool) -> f64 {
    let width = use_state_eq(|| 0.0_f64);
    let setter = width.setter();
    use_effect_with(embedded, move |embedded| {
        let (embedded, reported) = (*embedded, Cell::new(0));
        let watch = io::watch_size(move |height| {
            if let Some(pane) = pane.cast::<Element>() {
                setter.set(f64::from(pane.client_width()));
            }
            io::note_player_height();
            if embedded && reported.replace(height) != height {
                io::report_height(height);
            }
        });
        move || drop(watch)
    });
    *width
}
