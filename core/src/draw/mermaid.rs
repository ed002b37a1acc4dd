//! A history as a Mermaid `sequenceDiagram`, the text diagram GitHub and many documentation tools
//! render from a code block: one participant per lane, one message per request and answer, a
//! note for each pause and fault and for each broken invariant.

use crate::fence::idempotency::WriteOutcome;
use crate::history::event::Event;
use crate::history::History;
use crate::invariant::{Place, Violation};
use std::fmt::Write as _;

/// Writes `history` as a Mermaid sequence diagram, with `violations` (the checker's findings on
/// it) as notes at the steps that broke them.
pub fn mermaid(history: &History, violations: &[Violation]) -> String {
    let setup = &history.setup;
    let mut out = String::from("sequenceDiagram\n");
    // Participants get plain ids, and their names as aliases: Mermaid's ids cannot hold every
    // character a name can.
    let mut ids = Vec::new();
    let mut add = |out: &mut String, id: String, name: &str| {
        let _ = writeln!(out, "    participant {id} as {}", text(name));
        ids.push((name.to_string(), id));
    };
    add(&mut out, "authority".into(), "lease authority");
    for (i, worker) in setup.workers.iter().enumerate() {
        add(&mut out, format!("w{i}"), worker);
    }
    for (i, store) in setup.stores.iter().enumerate() {
        add(&mut out, format!("s{i}"), &store.name);
    }
    if let Some(gateway) = &setup.gateway {
        add(&mut out, "partner".into(), &gateway.partner);
    }
    let id = |name: &str| {
        ids.iter().find(|(n, _)| n == name).map_or_else(|| text(name), |(_, id)| id.clone())
    };
    for (step, entry) in history.entries.iter().enumerate() {
        let at = entry.at.0;
        let line = match &entry.event {
            Event::LeaseGranted { worker, resource, generation, valid_until, .. } => Some(format!(
                "authority->>{}: t={at} grant {resource}, generation {generation}, until t={}",
                id(worker),
                valid_until.0
            )),
            Event::LeaseExpired { resource, generation, .. } => Some(format!(
                "Note over authority: t={at} lease on {resource} (generation {generation}) expires"
            )),
            Event::Paused { worker, ticks, .. } => {
                Some(format!("Note over {}: t={at} paused for {ticks} ticks", id(worker)))
            }
            Event::WriteSent { worker, store, request, retry, .. } => Some(format!(
                "{}->>{}: t={at} {}write {} with generation {}",
                id(worker),
                id(store),
                if *retry { "retried " } else { "" },
                text(&format!("\"{}\"", request.value)),
                request.generation
            )),
            Event::WriteArrived { worker, store, outcome, .. }
            | Event::WriteCommitted { worker, store, outcome, .. } => {
                let answer = match outcome {
                    WriteOutcome::Applied(applied) => {
                        format!("applied, revision {}", applied.revision)
                    }
                    WriteOutcome::Replayed(_) => "answered from the replay record".to_string(),
                    WriteOutcome::Rejected(rejection) => format!("rejected: {rejection}"),
                };
                Some(format!("{}-->>{}: t={at} {}", id(store), id(worker), text(&answer)))
            }
            Event::EffectArrived { worker, partner, request, dropped, .. } => Some(match dropped {
                None => format!(
                    "{}->>{}: t={at} {}",
                    id(worker),
                    id(partner),
                    text(&request.effect.to_string())
                ),
                Some(reason) => format!(
                    "Note over {}: t={at} gateway drops {}",
                    id(worker),
                    text(&reason.to_string())
                ),
            }),
            Event::WriteUnknown { worker, store, .. } => {
                Some(format!("{}--x{}: t={at} outcome unknown", id(store), id(worker)))
            }
            Event::EffectUnknown { worker, partner, .. } => {
                Some(format!("{}--x{}: t={at} outcome unknown", id(partner), id(worker)))
            }
            Event::MessageLost { worker, message } => Some(format!(
                "Note over {}: t={at} the network loses message {message}",
                id(worker)
            )),
            Event::ClockSkewed { worker, by, .. } => {
                Some(format!("Note over {}: t={at} clock jumps {by:+} ticks", id(worker)))
            }
            Event::AuthorityRestarted { counter_kept } => Some(format!(
                "Note over authority: t={at} restarts{}",
                if *counter_kept { "" } else { ", losing its counters" }
            )),
            Event::StoreRestarted { store, highest_kept } => Some(format!(
                "Note over {}: t={at} restarts{}",
                id(store),
                if *highest_kept { "" } else { ", losing its highest generations" }
            )),
            _ => None,
        };
        if let Some(line) = line {
            let _ = writeln!(out, "    {line}");
        }
        for v in violations.iter().filter(|v| v.step.index() == step) {
            // Over the place the finding is about: the store, the partner or the authority.
            let over = match &v.place {
                Some(Place::Store { store, .. }) => id(store),
                Some(Place::Partner) => {
                    setup.gateway.as_ref().map_or_else(|| id("partner"), |g| id(&g.partner))
                }
                Some(Place::Authority) | None => "authority".to_string(),
            };
            let broken = if v.possible { "possibly broken" } else { "broken" };
            let _ = writeln!(
                out,
                "    Note over {over}: t={at} {broken}: {}",
                text(&format!("{}: {}", v.invariant.broken(), v.detail))
            );
        }
    }
    out
}

/// Text Mermaid shows as written: its statement separator and comment and entity marks replaced.
fn text(s: &str) -> String {
    s.replace(';', ",").replace('#', "no. ").replace(['\n', '\r'], " ")
}
