//! The scenario file format: its types ([`model`]), reading them with every problem named by
//! its field path ([`Scenario::from_json`](model::Scenario::from_json), [`error`]), and the
//! checks of meaning and size ([`validate`]). Imports run one way: error, then model, then the
//! reader and validation.

pub mod error;
pub mod model;
pub(crate) mod parse;
#[cfg(feature = "schema")]
pub mod schema;
pub mod validate;
