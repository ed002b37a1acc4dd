//! The error of a bad scenario file: the field that has the problem, and the problem.

use serde::{Deserialize, Serialize};

/// A problem with a scenario, and where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{path}: {problem}")]
pub struct ScenarioError {
    /// The field, e.g. `workers[1].script[0].acquire.resource` (`.` for the whole file).
    pub path: String,
    /// What is wrong with it.
    pub problem: String,
}

impl ScenarioError {
    pub(crate) fn new(path: impl Into<String>, problem: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), problem: problem.into() }
    }
}
