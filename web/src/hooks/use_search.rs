//! The explorer's search, run in slices from a timer so the page stays responsive.

use std::cell::RefCell;
use std::rc::Rc;

use fencelab_core::Scenario;
use gloo_timers::callback::Interval;
use yew::prelude::*;

use crate::viz::explore::{self, ExploreAction, ExploreView, Job};

/// Runs search `running` (an id, or `None` when idle) over `origin`, one slice per timer tick
/// until it reports a result. Dropping the timer (on cancel, on a new story, when the panel goes
/// away) drops the search.
#[hook]
pub fn use_search(
    dispatcher: UseReducerDispatcher<ExploreView>,
    running: Option<u64>,
    origin: Rc<Scenario>,
) {
    use_effect_with(running, move |running| {
        let timer = running.map(|id| match Job::new(id, (*origin).clone()) {
            Ok(job) => {
                let job = RefCell::new(job);
                let (budget, ms) = explore::pace();
                Some(Interval::new(ms, move || {
                    let action = job.borrow_mut().slice(budget);
                    dispatcher.dispatch(action);
                }))
            }
            Err(e) => {
                dispatcher.dispatch(ExploreAction::Fail(id, e));
                None
            }
        });
        move || drop(timer)
    });
}
