//! A scenario compiled once for the simulator: every name a script or a fault uses resolved to an
//! index, every id built and every operation named, so that playing a step looks nothing up by
//! name and has no fallback for a name that is not there.

use crate::fence::gateway::Effect;
use crate::format::error::ScenarioError;
use crate::format::model::{
    Enforcement, ExpectedRevision, Fault, PauseReason, Scenario, Step, StoreSpec,
};
use crate::ids::{OperationId, ResourceId, WorkerId, WorkflowKey};
use crate::memory::{block, buffer, HeapSize};

/// The compiled scenario.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    /// Each resource's id, by resource index.
    pub resources: Vec<ResourceId>,
    /// Each worker's id and script, by worker index.
    pub workers: Vec<Worker>,
    /// Each store's write paths, by store index.
    pub stores: Vec<Vec<Route>>,
    /// Each fault, by fault index.
    pub faults: Vec<CompiledFault>,
    /// The injected faults, each with the number of steps that run before it.
    pub injected: Vec<(usize, CompiledFault)>,
    /// Whether some events have several ways to go (optional pauses, network jitter).
    pub branching: bool,
}

/// A worker's id and its script.
#[derive(Debug, Clone)]
pub(crate) struct Worker {
    pub id: WorkerId,
    pub script: Vec<Op>,
}

/// A write path: its name, the data it writes and how it is protected. Path 0 is `primary`.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub name: String,
    pub data: String,
    pub enforcement: Enforcement,
}

/// A store, a path into it and a resource, by index.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    pub store: usize,
    pub path: usize,
    pub resource: usize,
}

/// One script step, with its names resolved.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Acquire(usize),
    Renew(usize),
    Release(usize),
    CheckLease(usize),
    Read(Target),
    Compute(u64),
    Pause { ticks: u64, reason: PauseReason, optional: bool },
    Write(Box<WriteOp>),
    Effect(Box<EffectOp>),
    Retry(String),
}

/// A write step.
#[derive(Debug, Clone)]
pub(crate) struct WriteOp {
    pub target: Target,
    pub operation: OperationId,
    pub value: String,
    pub expected_revision: Option<ExpectedRevision>,
    pub delay: u64,
    pub forge: Option<u64>,
}

/// An effect step.
#[derive(Debug, Clone)]
pub(crate) struct EffectOp {
    pub resource: usize,
    pub workflow: WorkflowKey,
    pub operation: OperationId,
    pub effect: Effect,
    pub delay: u64,
}

/// A fault, with its worker or store resolved.
#[derive(Debug, Clone)]
pub(crate) enum CompiledFault {
    PauseWorker { worker: usize, ticks: u64, reason: PauseReason },
    DelayMessages { worker: usize, ticks: u64, count: u32 },
    SkewClock { worker: usize, by: i64 },
    LoseMessage(u64),
    RestartAuthority,
    RestartStore(usize),
}

impl Compiled {
    /// Compiles a scenario that has passed validation. A name validation should have refused is
    /// an error naming its field, never a panic or a silent fallback.
    pub fn new(scenario: &Scenario) -> Result<Compiled, ScenarioError> {
        let resources = scenario
            .resources
            .iter()
            .enumerate()
            .map(|(r, name)| id(ResourceId::new(name.clone()), format!("resources[{r}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let stores: Vec<Vec<Route>> = scenario.stores.iter().map(routes).collect();
        let resource = |name: &str, at: &str| {
            scenario
                .resources
                .iter()
                .position(|r| r == name)
                .ok_or_else(|| ScenarioError::new(at, format!("unknown resource \"{name}\"")))
        };
        let store = |name: Option<&str>, at: &str| match name {
            None => Ok(0),
            Some(name) => scenario
                .stores
                .iter()
                .position(|s| s.name == name)
                .ok_or_else(|| ScenarioError::new(at, format!("unknown store \"{name}\""))),
        };
        let path = |s: usize, name: Option<&str>, at: &str| {
            let name = name.unwrap_or("primary");
            stores[s]
                .iter()
                .position(|p| p.name == name)
                .ok_or_else(|| ScenarioError::new(at, format!("unknown path \"{name}\"")))
        };
        let mut workers = Vec::with_capacity(scenario.workers.len());
        for (w, spec) in scenario.workers.iter().enumerate() {
            let worker_id = id(WorkerId::new(spec.name.clone()), format!("workers[{w}].name"))?;
            let mut script = Vec::with_capacity(spec.script.len());
            for (pc, step) in spec.script.iter().enumerate() {
                let at = format!("workers[{w}].script[{pc}]");
                let op = match step {
                    Step::Acquire { resource: r } => Op::Acquire(resource(r, &at)?),
                    Step::Renew { resource: r } => Op::Renew(resource(r, &at)?),
                    Step::Release { resource: r } => Op::Release(resource(r, &at)?),
                    Step::CheckLease { resource: r } => Op::CheckLease(resource(r, &at)?),
                    Step::Read { resource: r, store: st, path: p } => {
                        let s = store(st.as_deref(), &at)?;
                        let target = Target {
                            store: s,
                            path: path(s, p.as_deref(), &at)?,
                            resource: resource(r, &at)?,
                        };
                        Op::Read(target)
                    }
                    Step::Compute { ticks } => Op::Compute(*ticks),
                    Step::Pause { ticks, reason, optional } => {
                        Op::Pause { ticks: *ticks, reason: *reason, optional: *optional }
                    }
                    Step::Write(write) => {
                        let s = store(write.store.as_deref(), &at)?;
                        let target = Target {
                            store: s,
                            path: path(s, write.path.as_deref(), &at)?,
                            resource: resource(&write.resource, &at)?,
                        };
                        let name = scenario.operation_name(spec, pc, write.operation.as_deref());
                        Op::Write(Box::new(WriteOp {
                            target,
                            operation: id(OperationId::new(name), format!("{at}.write.operation"))?,
                            value: write.value.clone(),
                            expected_revision: write.expected_revision,
                            delay: write.delay,
                            forge: write.forge,
                        }))
                    }
                    Step::Effect(effect) => {
                        let name = scenario.operation_name(spec, pc, effect.operation.as_deref());
                        let workflow =
                            effect.workflow.clone().unwrap_or_else(|| effect.resource.clone());
                        Op::Effect(Box::new(EffectOp {
                            resource: resource(&effect.resource, &at)?,
                            workflow: id(
                                WorkflowKey::new(workflow),
                                format!("{at}.effect.workflow"),
                            )?,
                            operation: id(
                                OperationId::new(name),
                                format!("{at}.effect.operation"),
                            )?,
                            effect: effect.effect.clone(),
                            delay: effect.delay,
                        }))
                    }
                    Step::Retry { operation } => Op::Retry(operation.clone()),
                };
                script.push(op);
            }
            workers.push(Worker { id: worker_id, script });
        }
        let worker = |name: &str, at: &str| {
            scenario
                .workers
                .iter()
                .position(|w| w.name == name)
                .ok_or_else(|| ScenarioError::new(at, format!("unknown worker \"{name}\"")))
        };
        let fault = |fault: &Fault, at: &str| -> Result<CompiledFault, ScenarioError> {
            Ok(match fault {
                Fault::PauseWorker { worker: name, ticks, reason } => CompiledFault::PauseWorker {
                    worker: worker(name, at)?,
                    ticks: *ticks,
                    reason: *reason,
                },
                Fault::DelayMessages { worker: name, ticks, count } => {
                    CompiledFault::DelayMessages {
                        worker: worker(name, at)?,
                        ticks: *ticks,
                        count: *count,
                    }
                }
                Fault::RestartAuthority => CompiledFault::RestartAuthority,
                Fault::RestartStore { store: name } => {
                    CompiledFault::RestartStore(store(Some(name), at)?)
                }
                Fault::SkewClock { worker: name, by } => {
                    CompiledFault::SkewClock { worker: worker(name, at)?, by: *by }
                }
                Fault::LoseMessage { message } => CompiledFault::LoseMessage(*message),
            })
        };
        let faults = (scenario.faults.iter().enumerate())
            .map(|(i, spec)| fault(&spec.fault, &format!("faults[{i}].fault")))
            .collect::<Result<_, _>>()?;
        let injected = (scenario.injected.iter().enumerate())
            .map(|(i, spec)| Ok((spec.after, fault(&spec.fault, &format!("injected[{i}].fault"))?)))
            .collect::<Result<_, ScenarioError>>()?;
        let branching = scenario.network.jitter > 0
            || workers
                .iter()
                .flat_map(|w| &w.script)
                .any(|op| matches!(op, Op::Pause { optional: true, .. }));
        Ok(Compiled { resources, workers, stores, faults, injected, branching })
    }
}

/// A store's write paths, `primary` first.
fn routes(store: &StoreSpec) -> Vec<Route> {
    let names = std::iter::once("primary").chain(store.paths.iter().map(|p| p.name.as_str()));
    names
        .map(|name| {
            let (data, enforcement) = store.route(name).unwrap_or(("primary", store.enforcement));
            Route { name: name.to_string(), data: data.to_string(), enforcement }
        })
        .collect()
}

fn id<T, E: std::fmt::Display>(made: Result<T, E>, at: String) -> Result<T, ScenarioError> {
    made.map_err(|e| ScenarioError::new(at, e.to_string()))
}

impl HeapSize for Compiled {
    fn heap_bytes(&self) -> usize {
        // Naming every field makes a new one a compile error here rather than a silent gap.
        let Compiled { resources, workers, stores, faults, injected, branching: _ } = self;
        let ops = |script: &Vec<Op>| -> usize {
            buffer::<Op>(script.len())
                + script
                    .iter()
                    .map(|op| match op {
                        Op::Write(w) => {
                            block(size_of::<WriteOp>())
                                + w.operation.heap_bytes()
                                + w.value.heap_bytes()
                        }
                        Op::Effect(e) => {
                            block(size_of::<EffectOp>())
                                + e.workflow.heap_bytes()
                                + e.operation.heap_bytes()
                                + e.effect.heap_bytes()
                        }
                        Op::Retry(operation) => operation.heap_bytes(),
                        _ => 0,
                    })
                    .sum::<usize>()
        };
        resources.heap_bytes()
            + buffer::<Worker>(workers.len())
            + workers.iter().map(|w| w.id.heap_bytes() + ops(&w.script)).sum::<usize>()
            + buffer::<Vec<Route>>(stores.len())
            + stores
                .iter()
                .map(|routes| {
                    buffer::<Route>(routes.len())
                        + routes
                            .iter()
                            .map(|r| r.name.heap_bytes() + r.data.heap_bytes())
                            .sum::<usize>()
                })
                .sum::<usize>()
            + buffer::<CompiledFault>(faults.len())
            + buffer::<(usize, CompiledFault)>(injected.len())
    }
}
