//! A pure, deterministic model of leases and fencing tokens.
//!
//! A lease gives a worker authority for a while; the worker can lose it while still running (a GC
//! pause, a stalled network) and later write stale state over a newer owner's work. A fencing
//! token stops that: the [`LeaseAuthority`](fence::authority::LeaseAuthority) issues a strictly increasing [`Generation`] with every
//! grant, and the protected resource, a [`FencedRegister`](fence::register::FencedRegister), remembers the highest generation it has
//! accepted and rejects older ones in the same step as the write.
//!
//! ```
//! use fencelab_core::prelude::*;
//! use std::num::NonZeroU64;
//!
//! let ledger: ResourceId = "ledger".parse()?;
//! let (a, b) = ("A".parse()?, "B".parse()?);
//! let mut authority = LeaseAuthority::new(NonZeroU64::new(10).unwrap());
//! let mut register = FencedRegister::new(ledger.clone(), SameGenerationPolicy::AllowSame);
//!
//! // A acquires generation 1, then pauses past its TTL; B acquires generation 2 and writes.
//! let lease_a = authority.acquire(&ledger, &a, Tick(0))?;
//! let lease_b = authority.acquire(&ledger, &b, Tick(12))?;
//! let new = WriteRequest::new(ledger.clone(), lease_b.generation, "b-1".parse()?, None, "fresh");
//! register.write(&new)?;
//!
//! // A resumes, still believing it owns the ledger. The register refuses it.
//! let stale = WriteRequest::new(ledger.clone(), lease_a.generation, "a-1".parse()?, None, "stale");
//! let err = register.write(&stale).unwrap_err();
//! assert_eq!(err.to_string(), "stale owner: generation 1 < highest accepted 2");
//! assert_eq!(register.value(), Some("fresh"));
//! # Ok::<(), fencelab_core::Error>(())
//! ```
//!
//! The building blocks: [`FencedResource`](fence::boundary::FencedResource) adds operation ids and expected revisions in front of
//! the register; [`SideEffectGateway`](fence::gateway::SideEffectGateway) fences irreversible calls; [`OperationLog`](fence::log::OperationLog) records every
//! attempt; [`Shared`](fence::shared::Shared) keeps check and write atomic across threads.
//!
//! Whole stories are played in four parts that exchange one [`History`]: the [`Simulator`] moves
//! a scenario's state on one event at a time, the [`Checker`] judges each event against what the
//! system cannot see, the [`Engine`] records the run (captions, the operation log, seeking), and
//! [`draw::diagram`] turns a history into a swimlane diagram. The built-in stories are in
//! [`stories::library`]; [`drive::explore`] searches every schedule of a scenario.
//!
//! A history recorded from your own system is judged the same way, and each finding names its
//! witness, the few entries that prove it, which replay on their own:
//!
//! ```
//! use fencelab_core::{Checker, History, invariant::InvariantKind};
//!
//! # let text = fencelab_core::Engine::new(
//! #     fencelab_core::stories::library::scenario("paused-worker", Some("broken")).unwrap(),
//! # ).map(|mut e| { e.run().unwrap(); e.history().to_jsonl() }).unwrap();
//! // `text` is a history in JSON Lines, as `fencelab run NAME --format jsonl` writes one.
//! let history = History::from_jsonl(&text)?;
//! let found = Checker::judge(&history);
//! let stale = found.iter().find(|v| v.invariant == InvariantKind::StaleWriteAccepted).unwrap();
//! assert!(!stale.possible);
//! let witness = history.excerpt(&stale.witness);
//! assert!(Checker::judge(&witness).iter().any(|v| v.invariant == stale.invariant));
//! # Ok::<(), fencelab_core::history::HistoryError>(())
//! ```
//!
//! What to read next:
//! - [`prelude`]: one import for a test that drives the core, and [`Error`], which every entry
//!   point's error converts into, so that `?` works on all of them.
//! - [`Engine`]: plays a scenario step by step or to the end; its [`Verdict`] has assertions
//!   for tests ([`Verdict::assert_met`], [`Verdict::assert_violation`]).
//! - [`stories::library`]: the built-in stories, each in its variants, ready to run.
//! - [`drive::conformance`]: the conformance kit, which holds your own [`FencedStore`] (a
//!   database table, an object store) to the in-memory reference over every story.
//!
//! Nothing here reads a clock, performs I/O or draws random numbers: callers pass logical time
//! ([`Tick`]) explicitly, so every run can be replayed exactly.

pub mod check;
pub mod clock;
pub mod draw;
pub mod drive;
mod error;
pub mod fence;
mod fingerprint;
pub mod format;
pub mod history;
pub mod ids;
pub mod invariant;
mod maps;
pub mod memory;
pub mod names;
pub mod picture;
pub mod prelude;
pub mod record;
pub mod sim;
pub mod stories;

// Every item has one path, in its module; the names most programs start with are also here, and
// `prelude` gathers what a program that drives the model uses.
pub use check::Checker;
pub use clock::Tick;
pub use error::Error;
pub use fence::generation::Generation;
pub use fence::idempotency::WriteOutcome;
pub use fence::register::WriteRequest;
pub use fence::store::FencedStore;
pub use format::model::{Enforcement, Scenario};
pub use history::event::Event;
pub use history::History;
pub use ids::{OperationId, ResourceId, WorkerId};
pub use invariant::Violation;
pub use record::{Engine, Verdict};
pub use sim::Simulator;

/// The crate README's example, run as a doctest so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
