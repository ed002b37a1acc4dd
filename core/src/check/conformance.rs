//! The conformance kit: plays the writes of fencing stories against any [`FencedStore`] and
//! compares every outcome with the in-memory reference, reporting the first divergence.
//!
//! ```
//! use fencelab_core::check::conformance::{check_store, Conformance};
//! use fencelab_core::store::MemoryStore;
//!
//! // Point `make` at your own store; here the reference is checked against itself.
//! let report = check_store(&fencelab_core::stories::library::all(), |spec| {
//!     Ok::<_, std::convert::Infallible>(MemoryStore::new(spec.policy, spec.retention))
//! });
//! assert!(matches!(report, Ok(Conformance { .. })));
//! ```

use crate::clock::Tick;
use crate::fence::idempotency::WriteOutcome;
use crate::fence::register::WriteRequest;
use crate::fence::store::{FencedStore, MemoryStore, StoredValue};
use crate::format::model::{Scenario, StoreSpec};
use crate::history::event::Event;
use crate::ids::ResourceId;
use crate::record::Engine;
use serde::{Deserialize, Serialize};

/// What a passing check covered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conformance {
    /// Scenarios played.
    pub scenarios: usize,
    /// Writes compared.
    pub writes: usize,
}

/// The first place a store disagreed with the reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Divergence<E: std::error::Error> {
    /// The store returned a different outcome, or ended with a different state.
    #[error("{scenario}: write {index} to {place} at {at} ({request:?}): the reference says {expected}, the store says {actual}")]
    Outcome {
        /// `name/variant` of the scenario.
        scenario: String,
        /// Which write of that scenario, from 0 (or the write count, for the final state).
        index: usize,
        /// When it was made.
        at: Tick,
        /// `store/path/resource` by name.
        place: String,
        /// The write, with its resource renamed per store path.
        request: Box<WriteRequest>,
        /// What the in-memory reference did.
        expected: String,
        /// What the store did.
        actual: String,
    },
    /// The store failed.
    #[error("{scenario}: the store failed: {error}")]
    Store {
        /// `name/variant` of the scenario.
        scenario: String,
        /// Its error.
        error: E,
    },
}

/// One write of a story, as the conformance kit replays it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoryWrite {
    /// When it reached the store.
    pub at: Tick,
    /// The request, its resource renamed `s<store>/p<path>/r<resource>` (indices) so that every
    /// store path is a resource of its own and names never grow too long.
    pub request: WriteRequest,
    /// The store it reached.
    pub spec: StoreSpec,
    /// `store/path/resource` by name, for messages.
    pub place: String,
}

/// The writes that reached stores in a scenario's default run, in order.
pub fn writes_of(scenario: &Scenario) -> Vec<StoryWrite> {
    let Ok(mut engine) = Engine::new(scenario.clone()) else { return Vec::new() };
    // A schedule that does not fit is played as far as it goes.
    while let Ok(Some(_)) = engine.step() {}
    engine
        .records()
        .iter()
        .filter_map(|record| match &record.event {
            Event::WriteArrived { store, path, request, .. }
            | Event::CheckPassed { store, path, request, .. } => {
                let s = scenario.stores.iter().position(|s| &s.name == store)?;
                let spec = scenario.stores[s].clone();
                let p = spec.paths.iter().position(|p| &p.name == path).map_or(0, |p| p + 1);
                let r = scenario.resources.iter().position(|r| *r == request.resource.as_str())?;
                let place = format!("{store}/{path}/{}", request.resource);
                let mut request = request.clone();
                request.resource = ResourceId::new(format!("s{s}/p{p}/r{r}")).ok()?;
                Some(StoryWrite { at: record.at, request, spec, place })
            }
            _ => None,
        })
        .collect()
}

/// Plays the writes of each scenario against a fresh store from `make` (given the spec of the
/// scenario's store, for its policy and retention) and against the reference, comparing every
/// outcome and the final state of every resource.
pub fn check_store<S: FencedStore>(
    scenarios: &[Scenario],
    mut make: impl FnMut(&StoreSpec) -> Result<S, S::Error>,
) -> Result<Conformance, Divergence<S::Error>> {
    let mut report = Conformance { scenarios: 0, writes: 0 };
    for scenario in scenarios {
        let label = format!("{}/{}", scenario.name, scenario.variant);
        let store_error = |error| Divergence::Store { scenario: label.clone(), error };
        let mut stores: Vec<(String, S, MemoryStore)> = Vec::new();
        let writes = writes_of(scenario);
        for (index, StoryWrite { at, request, spec, .. }) in writes.iter().enumerate() {
            if !stores.iter().any(|(name, _, _)| *name == spec.name) {
                let store = make(spec).map_err(store_error)?;
                stores.push((
                    spec.name.clone(),
                    store,
                    MemoryStore::new(spec.policy, spec.retention),
                ));
            }
            let (_, store, reference) =
                stores.iter_mut().find(|(name, _, _)| *name == spec.name).expect("just added");
            let expected = reference.write(request, *at).unwrap_or_else(|never| match never {});
            let actual = store.write(request, *at).map_err(store_error)?;
            if actual != expected {
                let (expected, actual) = (describe(&expected), describe(&actual));
                return Err(divergence(label, index, &writes[index], expected, actual));
            }
            report.writes += 1;
        }
        for (index, StoryWrite { request, spec, .. }) in writes.iter().enumerate() {
            let (_, store, reference) =
                stores.iter_mut().find(|(name, _, _)| *name == spec.name).expect("created above");
            let expected = reference.read(&request.resource).unwrap_or_else(|never| match never {});
            let actual = store.read(&request.resource).map_err(store_error)?;
            if actual != expected {
                let expected = format!("final state {}", show_value(&expected));
                let actual = format!("final state {}", show_value(&actual));
                return Err(divergence(label, index, &writes[index], expected, actual));
            }
        }
        report.scenarios += 1;
    }
    Ok(report)
}

fn divergence<E: std::error::Error>(
    scenario: String,
    index: usize,
    write: &StoryWrite,
    expected: String,
    actual: String,
) -> Divergence<E> {
    Divergence::Outcome {
        scenario,
        index,
        at: write.at,
        place: write.place.clone(),
        request: Box::new(write.request.clone()),
        expected,
        actual,
    }
}

fn describe(outcome: &WriteOutcome) -> String {
    serde_json::to_string(outcome).unwrap_or_else(|_| format!("{outcome:?}"))
}

fn show_value(value: &Option<StoredValue>) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("{value:?}"))
}
