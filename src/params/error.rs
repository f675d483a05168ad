//! A parameter set the model cannot run: the name, the value, what is
//! wrong and what is allowed, so one look fixes it.

use std::fmt;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("parameter `{name}`{}: {problem}; allowed: {allowed}", shown(.value))]
pub struct ParamError {
    pub name: String,
    /// The value as written; empty when the problem is not one value.
    pub value: String,
    pub problem: String,
    pub allowed: String,
}

fn shown(value: &str) -> String {
    if value.is_empty() {
        String::new()
    } else {
        format!(" = {value}")
    }
}

impl ParamError {
    pub fn new(name: &str, value: impl fmt::Display, problem: &str, allowed: String) -> Self {
        ParamError {
            name: name.to_string(),
            value: value.to_string(),
            problem: problem.to_string(),
            allowed,
        }
    }
}
