//! Where recorded histories come from besides the file chooser: a `history=` link, fetched, and
//! files dropped on the page.

use std::rc::Rc;

use yew::prelude::*;

use crate::io;
use crate::viz::history::Origin;
use crate::viz::state::{Action, Viz};

/// Fetches the history a link names whenever the reducer asks for one (`address`), and hands
/// the reducer its text or what went wrong. The reducer drops an answer it no longer waits for.
#[hook]
pub fn use_fetch_history(dispatcher: UseReducerDispatcher<Viz>, address: Option<String>) {
    use_effect_with(address, move |address| {
        if let Some(address) = address.clone() {
            wasm_bindgen_futures::spawn_local(async move {
                let action = match io::fetch_text(&address).await {
                    Ok(text) => {
                        Action::OpenHistory(address.clone(), Rc::new(text), Origin::Link(address))
                    }
                    Err(problem) => Action::HistoryFailed(address, problem),
                };
                dispatcher.dispatch(action);
            });
        }
    });
}

/// Opens a file dropped anywhere on the page as a history, while `on` (the full page's
/// visualizer; an embed takes no drops).
#[hook]
pub fn use_drop_history(dispatcher: UseReducerDispatcher<Viz>, on: bool) {
    use_effect_with(on, move |on| {
        let listeners = on
            .then(|| {
                let opening = dispatcher.clone();
                io::watch_drops(
                    move |name, bytes| opening.dispatch(Action::Opening(name, bytes)),
                    move |name, text| {
                        dispatcher.dispatch(Action::OpenHistory(name, Rc::new(text), Origin::File));
                    },
                )
            })
            .flatten();
        move || drop(listeners)
    });
}
