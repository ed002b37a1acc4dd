//! Checking scenarios: what the file format alone cannot say (names, references, limits,
//! orders). Every problem is reported with the path of the field that has it, so a person editing
//! JSON by hand can find it.

use crate::fence::generation::Generation;
use crate::format::model::{Checkpoint, Enforcement, Fault, Scenario, Step};
use crate::ids::{OperationId, ResourceId, WorkerId, WorkflowKey};
use crate::maps::StringSet;
use litemap::LiteMap;

use crate::format::error::ScenarioError;
use crate::format::limits::*;

impl Scenario {
    /// Checks everything that the file format alone cannot: names, references, limits, orders.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let err = |path: String, problem: String| Err(ScenarioError::new(path, problem));
        if self.name.trim().is_empty() {
            return err("name".into(), "must not be empty".into());
        }
        check_count("resources", self.resources.len(), 1, MAX_ITEMS)?;
        check_count("stores", self.stores.len(), 1, MAX_ITEMS)?;
        check_count("workers", self.workers.len(), 1, MAX_WORKERS)?;
        check_count("faults", self.faults.len(), 0, MAX_ITEMS)?;
        let resources =
            unique_names("resources", self.resources.iter().map(String::as_str), |n| {
                ResourceId::new(n).map(|_| ()).map_err(|e| e.to_string())
            })?;
        if self.authority.ttl == 0 {
            return err("authority.ttl".into(), "must be at least 1 tick".into());
        }
        check_ticks("authority.ttl", self.authority.ttl)?;
        check_ticks("network.latency", self.network.latency)?;
        if self.network.jitter > MAX_JITTER {
            return err("network.jitter".into(), format!("must be at most {MAX_JITTER} ticks"));
        }
        let stores = unique_names("stores", self.stores.iter().map(|s| s.name.as_str()), plain)?;
        for (i, store) in self.stores.iter().enumerate() {
            check_ticks(&format!("stores[{i}].check_write_gap"), store.check_write_gap)?;
            check_count(&format!("stores[{i}].paths"), store.paths.len(), 0, MAX_ITEMS)?;
            unique_names(
                &format!("stores[{i}].paths"),
                store.paths.iter().map(|p| p.name.as_str()),
                |n| {
                    // `primary` names the store's own default path, so no extra path may take it.
                    if n == "primary" {
                        return Err("\"primary\" is the name of the store's default path; give this path another name".into());
                    }
                    plain(n)
                },
            )?;
            for (p, path) in store.paths.iter().enumerate() {
                let Some(data) = &path.data else { continue };
                // Data is named after the path that owns it; a path into another path's data
                // must name data that is really kept, not a chain of borrowed names.
                if !store.data_names().any(|d| d == data) {
                    return err(
                        format!("stores[{i}].paths[{p}].data"),
                        format!("unknown data \"{data}\": use \"primary\" or the name of a path of this store that writes its own data"),
                    );
                }
            }
            if let Some(age) = store.retention.max_age {
                check_ticks(&format!("stores[{i}].retention.max_age"), age)?;
            }
        }
        if let Some(gateway) = &self.gateway {
            // The gateway's fence is atomic by construction and it has no revisions to compare, so
            // the two store-only modes would run a check the caption says is not there.
            if matches!(
                gateway.enforcement,
                Enforcement::CheckThenWrite | Enforcement::FencedIdempotent
            ) {
                return err(
                    "gateway.enforcement".into(),
                    format!(
                        "\"{}\" is a store mode; a gateway is \"fenced\" (it drops stale and repeated effects) or \"unfenced\"",
                        crate::names::Named::name(gateway.enforcement)
                    ),
                );
            }
        }
        let workers = unique_names("workers", self.workers.iter().map(|w| w.name.as_str()), |n| {
            WorkerId::new(n).map(|_| ()).map_err(|e| e.to_string())
        })?;
        let mut total = 0usize;
        let mut workflows: LiteMap<String, (String, String)> = LiteMap::new();
        for (w, worker) in self.workers.iter().enumerate() {
            let at = format!("workers[{w}]");
            check_count(&format!("{at}.script"), worker.script.len(), 0, MAX_SCRIPT_STEPS)?;
            total += worker.script.len();
            if total > MAX_TOTAL_STEPS {
                return err(
                    format!("{at}.script"),
                    format!("all scripts together exceed {MAX_TOTAL_STEPS} steps"),
                );
            }
            check_ticks(&format!("{at}.start"), worker.start)?;
            if worker.clock_offset.unsigned_abs() > MAX_TICKS {
                return err(format!("{at}.clock_offset"), format!("must be within ±{MAX_TICKS}"));
            }
            self.validate_script(&at, worker, &resources, &mut workflows)?;
        }
        for (f, fault) in self.faults.iter().enumerate() {
            let at = format!("faults[{f}]");
            check_ticks(&format!("{at}.at"), fault.at)?;
            validate_fault(&at, &fault.fault, &workers, &stores)?;
        }
        check_count("injected", self.injected.len(), 0, MAX_ITEMS)?;
        let mut after = 0;
        for (i, injection) in self.injected.iter().enumerate() {
            let at = format!("injected[{i}]");
            if injection.after < after {
                return err(
                    format!("{at}.after"),
                    format!("is {}, before the injection above it (after {after} steps): injections run in list order", injection.after),
                );
            }
            if injection.after >= MAX_RUN_STEPS {
                return err(
                    format!("{at}.after"),
                    format!("must be below {}, the longest run", MAX_RUN_STEPS),
                );
            }
            after = injection.after;
            validate_fault(&at, &injection.fault, &workers, &stores)?;
        }
        check_count("checkpoints", self.checkpoints.len(), 0, MAX_ITEMS)?;
        // The names a checkpoint asks about are not checked here: an edited story that drops a
        // worker stays playable, and placing the checkpoint in the run says what it misses.
        for (i, checkpoint) in self.checkpoints.iter().enumerate() {
            if let Checkpoint::WriteAccepted { nth: Some(0), .. }
            | Checkpoint::EffectDelivered { nth: Some(0), .. } = checkpoint
            {
                let kind = crate::names::variant_name(checkpoint).unwrap_or("checkpoint");
                return err(format!("checkpoints[{i}].{kind}.nth"), "counts from 1".into());
            }
        }
        Ok(())
    }

    /// Checks that every checkpoint asks about a worker or store the scenario has. Not part of
    /// [`Scenario::validate`]: an edited story that drops a worker stays playable on the page,
    /// which skips the checkpoint; a scenario file read by the command line is refused.
    pub fn check_checkpoint_names(&self) -> Result<(), ScenarioError> {
        for (i, checkpoint) in self.checkpoints.iter().enumerate() {
            let kind = crate::names::variant_name(checkpoint).unwrap_or("checkpoint");
            let (field, name, known): (&str, &str, Vec<&str>) = match checkpoint {
                Checkpoint::WriteAccepted { worker, .. }
                | Checkpoint::EffectDelivered { worker, .. } => {
                    ("worker", worker, self.workers.iter().map(|w| w.name.as_str()).collect())
                }
                Checkpoint::FinalValue { store, .. } => {
                    ("store", store, self.stores.iter().map(|s| s.name.as_str()).collect())
                }
            };
            if !known.contains(&name) {
                return Err(ScenarioError::new(
                    format!("checkpoints[{i}].{kind}.{field}"),
                    format!(
                        "\"{name}\" is not one of the scenario's {field}s ({})",
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn validate_script(
        &self,
        at: &str,
        worker: &crate::format::model::WorkerSpec,
        resources: &StringSet,
        workflows: &mut LiteMap<String, (String, String)>,
    ) -> Result<(), ScenarioError> {
        let check_operation = |path: String, name: String| {
            OperationId::new(name).map(|id| id.as_str().to_string()).map_err(|e| {
                ScenarioError::new(
                    path,
                    format!("{e} (give the step an explicit, shorter operation id)"),
                )
            })
        };
        let mut acquired: Vec<&str> = Vec::new();
        let mut operations: StringSet = StringSet::new();
        let needs_lease = |path: String, resource: &str, acquired: &[&str]| {
            if acquired.contains(&resource) {
                Ok(())
            } else {
                Err(ScenarioError::new(
                    path,
                    format!(
                        "the worker has not acquired a lease on \"{resource}\" before this step"
                    ),
                ))
            }
        };
        for (s, step) in worker.script.iter().enumerate() {
            let here = format!("{at}.script[{s}]");
            // Paths inside a step start with its name, e.g. `workers[0].script[2].write.delay`.
            let inside = format!("{here}.{}", step.name());
            match step {
                Step::Acquire { resource } => {
                    known(&format!("{inside}.resource"), "resource", resource, resources)?;
                    if !acquired.contains(&resource.as_str()) {
                        acquired.push(resource);
                    }
                }
                Step::Renew { resource }
                | Step::Release { resource }
                | Step::CheckLease { resource } => {
                    let path = format!("{inside}.resource");
                    known(&path, "resource", resource, resources)?;
                    needs_lease(path, resource, &acquired)?;
                }
                Step::Read { resource, store, path } => {
                    known(&format!("{inside}.resource"), "resource", resource, resources)?;
                    self.check_target(&inside, store.as_deref(), path.as_deref())?;
                }
                Step::Compute { ticks } => check_ticks(&format!("{inside}.ticks"), *ticks)?,
                Step::Pause { ticks, .. } => check_ticks(&format!("{inside}.ticks"), *ticks)?,
                Step::Write(write) => {
                    let path = format!("{inside}.resource");
                    known(&path, "resource", &write.resource, resources)?;
                    if let Some(forged) = write.forge {
                        Generation::new(forged).map_err(|e| {
                            ScenarioError::new(format!("{inside}.forge"), e.to_string())
                        })?;
                    } else {
                        needs_lease(path, &write.resource, &acquired)?;
                    }
                    self.check_target(&inside, write.store.as_deref(), write.path.as_deref())?;
                    check_ticks(&format!("{inside}.delay"), write.delay)?;
                    let name = self.operation_name(worker, s, write.operation.as_deref());
                    operations.insert(check_operation(format!("{inside}.operation"), name)?);
                }
                Step::Effect(effect) => {
                    if self.gateway.is_none() {
                        return Err(ScenarioError::new(
                            inside,
                            "the scenario has no gateway to send effects through",
                        ));
                    }
                    let path = format!("{inside}.resource");
                    known(&path, "resource", &effect.resource, resources)?;
                    needs_lease(path, &effect.resource, &acquired)?;
                    check_ticks(&format!("{inside}.delay"), effect.delay)?;
                    let name = self.operation_name(worker, s, effect.operation.as_deref());
                    operations.insert(check_operation(format!("{inside}.operation"), name)?);
                    let workflow =
                        effect.workflow.clone().unwrap_or_else(|| effect.resource.clone());
                    let path = format!("{inside}.workflow");
                    WorkflowKey::new(workflow.clone())
                        .map_err(|e| ScenarioError::new(path.clone(), e.to_string()))?;
                    // The gateway compares generations per workflow; generations of different
                    // resources come from different counters and cannot be compared.
                    match workflows.get(&workflow) {
                        Some((resource, first)) if *resource != effect.resource => {
                            return Err(ScenarioError::new(
                                path,
                                format!(
                                    "workflow \"{workflow}\" is already authorized by resource \"{resource}\" ({first}); all effects of one workflow must come under one resource's lease, because generations of different resources cannot be compared"
                                ),
                            ))
                        }
                        Some(_) => {}
                        None => {
                            workflows.insert(workflow, (effect.resource.clone(), here.clone()));
                        }
                    }
                }
                Step::Retry { operation } => {
                    if !operations.contains(operation) {
                        return Err(ScenarioError::new(
                            format!("{inside}.operation"),
                            format!("no earlier write or effect of this worker has operation id \"{operation}\""),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_target(
        &self,
        at: &str,
        store: Option<&str>,
        path: Option<&str>,
    ) -> Result<(), ScenarioError> {
        let spec = match store {
            None => &self.stores[0],
            Some(name) => self.stores.iter().find(|s| s.name == name).ok_or_else(|| {
                ScenarioError::new(format!("{at}.store"), format!("unknown store \"{name}\""))
            })?,
        };
        match path {
            Some(p) if p != "primary" && !spec.paths.iter().any(|sp| sp.name == p) => {
                Err(ScenarioError::new(
                    format!("{at}.path"),
                    format!("store \"{}\" has no write path \"{p}\"", spec.name),
                ))
            }
            _ => Ok(()),
        }
    }

    /// The operation id a write or effect step uses: its own, or one made from the worker's name
    /// and the step's position.
    pub fn operation_name(
        &self,
        worker: &crate::format::model::WorkerSpec,
        step: usize,
        explicit: Option<&str>,
    ) -> String {
        explicit.map_or_else(|| format!("{}-op{step}", worker.name), str::to_string)
    }
}

fn plain(name: &str) -> Result<(), String> {
    crate::ids::check_name("name", name).map_err(|e| match e {
        crate::ids::IdError::Empty { .. } => "must not be empty".into(),
        crate::ids::IdError::TooLong { max, .. } => format!("longer than {max} characters"),
    })
}

fn unique_names<'a>(
    at: &str,
    names: impl Iterator<Item = &'a str>,
    check: impl Fn(&str) -> Result<(), String>,
) -> Result<StringSet, ScenarioError> {
    let mut seen = StringSet::new();
    for (i, name) in names.enumerate() {
        check(name).map_err(|p| ScenarioError::new(format!("{at}[{i}]"), p))?;
        if !seen.insert(name.to_string()) {
            return Err(ScenarioError::new(
                format!("{at}[{i}]"),
                format!("\"{name}\" appears twice"),
            ));
        }
    }
    Ok(seen)
}

/// Checks a fault's names and sizes; `at` is where it sits, e.g. `faults[2]`.
fn validate_fault(
    at: &str,
    fault: &Fault,
    workers: &StringSet,
    stores: &StringSet,
) -> Result<(), ScenarioError> {
    let here = format!("{at}.fault.{}", fault.name());
    match fault {
        Fault::PauseWorker { worker, ticks, .. } => {
            known(&format!("{here}.worker"), "worker", worker, workers)?;
            check_fault_ticks(&format!("{here}.ticks"), *ticks)
        }
        Fault::DelayMessages { worker, ticks, count } => {
            known(&format!("{here}.worker"), "worker", worker, workers)?;
            check_fault_ticks(&format!("{here}.ticks"), *ticks)?;
            if *count == 0 || *count as usize > MAX_ITEMS {
                let problem = format!("must be between 1 and {MAX_ITEMS}");
                return Err(ScenarioError::new(format!("{here}.count"), problem));
            }
            Ok(())
        }
        Fault::RestartStore { store } => known(&format!("{here}.store"), "store", store, stores),
        Fault::RestartAuthority | Fault::LoseMessage { .. } => Ok(()),
        Fault::SkewClock { worker, by } => {
            known(&format!("{here}.worker"), "worker", worker, workers)?;
            if *by == 0 {
                return Err(ScenarioError::new(
                    format!("{here}.by"),
                    "must not be 0 (a clock that does not move is no fault)",
                ));
            }
            if by.unsigned_abs() > MAX_TICKS {
                let problem =
                    format!("a jump of {by} ticks is beyond the limit of {MAX_TICKS} either way");
                return Err(ScenarioError::new(format!("{here}.by"), problem));
            }
            Ok(())
        }
    }
}

fn known(path: &str, kind: &str, name: &str, names: &StringSet) -> Result<(), ScenarioError> {
    if names.contains(name) {
        Ok(())
    } else {
        Err(ScenarioError::new(path, format!("unknown {kind} \"{name}\"")))
    }
}

fn check_count(path: &str, len: usize, min: usize, max: usize) -> Result<(), ScenarioError> {
    if len < min {
        Err(ScenarioError::new(path, format!("needs at least {min} entry")))
    } else if len > max {
        Err(ScenarioError::new(path, format!("has {len} entries; the limit is {max}")))
    } else {
        Ok(())
    }
}

/// A fault that pauses or slows by no time at all would change nothing but the transcript, so it
/// is almost certainly a mistake in the file.
fn check_fault_ticks(path: &str, ticks: u64) -> Result<(), ScenarioError> {
    if ticks == 0 {
        return Err(ScenarioError::new(
            path,
            "must be at least 1 (a fault of 0 ticks does nothing)",
        ));
    }
    check_ticks(path, ticks)
}

fn check_ticks(path: &str, ticks: u64) -> Result<(), ScenarioError> {
    if ticks > MAX_TICKS {
        Err(ScenarioError::new(
            path,
            format!("{ticks} ticks is more than the limit of {MAX_TICKS}"),
        ))
    } else {
        Ok(())
    }
}
