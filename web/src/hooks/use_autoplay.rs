//! Autoplay: one step per interval while playing.

use gloo_timers::callback::Interval;
use yew::prelude::*;

use crate::viz::state::{Action, Viz};

/// Dispatches [`Action::Tick`] every `ms` milliseconds while `playing`. Dropping the Interval
/// (on pause, on a new speed, when the page goes away) stops it.
#[hook]
pub fn use_autoplay(dispatcher: UseReducerDispatcher<Viz>, playing: bool, ms: u32) {
    use_effect_with((playing, ms), move |(playing, ms)| {
        let timer = playing.then(|| Interval::new(*ms, move || dispatcher.dispatch(Action::Tick)));
        move || drop(timer)
    });
}
