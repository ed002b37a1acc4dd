//! The scenario file format: resources, workers and their scripts, the authority, stores, the
//! gateway, faults, expectations and a schedule. JSON is the file format; every field is checked by
//! [`Scenario::from_json`](crate::Scenario::from_json) before anything runs.
//!
//! Serde's derive both writes and reads the format, so these types and their attributes are its
//! one description: names, defaults, and which fields a file may leave out. Objects refuse fields
//! they do not know, so a misspelt field is an error rather than a silent default.

use crate::fence::gateway::Effect;
use crate::fence::generation::Generation;
use crate::fence::idempotency::Retention;
use crate::fence::register::{RejectionReason, SameGenerationPolicy};
use crate::invariant::InvariantKind;
use crate::memory::{buffer, HeapSize};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

/// One fencing story: who does what, against which protections, and what should go wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Scenario {
    /// Short machine name, e.g. `paused-worker`.
    pub name: String,
    /// Which variant of the case this is, e.g. `fenced` or `broken`; `custom` when omitted.
    #[serde(default = "custom")]
    pub variant: String,
    /// One-line title for a picker.
    pub title: String,
    /// A short paragraph telling a learner what to watch for: the set-up, not the result.
    #[serde(default)]
    #[cfg_attr(
        feature = "schema",
        schemars(extend("examples" = ["Watch what the store does with A's write after its pause."]))
    )]
    pub intro: String,
    /// How the run ends and what it shows, told after the intro. A reader predicting the
    /// outcome sees it only once the run has ended or every question is answered.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub outcome: String,
    /// The protected resources, by name.
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub resources: Vec<String>,
    /// The lease authority.
    pub authority: AuthoritySpec,
    /// The stores holding the resources.
    #[cfg_attr(
        feature = "schema",
        schemars(length(min = 1), extend("examples" = [[{"name": "db", "enforcement": "fenced"}]]))
    )]
    pub stores: Vec<StoreSpec>,
    /// The side-effect gateway, if the story has irreversible effects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewaySpec>,
    /// The network between workers and stores.
    #[serde(default)]
    pub network: NetworkSpec,
    /// The workers and their scripts.
    #[cfg_attr(
        feature = "schema",
        schemars(
            length(min = 1),
            extend("examples" = [[{"name": "A", "script": [{"acquire": {"resource": "ledger"}}]}]])
        )
    )]
    pub workers: Vec<WorkerSpec>,
    /// Things that go wrong at given ticks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(extend("default" = [])))]
    pub faults: Vec<FaultSpec>,
    /// Faults injected by hand while stepping through the run (see
    /// [`Engine::inject`](crate::Engine::inject)), each at a step rather than a tick, so that
    /// the run replays with each one where it was injected.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(
        feature = "schema",
        schemars(extend(
            "examples" = [[{"after": 7, "fault": {"lose_message": {"message": 3}}}]],
            "default" = []
        ))
    )]
    pub injected: Vec<Injection>,
    /// Questions for the reader at the run's key moments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(extend("default" = [])))]
    pub checkpoints: Vec<Checkpoint>,
    /// Which invariant violations this run is expected to show (empty for a correct design).
    #[serde(default)]
    pub expect: Expectations,
    /// Where several events are enabled at once, which one runs: an index into them, in order.
    /// When the list runs out, the first enabled event runs. `check` prints the schedule of a
    /// counterexample, and the page records the choices made by hand, in this form.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(extend("default" = [])))]
    pub schedule: Vec<usize>,
}

/// Where generations come from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum TokenSource {
    /// The authority's counter, persisted across restarts: the correct design.
    #[default]
    DurableCounter,
    /// The authority's counter, kept only in memory: a restart starts it over at 1.
    VolatileCounter,
    /// Each worker's own wall clock reading when it writes: the classic mistake. Clocks drift,
    /// and a timestamp says nothing about who owns the lease.
    WallClock,
}

/// The lease authority's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AuthoritySpec {
    /// Lease length in ticks.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub ttl: u64,
    /// Where fencing tokens come from.
    #[serde(default)]
    pub token_source: TokenSource,
    /// Whether tokens carry a proof from the authority that stores and the gateway verify.
    /// Without it, anyone can present any number.
    #[serde(default)]
    pub authenticated: bool,
}

/// How a store (or one of its write paths) protects its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::VariantArray)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Enforcement {
    /// No check at all: every write applies.
    Unfenced,
    /// Reads the highest generation, then writes in a separate step: another write can land in
    /// between, and the stale one then overwrites it.
    CheckThenWrite,
    /// Compares the generation and writes in one atomic step.
    Fenced,
    /// Fenced, plus operation ids (retries return stored results) and expected revisions.
    FencedIdempotent,
}

impl Scenario {
    /// The title a reader sees: the title and the variant, or the name when it has no title.
    pub fn full_title(&self) -> String {
        match (self.title.trim(), self.variant.trim()) {
            ("", _) => self.name.clone(),
            (title, "") => title.to_string(),
            (title, variant) => format!("{title} ({variant})"),
        }
    }

    /// Whether every write path and the gateway check generations atomically with the write:
    /// a run that still breaks then shows a limit of fencing, not a missing fence.
    pub fn fully_fenced(&self) -> bool {
        let stores = self.stores.iter().all(|store| {
            store.enforcement.is_fenced() && store.paths.iter().all(|p| p.enforcement.is_fenced())
        });
        stores && self.gateway.as_ref().is_none_or(|g| g.enforcement.is_fenced())
    }
}

impl Enforcement {
    /// Whether the generation check is atomic with the write.
    pub fn is_fenced(self) -> bool {
        matches!(self, Enforcement::Fenced | Enforcement::FencedIdempotent)
    }
}

/// A store: a database, an object store, a file system.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StoreSpec {
    /// The store's name, e.g. `db`.
    pub name: String,
    /// How its default write path is protected.
    pub enforcement: Enforcement,
    /// Same-generation policy of its fence.
    #[serde(default)]
    pub policy: SameGenerationPolicy,
    /// How long operation ids are remembered (idempotent enforcement only).
    #[serde(default)]
    pub retention: Retention,
    /// Whether the highest accepted generation survives a store restart. It must live with the
    /// protected state, in the same transaction; keeping it elsewhere loses it. Yes when omitted.
    #[serde(default = "yes")]
    pub persist_highest: bool,
    /// Whether the store holds correctness-critical state. Invariants are checked only for critical
    /// stores; duplicated work on a scratch store costs efficiency, not correctness. Yes when
    /// omitted.
    #[serde(default = "yes")]
    pub critical: bool,
    /// Ticks between the check and the write of a check-then-write path; 1 when omitted.
    #[serde(default = "one")]
    pub check_write_gap: u64,
    /// Further write paths (a metadata row and an object body, a bulk import, an admin tool),
    /// each with its own enforcement. The default path is called `primary` and writes the data
    /// called `primary`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schema", schemars(extend("default" = [])))]
    pub paths: Vec<PathSpec>,
}

/// A secondary write path into a store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PathSpec {
    /// The path's name, e.g. `object`.
    pub name: String,
    /// How this path is protected.
    pub enforcement: Enforcement,
    /// The data this path writes: `primary` (the default path's data) or the name of a path of
    /// the same store. Paths into the same data share one value and one fencing record, so a
    /// fenced admin endpoint into the ledger sees the generations the main path has seen. Absent,
    /// the path writes data of its own, named after it (an object body beside a metadata row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

impl PathSpec {
    /// The data this path writes (see [`PathSpec::data`]).
    pub fn data(&self) -> &str {
        self.data.as_deref().unwrap_or(&self.name)
    }
}

impl StoreSpec {
    /// A critical store named `name`, fenced with operation ids on its one path and keeping its
    /// highest generation: the store the conformance kit's cases and races write to.
    pub fn fenced(name: &str, policy: SameGenerationPolicy, retention: Retention) -> StoreSpec {
        StoreSpec {
            name: name.into(),
            enforcement: Enforcement::FencedIdempotent,
            policy,
            retention,
            persist_highest: true,
            critical: true,
            check_write_gap: 1,
            paths: Vec::new(),
        }
    }

    /// The data a write path of this store writes and how that path is protected, or `None`
    /// for a path the store does not have.
    pub fn route(&self, path: &str) -> Option<(&str, Enforcement)> {
        if path == "primary" {
            return Some(("primary", self.enforcement));
        }
        self.paths.iter().find(|p| p.name == path).map(|p| (p.data(), p.enforcement))
    }

    /// The data this store keeps: `primary`, then each path's own data, each once.
    pub fn data_names(&self) -> impl Iterator<Item = &str> {
        let own = self.paths.iter().filter(|p| p.data.as_deref().is_none_or(|d| d == p.name));
        std::iter::once("primary").chain(own.map(|p| p.name.as_str()))
    }
}

/// The side-effect gateway in front of a partner (a payment provider, a mail server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct GatewaySpec {
    /// The partner's name, e.g. `payments`.
    pub partner: String,
    /// Whether the gateway checks tokens (fenced) or passes everything on (unfenced).
    pub enforcement: Enforcement,
    /// Same-generation policy.
    #[serde(default)]
    pub policy: SameGenerationPolicy,
}

/// Message delivery times.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NetworkSpec {
    /// Ticks a message takes from sender to receiver, unless a fault delays it.
    pub latency: u64,
    /// Up to this many extra ticks per message, chosen by the schedule (a normal run takes 0; the
    /// explorer tries every value), so messages can overtake each other.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[cfg_attr(
        feature = "schema",
        schemars(
            range(max = crate::format::limits::MAX_JITTER),
            extend("examples" = [2], "default" = 0)
        )
    )]
    pub jitter: u64,
}

impl Default for NetworkSpec {
    fn default() -> Self {
        NetworkSpec { latency: 1, jitter: 0 }
    }
}

/// A worker and its script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorkerSpec {
    /// The worker's name, e.g. `A`.
    pub name: String,
    /// When it starts its script.
    #[serde(default)]
    pub start: u64,
    /// How far its wall clock is off, in ticks (positive: fast). Matters only where the worker
    /// reads its own clock: wall-clock tokens and local lease checks.
    #[serde(default)]
    pub clock_offset: i64,
    /// What it does, in order.
    pub script: Vec<Step>,
}

/// Why a worker froze.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum PauseReason {
    /// A stop-the-world garbage collection.
    #[default]
    GcPause,
    /// The host stopped scheduling the process (CPU starvation, a noisy neighbour).
    Descheduled,
    /// The network stalled and nothing got through.
    NetworkStall,
    /// The container was moved to another host.
    Rescheduled,
    /// An event loop too busy to run the renewal timer.
    OverloadedEventLoop,
}

impl PauseReason {
    /// A phrase for captions.
    pub fn describe(self) -> &'static str {
        match self {
            PauseReason::GcPause => "a stop-the-world GC pause",
            PauseReason::Descheduled => "the host not scheduling it",
            PauseReason::NetworkStall => "a stalled network",
            PauseReason::Rescheduled => "its container being rescheduled",
            PauseReason::OverloadedEventLoop => "an overloaded event loop",
        }
    }
}

/// The expected revision of a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum ExpectedRevision {
    /// The revision this worker last read from the same store path and resource.
    LastRead,
    /// A fixed revision.
    Exactly(u64),
}

/// One step of a worker's script, written as an object with one key, the step's name, holding
/// its fields: `{"acquire": {"resource": "ledger"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Step {
    /// Ask the authority for the lease; wait and ask again while someone else holds it.
    Acquire {
        /// The resource.
        resource: String,
    },
    /// Extend the lease; a worker whose renewal fails knows it lost the lease and stops.
    Renew {
        /// The resource.
        resource: String,
    },
    /// Give the lease back.
    Release {
        /// The resource.
        resource: String,
    },
    /// Read the current value and revision.
    Read {
        /// The resource.
        resource: String,
        /// The store; the first store when omitted.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(extend("examples" = ["db"])))]
        store: Option<String>,
        /// The write path; `primary` when omitted.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(extend("examples" = ["object"])))]
        path: Option<String>,
    },
    /// Work for a while without touching shared state.
    Compute {
        /// How long.
        ticks: u64,
    },
    /// Freeze: nothing runs, no renewal, no messages handled.
    Pause {
        /// How long.
        ticks: u64,
        /// Why.
        #[serde(default)]
        #[cfg_attr(feature = "schema", schemars(extend("examples" = ["descheduled"])))]
        reason: PauseReason,
        /// Whether the pause may or may not happen: a normal run takes it, the explorer tries
        /// both.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        #[cfg_attr(feature = "schema", schemars(extend("examples" = [true], "default" = false)))]
        optional: bool,
    },
    /// Check the lease against the worker's own clock and stop if it has run out. The check and
    /// any later write are separate moments, so this narrows the race without closing it.
    CheckLease {
        /// The resource.
        resource: String,
    },
    /// Send a write to a store.
    Write(WriteStep),
    /// Send an irreversible effect through the gateway.
    Effect(EffectStep),
    /// Send an earlier request again, unchanged: same operation id, same token.
    Retry {
        /// The operation id of the earlier write or effect.
        operation: String,
    },
}

impl Step {
    /// The step's name as files write it, e.g. `acquire`.
    pub fn name(&self) -> &'static str {
        crate::names::variant_name(self).expect("a step is written as its variant")
    }
}

/// A write step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WriteStep {
    /// The resource.
    pub resource: String,
    /// The new value.
    pub value: String,
    /// The operation id; generated from the worker's name and step when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// Make the write conditional on a revision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<ExpectedRevision>,
    /// The store; the first store when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(extend("examples" = ["db"])))]
    pub store: Option<String>,
    /// The write path; `primary` when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Extra network delay for this message, in ticks.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[cfg_attr(feature = "schema", schemars(extend("default" = 0)))]
    pub delay: u64,
    /// Present this made-up token instead of the one the authority issued (a forged token).
    #[serde(default, deserialize_with = "token", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<u64>", range(min = 1)))]
    pub forge: Option<u64>,
}

/// An effect step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EffectStep {
    /// The resource whose lease authorizes the effect.
    pub resource: String,
    /// The workflow key the gateway orders effects by; the resource name when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(extend("examples" = ["order-42"])))]
    pub workflow: Option<String>,
    /// The effect.
    pub effect: Effect,
    /// The operation id; generated when omitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// Extra network delay for this message, in ticks.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[cfg_attr(feature = "schema", schemars(extend("default" = 0)))]
    pub delay: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn yes() -> bool {
    true
}

fn one() -> u64 {
    1
}

fn custom() -> String {
    "custom".into()
}

/// Reads a forged token the way every token is read, so zero, negatives, fractions and text all
/// say "positive integer token required".
fn token<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    Ok(Option::<Generation>::deserialize(deserializer)?.map(Generation::get))
}

/// Something that goes wrong at a given tick: the tick, and the fault nested under its name,
/// `{"at": 3, "fault": {"pause_worker": {"worker": "A", "ticks": 12}}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FaultSpec {
    /// The tick at which it happens.
    pub at: u64,
    /// What happens: an object with one key, the fault's name, holding its fields.
    pub fault: Fault,
}

/// A question a story asks its reader before the step that answers it, as its scenario file
/// writes it: an object with one key, the question's kind, holding its subject
/// (`{"write_accepted": {"worker": "A"}}`). Only the subject is written:
/// [`place`](crate::check::checkpoint::place) finds the step, the choices and the answer in the
/// run, and a question the run cannot answer is skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Checkpoint {
    /// Will the store apply this worker's write? Asked before the step at which a store applies
    /// or refuses it (the write arrives, or a check-then-write store's separate write lands).
    WriteAccepted {
        /// The writer.
        worker: String,
        /// Which of its writes, counting from 1; the last when left out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nth: Option<usize>,
    },
    /// Will the gateway let this worker's effect through to the partner? Asked before the step
    /// at which the effect reaches the gateway.
    EffectDelivered {
        /// The sender.
        worker: String,
        /// Which of its effects, counting from 1; the last when left out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nth: Option<usize>,
    },
    /// Which value will the store hold for this data when the run ends? Asked before the step
    /// that settles it: the last write to reach that data, whether applied or refused.
    FinalValue {
        /// The store.
        store: String,
        /// The data, `primary` when left out.
        #[serde(default = "primary", skip_serializing_if = "is_primary")]
        #[cfg_attr(
            feature = "schema",
            schemars(extend("examples" = ["object"], "default" = "primary"))
        )]
        data: String,
    },
}

fn primary() -> String {
    "primary".into()
}

fn is_primary(data: &str) -> bool {
    data == "primary"
}

/// A fault injected at a step, `{"after": 7, "fault": {"lose_message": {"message": 3}}}`, as the
/// page records one injected by hand. A tick can hold several events, and a fault placed at a tick
/// would be one more event to order among them, changing the choices of the schedule before
/// it; a fault placed after a number of steps runs exactly where it was injected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Injection {
    /// How many steps run before it: it runs as the next step once this many have run, at the
    /// time of the last one. Injections run in list order, so `after` never decreases.
    #[cfg_attr(feature = "schema", schemars(extend("examples" = [7])))]
    pub after: usize,
    /// What happens: an object with one key, the fault's name, holding its fields.
    pub fault: Fault,
}

/// The faults a scenario can inject. Each is written as an object with one key, its name,
/// holding its fields (`{"restart_store": {"store": "db"}}`), except `restart_authority`, which
/// has none and is written as the string `"restart_authority"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Fault {
    /// Freeze a worker wherever it is in its script.
    PauseWorker {
        /// The worker.
        worker: String,
        /// For how long.
        ticks: u64,
        /// Why.
        #[serde(default)]
        #[cfg_attr(feature = "schema", schemars(extend("examples" = ["descheduled"])))]
        reason: PauseReason,
    },
    /// The network slows down for one worker: its next `count` messages take `ticks` longer.
    DelayMessages {
        /// The sender whose messages are delayed.
        worker: String,
        /// Extra ticks per message.
        ticks: u64,
        /// How many messages are affected.
        count: u32,
    },
    /// The authority restarts. With a durable counter it carries on; with a volatile one it
    /// starts over at generation 1 and forgets every lease.
    RestartAuthority,
    /// A store restarts. If it does not persist its highest generation with the data, the record
    /// is lost and stale owners are accepted again.
    RestartStore {
        /// The store.
        store: String,
    },
    /// A worker's wall clock jumps by `by` ticks (positive: ahead). It matters where the worker
    /// reads its own clock: wall-clock tokens and local lease checks.
    SkewClock {
        /// The worker.
        worker: String,
        /// How far the clock jumps; never 0.
        #[cfg_attr(feature = "schema", schemars(extend("examples" = [-20])))]
        by: i64,
    },
    /// The network loses a message in flight (a grant, a write or an effect): it never arrives,
    /// and nobody is told. Messages are numbered in sending order, as the history shows them.
    LoseMessage {
        /// The message's number.
        #[cfg_attr(feature = "schema", schemars(extend("examples" = [3])))]
        message: u64,
    },
}

impl Fault {
    /// The fault's name as files write it, e.g. `pause_worker`.
    pub fn name(&self) -> &'static str {
        crate::names::variant_name(self).expect("a fault is written as its variant")
    }
}

/// What a run is expected to show.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Expectations {
    /// The invariants this run is expected to break (empty: none).
    #[serde(default)]
    pub violations: Vec<InvariantKind>,
    /// Exact rejection counts by reason, when the story is about monitoring them.
    #[serde(default, deserialize_with = "counts", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "rejection_counts"))]
    pub rejections: Option<BTreeMap<RejectionReason, u64>>,
}

/// The schema of `expect.rejections`: counts keyed by rejection reason. The model reads the keys
/// through a helper of its own ([`counts`]), so the derive cannot see that they are reasons.
#[cfg(feature = "schema")]
fn rejection_counts(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let reason = generator.subschema_for::<RejectionReason>();
    let count = generator.subschema_for::<u64>();
    schemars::json_schema!({
        "type": ["object", "null"],
        "propertyNames": reason,
        "additionalProperties": count,
    })
}

/// Reads rejection counts with each key read as text before it is read as a reason, so an error
/// names the key it is about (`expect.rejections.stale_generation`): `serde_path_to_error` records
/// a key that is read as text, not one read as an enum.
fn counts<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<BTreeMap<RejectionReason, u64>>, D::Error> {
    let counts = Option::<BTreeMap<Key<RejectionReason>, u64>>::deserialize(deserializer)?;
    Ok(counts.map(|counts| counts.into_iter().map(|(Key(reason), n)| (reason, n)).collect()))
}

/// A map key read as text, then as a `T`.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Key<T>(T);

impl<'de, T: DeserializeOwned> Deserialize<'de> for Key<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyText(PhantomData))
    }
}

struct KeyText<T>(PhantomData<T>);

impl<T: DeserializeOwned> Visitor<'_> for KeyText<T> {
    type Value = Key<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Key<T>, E> {
        T::deserialize(name.into_deserializer()).map(Key)
    }
}

impl HeapSize for Step {
    fn heap_bytes(&self) -> usize {
        match self {
            Step::Acquire { resource }
            | Step::Renew { resource }
            | Step::Release { resource }
            | Step::CheckLease { resource } => resource.heap_bytes(),
            Step::Retry { operation } => operation.heap_bytes(),
            Step::Read { resource, store, path } => {
                resource.heap_bytes() + store.heap_bytes() + path.heap_bytes()
            }
            Step::Compute { .. } | Step::Pause { .. } => 0,
            Step::Write(write) => {
                write.resource.heap_bytes()
                    + write.value.heap_bytes()
                    + write.operation.heap_bytes()
                    + write.store.heap_bytes()
                    + write.path.heap_bytes()
            }
            Step::Effect(effect) => {
                effect.resource.heap_bytes()
                    + effect.workflow.heap_bytes()
                    + effect.effect.heap_bytes()
                    + effect.operation.heap_bytes()
            }
        }
    }
}

impl HeapSize for WorkerSpec {
    fn heap_bytes(&self) -> usize {
        self.name.heap_bytes() + self.script.heap_bytes()
    }
}

impl HeapSize for StoreSpec {
    fn heap_bytes(&self) -> usize {
        let paths: usize =
            self.paths.iter().map(|p| p.name.heap_bytes() + p.data.heap_bytes()).sum();
        self.name.heap_bytes() + buffer::<crate::format::model::PathSpec>(self.paths.len()) + paths
    }
}

impl HeapSize for Fault {
    fn heap_bytes(&self) -> usize {
        match self {
            Fault::PauseWorker { worker, .. }
            | Fault::DelayMessages { worker, .. }
            | Fault::SkewClock { worker, .. } => worker.heap_bytes(),
            Fault::RestartStore { store } => store.heap_bytes(),
            Fault::RestartAuthority | Fault::LoseMessage { .. } => 0,
        }
    }
}

impl HeapSize for Scenario {
    fn heap_bytes(&self) -> usize {
        let faults: usize = self.faults.iter().map(|f| f.fault.heap_bytes()).sum();
        let injected: usize = self.injected.iter().map(|f| f.fault.heap_bytes()).sum();
        let checkpoints: usize = (self.checkpoints.iter())
            .map(|c| match c {
                Checkpoint::WriteAccepted { worker, .. }
                | Checkpoint::EffectDelivered { worker, .. } => worker.heap_bytes(),
                Checkpoint::FinalValue { store, data } => store.heap_bytes() + data.heap_bytes(),
            })
            .sum();
        self.name.heap_bytes()
            + self.variant.heap_bytes()
            + self.title.heap_bytes()
            + self.intro.heap_bytes()
            + self.outcome.heap_bytes()
            + self.resources.heap_bytes()
            + self.stores.heap_bytes()
            + self.gateway.as_ref().map_or(0, |g| g.partner.heap_bytes())
            + self.workers.heap_bytes()
            + buffer::<crate::format::model::FaultSpec>(self.faults.len())
            + faults
            + buffer::<crate::format::model::Injection>(self.injected.len())
            + injected
            + buffer::<Checkpoint>(self.checkpoints.len())
            + checkpoints
            + self.expect.violations.heap_bytes()
            + self.expect.rejections.heap_bytes()
            + self.schedule.heap_bytes()
    }
}
