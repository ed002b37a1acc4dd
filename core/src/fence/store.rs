//! The protected resource as a trait, so a real store (a database table, an object store) can be
//! checked against the in-memory reference with the same stories.

use crate::clock::Tick;
use crate::fence::boundary::FencedResource;
use crate::fence::generation::Generation;
use crate::fence::idempotency::{Retention, StoredResult, WriteOutcome};
use crate::fence::register::{FencedRegister, Revision, SameGenerationPolicy, WriteRequest};
use crate::ids::{OperationId, ResourceId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::convert::Infallible;

/// What a store holds for one resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredValue {
    /// The highest generation that has passed the fence.
    pub highest: Option<Generation>,
    /// The current value.
    pub value: Option<String>,
    /// How many writes have been applied.
    pub revision: Revision,
}

/// `"B's value" at revision r2, highest generation 3`.
impl std::fmt::Display for StoredValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.value {
            Some(value) => write!(f, "{value:?}")?,
            None => f.write_str("no value")?,
        }
        write!(f, " at revision {}, highest generation ", self.revision)?;
        match self.highest {
            Some(highest) => write!(f, "{highest}"),
            None => f.write_str("none"),
        }
    }
}

/// A protected store with the full write boundary of [`FencedResource`]: per resource, the
/// generation check, operation ids with stored results, and expected revisions, with the same
/// outcomes and the same order of checks.
///
/// Implementations must make each `write` atomic: the comparison and the mutation happen in one
/// step that no other writer can interleave with (a conditional update in one transaction).
/// The conformance kit ([`drive::conformance`](crate::drive::conformance)) checks the rules one
/// writer at a time; `fencelab_kit::check_concurrent` races writers to check atomicity.
///
/// What a store keeps per resource is [`boundary::Held`](crate::fence::boundary::Held): besides
/// the value, the revision and the operation ids, the fence record is the highest generation
/// that has passed *and whether a write under it has acted*. The strict policy
/// ([`SameGenerationPolicy::StrictlyNewer`](crate::fence::register::SameGenerationPolicy))
/// needs the second part: the first write under a generation applies, a second one under the
/// same generation is refused, and that generation's own retry of its operation is answered
/// from the stored result until the id expires (then refused, not applied again). A store that
/// keeps only the highest generation cannot tell the first write from the second; the
/// conformance kit's strict-policy cases catch it.
pub trait FencedStore {
    /// What can go wrong besides a rejection (I/O, a locked database).
    type Error: std::error::Error;

    /// Checks and, if every check passes, applies `request` at logical time `now`.
    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Self::Error>;

    /// The current state of `resource`, or `None` if no request ever passed its fence.
    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Self::Error>;

    /// The stored result of `operation` on `resource`, if it is still remembered.
    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, Self::Error>;
}

/// The in-memory reference implementation: one [`FencedResource`] per resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryStore {
    policy: SameGenerationPolicy,
    retention: Retention,
    resources: BTreeMap<ResourceId, FencedResource>,
}

impl MemoryStore {
    /// An empty store whose resources use `policy` and `retention`.
    pub fn new(policy: SameGenerationPolicy, retention: Retention) -> Self {
        MemoryStore { policy, retention, resources: BTreeMap::new() }
    }
}

impl FencedStore for MemoryStore {
    type Error = Infallible;

    fn write(&mut self, request: &WriteRequest, now: Tick) -> Result<WriteOutcome, Infallible> {
        let (policy, retention) = (self.policy, self.retention);
        let resource = self.resources.entry(request.resource.clone()).or_insert_with(|| {
            FencedResource::new(FencedRegister::new(request.resource.clone(), policy), retention)
        });
        Ok(resource.write(request, now))
    }

    fn read(&mut self, resource: &ResourceId) -> Result<Option<StoredValue>, Infallible> {
        let touched = |r: &&FencedResource| r.register.highest().is_some();
        Ok(self.resources.get(resource).filter(touched).map(|r| StoredValue {
            highest: r.register.highest(),
            value: r.register.value().map(str::to_string),
            revision: r.register.revision(),
        }))
    }

    fn lookup(
        &mut self,
        resource: &ResourceId,
        operation: &OperationId,
    ) -> Result<Option<StoredResult>, Infallible> {
        Ok(self.resources.get(resource).and_then(|r| r.idempotency.lookup(operation)).copied())
    }
}
