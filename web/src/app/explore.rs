//! The explorer's shell: its reducer, the search it runs and the counterexample it hands to the
//! visualizer. Everything it renders comes from `components/explore.rs`.

use std::rc::Rc;

use yew::prelude::*;

use crate::components::explore::{explore_panel, ExploreProps};
use crate::hooks::{use_counterexample, use_explore_origin, use_search};
use crate::viz::explore::{self, ExploreAction, ExploreView};
use crate::viz::run::RunRef;
use crate::viz::state::Action;

#[derive(Properties, PartialEq)]
pub struct ExploreShellProps {
    /// The run on screen: its scenario is what a search explores.
    pub run: RunRef,
    /// The switches the reader turned on.
    pub switches: Vec<fencelab_core::stories::switches::Switch>,
    /// Whether compare mode is on (a counterexample opens in single mode).
    pub comparing: bool,
    pub on: Callback<Action>,
}

/// The explorer's shell: its reducer, the search run in slices from a timer so the page stays
/// responsive, and the hand-off of a counterexample to the visualizer. Dropping the timer (on
/// cancel, on a new story, when the panel goes away) drops the search.
#[component]
pub fn Explore(props: &ExploreShellProps) -> Html {
    let state = use_reducer(|| ExploreView::new(Rc::new(props.run.scenario.clone())));

    use_explore_origin(state.dispatcher(), props.run.clone());
    use_search(state.dispatcher(), state.running(), state.origin.clone());
    use_counterexample(state.counterexample().cloned(), props.on.clone(), props.comparing);

    let offers = explore::offers(&props.run.scenario, &props.switches);
    let on_explore = {
        let dispatcher = state.dispatcher();
        Callback::from(move |action: ExploreAction| dispatcher.dispatch(action))
    };
    explore_panel(&ExploreProps {
        offers,
        switches: props.switches.clone(),
        status: state.status.clone(),
        on: props.on.clone(),
        on_explore,
    })
}
