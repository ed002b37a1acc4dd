//! What can happen in a run, one variant per kind of event, each with a caption for learners.

use crate::clock::Tick;
use crate::fence::gateway::{DropReason, EffectRequest};
use crate::fence::generation::Generation;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::{Revision, WriteRejection, WriteRequest};
use crate::format::model::{Enforcement, PauseReason};
use serde::{Deserialize, Serialize};

/// How the token on a request came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
pub enum TokenKind {
    /// Issued by the lease authority with the worker's lease.
    Lease,
    /// Read off the worker's own wall clock.
    WallClock,
    /// Made up by the caller.
    Forged,
}

/// One event of a run. The engine executes exactly one per [`step`](crate::Engine::step).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// The authority granted a lease; the grant (with its generation) is now travelling to the
    /// worker.
    LeaseGranted {
        /// The new holder.
        worker: String,
        /// The resource.
        resource: String,
        /// The new generation.
        generation: Generation,
        /// When the lease ends unless renewed.
        valid_until: Tick,
        /// When the grant reaches the worker.
        arrives_at: Tick,
        /// The message carrying the grant.
        message: u64,
    },
    /// A worker asked for a lease someone else holds; it will ask again when that lease ends.
    LeaseBusy {
        /// The worker that asked.
        worker: String,
        /// The resource.
        resource: String,
        /// The current holder.
        holder: String,
        /// When the holder's lease ends unless renewed.
        valid_until: Tick,
    },
    /// The grant reached the worker, which now believes it owns the resource.
    GrantReceived {
        /// The worker.
        worker: String,
        /// The resource.
        resource: String,
        /// The generation it now holds.
        generation: Generation,
        /// The message that carried the grant.
        message: u64,
    },
    /// The holder extended its lease.
    Renewed {
        /// The holder.
        worker: String,
        /// The resource.
        resource: String,
        /// Its generation, unchanged.
        generation: Generation,
        /// The new end of the lease.
        valid_until: Tick,
    },
    /// A renewal failed: the worker learns it lost the lease and stops.
    RenewFailed {
        /// The worker.
        worker: String,
        /// The resource.
        resource: String,
        /// The authority's reason.
        reason: String,
    },
    /// The holder gave the lease back.
    Released {
        /// The former holder.
        worker: String,
        /// The resource.
        resource: String,
        /// The generation it held.
        generation: Generation,
    },
    /// A lease ran out. The authority stops counting the holder as owner; nobody tells the holder.
    LeaseExpired {
        /// The holder whose lease ended.
        worker: String,
        /// The resource.
        resource: String,
        /// The generation that expired.
        generation: Generation,
    },
    /// A worker froze.
    Paused {
        /// The worker.
        worker: String,
        /// For how long.
        ticks: u64,
        /// Why.
        reason: PauseReason,
        /// The generation it believes it holds, if any.
        believes: Option<Generation>,
    },
    /// A pause fault hit a worker that had already stopped.
    PauseIgnored {
        /// The worker.
        worker: String,
        /// How long the pause would have been.
        ticks: u64,
    },
    /// An optional pause did not happen this time.
    PauseSkipped {
        /// The worker.
        worker: String,
        /// How long the pause would have been.
        ticks: u64,
    },
    /// A worker woke up from a pause, with the same beliefs it had before.
    Resumed {
        /// The worker.
        worker: String,
        /// The generation it still believes it holds, if any.
        believes: Option<Generation>,
        /// The resource that generation is for.
        resource: Option<String>,
        /// Whether the authority still counts it as the owner.
        still_owner: bool,
        /// The authority's latest generation for that resource.
        current: Option<Generation>,
    },
    /// A worker computes for a while, touching nothing shared.
    Computing {
        /// The worker.
        worker: String,
        /// For how long.
        ticks: u64,
    },
    /// A worker read a value.
    ReadValue {
        /// The reader.
        worker: String,
        /// The store.
        store: String,
        /// The path.
        path: String,
        /// The resource.
        resource: String,
        /// What it read.
        value: Option<String>,
        /// At which revision.
        revision: Revision,
    },
    /// A worker checked its lease against its own clock.
    LeaseChecked {
        /// The worker.
        worker: String,
        /// The resource.
        resource: String,
        /// What the worker's clock said.
        local_time: u64,
        /// When it believes the lease ends.
        valid_until: Tick,
        /// Whether it concluded it still holds the lease (if not, it stops).
        believes_valid: bool,
    },
    /// A write left the worker and is travelling to the store.
    WriteSent {
        /// The sender.
        worker: String,
        /// The message.
        message: u64,
        /// The store.
        store: String,
        /// The write path.
        path: String,
        /// The request, with its separate fields.
        request: WriteRequest,
        /// Where its token came from.
        token: TokenKind,
        /// When it arrives.
        arrives_at: Tick,
        /// Whether it re-sends an earlier request.
        retry: bool,
    },
    /// A write reached its store, which decided on it in one step.
    WriteArrived {
        /// The sender.
        worker: String,
        /// The message.
        message: u64,
        /// The store.
        store: String,
        /// The write path.
        path: String,
        /// The data the path writes.
        data: String,
        /// How that path is protected.
        enforcement: Enforcement,
        /// The request.
        request: WriteRequest,
        /// The decision.
        outcome: WriteOutcome,
        /// The value afterwards.
        value_after: Option<String>,
        /// The highest generation before the request arrived.
        #[serde(default)]
        highest_before: Option<Generation>,
        /// The highest generation afterwards.
        highest_after: Option<Generation>,
        /// Set when the store refused as stale a writer that holds the newest lease to have reached
        /// this data: where the generation that outranks it came from. The store cannot tell; the
        /// checker can, and the caption says so.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        misfenced: Option<TokenKind>,
    },
    /// A check-then-write path read the highest generation and found the token acceptable; the
    /// write itself happens in a separate step, so others can run in between.
    CheckPassed {
        /// The sender.
        worker: String,
        /// The message.
        message: u64,
        /// The store.
        store: String,
        /// The path.
        path: String,
        /// The data the path writes.
        data: String,
        /// The request.
        request: WriteRequest,
        /// The highest generation the check saw.
        highest_seen: Option<Generation>,
        /// When the write will happen.
        writes_at: Tick,
    },
    /// The second half of a check-then-write: the write lands without looking again.
    WriteCommitted {
        /// The sender.
        worker: String,
        /// The message.
        message: u64,
        /// The store.
        store: String,
        /// The path.
        path: String,
        /// The data the path writes.
        data: String,
        /// The request.
        request: WriteRequest,
        /// The decision (always applied).
        outcome: WriteOutcome,
        /// The highest generation the store had just before, which may be newer than the request.
        highest_before: Option<Generation>,
    },
    /// An effect left the worker towards the gateway.
    EffectSent {
        /// The sender.
        worker: String,
        /// The message.
        message: u64,
        /// The request.
        request: EffectRequest,
        /// The resource whose lease backs it.
        resource: String,
        /// Where its token came from.
        token: TokenKind,
        /// When it arrives.
        arrives_at: Tick,
        /// Whether it re-sends an earlier request.
        retry: bool,
    },
    /// An effect reached the gateway, which delivered it to the partner or dropped it.
    EffectArrived {
        /// The sender.
        worker: String,
        /// The message.
        message: u64,
        /// The partner.
        partner: String,
        /// The request.
        request: EffectRequest,
        /// Whether the gateway checks tokens.
        enforcement: Enforcement,
        /// Why it was dropped, or `None` if the partner got it.
        dropped: Option<DropReason>,
    },
    /// The network slowed down for one worker's next messages.
    MessagesDelayed {
        /// The sender.
        worker: String,
        /// Extra ticks per message.
        ticks: u64,
        /// How many messages.
        count: u32,
    },
    /// The authority restarted.
    AuthorityRestarted {
        /// Whether its counters survived.
        counter_kept: bool,
    },
    /// A store restarted.
    StoreRestarted {
        /// The store.
        store: String,
        /// Whether its highest-generation records survived.
        highest_kept: bool,
    },
    /// A worker stopped early.
    WorkerStopped {
        /// The worker.
        worker: String,
        /// Why.
        reason: String,
    },
    /// A worker reached the end of its script.
    WorkerFinished {
        /// The worker.
        worker: String,
    },
}

fn gen(g: Option<Generation>) -> String {
    g.map_or_else(|| "none".to_string(), |g| g.to_string())
}

fn value(v: &Option<String>) -> String {
    v.as_deref().map_or_else(|| "nothing".to_string(), |v| format!("\"{v}\""))
}

fn at_path(store: &str, path: &str) -> String {
    if path == "primary" {
        store.to_string()
    } else {
        format!("{store}/{path}")
    }
}

fn token_phrase(token: TokenKind, generation: Generation) -> String {
    match token {
        TokenKind::Lease => format!("generation {generation}"),
        TokenKind::WallClock => format!("its wall-clock time {generation} as the token"),
        TokenKind::Forged => format!("a forged token {generation}"),
    }
}

impl Event {
    /// The worker (or other actor) this event belongs to, for lanes and filters.
    pub fn actor(&self) -> &str {
        match self {
            Event::LeaseGranted { worker, .. }
            | Event::LeaseBusy { worker, .. }
            | Event::GrantReceived { worker, .. }
            | Event::Renewed { worker, .. }
            | Event::RenewFailed { worker, .. }
            | Event::Released { worker, .. }
            | Event::LeaseExpired { worker, .. }
            | Event::Paused { worker, .. }
            | Event::Resumed { worker, .. }
            | Event::Computing { worker, .. }
            | Event::ReadValue { worker, .. }
            | Event::LeaseChecked { worker, .. }
            | Event::WriteSent { worker, .. }
            | Event::WriteArrived { worker, .. }
            | Event::CheckPassed { worker, .. }
            | Event::WriteCommitted { worker, .. }
            | Event::EffectSent { worker, .. }
            | Event::EffectArrived { worker, .. }
            | Event::WorkerStopped { worker, .. }
            | Event::MessagesDelayed { worker, .. }
            | Event::PauseSkipped { worker, .. }
            | Event::PauseIgnored { worker, .. }
            | Event::WorkerFinished { worker } => worker,
            Event::AuthorityRestarted { .. } => "authority",
            Event::StoreRestarted { store, .. } => store,
        }
    }

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
                at_path(store, path),
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
                at_path(store, path),
                token_phrase(*token, request.generation),
                request.operation,
                request.expected_revision.map(|r| format!(", expecting revision {r}")).unwrap_or_default()
            ),
            Event::WriteArrived { worker, store, path, enforcement, request, outcome, value_after, highest_before, highest_after, misfenced, .. } => {
                let place = at_path(store, path);
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
                at_path(store, path),
                gen(*highest_seen),
                request.generation
            ),
            Event::WriteCommitted { worker, store, path, request, highest_before, .. } => {
                let overtaken = highest_before.filter(|h| *h > request.generation);
                format!(
                    "{} writes {worker}'s \"{}\" (generation {}) without checking again.{}",
                    at_path(store, path),
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
            Event::PauseIgnored { worker, ticks } => format!(
                "A {ticks}-tick pause hits {worker}, which has already stopped: nothing changes."
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

/// One executed step: when, what, and which choice produced it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Position in the run, from 0.
    pub index: usize,
    /// Logical time.
    pub at: Tick,
    /// What happened.
    pub event: Event,
    /// The learner's caption.
    pub caption: String,
    /// How many events were enabled at this point.
    pub enabled: usize,
    /// Which of them ran.
    pub chosen: usize,
}

/// "1 tick", "3 ticks".
fn tick_count(ticks: u64) -> String {
    if ticks == 1 {
        "1 tick".to_string()
    } else {
        format!("{ticks} ticks")
    }
}
