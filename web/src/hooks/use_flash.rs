//! The playground's highlight of a fresh outcome.

use gloo_timers::callback::Timeout;
use yew::prelude::*;

use crate::playground::{Action, RegisterView};

/// How long a fresh playground outcome stays highlighted, in milliseconds.
const FLASH_MS: u32 = 900;

/// Ends the flash of attempt `flashing` after [`FLASH_MS`]. Dropping the Timeout (on the next
/// attempt, or when the page goes away) cancels it; the reducer ignores an end-of-flash for an
/// older attempt anyway.
#[hook]
pub fn use_flash(dispatcher: UseReducerDispatcher<RegisterView>, flashing: Option<u64>) {
    use_effect_with(flashing, move |flashing| {
        let timer = flashing
            .map(|seq| Timeout::new(FLASH_MS, move || dispatcher.dispatch(Action::EndFlash(seq))));
        move || drop(timer)
    });
}
