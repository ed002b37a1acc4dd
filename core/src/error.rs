//! One error for everything the core's entry points return, so that `?` works on all of them in
//! a function returning [`Result<T, fencelab_core::Error>`](Error).

use crate::check::checkpoint::CheckpointError;
use crate::fence::authority::LeaseError;
use crate::fence::generation::TokenError;
use crate::fence::log::LogError;
use crate::fence::register::WriteRejection;
use crate::format::error::ScenarioError;
use crate::history::HistoryError;
use crate::ids::IdError;
use crate::record::export::RunError;
use crate::record::EngineError;
use crate::stories::library::UnknownStory;
use std::convert::Infallible;

/// Any error of the core's entry points, each kept whole in its own variant, whose message and
/// [`source`](std::error::Error::source) are the wrapped error's.
///
/// Every entry point keeps its own precise error type ([`Engine::new`](crate::Engine::new) a
/// [`ScenarioError`], [`Engine::run`](crate::Engine::run) an [`EngineError`], and so on); this
/// type only joins them, through `From`, for callers such as tests that handle them all alike:
///
/// ```
/// use fencelab_core::prelude::*;
///
/// fn paused_worker() -> Result<Verdict, fencelab_core::Error> {
///     let scenario = library::scenario("paused-worker", Some("fenced"))?; // UnknownStory
///     let mut engine = Engine::new(scenario)?; // ScenarioError
///     let verdict = engine.run()?; // EngineError
///     let resource: ResourceId = engine.scenario().resources[0].parse()?; // IdError
///     assert_eq!(resource.as_str(), "totals");
///     Ok(verdict)
/// }
/// paused_worker()?.assert_met();
///
/// let unknown = library::scenario("paused-wroker", None).map_err(fencelab_core::Error::from);
/// assert!(matches!(unknown, Err(fencelab_core::Error::UnknownStory(_))));
/// # Ok::<(), fencelab_core::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A story name or variant the library does not have
    /// ([`library::scenario`](crate::stories::library::scenario)).
    #[error(transparent)]
    UnknownStory(#[from] UnknownStory),
    /// An invalid scenario ([`Scenario::from_json`](crate::Scenario::from_json),
    /// [`Engine::new`](crate::Engine::new), [`Explorer::new`](crate::drive::explore::Explorer::new)).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The engine could not go on ([`Engine::run`](crate::Engine::run),
    /// [`step`](crate::Engine::step), [`seek`](crate::Engine::seek), an exploration that stopped).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// An empty or overlong name ([`ResourceId::new`](crate::ResourceId::new) and the other ids).
    #[error(transparent)]
    Id(#[from] IdError),
    /// A history that cannot be read ([`History::from_jsonl`](crate::History::from_jsonl)).
    #[error(transparent)]
    History(#[from] HistoryError),
    /// A run file that cannot be read or does not replay as recorded
    /// ([`RunExport::import`](crate::record::export::RunExport::import)).
    #[error(transparent)]
    Run(#[from] RunError),
    /// A checkpoint the run cannot place ([`check::checkpoint`](crate::check::checkpoint)).
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// The lease authority refused ([`LeaseAuthority`](crate::fence::authority::LeaseAuthority)).
    #[error(transparent)]
    Lease(#[from] LeaseError),
    /// A token that is not a generation ([`Generation::new`](crate::Generation::new)).
    #[error(transparent)]
    Token(#[from] TokenError),
    /// A register refused a write ([`FencedRegister::write`](crate::fence::register::FencedRegister::write)).
    #[error(transparent)]
    Write(#[from] WriteRejection),
    /// An operation log that cannot be read
    /// ([`OperationLog::from_json`](crate::fence::log::OperationLog::from_json)).
    #[error(transparent)]
    Log(#[from] LogError),
}

/// The error of what cannot fail, such as [`MemoryStore`](crate::fence::store::MemoryStore)'s writes, so that
/// `?` works on them too.
impl From<Infallible> for Error {
    fn from(never: Infallible) -> Error {
        match never {}
    }
}

/// The message, as `Display` gives it: a test that returns `Result<_, Error>` prints its error
/// with `Debug`, and the message is what says what went wrong.
impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
