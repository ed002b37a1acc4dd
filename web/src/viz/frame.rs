//! What the state panels show at one position of a run, copied out of the engine as plain data.

use fencelab_core::format::model::Enforcement;
use fencelab_core::sim::state::WorkerStatus;
use fencelab_core::{clock::RunStep, record::StepRecord, Engine, ResourceId};

/// How many remembered operation ids a panel lists; the rest are counted.
pub const RECENT_OPS: usize = 6;

/// The authority's view of one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorityRow {
    /// The resource.
    pub resource: String,
    /// Who holds a valid lease now, if anyone.
    pub holder: Option<String>,
    /// The latest generation issued for it.
    pub generation: Option<u64>,
    /// Until when the current holder's lease runs.
    pub valid_until: Option<u64>,
}

/// One lease a worker believes it holds, next to what the authority says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Belief {
    /// The resource.
    pub resource: String,
    /// The generation the worker believes is current.
    pub generation: u64,
    /// When the worker was told the lease ends.
    pub valid_until: u64,
    /// Whether the authority agrees that this worker holds the lease right now.
    pub authority_agrees: bool,
    /// The authority's latest generation for the resource.
    pub authority_generation: Option<u64>,
    /// The authority's current holder, if anyone.
    pub authority_holder: Option<String>,
}

/// A worker as the panels and lane headers show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerRow {
    /// Its name.
    pub name: String,
    /// A short machine name of its status, for CSS and tests: `running`, `paused`, ...
    pub status: &'static str,
    /// Its status in words.
    pub status_text: String,
    /// The leases it believes it holds.
    pub beliefs: Vec<Belief>,
}

impl WorkerRow {
    /// Whether the worker is frozen right now.
    pub fn paused(&self) -> bool {
        self.status == "paused"
    }

    /// Whether it believes in a lease the authority no longer honours: a stale owner.
    pub fn stale(&self) -> bool {
        self.beliefs.iter().any(|b| !b.authority_agrees)
    }
}

/// One protected cell of a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellRow {
    /// The write path.
    pub path: String,
    /// The resource.
    pub resource: String,
    /// How the path is protected, in words.
    pub enforcement: &'static str,
    /// Whether the path checks tokens atomically with the write.
    pub fenced: bool,
    /// The generation the path keeps to fence writes with, if it keeps one.
    pub kept: Kept,
    /// The value.
    pub value: Option<String>,
    /// The revision, e.g. `r2`.
    pub revision: String,
    /// The most recent operation ids the store remembers (at most [`RECENT_OPS`]).
    pub remembered: Vec<String>,
    /// How many operation ids it remembers in all.
    pub remembered_count: usize,
}

/// What a write path keeps to fence writes with. The register records the generation of every
/// write it applies, checked or not, so what that number means depends on the path's
/// enforcement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// An unfenced path looks at no token, so it keeps no fencing record at all.
    Nothing,
    /// A check-then-write path compares tokens against the generation of the last write it
    /// made, which goes backwards when a stale write slips in between check and write.
    LastWritten(Option<u64>),
    /// A fenced path keeps the highest generation that has passed its check.
    Highest(Option<u64>),
}

impl Kept {
    /// What a path with `enforcement` keeps, given its register's record.
    pub fn of(enforcement: Enforcement, recorded: Option<u64>) -> Kept {
        match enforcement {
            Enforcement::Unfenced => Kept::Nothing,
            Enforcement::CheckThenWrite => Kept::LastWritten(recorded),
            Enforcement::Fenced | Enforcement::FencedIdempotent => Kept::Highest(recorded),
        }
    }

    /// The state panel's name for it.
    pub fn label(self) -> &'static str {
        match self {
            Kept::LastWritten(_) => "last written gen",
            Kept::Nothing | Kept::Highest(_) => "highest gen",
        }
    }

    /// The state panel's value: a generation, or why there is none.
    pub fn value(self) -> String {
        match self {
            Kept::Nothing => "none: unfenced".into(),
            Kept::LastWritten(g) | Kept::Highest(g) => g.map_or("none".into(), |g| g.to_string()),
        }
    }

    /// The short form for lane headers and compare mode's table, e.g. `g2` or `last g1`.
    pub fn short(self) -> String {
        let gen = |g: Option<u64>| g.map_or("–".into(), |g| format!("g{g}"));
        match self {
            Kept::Nothing => "unfenced".into(),
            Kept::LastWritten(g) => format!("last {}", gen(g)),
            Kept::Highest(g) => gen(g),
        }
    }
}

/// A store and its cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreRow {
    /// Its name.
    pub name: String,
    /// Its cells.
    pub cells: Vec<CellRow>,
}

/// The gateway and what its partner received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayRow {
    /// The partner's name.
    pub partner: String,
    /// How the gateway is protected, in words.
    pub enforcement: &'static str,
    /// Whether the gateway fences its effects (a gateway is fenced or unfenced).
    pub fenced: bool,
    /// What the partner received, in order, as (generation, effect, time).
    pub received: Vec<(u64, String, u64)>,
}

/// An invariant broken so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViolationRow {
    /// The step that broke it.
    pub step: RunStep,
    /// The invariant's name.
    pub invariant: String,
    /// What happened.
    pub detail: String,
}

/// Everything the panels show after some steps.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frame {
    /// How many steps have run.
    pub position: usize,
    /// Logical time.
    pub now: u64,
    /// The lease authority, per resource.
    pub authority: Vec<AuthorityRow>,
    /// Each worker.
    pub workers: Vec<WorkerRow>,
    /// Each store.
    pub stores: Vec<StoreRow>,
    /// The gateway, if any.
    pub gateway: Option<GatewayRow>,
    /// Rejections and drops so far, by reason.
    pub rejections: Vec<(String, u64)>,
    /// Invariants broken so far.
    pub violations: Vec<ViolationRow>,
    /// Whether the run has ended.
    pub finished: bool,
    /// Why the frame could not be taken, if it could not.
    pub error: Option<String>,
}

/// Words for an enforcement mode.
pub fn enforcement_name(enforcement: Enforcement) -> &'static str {
    match enforcement {
        Enforcement::Unfenced => "unfenced",
        Enforcement::CheckThenWrite => "check-then-write",
        Enforcement::Fenced => "fenced",
        Enforcement::FencedIdempotent => "fenced + idempotent",
    }
}

fn status(status: &WorkerStatus) -> (&'static str, String) {
    match status {
        WorkerStatus::NotStarted => ("waiting", "not started".into()),
        WorkerStatus::Running => ("running", "running".into()),
        WorkerStatus::Busy { until } => ("running", format!("computing until {until}")),
        WorkerStatus::Paused { until, reason } => {
            ("paused", format!("frozen until {until} ({})", reason.describe()))
        }
        WorkerStatus::WaitingForLease { resource, until } => {
            ("waiting", format!("waiting for {resource} until {until}"))
        }
        WorkerStatus::AwaitingGrant { resource } => {
            ("waiting", format!("awaiting the grant for {resource}"))
        }
        WorkerStatus::Stopped { reason } => ("stopped", format!("stopped: {reason}")),
        WorkerStatus::Finished => ("finished", "finished".into()),
    }
}

impl Frame {
    /// Copies what the panels need out of `engine` at its current position.
    pub fn capture(engine: &Engine, timeline: &[StepRecord]) -> Frame {
        let state = engine.state();
        let now = state.now;
        let scenario = engine.scenario();
        let authority = scenario
            .resources
            .iter()
            .map(|name| {
                let id = ResourceId::new(name.as_str()).ok();
                let lease = id.as_ref().and_then(|id| state.authority.lease(id, now));
                AuthorityRow {
                    resource: name.clone(),
                    holder: lease.map(|l| l.holder.as_str().to_string()),
                    generation: id
                        .as_ref()
                        .and_then(|id| state.authority.generation(id))
                        .map(|g| g.get()),
                    valid_until: lease.map(|l| l.valid_until.0),
                }
            })
            .collect::<Vec<_>>();
        let workers = state
            .workers
            .iter()
            .map(|w| {
                let (status, status_text) = status(&w.status);
                let beliefs = w
                    .leases
                    .iter()
                    .map(|(resource, held)| {
                        let row = authority.iter().find(|a| &a.resource == resource);
                        Belief {
                            resource: resource.to_string(),
                            generation: held.generation.get(),
                            valid_until: held.valid_until.0,
                            authority_agrees: state.authority_says_holds(&w.name, resource),
                            authority_generation: row.and_then(|a| a.generation),
                            authority_holder: row.and_then(|a| a.holder.clone()),
                        }
                    })
                    .collect();
                WorkerRow { name: w.name.to_string(), status, status_text, beliefs }
            })
            .collect();
        let stores = state
            .stores
            .iter()
            .map(|s| StoreRow {
                name: s.name.clone(),
                cells: s
                    .cells
                    .iter()
                    .map(|((path, resource), cell)| {
                        let register = &cell.resource.register;
                        CellRow {
                            path: path.clone(),
                            resource: resource.to_string(),
                            enforcement: enforcement_name(cell.enforcement),
                            fenced: cell.enforcement.is_fenced(),
                            kept: Kept::of(cell.enforcement, register.highest().map(|g| g.get())),
                            value: register.value().map(str::to_string),
                            revision: register.revision().to_string(),
                            remembered: {
                                let store = &cell.resource.idempotency;
                                let skip = store.len().saturating_sub(RECENT_OPS);
                                store
                                    .remembered()
                                    .skip(skip)
                                    .map(|(op, _)| op.as_str().to_string())
                                    .collect()
                            },
                            remembered_count: cell.resource.idempotency.len(),
                        }
                    })
                    .collect(),
            })
            .collect();
        let gateway = state.gateway.as_ref().map(|g| GatewayRow {
            partner: g.partner.clone(),
            enforcement: enforcement_name(g.enforcement),
            fenced: g.enforcement.is_fenced(),
            received: g
                .received
                .iter()
                .map(|d| (d.request.generation.get(), d.request.effect.to_string(), d.at.0))
                .collect(),
        });
        let rejections =
            engine.rejections().into_iter().map(|(reason, n)| (reason.to_string(), n)).collect();
        let violations = engine
            .violations()
            .iter()
            .map(|v| ViolationRow {
                step: v.step,
                invariant: v.invariant.to_string(),
                detail: v.detail.clone(),
            })
            .collect();
        Frame {
            position: engine.position(),
            now: if engine.position() == 0 { 0 } else { now.0 },
            authority,
            workers,
            stores,
            gateway,
            rejections,
            violations,
            finished: engine.position() >= timeline.len(),
            error: None,
        }
    }

    /// A frame that says why it is empty.
    pub fn failed(position: usize, error: String) -> Frame {
        Frame { position, error: Some(error), ..Frame::default() }
    }

    /// Every cell of every store, with its store's name.
    pub fn cells(&self) -> impl Iterator<Item = (&str, &CellRow)> {
        self.stores.iter().flat_map(|s| s.cells.iter().map(move |c| (s.name.as_str(), c)))
    }
}
