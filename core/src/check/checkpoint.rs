//! Checkpoints: questions a story asks its reader just before the step that answers them ("Will
//! db accept A's write?"). A story names only what it asks about; where to stop, the choices and
//! the right answer are read off the run's history, so an edited story (a switch turned, a
//! schedule changed) still asks at the right moment and still marks the right answer.

use crate::fence::idempotency::WriteOutcome;
pub use crate::format::model::Checkpoint;
use crate::history::event::Event;
use crate::history::History;
use serde::Serialize;

/// A checkpoint placed in one run: where to stop, what to ask, and the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Asked {
    /// The index of the step that answers the question: the player stops just before it.
    pub step: usize,
    /// The question.
    pub question: String,
    /// The possible answers, in a fixed order for each kind of question.
    pub options: Vec<String>,
    /// The index of the right one.
    pub answer: usize,
}

/// Why a checkpoint has no place in a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("checkpoints[{index}]: {problem}")]
pub struct CheckpointError {
    /// The checkpoint's position in the scenario's list.
    pub index: usize,
    /// What is missing from the run.
    pub problem: String,
}

const WRITE_OPTIONS: [&str; 3] = [
    "Yes: the write is applied",
    "No: the write is refused",
    "Neither: it is answered with the result of an earlier attempt",
];
const EFFECT_OPTIONS: [&str; 2] = ["Yes: the partner receives it", "No: the gateway drops it"];
const NO_VALUE: &str = "(nothing: no write is applied)";

/// Places each checkpoint in a run, from its history alone. A checkpoint about something the
/// run does not do (a worker that never writes) is an error naming the checkpoint, so a story
/// that asks about it is caught by its tests rather than by a reader.
pub fn place(checkpoints: &[Checkpoint], history: &History) -> Vec<Result<Asked, CheckpointError>> {
    checkpoints
        .iter()
        .enumerate()
        .map(|(index, checkpoint)| {
            place_one(checkpoint, history).map_err(|problem| CheckpointError { index, problem })
        })
        .collect()
}

fn place_one(checkpoint: &Checkpoint, history: &History) -> Result<Asked, String> {
    let events = || history.entries.iter().map(|e| &e.event).enumerate();
    match checkpoint {
        Checkpoint::WriteAccepted { worker, nth } => {
            // Each step at which a store decides one of the worker's writes, with its store and
            // the index of the right answer.
            let decided = events().filter_map(|(i, event)| match event {
                Event::WriteArrived { worker: w, store, outcome, .. } if w == worker => {
                    let answer = match outcome {
                        WriteOutcome::Applied(_) => 0,
                        WriteOutcome::Rejected(_) => 1,
                        WriteOutcome::Replayed(_) => 2,
                    };
                    Some((i, store, answer))
                }
                // The check passed, so the separate write that follows applies it.
                Event::CheckPassed { worker: w, store, .. } if w == worker => Some((i, store, 0)),
                _ => None,
            });
            let (step, store, answer) = pick(decided, *nth, &format!("a write by {worker}"))?;
            Ok(Asked {
                step,
                question: format!("Will {store} apply {worker}'s write?"),
                options: WRITE_OPTIONS.map(String::from).to_vec(),
                answer,
            })
        }
        Checkpoint::EffectDelivered { worker, nth } => {
            let arrived = events().filter_map(|(i, event)| match event {
                Event::EffectArrived { worker: w, partner, dropped, .. } if w == worker => {
                    Some((i, partner, usize::from(dropped.is_some())))
                }
                _ => None,
            });
            let (step, partner, answer) = pick(arrived, *nth, &format!("an effect by {worker}"))?;
            Ok(Asked {
                step,
                question: format!("Will the gateway let {worker}'s request through to {partner}?"),
                options: EFFECT_OPTIONS.map(String::from).to_vec(),
                answer,
            })
        }
        Checkpoint::FinalValue { store, data } => {
            let writes_here = |s: &str, path: &str| {
                s == store && history.setup.store(s).is_some_and(|setup| setup.data(path) == data)
            };
            // Every value sent to this data, in the order first sent, and the last write that
            // changed it.
            let mut options: Vec<String> = Vec::new();
            let mut last = None;
            for (i, event) in events() {
                match event {
                    Event::WriteSent { store: s, path, request, .. }
                        if writes_here(s, path) && !options.contains(&request.value) =>
                    {
                        options.push(request.value.clone());
                    }
                    Event::WriteArrived { store: s, data: d, outcome, value_after, .. }
                        if s == store && d == data && outcome.is_applied() =>
                    {
                        last = Some((i, value_after.clone()));
                    }
                    Event::WriteCommitted { store: s, data: d, request, .. }
                        if s == store && d == data =>
                    {
                        last = Some((i, Some(request.value.clone())));
                    }
                    _ => {}
                }
            }
            let Some((step, value)) = last else {
                return Err(format!("no write to {store}'s {data} is applied in this run"));
            };
            options.push(NO_VALUE.into());
            let value = value.unwrap_or_else(|| NO_VALUE.into());
            let answer = match options.iter().position(|o| *o == value) {
                Some(answer) => answer,
                None => {
                    options.insert(0, value);
                    0
                }
            };
            let what = if data == "primary" { String::new() } else { format!(" for {data}") };
            Ok(Asked {
                step,
                question: format!("Which value will {store} hold{what} when the run ends?"),
                options,
                answer,
            })
        }
    }
}

/// The `nth` (from 1) of `found`, or the last when `nth` is `None`.
fn pick<T>(found: impl Iterator<Item = T>, nth: Option<usize>, what: &str) -> Result<T, String> {
    let mut found: Vec<T> = found.collect();
    let count = found.len();
    match nth {
        None => found.pop().ok_or_else(|| format!("{what} never happens in this run")),
        Some(n) if (1..=count).contains(&n) => Ok(found.swap_remove(n - 1)),
        Some(n) => Err(format!("asks about {what} number {n}, but the run has {count}")),
    }
}
