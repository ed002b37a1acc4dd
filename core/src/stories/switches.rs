//! "Break the protocol" switches: each one turns off one protection of a scenario, so a learner
//! can flip it and let the explorer find what goes wrong. Beside them, the transforms a front end
//! applies to a whole scenario: one same-generation policy, or one enforcement mode, everywhere.

use crate::fence::register::SameGenerationPolicy;
use crate::format::model::{Enforcement, Fault, Scenario, Step, TokenSource};
use serde::{Deserialize, Serialize};

/// One protection turned off.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
pub enum Switch {
    /// Stores apply every write without looking at its token.
    UnfencedStore,
    /// Stores check the token, then write in a separate step.
    CheckThenWrite,
    /// Stores accept only strictly newer generations (each owner writes once).
    StrictlyNewer,
    /// The authority keeps its counter in memory only; a restart starts it over.
    VolatileCounter,
    /// Stores keep the highest generation apart from the data; a restart loses it.
    HighestNotPersisted,
    /// Secondary write paths (an object body, a bulk import) skip the fence.
    UnfencedSecondaryPath,
    /// Workers use their wall clock as the token.
    WallClockTokens,
    /// Stores accept any token, without checking the authority's proof.
    UnauthenticatedTokens,
    /// The side-effect gateway passes every request on.
    UnfencedGateway,
}

impl Switch {
    /// Every switch, in display order.
    pub const ALL: [Switch; 9] = [
        Switch::UnfencedStore,
        Switch::CheckThenWrite,
        Switch::StrictlyNewer,
        Switch::VolatileCounter,
        Switch::HighestNotPersisted,
        Switch::UnfencedSecondaryPath,
        Switch::WallClockTokens,
        Switch::UnauthenticatedTokens,
        Switch::UnfencedGateway,
    ];

    /// A label for a checkbox.
    pub fn label(self) -> &'static str {
        match self {
            Switch::UnfencedStore => "unfenced store",
            Switch::CheckThenWrite => "check, then write",
            Switch::StrictlyNewer => "strictly newer generations only",
            Switch::VolatileCounter => "counter not persisted across authority restart",
            Switch::HighestNotPersisted => "highest generation not persisted across store restart",
            Switch::UnfencedSecondaryPath => "unfenced secondary write path",
            Switch::WallClockTokens => "wall-clock tokens",
            Switch::UnauthenticatedTokens => "unauthenticated tokens",
            Switch::UnfencedGateway => "unfenced side-effect gateway",
        }
    }

    /// Whether flipping this switch changes anything in `scenario` (a restart switch needs a
    /// restart fault, a path switch needs a secondary path, and so on).
    pub fn applies_to(self, scenario: &Scenario) -> bool {
        let writes =
            scenario.workers.iter().flat_map(|w| &w.script).any(|s| matches!(s, Step::Write(_)));
        let has_fault = |f: fn(&Fault) -> bool| scenario.faults.iter().any(|spec| f(&spec.fault));
        match self {
            Switch::UnfencedStore
            | Switch::CheckThenWrite
            | Switch::StrictlyNewer
            | Switch::WallClockTokens => writes,
            Switch::VolatileCounter => has_fault(|f| matches!(f, Fault::RestartAuthority)),
            Switch::HighestNotPersisted => has_fault(|f| matches!(f, Fault::RestartStore { .. })),
            Switch::UnfencedSecondaryPath => scenario.stores.iter().any(|s| !s.paths.is_empty()),
            Switch::UnauthenticatedTokens => scenario
                .workers
                .iter()
                .flat_map(|w| &w.script)
                .any(|s| matches!(s, Step::Write(w) if w.forge.is_some())),
            Switch::UnfencedGateway => scenario.gateway.is_some(),
        }
    }

    /// Whether `scenario` already has this protection turned off.
    pub fn is_on(self, scenario: &Scenario) -> bool {
        let stores = &scenario.stores;
        match self {
            Switch::UnfencedStore => stores.iter().any(|s| s.enforcement == Enforcement::Unfenced),
            Switch::CheckThenWrite => {
                stores.iter().any(|s| s.enforcement == Enforcement::CheckThenWrite)
            }
            Switch::StrictlyNewer => {
                stores.iter().any(|s| s.policy == SameGenerationPolicy::StrictlyNewer)
            }
            Switch::VolatileCounter => {
                scenario.authority.token_source == TokenSource::VolatileCounter
            }
            Switch::HighestNotPersisted => stores.iter().any(|s| !s.persist_highest),
            Switch::UnfencedSecondaryPath => {
                stores.iter().flat_map(|s| &s.paths).any(|p| !p.enforcement.is_fenced())
            }
            Switch::WallClockTokens => scenario.authority.token_source == TokenSource::WallClock,
            Switch::UnauthenticatedTokens => !scenario.authority.authenticated,
            Switch::UnfencedGateway => {
                scenario.gateway.as_ref().is_some_and(|g| !g.enforcement.is_fenced())
            }
        }
    }

    /// Turns this protection off in `scenario`. The scenario's expectations are cleared: what
    /// breaks is for the run or the explorer to find.
    pub fn apply(self, scenario: &mut Scenario) {
        scenario.expect = Default::default();
        let stores = &mut scenario.stores;
        match self {
            Switch::UnfencedStore => {
                stores.iter_mut().for_each(|s| s.enforcement = Enforcement::Unfenced)
            }
            Switch::CheckThenWrite => {
                stores.iter_mut().for_each(|s| s.enforcement = Enforcement::CheckThenWrite)
            }
            Switch::StrictlyNewer => {
                stores.iter_mut().for_each(|s| s.policy = SameGenerationPolicy::StrictlyNewer)
            }
            Switch::VolatileCounter => {
                scenario.authority.token_source = TokenSource::VolatileCounter
            }
            Switch::HighestNotPersisted => {
                stores.iter_mut().for_each(|s| s.persist_highest = false)
            }
            Switch::UnfencedSecondaryPath => stores
                .iter_mut()
                .flat_map(|s| s.paths.iter_mut())
                .for_each(|p| p.enforcement = Enforcement::Unfenced),
            Switch::WallClockTokens => scenario.authority.token_source = TokenSource::WallClock,
            Switch::UnauthenticatedTokens => scenario.authority.authenticated = false,
            Switch::UnfencedGateway => {
                if let Some(g) = scenario.gateway.as_mut() {
                    g.enforcement = Enforcement::Unfenced;
                }
            }
        }
    }
}

/// `scenario` with every switch in `switches` applied. A built-in story's intro keeps its shared
/// set-up and, instead of the variant's line, says which protections this run turns off; the
/// variant's outcome, which told how the protected run ends, is dropped.
pub fn broken(scenario: &Scenario, switches: &[Switch]) -> Scenario {
    let mut s = scenario.clone();
    for switch in switches {
        switch.apply(&mut s);
    }
    let setup = crate::stories::library::setup(&s.name).filter(|set| s.intro.starts_with(set));
    if let (Some(setup), false) = (setup, switches.is_empty()) {
        let labels: Vec<&str> = switches.iter().map(|w| w.label()).collect();
        s.intro = format!(
            "{setup} This run turns protections off ({}): what goes wrong is for the run, or the explorer, to show.",
            labels.join("; ")
        );
        s.outcome.clear();
    }
    s
}

/// `scenario` with `policy` on every store and the gateway, as when a reader forces one
/// same-generation policy on a story. Unlike [`Switch::apply`], it leaves the expectations alone.
pub fn with_policy(scenario: &Scenario, policy: SameGenerationPolicy) -> Scenario {
    let mut scenario = scenario.clone();
    for store in &mut scenario.stores {
        store.policy = policy;
    }
    if let Some(gateway) = &mut scenario.gateway {
        gateway.policy = policy;
    }
    scenario
}

/// `scenario` with `enforcement` on every store and write path, as each side of compare mode
/// plays it. The gateway knows only fenced and unfenced, so it is fenced exactly when
/// `enforcement` is a fenced mode. Unlike [`Switch::apply`], it leaves the expectations alone.
pub fn with_enforcement(scenario: &Scenario, enforcement: Enforcement) -> Scenario {
    let mut scenario = scenario.clone();
    for store in &mut scenario.stores {
        store.enforcement = enforcement;
        for path in &mut store.paths {
            path.enforcement = enforcement;
        }
    }
    if let Some(gateway) = &mut scenario.gateway {
        gateway.enforcement =
            if enforcement.is_fenced() { Enforcement::Fenced } else { Enforcement::Unfenced };
    }
    scenario
}
