//! What a test that drives the core usually needs, in one import:
//!
//! ```
//! use fencelab_core::prelude::*;
//!
//! let mut engine = Engine::new(library::scenario("paused-worker", Some("broken"))?)?;
//! let verdict = engine.run()?;
//! verdict.assert_met();
//! assert_eq!(verdict.assert_violation(InvariantKind::StaleWriteAccepted).step.index(), 18);
//! # Ok::<(), fencelab_core::Error>(())
//! ```
//!
//! It holds types, the story [`library`], the [`conformance`] kit and one trait, [`FencedStore`],
//! whose `write` and `read` a store test calls. The error that joins every entry point's error,
//! [`fencelab_core::Error`](crate::Error), is left out so that it does not shadow a caller's own
//! `Error`.

pub use crate::check::Checker;
pub use crate::clock::{RunStep, Tick};
pub use crate::drive::conformance;
pub use crate::drive::explore::{ExploreConfig, ExploreResult, Explorer};
pub use crate::fence::authority::{Lease, LeaseAuthority};
pub use crate::fence::boundary::FencedResource;
pub use crate::fence::gateway::{EffectRequest, GatewayOutcome, SideEffectGateway};
pub use crate::fence::generation::Generation;
pub use crate::fence::idempotency::{Retention, StoredResult, WriteOutcome};
pub use crate::fence::register::{
    Applied, FencedRegister, RejectionReason, Revision, SameGenerationPolicy, WriteRejection,
    WriteRequest,
};
pub use crate::fence::store::{FencedStore, MemoryStore, StoredValue};
pub use crate::format::error::ScenarioError;
pub use crate::format::model::{Enforcement, Fault, PauseReason, Scenario, StoreSpec};
pub use crate::history::event::Event;
pub use crate::history::{Entry, History, Setup};
pub use crate::ids::{OperationId, ResourceId, WorkerId, WorkflowKey};
pub use crate::invariant::{InvariantKind, Violation};
pub use crate::record::{Engine, EngineError, Verdict};
pub use crate::stories::library::{self, UnknownStory};
