//! What a history read from a file must hold together: every name is one its setup lists, every
//! answer answers a request made earlier, and time never runs backwards. A history that breaks
//! one of these would make the checker judge less than the file shows, so it is refused with the
//! line and the field.

use crate::fence::gateway::EffectRequest;
use crate::fence::generation::Generation;
use crate::fence::register::WriteRequest;
use crate::history::event::Event;
use crate::history::{Entry, HistoryError, Setup};
use rustc_hash::FxBuildHasher;
use std::collections::{BTreeMap, HashSet};

/// What a message id was first used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    Grant,
    Write,
    Checked,
    Effect,
}

/// What a message carried, for checking that its answer answers it: the worker that sent it (or
/// was granted it), the generation, and for a request its operation and value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Said {
    worker: String,
    generation: Generation,
    operation: Option<String>,
    value: Option<String>,
}

impl Said {
    fn write(worker: &str, request: &WriteRequest) -> Said {
        Said {
            worker: worker.to_string(),
            generation: request.generation,
            operation: Some(request.operation.to_string()),
            value: Some(request.value.clone()),
        }
    }

    fn effect(worker: &str, request: &EffectRequest) -> Said {
        Said {
            worker: worker.to_string(),
            generation: request.generation,
            operation: Some(request.operation.to_string()),
            value: None,
        }
    }

    fn grant(worker: &str, generation: Generation) -> Said {
        Said { worker: worker.to_string(), generation, operation: None, value: None }
    }

    /// The first field in which `answer` differs from what was sent, named as in the answer.
    fn differs(&self, answer: &Said, message: u64, field: &str) -> Option<String> {
        let sent = |what: &str, was: &dyn std::fmt::Display, now: &dyn std::fmt::Display| {
            Some(format!("`{what}`: message {message} was sent with {was}, this answer says {now}"))
        };
        if self.worker != answer.worker {
            return sent("worker", &self.worker, &answer.worker);
        }
        if self.generation != answer.generation {
            return sent(&format!("{field}generation"), &self.generation, &answer.generation);
        }
        if let (Some(was), Some(now)) = (&self.operation, &answer.operation) {
            if was != now {
                return sent(&format!("{field}operation"), was, now);
            }
        }
        if let (Some(was), Some(now)) = (&self.value, &answer.value) {
            if was != now {
                return sent(&format!("{field}value"), &format!("{was:?}"), &format!("{now:?}"));
            }
        }
        None
    }
}

/// What the entries read so far leave open: the messages on their way and the time reached.
/// It grows with the messages in flight, not with the history's length.
#[derive(Debug, Clone, Default)]
pub(super) struct Links {
    messages: BTreeMap<u64, (Sent, Said)>,
    last: Option<crate::clock::Tick>,
    /// The setup's worker and resource names, for look-ups that do not walk the lists.
    known: Option<(Names, Names)>,
}

/// A set of names. The hasher has no random keys, so the core draws no random numbers.
type Names = HashSet<String, FxBuildHasher>;

/// A name as a message quotes it: whole when short, else its start and its length, so a
/// runaway value cannot make the message as long as the file.
fn shown(name: &str) -> String {
    const SHOWN: usize = 60;
    match name.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}… ({} bytes)", &name[..end], name.len()),
        None => name.to_string(),
    }
}

/// A list of names for a message: the first few, and how many more.
fn some_of(names: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut text = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

impl Links {
    /// Checks the next entry, read from `line`, against `setup` and the entries before it.
    pub(super) fn check(
        &mut self,
        setup: &Setup,
        entry: &Entry,
        line: usize,
    ) -> Result<(), HistoryError> {
        let Links { messages, last, known } = self;
        let (workers, resources) = known.get_or_insert_with(|| {
            (setup.workers.iter().cloned().collect(), setup.resources.iter().cloned().collect())
        });
        let bad = |problem: String| HistoryError { line, problem };
        if last.is_some_and(|t| entry.at < t) {
            let before = last.map_or(0, |t: crate::clock::Tick| t.0);
            return Err(bad(format!("`at`: time runs backwards ({} after {before})", entry.at.0)));
        }
        *last = Some(entry.at);
        if let Some(by) = entry.by.filter(|by| *by < entry.at) {
            return Err(bad(format!("`by`: {} is before `at` ({})", by.0, entry.at.0)));
        }
        let worker = |name: &str| {
            if workers.contains(name) {
                Ok(())
            } else {
                Err(bad(format!(
                    "`worker`: \"{}\" is not one of the setup's workers ({})",
                    shown(name),
                    some_of(&setup.workers)
                )))
            }
        };
        let resource = |field: &str, name: &str| {
            if resources.contains(name) {
                Ok(())
            } else {
                Err(bad(format!(
                    "`{field}`: \"{}\" is not one of the setup's resources ({})",
                    shown(name),
                    some_of(&setup.resources)
                )))
            }
        };
        let place = |store: &str, path: &str, data: Option<&str>| {
            let Some(s) = setup.store(store) else {
                let names: Vec<&str> = setup.stores.iter().map(|s| s.name.as_str()).collect();
                return Err(bad(format!(
                    "`store`: \"{}\" is not one of the setup's stores ({})",
                    shown(store),
                    names.join(", ")
                )));
            };
            let Some(p) = s.paths.iter().find(|p| p.name == path) else {
                let names: Vec<&str> = s.paths.iter().map(|p| p.name.as_str()).collect();
                return Err(bad(format!(
                    "`path`: store {store} has no path \"{}\" ({})",
                    shown(path),
                    names.join(", ")
                )));
            };
            match data {
                Some(data) if data != p.data => Err(bad(format!(
                    "`data`: path {store}/{path} writes \"{}\", not \"{}\"",
                    p.data,
                    shown(data)
                ))),
                _ => Ok(()),
            }
        };
        let mut answer =
            |message: u64, wanted: &[Sent], what: &str, then: Option<Sent>, said: Said| {
                let field = if what == "grant" { "" } else { "request." };
                match messages.get(&message) {
                    Some((kind, sent)) if wanted.contains(kind) => {
                        if let Some(problem) = sent.differs(&said, message, field) {
                            return Err(bad(problem));
                        }
                    }
                    _ => {
                        return Err(bad(format!(
                            "`message`: {message} is not a {what} still on its way"
                        )))
                    }
                }
                match then {
                    Some(next) => {
                        if let Some(open) = messages.get_mut(&message) {
                            open.0 = next;
                        }
                    }
                    None => {
                        messages.remove(&message);
                    }
                }
                Ok(())
            };
        // The four events of a write at its store name the same things and answer a write on its
        // way; they differ in which messages they answer and what the message becomes.
        let at_store = entry.event.store_write();
        let mut write = |wanted: &[Sent], what: &str, then: Option<Sent>| {
            let Some(at) = at_store else { return Ok(()) };
            worker(at.worker)?;
            place(at.store, at.path, Some(at.data))?;
            resource("request.resource", at.request.resource.as_str())?;
            answer(at.message, wanted, what, then, Said::write(at.worker, at.request))
        };
        match &entry.event {
            Event::LeaseGranted { worker: w, resource: r, message, generation, .. } => {
                worker(w)?;
                resource("resource", r)?;
                let said = Said::grant(w, *generation);
                send(messages, *message, Sent::Grant, said).map_err(bad)?;
            }
            Event::GrantReceived { worker: w, resource: r, message, generation } => {
                worker(w)?;
                resource("resource", r)?;
                answer(*message, &[Sent::Grant], "grant", None, Said::grant(w, *generation))?;
            }
            Event::LeaseBusy { worker: w, resource: r, .. }
            | Event::Renewed { worker: w, resource: r, .. }
            | Event::RenewFailed { worker: w, resource: r, .. }
            | Event::Released { worker: w, resource: r, .. }
            | Event::LeaseExpired { worker: w, resource: r, .. }
            | Event::LeaseChecked { worker: w, resource: r, .. } => {
                worker(w)?;
                resource("resource", r)?;
            }
            Event::ReadValue { worker: w, store, path, resource: r, .. } => {
                worker(w)?;
                place(store, path, None)?;
                resource("resource", r)?;
            }
            Event::WriteSent { worker: w, message, store, path, request, .. } => {
                worker(w)?;
                place(store, path, None)?;
                resource("request.resource", request.resource.as_str())?;
                send(messages, *message, Sent::Write, Said::write(w, request)).map_err(bad)?;
            }
            Event::CheckPassed { .. } => write(&[Sent::Write], "write", Some(Sent::Checked))?,
            Event::WriteArrived { .. } => write(&[Sent::Write], "write", None)?,
            Event::WriteUnknown { .. } => write(&[Sent::Write, Sent::Checked], "write", None)?,
            Event::EffectUnknown { worker: w, message, request, .. } => {
                worker(w)?;
                answer(*message, &[Sent::Effect], "effect", None, Said::effect(w, request))?;
            }
            Event::WriteCommitted { .. } => {
                write(&[Sent::Checked], "write that passed its check", None)?
            }
            Event::EffectSent { worker: w, message, resource: r, request, .. } => {
                worker(w)?;
                resource("resource", r)?;
                send(messages, *message, Sent::Effect, Said::effect(w, request)).map_err(bad)?;
            }
            Event::EffectArrived { worker: w, message, request, .. } => {
                worker(w)?;
                if setup.gateway.is_none() {
                    return Err(bad(
                        "`event`: an effect reached a gateway, but the setup has none".into(),
                    ));
                }
                answer(*message, &[Sent::Effect], "effect", None, Said::effect(w, request))?;
            }
            Event::MessageLost { worker: w, message } => {
                worker(w)?;
                match messages.get(message) {
                    Some((kind, sent)) if *kind != Sent::Checked => {
                        if *w != sent.worker {
                            return Err(bad(format!(
                                "`worker`: message {message} was {}'s, not {}'s",
                                sent.worker,
                                shown(w)
                            )));
                        }
                        messages.remove(message);
                    }
                    _ => {
                        return Err(bad(format!(
                            "`message`: {message} is not a message still on its way"
                        )))
                    }
                }
            }
            Event::ClockSkewed { worker: w, .. } => worker(w)?,
            Event::LossIgnored { .. } => {}
            Event::Paused { worker: w, .. }
            | Event::PauseIgnored { worker: w, .. }
            | Event::PauseSkipped { worker: w, .. }
            | Event::Resumed { worker: w, .. }
            | Event::Computing { worker: w, .. }
            | Event::MessagesDelayed { worker: w, .. }
            | Event::WorkerFinished { worker: w } => worker(w)?,
            Event::StoreRestarted { store, .. } => {
                if setup.store(store).is_none() {
                    return Err(bad(format!(
                        "`store`: \"{}\" is not one of the setup's stores",
                        shown(store)
                    )));
                }
            }
            // A stopped "worker" may be a part of the system that gave up (the network, a store).
            Event::WorkerStopped { .. } | Event::AuthorityRestarted { .. } => {}
        }
        Ok(())
    }
}

/// Puts `message` on its way; an id already on its way is an error.
fn send(
    messages: &mut BTreeMap<u64, (Sent, Said)>,
    message: u64,
    kind: Sent,
    said: Said,
) -> Result<(), String> {
    match messages.insert(message, (kind, said)) {
        Some(_) => Err(format!("`message`: {message} is already on its way")),
        None => Ok(()),
    }
}
