//! The address fragment and the view, kept in step both ways.

use gloo_events::EventListener;
use yew::prelude::*;

use crate::io;
use crate::viz::state::{Action, Viz};

/// Writes `fragment` (the view on screen) into the address, replacing the current history entry
/// unless `entries` grew (a change of tab, which Back and Forward move between); with `keep`, the
/// address stays as it is. A new address from outside the page (a link pasted into the address
/// bar, Back, Forward) opens its view. The page's own writes use `replaceState` or `pushState`,
/// which fire no `hashchange`.
#[hook]
pub fn use_address(
    dispatcher: UseReducerDispatcher<Viz>,
    fragment: String,
    entries: usize,
    keep: bool,
) {
    use_effect_with((), move |_| {
        let listener = web_sys::window().map(|window| {
            EventListener::new(&window, "hashchange", move |_| {
                dispatcher.dispatch(Action::Open(io::fragment()));
            })
        });
        move || drop(listener)
    });
    let written = use_mut_ref(|| entries);
    use_effect_with((fragment, keep), move |(fragment, keep)| {
        if *keep {
            return;
        }
        let new_entry = *written.borrow() != entries;
        *written.borrow_mut() = entries;
        io::write_fragment(fragment, new_entry);
    });
}
