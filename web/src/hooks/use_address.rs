//! The address fragment and the view, kept in step both ways.

use gloo_events::EventListener;
use gloo_timers::callback::Timeout;
use yew::prelude::*;

use crate::io;
use crate::viz::state::{Action, Viz};

/// The least time between two writes of the address, in milliseconds. Each write is a round
/// trip to the browser, which also ignores writes beyond a couple of hundred in ten seconds, so
/// a held arrow key or fast autoplay must not write one per step; the last view is always
/// written.
const WRITE_EVERY_MS: f64 = 250.0;

/// Writes `fragment` (the view on screen) into the address, replacing the current history entry
/// unless `entries` grew (a change of tab, which Back and Forward move between); with `keep`, the
/// address stays as it is. Replacing writes come at most every [`WRITE_EVERY_MS`]: one that
/// comes sooner waits, and a newer view takes its place. A new address from outside the page (a
/// link pasted into the address bar, Back, Forward) opens its view and drops the write still
/// waiting: that write holds the view before, and Yew may run the timer before the effect that
/// would replace it. The page's own writes use `replaceState` or `pushState`, which fire no
/// `hashchange`.
#[hook]
pub fn use_address(
    dispatcher: UseReducerDispatcher<Viz>,
    fragment: String,
    entries: usize,
    keep: bool,
) {
    let waiting = use_mut_ref(|| None::<Timeout>);
    {
        let waiting = waiting.clone();
        use_effect_with((), move |_| {
            let listener = web_sys::window().map(|window| {
                EventListener::new(&window, "hashchange", move |_| {
                    waiting.borrow_mut().take();
                    dispatcher.dispatch(Action::Open(io::fragment()));
                })
            });
            move || drop(listener)
        });
    }
    let written = use_mut_ref(|| entries);
    let last = use_mut_ref(|| f64::NEG_INFINITY);
    use_effect_with((fragment, keep), move |(fragment, keep)| {
        // A newer view replaces one still waiting.
        waiting.borrow_mut().take();
        if *keep {
            return;
        }
        let new_entry = *written.borrow() != entries;
        *written.borrow_mut() = entries;
        let wait = *last.borrow() + WRITE_EVERY_MS - js_sys::Date::now();
        if new_entry || wait <= 0.0 {
            io::write_fragment(fragment, new_entry);
            *last.borrow_mut() = js_sys::Date::now();
            return;
        }
        // Whatever else changes the address before the write is due wins over it, even a
        // change that fires no `hashchange`.
        let (fragment, last, seen) = (fragment.clone(), last.clone(), io::fragment());
        *waiting.borrow_mut() = Some(Timeout::new(wait.ceil() as u32, move || {
            if io::fragment() == seen {
                io::write_fragment(&fragment, false);
                *last.borrow_mut() = js_sys::Date::now();
            }
        }));
    });
}
