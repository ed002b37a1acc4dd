//! The last custom scenario, kept in this browser.

use std::rc::Rc;

use fencelab_core::Scenario;
use yew::prelude::*;

use crate::io;

/// Saves `base` in local storage whenever it is an `edited` scenario, so a bad link never loses
/// the reader's work.
#[hook]
pub fn use_keep_custom(edited: bool, base: Rc<Scenario>) {
    use_effect_with((edited, base), |(edited, base)| {
        if *edited {
            io::save(io::CUSTOM_KEY, &base.to_json());
        }
    });
}
