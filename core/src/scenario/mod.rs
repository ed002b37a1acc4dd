//! The scenario engine: stories of leases, pauses and writes, played step by step.
//!
//! A [`Scenario`](model::Scenario) is data (JSON on disk). An [`Engine`](engine::Engine) plays it
//! one [`Event`](event::Event) per step, checks the invariants after each, and can seek anywhere.
//! The built-in stories live in [`library`]; the [`explore`] module searches every schedule.

pub mod diagram;
pub mod engine;
pub mod error;
pub mod event;
pub mod explore;
pub mod export;
pub mod invariant;
pub mod library;
pub mod model;
mod parse;
pub mod sim;
pub mod state;
pub mod switches;
pub mod validate;
