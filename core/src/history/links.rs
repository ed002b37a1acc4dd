//! What a history read from a file must hold together: every name is one its setup lists, every
//! answer answers a request made earlier, and time never runs backwards. A history that breaks
//! one of these would make the checker judge less than the file shows, so it is refused with the
//! line and the field.

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

/// What the entries read so far leave open: the messages on their way and the time reached.
/// It grows with the messages in flight, not with the history's length.
#[derive(Debug, Clone, Default)]
pub(super) struct Links {
    messages: BTreeMap<u64, Sent>,
    last: Option<crate::clock::Tick>,
    /// The setup's worker and resource names, for look-ups that do not walk the lists.
    known: Option<(Names, Names)>,
}

/// A set of names. The hasher has no random keys, so the core draws no random numbers.
type Names = HashSet<String, FxBuildHasher>;

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
        let worker = |name: &str| {
            if workers.contains(name) {
                Ok(())
            } else {
                Err(bad(format!(
                    "`worker`: \"{name}\" is not one of the setup's workers ({})",
                    some_of(&setup.workers)
                )))
            }
        };
        let resource = |field: &str, name: &str| {
            if resources.contains(name) {
                Ok(())
            } else {
                Err(bad(format!(
                    "`{field}`: \"{name}\" is not one of the setup's resources ({})",
                    some_of(&setup.resources)
                )))
            }
        };
        let place = |store: &str, path: &str, data: Option<&str>| {
            let Some(s) = setup.store(store) else {
                let names: Vec<&str> = setup.stores.iter().map(|s| s.name.as_str()).collect();
                return Err(bad(format!(
                    "`store`: \"{store}\" is not one of the setup's stores ({})",
                    names.join(", ")
                )));
            };
            let Some(p) = s.paths.iter().find(|p| p.name == path) else {
                let names: Vec<&str> = s.paths.iter().map(|p| p.name.as_str()).collect();
                return Err(bad(format!(
                    "`path`: store {store} has no path \"{path}\" ({})",
                    names.join(", ")
                )));
            };
            match data {
                Some(data) if data != p.data => Err(bad(format!(
                    "`data`: path {store}/{path} writes \"{}\", not \"{data}\"",
                    p.data
                ))),
                _ => Ok(()),
            }
        };
        let mut answer = |message: u64, wanted: &[Sent], what: &str, then: Option<Sent>| {
            answer(messages, message, wanted, then)
                .map_err(|()| bad(format!("`message`: {message} is not a {what} still on its way")))
        };
        match &entry.event {
            Event::LeaseGranted { worker: w, resource: r, message, .. } => {
                worker(w)?;
                resource("resource", r)?;
                send(messages, *message, Sent::Grant).map_err(bad)?;
            }
            Event::GrantReceived { worker: w, resource: r, message, .. } => {
                worker(w)?;
                resource("resource", r)?;
                answer(*message, &[Sent::Grant], "grant", None)?;
            }
            Event::LeaseBusy { worker: w, resource: r, .. }
            | Event::Renewed { worker: w, resource: r, .. }
            | Event::RenewFailed { worker: w, resource: r, .. }
            | Event::Released { worker: w, resource: r, .. }
            | Event::LeaseChecked { worker: w, resource: r, .. } => {
                worker(w)?;
                resource("resource", r)?;
            }
            Event::LeaseExpired { resource: r, .. } => resource("resource", r)?,
            Event::ReadValue { worker: w, store, path, resource: r, .. } => {
                worker(w)?;
                place(store, path, None)?;
                resource("resource", r)?;
            }
            Event::WriteSent { worker: w, message, store, path, request, .. } => {
                worker(w)?;
                place(store, path, None)?;
                resource("request.resource", request.resource.as_str())?;
                send(messages, *message, Sent::Write).map_err(bad)?;
            }
            Event::CheckPassed { worker: w, message, store, path, data, request, .. } => {
                worker(w)?;
                place(store, path, Some(data))?;
                resource("request.resource", request.resource.as_str())?;
                answer(*message, &[Sent::Write], "write", Some(Sent::Checked))?;
            }
            Event::WriteArrived { worker: w, message, store, path, data, request, .. } => {
                worker(w)?;
                place(store, path, Some(data))?;
                resource("request.resource", request.resource.as_str())?;
                answer(*message, &[Sent::Write], "write", None)?;
            }
            Event::WriteUnknown { worker: w, message, store, path, data, request } => {
                worker(w)?;
                place(store, path, Some(data))?;
                resource("request.resource", request.resource.as_str())?;
                answer(*message, &[Sent::Write, Sent::Checked], "write", None)?;
            }
            Event::EffectUnknown { worker: w, message, .. } => {
                worker(w)?;
                answer(*message, &[Sent::Effect], "effect", None)?;
            }
            Event::WriteCommitted { worker: w, message, store, path, data, request, .. } => {
                worker(w)?;
                place(store, path, Some(data))?;
                resource("request.resource", request.resource.as_str())?;
                answer(*message, &[Sent::Checked], "write that passed its check", None)?;
            }
            Event::EffectSent { worker: w, message, resource: r, .. } => {
                worker(w)?;
                resource("resource", r)?;
                send(messages, *message, Sent::Effect).map_err(bad)?;
            }
            Event::EffectArrived { worker: w, message, .. } => {
                worker(w)?;
                if setup.gateway.is_none() {
                    return Err(bad(
                        "`event`: an effect reached a gateway, but the setup has none".into(),
                    ));
                }
                answer(*message, &[Sent::Effect], "effect", None)?;
            }
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
                        "`store`: \"{store}\" is not one of the setup's stores"
                    )));
                }
            }
            // A stopped "worker" may be a part of the system that gave up (the network, a store).
            Event::WorkerStopped { .. } | Event::AuthorityRestarted { .. } => {}
        }
        Ok(())
    }
}

/// Takes the answer to `message`, which must be on its way as one of `wanted`; `then` is what it
/// becomes (a write that passed its check waits to commit).
fn answer(
    messages: &mut BTreeMap<u64, Sent>,
    message: u64,
    wanted: &[Sent],
    then: Option<Sent>,
) -> Result<(), ()> {
    match messages.get(&message) {
        Some(kind) if wanted.contains(kind) => {
            match then {
                Some(next) => messages.insert(message, next),
                None => messages.remove(&message),
            };
            Ok(())
        }
        _ => Err(()),
    }
}

/// Puts `message` on its way; an id already on its way is an error.
fn send(messages: &mut BTreeMap<u64, Sent>, message: u64, kind: Sent) -> Result<(), String> {
    match messages.insert(message, kind) {
        Some(_) => Err(format!("`message`: {message} is already on its way")),
        None => Ok(()),
    }
}
