//! One played scenario: the whole computed timeline, its diagram and layout, the final verdict,
//! and an engine kept as a seek cache so any step's state can be shown.

use std::cell::RefCell;
use std::rc::Rc;

use fencelab_core::picture::play;
use fencelab_core::{check::checkpoint::place, check::checkpoint::Asked};
use fencelab_core::{
    clock::RunStep, format::model::Fault, record::ScheduleMode, record::StepRecord, Engine,
    Scenario, Violation,
};
use fencelab_core::{draw::diagram, draw::Diagram};
use fencelab_core::{record::export::rust_test, record::export::RunExport};

use crate::viz::decide::{message_name, Options};
use crate::viz::frame::Frame;
use fencelab_core::picture::layout::Layout;

/// What a reader who decides does after the steps on screen.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Runs the engine's choice `n` next.
    Choose(usize),
    /// Injects this fault as the next step.
    Inject(Fault),
    /// Runs nothing: only the later steps are forgotten (an undo).
    Rewind,
}

/// The most steps the page plays of one scenario. Longer runs are cut off with a notice, so an
/// edited scenario cannot freeze the tab.
pub const MAX_VIEW_STEPS: usize = fencelab_core::picture::MAX_STEPS;

/// The number the page shows for the step at timeline index `index`. Steps are numbered from 1
/// everywhere a reader sees them (caption, counter, log, transcript, diagram, panels, exports):
/// after `n` steps the reader is at step `n`, and its caption reads `#n`. The core and the
/// page's `data-step` attributes count from 0.
pub fn step_no(index: usize) -> usize {
    RunStep::new(index).number()
}

/// What the player shows of a run, whatever it came from (a scenario played here, or a history
/// opened from a file): its steps, its diagram and where everything in the diagram sits.
#[derive(Debug)]
pub struct Track {
    /// Every step, in order (shared with the tracks of the same run with other lanes hidden).
    pub timeline: Rc<Vec<StepRecord>>,
    /// The swimlane diagram of the whole run (shared with whoever else keeps it).
    pub diagram: Rc<Diagram>,
    /// Where everything in the diagram sits.
    pub layout: Layout,
    /// Whether the core's checker found a broken invariant in the whole run.
    pub breaks: bool,
    /// Whether every finding is only possible: it depends on an outcome nobody learned.
    pub only_possible: bool,
}

impl Track {
    /// The track of `timeline`, drawn as `diagram`, with the checker's `findings` on it.
    pub fn new(
        timeline: Rc<Vec<StepRecord>>,
        diagram: Rc<Diagram>,
        findings: &[Violation],
    ) -> Track {
        let layout = Layout::new(&diagram, &timeline, findings);
        let breaks = !findings.is_empty();
        let only_possible = breaks && findings.iter().all(|f| f.possible);
        Track { timeline, diagram, layout, breaks, only_possible }
    }

    /// How many steps the run has.
    pub fn len(&self) -> usize {
        self.timeline.len()
    }

    /// The logical time after `position` steps (0 before anything happened).
    pub fn tick_at(&self, position: usize) -> u64 {
        position.checked_sub(1).and_then(|i| self.timeline.get(i)).map_or(0, |r| r.at.0)
    }

    /// How many steps happen at or before tick `t`: the position to show at that time.
    pub fn position_at_tick(&self, t: u64) -> usize {
        self.timeline.partition_point(|r| r.at.0 <= t)
    }
}

/// A shared track, compared by identity, like [`RunRef`].
#[derive(Debug, Clone)]
pub struct TrackRef(pub Rc<Track>);

impl PartialEq for TrackRef {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for TrackRef {
    type Target = Track;

    fn deref(&self) -> &Track {
        &self.0
    }
}

/// A scenario played to its end (or to [`MAX_VIEW_STEPS`]).
#[derive(Debug)]
pub struct Run {
    /// The scenario as played.
    pub scenario: Scenario,
    /// What the player shows of it.
    pub track: TrackRef,
    /// Why the run stopped early, if it did.
    pub stopped: Option<String>,
    /// The scenario's checkpoints placed in this run; those whose subject the run never does
    /// are left out.
    pub asked: Vec<Asked>,
    /// The engine, positioned wherever the last frame was taken. It is a cache: a frame depends
    /// only on the scenario and the position, never on where the engine happened to be.
    engine: RefCell<Engine>,
}

impl Run {
    /// Plays `scenario` from the start, reading its schedule leniently so one schedule can be
    /// replayed on any variant or policy.
    pub fn play(scenario: Scenario) -> Result<Run, String> {
        Run::play_to(scenario, MAX_VIEW_STEPS)
    }

    /// Plays the first `limit` steps of `scenario` (at most [`MAX_VIEW_STEPS`]): a reader who
    /// decides sees only the steps decided so far.
    pub fn play_to(scenario: Scenario, limit: usize) -> Result<Run, String> {
        let (engine, mut stopped) =
            play(scenario.clone(), limit.min(MAX_VIEW_STEPS)).map_err(|e| e.to_string())?;
        if stopped.is_none() && !engine.is_finished() && limit >= MAX_VIEW_STEPS {
            stopped = Some(format!("the page shows the first {MAX_VIEW_STEPS} steps only"));
        }
        Ok(Run::of(scenario, engine, stopped))
    }

    /// The run `engine` has computed.
    fn of(scenario: Scenario, engine: Engine, stopped: Option<String>) -> Run {
        let verdict = engine.verdict();
        let timeline = Rc::new(engine.timeline().to_vec());
        let history = engine.history();
        let asked = place(&scenario.checkpoints, &history).into_iter().flatten().collect();
        let diagram = Rc::new(diagram(&history, engine.violations()));
        let track = TrackRef(Rc::new(Track::new(timeline, diagram, &verdict.violations)));
        let engine = RefCell::new(engine);
        Run { scenario, track, stopped, asked, engine }
    }

    /// The run a reader's decision after `position` steps makes: the steps after `position`
    /// are forgotten (the engine's rewind), then the decision runs as the next step. The new
    /// run's scenario carries the path taken: the schedule so far and the injected faults.
    pub fn branch(&self, position: usize, decision: &Decision) -> Result<Run, String> {
        // The engine is taken rather than copied: a fresh one replays this run when asked
        // for a frame, and a copy of a whole engine is a lot of code for the page to carry.
        let fresh = Engine::new(self.scenario.clone())
            .map_err(|e| e.to_string())?
            .with_schedule_mode(ScheduleMode::Lenient);
        let mut engine = self.engine.try_borrow_mut().map_err(|_| "the run is busy".to_string())?;
        let mut engine = std::mem::replace(&mut *engine, fresh);
        let done = engine.rewind(position).and_then(|()| match decision {
            Decision::Choose(n) => engine.step_choice(*n).map(drop),
            Decision::Inject(fault) => engine.inject(fault.clone()).map(drop),
            Decision::Rewind => Ok(()),
        });
        done.map_err(|e| e.to_string())?;
        let mut scenario = engine.scenario().clone();
        scenario.schedule = engine.schedule_so_far();
        Ok(Run::of(scenario, engine, None))
    }

    /// What the engine says a reader can do after `position` steps: the events that can run
    /// next and the faults that can be injected (none once the run has ended).
    pub fn options(&self, position: usize) -> Options {
        let position = position.min(self.len());
        let later = self.len() - position;
        let Ok(mut engine) = self.engine.try_borrow_mut() else { return Options::default() };
        if engine.seek(position).is_err() || engine.is_finished() {
            return Options { later, ..Options::default() };
        }
        let faults = engine.possible_faults();
        let messages = faults
            .iter()
            .filter_map(|f| match f {
                Fault::LoseMessage { message } => {
                    Some((*message, message_name(&self.track.diagram, *message)?))
                }
                _ => None,
            })
            .collect();
        Options { choices: engine.choices(), faults, later, messages }
    }

    /// The run up to `position` as an exported file (JSON that replays identically).
    pub fn export_json(&self, position: usize) -> Result<String, String> {
        let mut engine = self.engine.try_borrow_mut().map_err(|_| "the run is busy".to_string())?;
        engine.seek(position.min(self.len())).map_err(|e| e.to_string())?;
        Ok(RunExport::capture(&engine).to_json())
    }

    /// The whole run's history as JSON Lines (what `fencelab audit` and "Open a history" read),
    /// or, with `mermaid`, as a Mermaid sequence diagram with its findings as notes.
    pub fn history_text(&self, mermaid: bool) -> Result<String, String> {
        let mut engine = self.engine.try_borrow_mut().map_err(|_| "the run is busy".to_string())?;
        engine.seek(self.len()).map_err(|e| e.to_string())?;
        let history = engine.history();
        Ok(if mermaid {
            fencelab_core::draw::mermaid(&history, engine.violations())
        } else {
            history.to_jsonl()
        })
    }

    /// A `#[test]` that replays this scenario with the schedule this run followed and asserts
    /// its verdict.
    pub fn rust_test(&self) -> Result<String, String> {
        let mut scenario = {
            let mut engine =
                self.engine.try_borrow_mut().map_err(|_| "the run is busy".to_string())?;
            engine.seek(self.len()).map_err(|e| e.to_string())?;
            let mut scenario = engine.scenario().clone();
            scenario.schedule = engine.schedule_so_far();
            scenario
        };
        scenario.schedule.shrink_to_fit();
        rust_test(&scenario).map_err(|e| e.to_string())
    }

    /// Everything the panels show after `position` steps.
    pub fn frame(&self, position: usize) -> Frame {
        let position = position.min(self.len());
        match self.engine.try_borrow_mut() {
            Ok(mut engine) => match engine.seek(position) {
                Ok(()) => Frame::capture(&engine, &self.timeline),
                Err(e) => Frame::failed(position, e.to_string()),
            },
            Err(_) => Frame::failed(position, "the run is busy".into()),
        }
    }
}

/// A shared run, compared by identity: two handles are equal when they point at the same run.
/// Components take this as a prop, so an unchanged run never re-renders them.
#[derive(Debug, Clone)]
pub struct RunRef(pub Rc<Run>);

impl PartialEq for RunRef {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl std::ops::Deref for Run {
    type Target = Track;

    fn deref(&self) -> &Track {
        &self.track
    }
}

impl std::ops::Deref for RunRef {
    type Target = Run;

    fn deref(&self) -> &Run {
        &self.0
    }
}
