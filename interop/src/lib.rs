//! Other tools' histories as Fencelab histories, and Fencelab histories in their formats.
//!
//! Fencing bugs are found in recorded runs as often as in models: a Jepsen test, a trace from a
//! staging cluster, an application's log. This crate reads those into a
//! [`fencelab_core::History`], so the same checker judges them and the same diagram draws them:
//!
//! - [`jepsen`]: Jepsen histories, EDN or JSON, and writers back to both;
//! - [`otlp`]: OpenTelemetry traces as the collector's file exporter writes them (OTLP JSON);
//! - [`pattern`]: text logs, through a regular expression with named groups;
//! - [`mapping`]: a history's own names for operations and fields, opaque tokens, a lease
//!   length it does not log;
//! - [`itf`]: a writer of the Informal Trace Format that Apalache and Quint read.
//!
//! Every reader feeds one builder, which pairs each completion with its invocation, numbers the
//! messages, fills in what the simulator would have filled in (the store's highest generation,
//! the value after a write) and infers the setup, so every format is judged the same way.
//!
//! Time: an entry's `at` is milliseconds on the source's clock (Jepsen's `:time` nanoseconds
//! divided by a million; for a trace or a log, milliseconds since its first record), and
//! `wall_ns` is set where the source has absolute time (a trace's Unix nanoseconds, a log's
//! dates and times).
//!
//! Readers never panic on any input. They return one [`ImportError`] naming the file, the line
//! (and the op's index where the format numbers its ops), the field and the problem; they refuse
//! input larger than [`MAX_INPUT`] and any line or single operation larger than [`MAX_LINE`].

mod builder;
mod edn;
mod error;
pub mod itf;
pub mod jepsen;
pub mod mapping;
pub mod otlp;
pub mod pattern;
mod values;

pub use builder::{StepsBack, STEP_BACK_TOLERANCE};
pub use error::{utf8, ImportError, MAX_INPUT, MAX_LINE};

use fencelab_core::History;

/// A history read from another tool's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The history.
    pub history: History,
    /// The line of the source each entry was read from (for a grant, its completion's line):
    /// where a finding about entry `i` points in the file.
    pub lines: Vec<usize>,
    /// What the reader passed over on purpose, as its format's documentation says: log lines the
    /// pattern does not match, nemesis operations Fencelab does not model, spans that are not
    /// about leases or fencing.
    pub skipped: usize,
    /// The time stamps that stepped back a little from the one above them, each read as that
    /// entry's time.
    pub stepped_back: StepsBack,
    /// Calls whose answer never came before the history ended: a write, an effect or a release
    /// among them is read as one that timed out (see each reader's documentation).
    pub unfinished: usize,
    /// Opaque tokens, as (resource, token, the generation that stands for it), in the order
    /// they first appeared (see [`mapping::Mapping::opaque_tokens`]).
    pub tokens: Vec<(String, String, u64)>,
}
