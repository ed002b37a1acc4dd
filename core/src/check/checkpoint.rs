//! Checkpoints: questions a story asks its reader just before the step that answers them ("Will
//! db apply A's write "A: stale"?"). A story names only what it asks about; where to stop, the choices and
//! the right answer are read off the run's history, so an edited story (a switch turned, a
//! schedule changed) still asks at the right moment and still marks the right answer.

use crate::clock::RunStep;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::WriteRequest;
use crate::format::model::Checkpoint;
use crate::history::event::Event;
use crate::history::{place_name, History};
use serde::Serialize;

/// A checkpoint placed in one run: where to stop, what to ask, and the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Asked {
    /// The step that answers the question: the player stops just before it, at the position
    /// that is its index.
    pub step: RunStep,
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
const EFFECT_OPTIONS: [&str; 2] = ["Yes: the gateway passes it on", "No: the gateway drops it"];
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
            // Each step at which a store applies or refuses one of the worker's writes: where it
            // arrives, or, in a check-then-write store whose check passed, where the separate
            // write lands. The check alone applies nothing.
            let decided = events().filter_map(|(i, event)| match event {
                Event::WriteArrived {
                    worker: w, message, store, path, request, outcome, ..
                } if w == worker => {
                    let answer = match outcome {
                        WriteOutcome::Applied(_) => 0,
                        WriteOutcome::Rejected(_) => 1,
                        WriteOutcome::Replayed(_) => 2,
                    };
                    Some((i, *message, place_name(store, path), request, answer))
                }
                Event::WriteCommitted { worker: w, message, store, path, request, .. }
                    if w == worker =>
                {
                    Some((i, *message, place_name(store, path), request, 0))
                }
                _ => None,
            });
            let (step, message, place, request, answer) =
                pick(decided, *nth, &format!("a write by {worker}"))?;
            let which = which_write(history, worker, message, request, step);
            Ok(Asked {
                step: RunStep::new(step),
                question: format!("Will {place} apply {which}?"),
                options: WRITE_OPTIONS.map(String::from).to_vec(),
                answer,
            })
        }
        Checkpoint::EffectDelivered { worker, nth } => {
            let arrived = events().filter_map(|(i, event)| match event {
                Event::EffectArrived { worker: w, request, dropped, .. } if w == worker => {
                    Some((i, request, usize::from(dropped.is_some())))
                }
                _ => None,
            });
            let (step, request, answer) = pick(arrived, *nth, &format!("an effect by {worker}"))?;
            Ok(Asked {
                step: RunStep::new(step),
                // What the effect does, rather than the partner's label.
                question: format!(
                    "Will the gateway pass on {worker}'s request to {}?",
                    request.effect
                ),
                options: EFFECT_OPTIONS.map(String::from).to_vec(),
                answer,
            })
        }
        Checkpoint::FinalValue { store, data } => {
            let writes_here = |s: &str, path: &str| {
                s == store && history.setup.store(s).is_some_and(|setup| setup.data(path) == data)
            };
            // Every value sent to this data, in the order first sent; the value after each write
            // applied to it; and the last step at which the store decided a write to it (applied,
            // refused or answered from memory), which settles the final value.
            let mut options: Vec<String> = Vec::new();
            let mut held: Option<(usize, Option<String>)> = None;
            let mut last = None;
            for (i, event) in events() {
                match event {
                    Event::WriteSent { store: s, path, request, .. }
                        if writes_here(s, path) && !options.contains(&request.value) =>
                    {
                        options.push(request.value.clone());
                    }
                    Event::WriteArrived { store: s, data: d, outcome, value_after, .. }
                        if s == store && d == data =>
                    {
                        if outcome.is_applied() {
                            held = Some((i, value_after.clone()));
                        }
                        last = Some(i);
                    }
                    Event::WriteCommitted { store: s, data: d, request, .. }
                        if s == store && d == data =>
                    {
                        held = Some((i, Some(request.value.clone())));
                        last = Some(i);
                    }
                    _ => {}
                }
            }
            let Some(step) = last else {
                return Err(format!("no write to {store}'s {data} reaches it in this run"));
            };
            // "Nothing" is a possible answer only while nothing has been applied yet when the
            // question is asked: a store does not lose its data.
            if !events().take(step).any(|(_, e)| applied_to(e, store, data)) {
                options.push(NO_VALUE.into());
            }
            let value = held.and_then(|(_, v)| v).unwrap_or_else(|| NO_VALUE.into());
            let answer = match options.iter().position(|o| *o == value) {
                Some(answer) => answer,
                None => {
                    options.insert(0, value);
                    0
                }
            };
            if options.len() < 2 {
                return Err(format!("{store}'s {data} can only end with one value"));
            }
            let what = if data == "primary" { String::new() } else { format!(" for {data}") };
            Ok(Asked {
                step: RunStep::new(step),
                question: format!("Which value will {store} hold{what} when the run ends?"),
                options,
                answer,
            })
        }
    }
}

/// Whether `event` applied a write to this store's data.
fn applied_to(event: &Event, store: &str, data: &str) -> bool {
    match event {
        Event::WriteArrived { store: s, data: d, outcome, .. } => {
            s == store && d == data && outcome.is_applied()
        }
        Event::WriteCommitted { store: s, data: d, .. } => s == store && d == data,
        _ => false,
    }
}

/// Names the write a question is about, so a reader who has just seen another of the worker's
/// writes decided knows which one is meant: its value, and for an operation sent more than once
/// which copy it is.
fn which_write(
    history: &History,
    worker: &str,
    message: u64,
    request: &WriteRequest,
    step: usize,
) -> String {
    let sent = |e: &Event| match e {
        Event::WriteSent { worker: w, message, request: r, retry, .. }
            if w == worker && r.operation == request.operation =>
        {
            Some((*message, *retry))
        }
        _ => None,
    };
    let copies: Vec<(u64, bool)> = history.entries.iter().filter_map(|e| sent(&e.event)).collect();
    let value = &request.value;
    let operation = &request.operation;
    if copies.len() < 2 {
        return format!("{worker}'s write \"{value}\"");
    }
    let retry = copies.iter().any(|&(m, retry)| m == message && retry);
    if retry {
        return format!("{worker}'s retry of \"{value}\" (operation {operation})");
    }
    // The first attempt: say so, and whether a retry of it was decided before it arrives.
    let decided_before = history.entries[..step].iter().any(|e| match &e.event {
        Event::WriteArrived { worker: w, message: m, request: r, .. }
        | Event::WriteCommitted { worker: w, message: m, request: r, .. } => {
            w == worker && *m != message && r.operation == request.operation
        }
        _ => false,
    });
    let late = if decided_before { ", arriving after its retry" } else { "" };
    format!("{worker}'s first attempt at \"{value}\" (operation {operation}){late}")
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
