//! A counterexample the explorer found, opened in the visualizer.

use std::rc::Rc;

use yew::prelude::*;

use crate::viz::explore::Counterexample;
use crate::viz::state::Action;

/// Opens `found` in the visualizer at the step that broke the invariant, leaving compare mode
/// first when `comparing` (a counterexample is one run).
#[hook]
pub fn use_counterexample(
    found: Option<Rc<Counterexample>>,
    on: Callback<Action>,
    comparing: bool,
) {
    use_effect_with(found, move |found| {
        if let Some(found) = found {
            if comparing {
                on.emit(Action::Compare(false));
            }
            on.emit(Action::Load(Box::new((*found.scenario).clone())));
            on.emit(Action::Seek(found.step.number()));
        }
    });
}
