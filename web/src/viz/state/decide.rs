//! "You decide" mode: the run on screen is the path the reader has taken so far, and each of
//! their decisions (an event the engine lists, a fault it can inject, an undo) makes the next
//! run through `Run::branch`. The path lives in the base scenario's `schedule` and `injected`,
//! so replays, links and exports carry it.

use std::rc::Rc;

use fencelab_core::format::model::Fault;

use super::{Mode, Viz};
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

/// Something the reader did in "You decide" mode.
#[derive(Debug, Clone, PartialEq)]
pub enum DecideAction {
    /// Run the engine's choice `n` after the step on screen (the later steps are replaced).
    Choose(usize),
    /// Inject a fault after the step on screen (the later steps are replaced).
    Inject(Fault),
    /// Forget the last step of the path decided so far.
    Undo,
    /// How long the pauses and delays the reader injects last, and how far clocks jump, as
    /// typed in the field: text that is no whole number of at least 1 is refused and the last
    /// length stays.
    Ticks(String),
}

impl Decide {
    /// What the engine offers at `position` of `run`, after every move while the mode is on.
    pub(super) fn offer(&mut self, run: &Run, position: usize) {
        self.options = Rc::new(run.options(position));
    }

    /// Takes the length typed in the field, or keeps the last one if it is no length.
    fn type_ticks(&mut self, ticks: String) {
        let length = ticks.trim().parse::<u64>().ok().filter(|n| *n >= 1);
        self.refused = length.is_none();
        self.ticks = length.or(self.ticks);
        self.typed = Some(ticks);
    }
}

impl Viz {
    /// Turns the mode on (the run ends at the position on screen, and the reader decides from
    /// there, leaving compare mode or a history link on its way) or off (the path decided so far
    /// plays on as the schedule has it); `false` when it is already so, or a recorded history
    /// is on screen.
    pub(super) fn set_decide(&mut self, on: bool) -> bool {
        if on == self.decide().is_some() || self.opened().is_some() {
            return false;
        }
        self.playing = false;
        if on {
            self.mode = Mode::Decide(Decide::default());
            // The story's own path so far stays the base's until the reader changes it.
            match self.story.run.branch(self.position, &Decision::Rewind) {
                Ok(run) => self.adopt(run, false),
                Err(e) => self.story.error = Some(e),
            }
        } else {
            self.leave_decide();
        }
        true
    }

    /// Leaves the mode if it is on: the path decided so far plays on to the story's end.
    pub(super) fn leave_decide(&mut self) {
        if self.decide().is_some() {
            self.mode = Mode::Story;
            self.replay();
        }
    }

    /// The mode's own actions; `false` outside it, or for an undo with nothing to undo.
    pub(super) fn decide_action(&mut self, action: DecideAction) -> bool {
        let Mode::Decide(decide) = &mut self.mode else { return false };
        match action {
            DecideAction::Ticks(ticks) => decide.type_ticks(ticks),
            DecideAction::Choose(n) => self.decide_with(Decision::Choose(n)),
            DecideAction::Inject(fault) => self.decide_with(Decision::Inject(fault)),
            DecideAction::Undo if self.story.run.len() == 0 => return false,
            DecideAction::Undo => self.undo(),
        }
        true
    }

    /// Takes `decision` after the step on screen; the steps after it are replaced.
    fn decide_with(&mut self, decision: Decision) {
        match self.story.run.branch(self.position, &decision) {
            Ok(run) => self.adopt(run, true),
            Err(e) => self.story.error = Some(e),
        }
    }

    /// Forgets the last step of the path; the position stays where it was when it can.
    fn undo(&mut self) {
        let Some(last) = self.story.run.len().checked_sub(1) else { return };
        let position = self.position.min(last);
        match self.story.run.branch(last, &Decision::Rewind) {
            Ok(run) => {
                // Faults undone must not come back when the mode is left, so a path the
                // reader took is cut; the story's own is kept whole.
                self.adopt(run, self.story.steered);
                self.seek(position);
            }
            Err(e) => self.story.error = Some(e),
        }
    }

    /// Shows `run`, a branch of the one on screen, at its end; with `path`, its schedule and
    /// injected faults become the base's, the path links carry.
    fn adopt(&mut self, run: Run, path: bool) {
        if path {
            let scenario = &run.scenario;
            self.story.steer(scenario.schedule.clone(), scenario.injected.clone());
        }
        self.story.error = None;
        if let Mode::Decide(decide) = &mut self.mode {
            decide.steps = run.len();
        }
        self.story.run = RunRef(Rc::new(run));
        self.seek(self.story.run.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viz::state::Action;
    use fencelab_core::{format::model::PauseReason, sim::Next};
    use fencelab_links::ShareLink;
    use yew::Reducible;

    fn apply(state: Rc<Viz>, actions: impl IntoIterator<Item = Action>) -> Rc<Viz> {
        actions.into_iter().fold(state, Reducible::reduce)
    }

    /// The paused-worker story in the mode, decided up to its first step with a choice.
    fn at_a_branch() -> Rc<Viz> {
        let mut state = apply(Rc::new(Viz::new()), [Action::Decide(true)]);
        while state.decide().is_some_and(|d| d.options.choices.len() < 2) {
            assert!(!state.decide().unwrap().options.choices.is_empty(), "no branch");
            state = apply(state, [Action::InDecide(DecideAction::Choose(0))]);
        }
        state
    }

    fn options(state: &Viz) -> &Options {
        &state.decide().expect("the mode is on").options
    }

    fn captions(state: &Viz) -> Vec<String> {
        state.story.run.timeline.iter().map(|r| r.caption.clone()).collect()
    }

    #[test]
    fn the_mode_shows_the_steps_decided_and_what_the_engine_offers_next() {
        let story = apply(Rc::new(Viz::new()), [Action::Seek(4)]);
        let whole = story.story.run.len();
        let state = apply(story.clone(), [Action::Decide(true)]);
        assert_eq!((state.position, state.story.run.len(), state.playing), (4, 4, false));
        assert_eq!(captions(&state)[..], captions(&story)[..4]);
        assert!(!state.story.steered, "entering the mode changes no path");
        let offered = options(&state);
        assert!(!offered.choices.is_empty() && !offered.faults.is_empty());
        assert_eq!(offered.later, 0);
        // The mode's actions do nothing while it is off; leaving it plays the story on.
        let off = apply(state, [Action::Decide(false)]);
        assert_eq!((off.story.run.len(), off.position, off.decide().is_none()), (whole, 4, true));
        assert!(Rc::ptr_eq(
            &apply(
                off.clone(),
                [Action::InDecide(DecideAction::Choose(0)), Action::InDecide(DecideAction::Undo)]
            ),
            &off
        ));
    }

    #[test]
    fn a_choice_runs_exactly_that_event_and_becomes_the_path() {
        let state = at_a_branch();
        let at = state.position;
        let offered = options(&state).choices.clone();
        let last = offered.len() - 1;
        let chosen = apply(state.clone(), [Action::InDecide(DecideAction::Choose(last))]);
        assert_eq!((chosen.position, chosen.story.run.len()), (at + 1, at + 1));
        let record = &chosen.story.run.timeline[at];
        assert_eq!((record.chosen, record.enabled), (last, offered.len()));
        assert!(chosen.story.steered);
        assert_eq!(chosen.story.base.schedule.last(), Some(&last));
        assert_eq!(chosen.story.base.schedule, chosen.story.run.scenario.schedule);
        // The other way gives another step.
        let other = apply(state, [Action::InDecide(DecideAction::Choose(0))]);
        assert_ne!(other.story.run.timeline[at].caption, record.caption);
    }

    #[test]
    fn choosing_after_stepping_back_replaces_the_later_steps() {
        let state = apply(
            at_a_branch(),
            [
                Action::InDecide(DecideAction::Choose(0)),
                Action::InDecide(DecideAction::Choose(0)),
                Action::InDecide(DecideAction::Choose(0)),
            ],
        );
        let len = state.story.run.len();
        let back = apply(state, [Action::Seek(len - 3)]);
        assert_eq!(options(&back).later, 3);
        let injected = Fault::RestartAuthority;
        let replaced = apply(back, [Action::InDecide(DecideAction::Inject(injected.clone()))]);
        assert_eq!((replaced.position, replaced.story.run.len()), (len - 2, len - 2));
        assert_eq!(replaced.story.base.injected.len(), 1);
        assert_eq!(replaced.story.base.injected[0].after, len - 3);
        assert_eq!(replaced.story.base.injected[0].fault, injected);
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
        let paused = apply(
            state.clone(),
            [
                Action::InDecide(DecideAction::Ticks("3".into())),
                Action::InDecide(DecideAction::Inject(sized)),
            ],
        );
        let Fault::PauseWorker { ticks, reason, .. } = &paused.story.base.injected[0].fault else {
            panic!("not a pause: {:?}", paused.story.base.injected);
        };
        assert_eq!((*ticks, *reason), (3, PauseReason::default()));
        assert!(
            paused.story.run.timeline[at].caption.contains("by hand"),
            "{}",
            paused.story.run.timeline[at].caption
        );
        let undone = apply(paused, [Action::InDecide(DecideAction::Undo)]);
        assert_eq!((undone.position, undone.story.run.len()), (at, at));
        assert!(undone.story.base.injected.is_empty(), "an undone fault is forgotten");
        assert_eq!(captions(&undone), captions(&state));
        // Undo goes back any number of steps, and no further than the start.
        let start = apply(undone, (0..at + 2).map(|_| Action::InDecide(DecideAction::Undo)));
        assert_eq!((start.position, start.story.run.len()), (0, 0));
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
            state = apply(state, [Action::InDecide(DecideAction::Choose(last))]);
        }
        assert!(delivered > 0, "the story delivers messages");
    }

    #[test]
    fn a_scenario_from_elsewhere_is_shown_whole_outside_the_mode() {
        let state = at_a_branch();
        let scenario = (*state.story.base).clone();
        let loaded = apply(state, [Action::Load(Box::new(scenario))]);
        assert!(loaded.decide().is_none() && !loaded.story.steered && loaded.story.edited);
        assert!(
            loaded.story.run.len() > 5,
            "the whole story plays: {} steps",
            loaded.story.run.len()
        );
        // A custom scenario's link carries its path inside it, and the mode comes back.
        let decided = apply(loaded, [Action::Seek(3), Action::Decide(true)]);
        let fragment = decided.to_link().to_fragment();
        assert!(fragment.starts_with("custom=") && !fragment.contains("schedule="), "{fragment}");
        let opened = Viz::open(&fragment);
        assert_eq!((opened.position, opened.story.run.len()), (3, 3));
        assert_eq!(captions(&opened), captions(&decided));
    }

    #[test]
    fn the_link_reopens_the_path_taken() {
        let state = apply(at_a_branch(), [Action::InDecide(DecideAction::Choose(1))]);
        let state = apply(
            state,
            [
                Action::InDecide(DecideAction::Inject(Fault::RestartAuthority)),
                Action::InDecide(DecideAction::Choose(0)),
            ],
        );
        let state = apply(state, [Action::InDecide(DecideAction::Choose(0)), Action::Back]);
        let fragment = state.to_link().to_fragment();
        assert!(fragment.contains("decide=1") && fragment.contains("inject="), "{fragment}");
        assert!(fragment.contains("schedule="), "{fragment}");
        let opened = Viz::open(&fragment);
        assert_eq!(opened.link_error, None);
        assert_eq!(captions(&opened), captions(&state));
        assert_eq!(
            (opened.position, opened.story.run.len()),
            (state.position, state.story.run.len())
        );
        assert_eq!(opened.story.base.injected, state.story.base.injected);
        assert_eq!(opened.to_link().to_fragment(), fragment);
        // Outside the mode the same path plays on to the end of the story.
        let left = apply(Rc::new(opened), [Action::Decide(false)]);
        let link = ShareLink::parse(&left.to_link().to_fragment()).expect("a valid link");
        assert!(!link.decide && link.path.is_some());
        assert_eq!(captions(&left)[..state.story.run.len()], captions(&state)[..]);
    }
}
