//! What the explorer searches: the scenario the visualizer plays.

use std::rc::Rc;

use yew::prelude::*;

use crate::viz::explore::{ExploreAction, ExploreView};
use crate::viz::run::RunRef;

/// Tells the explorer's reducer whenever the visualizer plays another run: its scenario is what
/// a search explores now.
#[hook]
pub fn use_explore_origin(dispatcher: UseReducerDispatcher<ExploreView>, run: RunRef) {
    use_effect_with(run, move |run| {
        dispatcher.dispatch(ExploreAction::Origin(Rc::new(run.scenario.clone())));
    });
}
