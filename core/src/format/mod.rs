//! The scenario file format: its types ([`model`]), reading them with every problem named by
//! its field path ([`Scenario::from_json`](model::Scenario::from_json), [`error`]), and the
//! checks of meaning and size ([`validate`]) against the [`limits`]. Imports run one way: error
//! and limits, then model, then the reader, validation and the schema.

pub mod error;
pub mod limits;
pub mod model;
pub(crate) mod parse;
#[cfg(feature = "schema")]
pub mod schema;
pub mod validate;
