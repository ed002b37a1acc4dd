//! Integration tests: fencelab-core used the way a user's own test suite would use it.
//! One binary, one module per area, as in once_cell's `tests/it`.

mod audit;
mod authority;
mod checkpoints;
mod conformance;
mod diagram;
// Generated code, checked against its generator by `export::emitted_tests_are_what_the_emitter_produces_today`.
#[rustfmt::skip]
mod emitted;
mod explore;
mod export;
mod fence_raise;
mod fuzz;
mod gateway;
mod history;
mod history_equivalence;
mod idempotency;
mod inject;
mod intervals;
mod intros;
mod log;
mod names;
mod properties;
mod register;
mod regressions;
mod reuse;
mod scenario_errors;
mod scenario_parse;
mod scenario_properties;
mod scenario_schema;
mod scenarios;
mod serde_json_round_trip;
mod soak;
mod support;
mod switches;
mod threads;
mod zoo;
