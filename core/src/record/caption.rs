//! Captions: one or two sentences telling a learner what an event did and why it matters. They
//! belong to the recorder, which keeps one with every step; the history holds only the events.

use crate::fence::gateway::DropReason;
use crate::fence::generation::Generation;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::WriteRejection;
use crate::format::model::Enforcement;
use crate::history::event::{Event, TokenKind};
use crate::history::place_name;

impl Event {
    /// One or two sentences telling a learner what just happened and why it matters.
    pub fn caption(&self) -> String {
        match self {
            Event::LeaseGranted { worker, resource, generation, valid_until, arrives_at, .. } => format!(
                "The lease authority grants {worker} the lease on {resource} with generation {generation}, valid until {valid_until}. The grant reaches {worker} at {arrives_at}."
            ),
            Event::LeaseBusy { worker, resource, holder, valid_until } => format!(
                "{worker} asks for the lease on {resource}, but {holder} holds it until {valid_until}. {worker} will ask again then."
            ),
            Event::GrantReceived { worker, resource, generation, .. } => format!(
                "{worker} receives generation {generation} and now believes it owns {resource}."
            ),
            Event::Renewed { worker, resource, generation, valid_until } => format!(
                "{worker} renews its lease on {resource}: generation {generation} stays, now valid until {valid_until}."
            ),
            Event::RenewFailed { worker, resource, reason } => format!(
                "{worker} tries to renew its lease on {resource} and is refused ({reason}). It knows it lost the lease and stops."
            ),
            Event::Released { worker, resource, generation } => format!(
                "{worker} releases its lease on {resource} (generation {generation}). The counter is kept, so the next owner gets a newer generation."
            ),
            Event::LeaseExpired { worker, resource, generation } => format!(
                "{worker}'s lease on {resource} (generation {generation}) expires. The authority no longer counts {worker} as owner, but nothing tells {worker}."
            ),
            Event::Paused { worker, ticks: 0, reason, .. } => format!(
                "{worker} is held up by {} for less than a tick and carries on at once.",
                reason.describe()
            ),
            Event::Paused { worker, ticks, reason, believes } => {
                let ticks = tick_count(*ticks);
                match believes {
                    Some(g) => format!(
                        "{worker} freezes for {ticks} because of {}. It cannot renew or notice anything, and still believes generation {g} is current.",
                        reason.describe()
                    ),
                    None => format!("{worker} freezes for {ticks} because of {}.", reason.describe()),
                }
            }
            Event::Resumed { worker, believes: Some(g), still_owner: false, current, .. } => format!(
                "{worker} resumes after its pause, still believing generation {g} is current. The authority's latest generation is {}: {worker} is now a stale owner.",
                gen(*current)
            ),
            Event::Resumed { worker, believes: Some(g), .. } => format!(
                "{worker} resumes after its pause; its lease with generation {g} is still valid."
            ),
            Event::Resumed { worker, .. } => format!("{worker} resumes after its pause."),
            Event::Computing { worker, ticks } => {
                format!("{worker} computes for {} without touching shared state.", tick_count(*ticks))
            }
            Event::ReadValue { worker, store, path, resource, value: v, revision } => format!(
                "{worker} reads {resource} from {}: {} at revision {revision}.",
                place_name(store, path),
                value(v)
            ),
            Event::LeaseChecked { worker, resource, local_time, valid_until, believes_valid: true } => format!(
                "{worker} checks its lease on {resource}: its own clock says t={local_time}, before {valid_until}, so it goes ahead. The check and the write are separate moments."
            ),
            Event::LeaseChecked { worker, resource, local_time, valid_until, .. } => format!(
                "{worker} checks its lease on {resource}: its own clock says t={local_time}, not before {valid_until}, so it stops."
            ),
            Event::WriteSent { worker, store, path, request, token, arrives_at, retry, .. } => format!(
                "{worker} {} \"{}\" to {} with {} (operation {}{}). It arrives at {arrives_at}.",
                if *retry { "re-sends the write" } else { "sends the write" },
                request.value,
                place_name(store, path),
                token_phrase(*token, request.generation),
                request.operation,
                request.expected_revision.map(|r| format!(", expecting revision {r}")).unwrap_or_default()
            ),
            Event::WriteArrived { worker, store, path, enforcement, request, outcome, value_after, highest_before, highest_after, misfenced, .. } => {
                let place = place_name(store, path);
                match outcome {
                    WriteOutcome::Applied(_) if *enforcement == Enforcement::Unfenced => format!(
                        "{place} applies {worker}'s write \"{}\" without looking at its token. The value is now {}.",
                        request.value,
                        value(value_after)
                    ),
                    WriteOutcome::Applied(a) => format!(
                        "{place} accepts {worker}'s write with generation {} ({}). Value {}, revision {}.",
                        a.generation,
                        match highest_before {
                            None => "it had no highest generation on record".to_string(),
                            Some(h) if *h == a.generation => format!("the same as its highest, {h}"),
                            Some(h) => format!("its highest was {h}"),
                        },
                        value(value_after),
                        a.revision
                    ),
                    WriteOutcome::Replayed(stored) => format!(
                        "{place} recognises operation {} as a retry and returns the stored result (revision {}); nothing is applied twice.{}",
                        request.operation,
                        stored.applied.revision,
                        if request.generation > stored.generation {
                            format!(" Its token passed the check first, so generation {} is now the highest and older owners are refused.", request.generation)
                        } else {
                            String::new()
                        }
                    ),
                    WriteOutcome::Rejected(rejection @ WriteRejection::RevisionConflict { .. }) => format!(
                        "{place} rejects {worker}'s write \"{}\": {rejection}. The value stays {}; the token passed the check first, so the highest generation is {}.",
                        request.value,
                        value(value_after),
                        gen(*highest_after)
                    ),
                    WriteOutcome::Rejected(WriteRejection::Stale { presented, highest }) if misfenced.is_some() => format!(
                        "{place} rejects {worker}'s write \"{}\" as stale (generation {presented} < highest accepted {highest}), yet {worker} holds the newest lease: {}. The value stays {}.",
                        request.value,
                        match misfenced {
                            Some(TokenKind::Forged) => format!("the {highest} came from a forged token, which now fences out every real owner"),
                            Some(TokenKind::WallClock) => format!("the {highest} was a wall-clock reading, and clock readings do not order owners"),
                            _ => format!("the authority issued {highest} before it lost its counter, so a fresh generation looks old"),
                        },
                        value(value_after)
                    ),
                    WriteOutcome::Rejected(rejection) => format!(
                        "{place} rejects {worker}'s write \"{}\": {rejection}. The value stays {} and the highest generation stays {}.",
                        request.value,
                        value(value_after),
                        gen(*highest_after)
                    ),
                }
            }
            Event::CheckPassed { worker, store, path, request, highest_seen, writes_at, .. } => format!(
                "{} reads the last generation it wrote ({}) and finds {worker}'s generation {} acceptable. It will write at {writes_at}, in a separate step.",
                place_name(store, path),
                gen(*highest_seen),
                request.generation
            ),
            Event::WriteCommitted { worker, store, path, request, highest_before, .. } => {
                let overtaken = highest_before.filter(|h| *h > request.generation);
                format!(
                    "{} writes {worker}'s \"{}\" (generation {}) without checking again.{}",
                    place_name(store, path),
                    request.value,
                    request.generation,
                    overtaken.map_or_else(String::new, |h| format!(
                        " A write under generation {h} landed in between, and an older owner's value now replaces it."
                    ))
                )
            }
            Event::EffectSent { worker, request, token, arrives_at, retry, .. } => format!(
                "{worker} {} to {} through the gateway with {} (operation {}). It arrives at {arrives_at}.",
                if *retry { "re-sends the request" } else { "asks" },
                request.effect,
                token_phrase(*token, request.generation),
                request.operation
            ),
            Event::EffectArrived { worker, partner, request, dropped: None, enforcement, .. } => format!(
                "The gateway {} and passes {worker}'s request to {partner}: {}. This cannot be undone.",
                if enforcement.is_fenced() { "checks the token" } else { "checks nothing" },
                request.effect
            ),
            Event::EffectArrived { worker, partner, request, dropped: Some(reason), .. } => format!(
                "The gateway drops {worker}'s request ({}) before calling {partner}: {reason}.{}",
                request.effect,
                if matches!(reason, DropReason::Duplicate { .. }) {
                    format!(" Its token passed the check first, so generations below {} are now refused for {}.", request.generation, request.workflow)
                } else {
                    String::new()
                }
            ),
            Event::WriteUnknown { worker, store, path, request, .. } => format!(
                "{worker} never learns what became of its write \"{}\" (generation {}) to {}: it may have been applied or not. The checker weighs both.",
                request.value,
                request.generation,
                place_name(store, path)
            ),
            Event::EffectUnknown { worker, partner, request, .. } => format!(
                "{worker} never learns whether {partner} received {}: it may have happened or not. The checker weighs both.",
                request.effect
            ),
            Event::PauseIgnored { worker, ticks } => format!(
                "A {ticks}-tick pause hits {worker}, which has already stopped or is frozen for longer anyway: nothing changes."
            ),
            Event::PauseSkipped { worker, ticks } => format!(
                "{worker} runs on: the optional {ticks}-tick pause does not happen in this run."
            ),
            Event::MessagesDelayed { worker, ticks, count } => format!(
                "The network slows down: {} take {} more to arrive.",
                if *count == 1 {
                    format!("{worker}'s next message will")
                } else {
                    format!("{worker}'s next {count} messages will")
                },
                tick_count(*ticks)
            ),
            Event::MessageLost { worker, message } => format!(
                "The network loses {worker}'s message {message}: it will never arrive, and nobody is told."
            ),
            Event::LossIgnored { message } => format!(
                "Message {message} was to be lost, but it is not on its way (it has arrived already, or is not sent yet): nothing changes."
            ),
            Event::ClockSkewed { worker, by, offset } => format!(
                "{worker}'s clock jumps {} {}, so it now reads {}. Only what {worker} times by its own clock is affected: wall-clock tokens and its own lease checks.",
                if *by > 0 { "ahead" } else { "back" },
                tick_count(by.unsigned_abs()),
                match offset {
                    0 => "the right time again".to_string(),
                    o if *o > 0 => format!("{} fast", tick_count(o.unsigned_abs())),
                    o => format!("{} slow", tick_count(o.unsigned_abs())),
                }
            ),
            Event::AuthorityRestarted { counter_kept: true } => "The lease authority restarts and restores its counters from durable storage.".to_string(),
            Event::AuthorityRestarted { counter_kept: false } => "The lease authority restarts. Its counters lived only in memory: the next grant starts over at generation 1, and current leases are forgotten.".to_string(),
            Event::StoreRestarted { store, highest_kept: true } => format!(
                "{store} restarts. Its highest accepted generations are stored with the data, so they survive."
            ),
            Event::StoreRestarted { store, highest_kept: false } => format!(
                "{store} restarts and loses its highest-generation records, which were not stored with the data. Stale owners look valid again."
            ),
            Event::WorkerStopped { worker, reason } => format!("{worker} stops: {reason}."),
            Event::WorkerFinished { worker } => format!("{worker} has finished its script."),
        }
    }
}

fn gen(g: Option<Generation>) -> String {
    g.map_or_else(|| "none".to_string(), |g| g.to_string())
}

fn value(v: &Option<String>) -> String {
    v.as_deref().map_or_else(|| "nothing".to_string(), |v| format!("\"{v}\""))
}

fn token_phrase(token: TokenKind, generation: Generation) -> String {
    match token {
        TokenKind::Lease => format!("generation {generation}"),
        TokenKind::WallClock => format!("its wall-clock time {generation} as the token"),
        TokenKind::Forged => format!("a forged token {generation}"),
    }
}

/// "1 tick", "3 ticks".
fn tick_count(ticks: u64) -> String {
    if ticks == 1 {
        "1 tick".to_string()
    } else {
        format!("{ticks} ticks")
    }
}
