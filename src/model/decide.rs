//! Decisions a model hands to someone else. A model with a decision point
//! (an agent's move in a round, a member's message in a turn) collects the
//! decisions of one barrier, with the draws already made and what the
//! decider may see, asks a `Decider` for all of them at once, and applies
//! the answers in its own order. Who answers, and how (a process, a log, a
//! test double), is not the model's business; an answer is data, checked
//! before the model sees it.

use serde::Serialize;
use serde_json::Value as Json;

/// A place in a model where an outside agent may decide.
#[derive(Clone, Copy, Debug)]
pub struct DecisionPoint {
    /// The protocol's name for it, e.g. `cascade.agent_round`.
    pub name: &'static str,
    /// Actions whose answer must carry a belief in 0..=1.
    pub belief_for: &'static [&'static str],
    /// Actions whose answer must carry text.
    pub text_for: &'static [&'static str],
    /// The longest text an answer may carry, in bytes.
    pub text_limit: usize,
    /// The action `fallback` may name: what the model does for a decision
    /// that could not be had.
    pub safe: &'static str,
    /// The model's own checks of an answer's other fields, given the
    /// action, the whole answer and the observation's text (a relay's
    /// recipient must be a neighbour the observation lists, say): an error
    /// names the field, as the protocol's own checks do.
    pub fields: Option<FieldCheck>,
}

/// A decision point's check of the fields it reads beyond action, belief
/// and text.
pub type FieldCheck = fn(action: &str, answer: &Json, obs: &str) -> Result<(), String>;

/// One decision asked: a key unique within the run (`r7/a12`), what the
/// decider observes (draws included), and the actions it may take.
#[derive(Clone, Debug, PartialEq)]
pub struct Ask {
    pub key: String,
    pub obs: Obs,
    pub allowed: &'static [&'static str],
}

/// An observation as canonical JSON text (every object's keys sorted, no
/// spaces): the form it is hashed, sent and logged in, made once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Obs(String);

impl Obs {
    /// From a value whose objects already have their keys in sorted order,
    /// such as a struct deriving `Serialize` with its fields declared
    /// alphabetically (the cheap way, for decision points asked often).
    /// Debug builds check the order.
    pub fn of<T: Serialize>(v: &T) -> Obs {
        let text = serde_json::to_string(v).expect("an observation is JSON");
        debug_assert_eq!(
            crate::policy::protocol::canonical(&serde_json::from_str(&text).expect("JSON")),
            text,
            "an observation's keys must be declared in sorted order"
        );
        Obs(text)
    }

    /// From any JSON value.
    pub fn from_json(v: &Json) -> Obs {
        Obs(crate::policy::protocol::canonical(v))
    }

    pub fn text(&self) -> &str {
        &self.0
    }

    pub fn into_text(self) -> String {
        self.0
    }
}

/// An answer that passed the decision point's checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub action: String,
    pub belief: Option<f64>,
    pub text: Option<String>,
    /// The whole answer as the policy gave it (less its key and usage),
    /// for a decision point with fields of its own.
    pub raw: Json,
}

/// What the model is to apply for one ask.
#[derive(Clone, Debug, PartialEq)]
pub enum Decided {
    Answer(Answer),
    /// No usable answer was had; the model takes its safe action.
    Fallback,
}

/// A decision that could not be had and whose arm falls back to failing
/// the run: the run is recorded as failed with this, and the others go on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct PolicyFailure {
    pub key: String,
    pub message: String,
}

/// Answers a model's asks: all the decisions of one barrier, answered in
/// the order asked.
pub trait Decider {
    fn decide(&mut self, asks: Vec<Ask>) -> Result<Vec<Decided>, PolicyFailure>;
}
