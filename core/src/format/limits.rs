//! The limits on a scenario's sizes and on a run's length, below everything that reads a
//! scenario or plays one: the model's schema states them, validation enforces them, the reader
//! and the recorder stop at them.

/// The most workers a scenario may have.
pub const MAX_WORKERS: usize = 10_000;
/// The most steps one worker's script may have.
pub const MAX_SCRIPT_STEPS: usize = 10_000;
/// The most script steps all workers together may have.
pub const MAX_TOTAL_STEPS: usize = 200_000;
/// The most resources, stores, paths or faults of each kind.
pub const MAX_ITEMS: usize = 1_000;
/// The largest tick count or time accepted anywhere, so sums of them never overflow.
pub const MAX_TICKS: u64 = 1_000_000_000_000;
/// The largest network jitter, in ticks: each tick of jitter multiplies the explorer's choices.
pub const MAX_JITTER: u64 = 16;
/// The most steps one run may take; a guard against scenarios that never settle. The recorder
/// stops a run there, and an injected fault must come before it.
pub const MAX_RUN_STEPS: usize = 5_000_000;
/// The largest scenario file accepted, in bytes.
pub const MAX_SCENARIO_BYTES: usize = 16 * 1024 * 1024;
