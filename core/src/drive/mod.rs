//! What drives the simulator, the checker and the recorder over many runs: the [`explore`]r,
//! which searches every schedule of a scenario for a broken invariant, and the [`conformance`]
//! kit, which holds any store to the reference over every story's writes.

pub mod conformance;
pub mod explore;
