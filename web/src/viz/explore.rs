//! "Break the protocol": the explorer panel's view state as a reducer, and the job the shell runs
//! in slices. A learner turns protections off with the core's switches, the core's explorer
//! searches every interleaving, and a counterexample comes back as a scenario with a schedule
//! that the visualizer plays. Nothing here judges a write: switches, search and verdicts are all
//! `fencelab-core`'s. The reducer is pure; timers live in the shell.

#[cfg(feature = "test-hooks")]
use std::cell::Cell;
use std::rc::Rc;

use fencelab_core::memory::MIB;
use fencelab_core::stories::switches::Switch;
use fencelab_core::{
    clock::RunStep, drive::explore::Bound, drive::explore::ExploreConfig,
    drive::explore::ExploreResult, drive::explore::ExploreStats, drive::explore::Explorer,
    invariant::InvariantKind, Scenario,
};
use yew::Reducible;

/// The most distinct states a search in the page visits. Lower than the command line's 100,000:
/// each waiting state is a whole copy of the simulation, and a big story (the generated load)
/// needs about 90 MiB for 20,000 of them natively. Every built-in story's search stays far below.
pub const MAX_STATES: usize = 30_000;

/// The most memory a search in the page may hold, as the explorer estimates it: half the command
/// line's default, since the tab's memory also holds the page and the run on screen, and a
/// scenario of one's own (thousands of workers, say) can need far more than the state bound
/// suggests.
pub const MAX_MEMORY: usize = 256 * MIB;

/// The page's search bounds: the command line's, with [`MAX_STATES`] and [`MAX_MEMORY`].
pub fn config() -> ExploreConfig {
    ExploreConfig { max_states: MAX_STATES, max_memory: MAX_MEMORY, ..ExploreConfig::default() }
}

/// How many explorer steps the shell runs per timer tick, unless a test asks otherwise.
pub const SLICE: usize = 250;

#[cfg(feature = "test-hooks")]
thread_local! {
    static PACE: Cell<(usize, u32)> = const { Cell::new((SLICE, 0)) };
}

/// The explorer steps per slice and the milliseconds between slices.
pub fn pace() -> (usize, u32) {
    #[cfg(feature = "test-hooks")]
    return PACE.with(Cell::get);
    #[cfg(not(feature = "test-hooks"))]
    (SLICE, 0)
}

/// Sets the explorer steps per slice (0: the default) and the milliseconds between slices, for
/// the `explore_pace` test hook.
#[cfg(feature = "test-hooks")]
pub fn set_pace(budget: usize, ms: u32) {
    PACE.with(|p| p.set((if budget == 0 { SLICE } else { budget }, ms)));
}

/// One sentence on what a switch turns off, for the learner.
pub fn explain(switch: Switch) -> &'static str {
    match switch {
        Switch::UnfencedStore => "The store applies every write without looking at its token.",
        Switch::CheckThenWrite => {
            "The store checks the token, then writes in a separate step, so another write can slip in between."
        }
        Switch::StrictlyNewer => {
            "The store accepts only strictly newer generations, so an owner cannot write twice with its token."
        }
        Switch::VolatileCounter => {
            "The authority keeps its generation counter in memory, so a restart hands out old numbers again."
        }
        Switch::HighestNotPersisted => {
            "The store keeps the highest generation it saw apart from the data, so a restart forgets it."
        }
        Switch::UnfencedSecondaryPath => {
            "A second way into the store (an object body, a bulk import) skips the token check."
        }
        Switch::WallClockTokens => {
            "Workers use their own clock's time as the token instead of the authority's counter."
        }
        Switch::UnauthenticatedTokens => {
            "The store believes any token it is shown, without checking the authority's proof."
        }
        Switch::UnfencedGateway => {
            "The side-effect gateway passes every payment or message on without checking its token."
        }
    }
}

/// A switch as the panel offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// The switch.
    pub switch: Switch,
    /// Whether the reader turned it on.
    pub on: bool,
    /// Whether the scenario itself already has this protection off (shown ticked, not
    /// changeable): a broken variant, a forced policy, a loaded counterexample.
    pub built_in: bool,
}

/// The switches that change something for `played` (the scenario on screen, with the reader's
/// `switches` applied), in display order.
pub fn offers(played: &Scenario, switches: &[Switch]) -> Vec<Offer> {
    Switch::ALL
        .into_iter()
        .filter(|s| s.applies_to(played))
        .map(|switch| {
            let on = switches.contains(&switch);
            Offer { switch, on, built_in: !on && switch.is_on(played) }
        })
        .collect()
}

/// `switches` with `switch` turned on or off, in display order.
pub fn toggled(switches: &[Switch], switch: Switch) -> Vec<Switch> {
    // Walking the fixed list keeps display order without a sort.
    let on = !switches.contains(&switch);
    Switch::ALL
        .into_iter()
        .filter(|s| if *s == switch { on } else { switches.contains(s) })
        .collect()
}

/// A counterexample: the broken scenario with the schedule that breaks it.
#[derive(Debug, Clone, PartialEq)]
pub struct Counterexample {
    /// The scenario to play: the one explored, with the explorer's schedule.
    pub scenario: Rc<Scenario>,
    /// Which invariant broke.
    pub invariant: InvariantKind,
    /// The step that broke it.
    pub step: RunStep,
    /// What exactly happened, in the core's words.
    pub detail: String,
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Every schedule was checked, and none breaks a safety invariant.
    Safe(ExploreStats),
    /// No schedule that was checked breaks a safety invariant, but a bound stopped the search
    /// (or cut runs short) before every schedule was checked: it proves nothing about the rest.
    Inconclusive(ExploreStats, Bound),
    /// A shortest schedule that breaks one.
    Broken(ExploreStats, Rc<Counterexample>),
    /// The engine refused to go on.
    Failed(ExploreStats, String),
}

/// Where the panel is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Status {
    /// Nothing searched yet for these switches.
    #[default]
    Idle,
    /// A search is running; the counts so far.
    Running(ExploreStats),
    /// The reader cancelled; the counts when it stopped.
    Cancelled(ExploreStats),
    /// The search ended.
    Done(Outcome),
}

/// Something the reader did, or the shell reporting on a search.
#[derive(Debug, Clone, PartialEq)]
pub enum ExploreAction {
    /// The visualizer plays another scenario (another story, variant, policy or switch): that
    /// is what a search explores from now on.
    Origin(Rc<Scenario>),
    /// Start searching.
    Start,
    /// Counts from a running search (its job number).
    Progress(u64, ExploreStats),
    /// A search ended (its job number).
    Finish(u64, ExploreResult),
    /// A search could not start (its job number).
    Fail(u64, String),
    /// Stop the running search.
    Cancel,
}

/// The explorer panel's state.
#[derive(Debug, Clone, PartialEq)]
pub struct ExploreView {
    /// The scenario a search explores: the one the visualizer plays.
    pub origin: Rc<Scenario>,
    /// Where the search is.
    pub status: Status,
    /// The number of the latest search; reports from older ones are ignored.
    pub job: u64,
}

impl ExploreView {
    /// The panel for `origin`, nothing searched yet.
    pub fn new(origin: Rc<Scenario>) -> ExploreView {
        ExploreView { origin, status: Status::Idle, job: 0 }
    }

    /// The number of the running search, if one is running.
    pub fn running(&self) -> Option<u64> {
        matches!(self.status, Status::Running(_)).then_some(self.job)
    }

    /// The counterexample on screen, if the last search found one.
    pub fn counterexample(&self) -> Option<&Rc<Counterexample>> {
        match &self.status {
            Status::Done(Outcome::Broken(_, found)) => Some(found),
            _ => None,
        }
    }

    fn finish(&mut self, result: ExploreResult) {
        let outcome = match result {
            ExploreResult::NoViolation { stats } => match stats.cut_by {
                Some(bound) => Outcome::Inconclusive(stats, bound),
                None => Outcome::Safe(stats),
            },
            ExploreResult::Error { stats, error } => Outcome::Failed(stats, error.to_string()),
            ExploreResult::Violation { stats, violation, schedule, .. } => {
                let mut scenario = (*self.origin).clone();
                scenario.schedule = schedule;
                Outcome::Broken(
                    stats,
                    Rc::new(Counterexample {
                        scenario: Rc::new(scenario),
                        invariant: violation.invariant,
                        step: violation.step,
                        detail: violation.detail,
                    }),
                )
            }
        };
        self.status = Status::Done(outcome);
    }
}

impl Reducible for ExploreView {
    type Action = ExploreAction;

    fn reduce(self: Rc<Self>, action: ExploreAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            ExploreAction::Origin(origin) => {
                // Loading the counterexample into the visualizer keeps the panel as it is.
                let is_result = self.counterexample().is_some_and(|c| *c.scenario == *origin);
                if is_result || *origin == *self.origin {
                    return self;
                }
                // A new job number turns away reports from a search of the old scenario.
                next = ExploreView { job: self.job + 1, ..ExploreView::new(origin) };
            }
            ExploreAction::Start => {
                if self.running().is_some() {
                    return self;
                }
                next.job += 1;
                next.status = Status::Running(ExploreStats::default());
            }
            ExploreAction::Progress(job, stats) => {
                if self.running() != Some(job) {
                    return self;
                }
                next.status = Status::Running(stats);
            }
            ExploreAction::Finish(job, result) => {
                if self.running() != Some(job) {
                    return self;
                }
                next.finish(result);
            }
            ExploreAction::Fail(job, message) => {
                if self.running() != Some(job) {
                    return self;
                }
                next.status = Status::Done(Outcome::Failed(ExploreStats::default(), message));
            }
            ExploreAction::Cancel => {
                let Status::Running(stats) = self.status else { return self };
                // A new job number turns away any report still on its way from the old search.
                next.job += 1;
                next.status = Status::Cancelled(stats);
            }
        }
        Rc::new(next)
    }
}

/// A running search, owned by the shell; dropping it cancels the search.
pub struct Job {
    /// Which search this is.
    pub id: u64,
    explorer: Explorer,
}

impl Job {
    /// Prepares to search `scenario` with the page's bounds.
    pub fn new(id: u64, scenario: Scenario) -> Result<Job, String> {
        let explorer = Explorer::new(scenario, config()).map_err(|e| e.to_string())?;
        Ok(Job { id, explorer })
    }

    /// Runs one slice: the action to report, a result once there is one.
    pub fn slice(&mut self, budget: usize) -> ExploreAction {
        match self.explorer.run_for(budget) {
            Some(result) => ExploreAction::Finish(self.id, result.clone()),
            None => ExploreAction::Progress(self.id, self.explorer.stats()),
        }
    }
}

/// Figures from exploring `library::contention(workers)` to the end in one go, for the browser
/// benchmark: the counts, and whether no schedule broke anything.
#[cfg(feature = "test-hooks")]
pub fn bench(workers: usize) -> (ExploreStats, bool) {
    use fencelab_core::format::model::Enforcement;
    use fencelab_core::stories::library::contention;
    let scenario = contention(workers, Enforcement::Fenced);
    match Explorer::new(scenario, ExploreConfig::default()) {
        Ok(explorer) => {
            let result = explorer.run();
            (*result.stats(), matches!(result, ExploreResult::NoViolation { .. }))
        }
        Err(_) => (ExploreStats::default(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viz::run::Run;
    use fencelab_core::draw::MarkKind;
    use fencelab_core::stories::library;
    use fencelab_core::stories::switches::broken;

    fn story(case: &str, variant: &str, switches: &[Switch]) -> Rc<ExploreView> {
        let scenario = library::scenario(case, Some(variant)).expect("built in");
        Rc::new(ExploreView::new(Rc::new(broken(&scenario, switches))))
    }

    /// Runs the search the way the shell does, in small slices.
    fn search(state: Rc<ExploreView>) -> Rc<ExploreView> {
        let mut state = state.reduce(ExploreAction::Start);
        let mut job = Job::new(state.job, (*state.origin).clone()).expect("valid");
        for _ in 0..100_000 {
            let action = job.slice(7);
            let done = matches!(action, ExploreAction::Finish(..));
            state = state.reduce(action);
            if done {
                return state;
            }
        }
        panic!("the search never ended");
    }

    fn safe(state: &ExploreView) -> ExploreStats {
        match &state.status {
            Status::Done(Outcome::Safe(stats)) => *stats,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fenced_stories_survive_every_interleaving_with_the_clis_counts() {
        assert_eq!(safe(&search(story("paused-worker", "fenced", &[]))).unique_states, 20);
        assert_eq!(safe(&search(story("check-then-write", "atomic", &[]))).unique_states, 35);
    }

    #[test]
    fn an_unfenced_store_breaks_and_the_counterexample_replays_to_the_violation() {
        let scenario = library::scenario("paused-worker", Some("fenced")).expect("built in");
        let offered = offers(&scenario, &[]);
        assert!(offered.iter().any(|o| o.switch == Switch::UnfencedStore && !o.on && !o.built_in));
        assert!(!offered.iter().any(|o| o.switch == Switch::VolatileCounter), "no restart here");
        let state = search(story("paused-worker", "fenced", &[Switch::UnfencedStore]));
        let found = state.counterexample().expect("a counterexample").clone();
        assert_eq!(found.invariant, InvariantKind::StaleWriteAccepted);
        let run = Run::play((*found.scenario).clone()).expect("plays");
        let broke = run
            .diagram
            .marks
            .iter()
            .find(|m| m.kind == MarkKind::Violation)
            .expect("the diagram marks the violation");
        assert_eq!(broke.step, found.step.index());
        // Loading it into the visualizer does not reset the panel.
        let same = Rc::clone(&state).reduce(ExploreAction::Origin(found.scenario.clone()));
        assert!(Rc::ptr_eq(&same, &state));
        // Its switch now shows as built in.
        let offered = offers(&found.scenario, &[]);
        assert!(offered.iter().any(|o| o.switch == Switch::UnfencedStore && o.built_in));
    }

    #[test]
    fn each_story_breaks_under_its_switch() {
        for (case, variant, switch) in [
            ("check-then-write", "atomic", Switch::CheckThenWrite),
            ("secondary-path", "fenced", Switch::UnfencedSecondaryPath),
            ("authority-restart", "fenced", Switch::VolatileCounter),
            ("store-restart", "fenced", Switch::HighestNotPersisted),
            ("wall-clock-tokens", "fenced", Switch::WallClockTokens),
            ("forged-token", "authenticated", Switch::UnauthenticatedTokens),
            ("payment-capture", "fenced", Switch::UnfencedGateway),
        ] {
            let scenario = library::scenario(case, Some(variant)).expect("built in");
            assert!(
                offers(&scenario, &[]).iter().any(|o| o.switch == switch && !o.built_in),
                "{case}"
            );
            let state = search(story(case, variant, &[switch]));
            assert!(state.counterexample().is_some(), "{case}/{variant} with {switch:?}");
        }
    }

    #[test]
    fn cancel_and_a_new_story_turn_away_reports_of_the_old_search() {
        let state = story("paused-worker", "fenced", &[]).reduce(ExploreAction::Start);
        let job = state.job;
        let state = state.reduce(ExploreAction::Cancel);
        assert!(matches!(state.status, Status::Cancelled(_)));
        assert_eq!(state.running(), None);
        let same = Rc::clone(&state).reduce(ExploreAction::Progress(job, ExploreStats::default()));
        assert!(Rc::ptr_eq(&same, &state));
        let state = state.reduce(ExploreAction::Start);
        let job = state.job;
        let other = library::scenario("check-then-write", Some("atomic")).expect("built in");
        let state = state.reduce(ExploreAction::Origin(Rc::new(other)));
        assert_eq!(state.status, Status::Idle);
        let same = Rc::clone(&state).reduce(ExploreAction::Finish(
            job,
            ExploreResult::NoViolation { stats: ExploreStats::default() },
        ));
        assert!(Rc::ptr_eq(&same, &state));
    }

    #[test]
    fn a_search_a_bound_cut_short_is_inconclusive_not_safe() {
        let state = story("paused-worker", "fenced", &[]).reduce(ExploreAction::Start);
        let job = state.job;
        let stats = ExploreStats {
            unique_states: MAX_STATES,
            bound_hit: true,
            cut_by: Some(Bound::States),
            ..ExploreStats::default()
        };
        let state = state.reduce(ExploreAction::Finish(job, ExploreResult::NoViolation { stats }));
        assert_eq!(state.status, Status::Done(Outcome::Inconclusive(stats, Bound::States)));
        // A search with a bound too small for the story ends the same way.
        let tiny = ExploreConfig { max_memory: 1, ..config() };
        let scenario = library::scenario("paused-worker", Some("fenced")).expect("built in");
        let result = Explorer::new(scenario, tiny).expect("valid").run();
        let state = story("paused-worker", "fenced", &[]).reduce(ExploreAction::Start);
        let job = state.job;
        let state = state.reduce(ExploreAction::Finish(job, result));
        assert!(matches!(state.status, Status::Done(Outcome::Inconclusive(_, Bound::Memory))));
    }

    #[test]
    fn switches_toggle_in_display_order_and_each_has_an_explanation() {
        let on = toggled(&[Switch::WallClockTokens], Switch::UnfencedStore);
        assert_eq!(on, vec![Switch::UnfencedStore, Switch::WallClockTokens]);
        assert_eq!(toggled(&on, Switch::WallClockTokens), vec![Switch::UnfencedStore]);
        for switch in Switch::ALL {
            assert!(explain(switch).ends_with('.'));
        }
    }
}
