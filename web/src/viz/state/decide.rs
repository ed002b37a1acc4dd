//! "You decide" mode: the run on screen is the path the reader has taken so far, and each of
//! their decisions (an event the engine lists, a fault it can inject, an undo) makes the next
//! run through `Run::branch`. The path lives in the base scenario's `schedule` and `injected`,
//! so replays, links and exports carry it.

use std::rc::Rc;

use fencelab_core::Fault;

use super::Viz;
use crate::viz::decide::Options;
use crate::viz::run::{Decision, Run, RunRef};

/// The mode's state while it is on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decide {
    /// What the engine offers at the position on screen.
    pub options: Rc<Options>,
    /// How long a pause or delay the reader asks for (`None`: the engine's suggestion).
    pub ticks: Option<u64>,
    /// Whether the last length typed was refused (no whole number of at least 1 tick): the
    /// previous one stays in use.
    pub refused: bool,
    /// The field's text as typed: the field shows it, even when refused, rather than the
    /// length in use.
    pub typed: Option<String>,
    /// How many steps have been decided: the run on screen goes this far and no further.
    pub steps: usize,
}

impl Viz {
    /// Turns the mode on (the run ends at the position on screen, and the reader decides from
    /// there) or off (the path decided so far plays on as the schedule has it).
    pub(super) fn set_decide(&mut self, on: bool) {
        if on == self.decide.is_some() || self.opened.is_some() {
            return;
        }
        self.playing = false;
        if on {
            self.compare = None;
            self.decide = Some(Decide::default());
            // The story's own path so far stays the base's until the reader changes it.
            match self.run.branch(self.position, &Decision::Rewind) {
                Ok(run) => self.adopt(run, false),
                Err(e) => self.error = Some(e),
            }
        } else {
            self.decide = None;
            self.replay();
        }
    }

    /// Takes `decision` after the step on screen; the steps after it are replaced.
    pub(super) fn decide_with(&mut self, decision: Decision) {
        match self.run.branch(self.position, &decision) {
            Ok(run) => self.adopt(run, true),
            Err(e) => self.error = Some(e),
        }
    }

    /// Injects `fault` as the next step.
    pub(super) fn inject(&mut self, fault: Fault) {
        self.decide_with(Decision::Inject(fault));
    }

    /// Forgets the last step of the path; the position stays where it was when it can.
    pub(super) fn undo(&mut self) {
        let Some(last) = self.run.len().checked_sub(1) else { return };
        let position = self.position.min(last);
        match self.run.branch(last, &Decision::Rewind) {
            Ok(run) => {
                // Faults undone must not come back when the mode is left, so a path the
                // reader took is cut; the story's own is kept whole.
                self.adopt(run, self.steered);
                self.seek(position);
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// Shows `run`, a branch of the one on screen, at its end; with `path`, its schedule and
    /// injected faults become the base's, the path links carry.
    fn adopt(&mut self, run: Run, path: bool) {
        if path {
            let mut base = (*self.base).clone();
            base.schedule = run.scenario.schedule.clone();
            base.injected = run.scenario.injected.clone();
            self.base = Rc::new(base);
            self.steered = true;
            self.sync_editor();
        }
        self.error = None;
        if let Some(decide) = &mut self.decide {
            decide.steps = run.len();
        }
        self.run = RunRef(Rc::new(run));
        self.seek(self.run.len());
    }

    /// The offer at the position on screen, after every move while the mode is on.
    pub(super) fn refresh_options(&mut self) {
        if let Some(decide) = &mut self.decide {
            decide.options = Rc::new(self.run.options(self.position));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viz::state::Action;
    use fencelab_core::{Next, PauseReason};
    use fencelab_links::ShareLink;
    use yew::Reducible;

    fn apply(state: Rc<Viz>, actions: impl IntoIterator<Item = Action>) -> Rc<Viz> {
        actions.into_iter().fold(state, Reducible::reduce)
    }

    /// The paused-worker story in the mode, decided up to its first step with a choice.
    fn at_a_branch() -> Rc<Viz> {
        let mut state = apply(Rc::new(Viz::new()), [Action::Decide(true)]);
        while state.decide.as_ref().is_some_and(|d| d.options.choices.len() < 2) {
            assert!(!state.decide.as_ref().unwrap().options.choices.is_empty(), "no branch");
            state = apply(state, [Action::Choose(0)]);
        }
        state
    }

    fn options(state: &Viz) -> &Options {
        &state.decide.as_ref().expect("the mode is on").options
    }

    fn captions(state: &Viz) -> Vec<String> {
        state.run.timeline.iter().map(|r| r.caption.clone()).collect()
    }

    #[test]
    fn the_mode_shows_the_steps_decided_and_what_the_engine_offers_next() {
        let story = apply(Rc::new(Viz::new()), [Action::Seek(4)]);
        let whole = story.run.len();
        let state = apply(story.clone(), [Action::Decide(true)]);
        assert_eq!((state.position, state.run.len(), state.playing), (4, 4, false));
        assert_eq!(captions(&state)[..], captions(&story)[..4]);
        assert!(!state.steered, "entering the mode changes no path");
        let offered = options(&state);
        assert!(!offered.choices.is_empty() && !offered.faults.is_empty());
        assert_eq!(offered.later, 0);
        // The mode's actions do nothing while it is off; leaving it plays the story on.
        let off = apply(state, [Action::Decide(false)]);
        assert_eq!((off.run.len(), off.position, off.decide.is_none()), (whole, 4, true));
        assert!(Rc::ptr_eq(&apply(off.clone(), [Action::Choose(0), Action::Undo]), &off));
    }

    #[test]
    fn a_choice_runs_exactly_that_event_and_becomes_the_path() {
        let state = at_a_branch();
        let at = state.position;
        let offered = options(&state).choices.clone();
        let last = offered.len() - 1;
        let chosen = apply(state.clone(), [Action::Choose(last)]);
        assert_eq!((chosen.position, chosen.run.len()), (at + 1, at + 1));
        let record = &chosen.run.timeline[at];
        assert_eq!((record.chosen, record.enabled), (last, offered.len()));
        assert!(chosen.steered);
        assert_eq!(chosen.base.schedule.last(), Some(&last));
        assert_eq!(chosen.base.schedule, chosen.run.scenario.schedule);
        // The other way gives another step.
        let other = apply(state, [Action::Choose(0)]);
        assert_ne!(other.run.timeline[at].caption, record.caption);
    }

    #[test]
    fn choosing_after_stepping_back_replaces_the_later_steps() {
        let state = apply(at_a_branch(), [Action::Choose(0), Action::Choose(0), Action::Choose(0)]);
        let len = state.run.len();
        let back = apply(state, [Action::Seek(len - 3)]);
        assert_eq!(options(&back).later, 3);
        let injected = Fault::RestartAuthority;
        let replaced = apply(back, [Action::Inject(injected.clone())]);
        assert_eq!((replaced.position, replaced.run.len()), (len - 2, len - 2));
        assert_eq!(replaced.base.injected.len(), 1);
        assert_eq!(replaced.base.injected[0].after, len - 3);
        assert_eq!(replaced.base.injected[0].fault, injected);
        assert_eq!(options(&replaced).later, 0);
    }

    #[test]
    fn an_injected_pause_lasts_as_asked_and_undo_takes_it_back() {
        let state = at_a_branch();
        let at = state.position;
        let pause = options(&state)
            .faults
            .iter()
            .find(|f| matches!(f, Fault::PauseWorker { .. }))
            .cloned()
            .expect("a worker can be paused");
        let sized = crate::viz::decide::with_ticks(&pause, Some(3));
        let paused = apply(state.clone(), [Action::Ticks("3".into()), Action::Inject(sized)]);
        let Fault::PauseWorker { ticks, reason, .. } = &paused.base.injected[0].fault else {
            panic!("not a pause: {:?}", paused.base.injected);
        };
        assert_eq!((*ticks, *reason), (3, PauseReason::default()));
        assert!(
            paused.run.timeline[at].caption.contains("by hand"),
            "{}",
            paused.run.timeline[at].caption
        );
        let undone = apply(paused, [Action::Undo]);
        assert_eq!((undone.position, undone.run.len()), (at, at));
        assert!(undone.base.injected.is_empty(), "an undone fault is forgotten");
        assert_eq!(captions(&undone), captions(&state));
        // Undo goes back any number of steps, and no further than the start.
        let start = apply(undone, (0..at + 2).map(|_| Action::Undo));
        assert_eq!((start.position, start.run.len()), (0, 0));
    }

    #[test]
    fn a_delivery_on_offer_is_the_one_the_engine_lists() {
        let mut state = apply(Rc::new(Viz::new()), [Action::Decide(true)]);
        let mut delivered = 0;
        for _ in 0..40 {
            let choices = options(&state).choices.clone();
            let Some(last) = choices.len().checked_sub(1) else { break };
            if let Next::Deliver { message, .. } = &choices[last].what {
                assert_eq!(crate::viz::decide::deliver_choice(&choices, *message), Some(last));
                delivered += 1;
            }
            state = apply(state, [Action::Choose(last)]);
        }
        assert!(delivered > 0, "the story delivers messages");
    }

    #[test]
    fn a_scenario_from_elsewhere_is_shown_whole_outside_the_mode() {
        let state = at_a_branch();
        let scenario = (*state.base).clone();
        let loaded = apply(state, [Action::Load(Box::new(scenario))]);
        assert!(loaded.decide.is_none() && !loaded.steered && loaded.edited);
        assert!(loaded.run.len() > 5, "the whole story plays: {} steps", loaded.run.len());
        // A custom scenario's link carries its path inside it, and the mode comes back.
        let decided = apply(loaded, [Action::Seek(3), Action::Decide(true)]);
        let fragment = decided.to_link().to_fragment();
        assert!(fragment.starts_with("custom=") && !fragment.contains("schedule="), "{fragment}");
        let opened = Viz::open(&fragment);
        assert_eq!((opened.position, opened.run.len()), (3, 3));
        assert_eq!(captions(&opened), captions(&decided));
    }

    #[test]
    fn the_link_reopens_the_path_taken() {
        let state = apply(at_a_branch(), [Action::Choose(1)]);
        let state = apply(state, [Action::Inject(Fault::RestartAuthority), Action::Choose(0)]);
        let state = apply(state, [Action::Choose(0), Action::Back]);
        let fragment = state.to_link().to_fragment();
        assert!(fragment.contains("decide=1") && fragment.contains("inject="), "{fragment}");
        assert!(fragment.contains("schedule="), "{fragment}");
        let opened = Viz::open(&fragment);
        assert_eq!(opened.link_error, None);
        assert_eq!(captions(&opened), captions(&state));
        assert_eq!((opened.position, opened.run.len()), (state.position, state.run.len()));
        assert_eq!(opened.base.injected, state.base.injected);
        assert_eq!(opened.to_link().to_fragment(), fragment);
        // Outside the mode the same path plays on to the end of the story.
        let left = apply(Rc::new(opened), [Action::Decide(false)]);
        let link = ShareLink::parse(&left.to_link().to_fragment()).expect("a valid link");
        assert!(!link.decide && link.path.is_some());
        assert_eq!(captions(&left)[..state.run.len()], captions(&state)[..]);
    }
}
