//! The harness model, witness-harness/1: the cascade's world (graphs,
//! truth, the "tests pass" report, seeds) with agents that act the way a
//! tool-using agent does. Each has a total budget of actions; on its turn
//! it probes (runs the recorded behavioural test), relays a message to one
//! neighbour, or passes, and states its belief. Nothing is absorbing: an
//! agent may contradict its own probe. Turns are decided by a scripted
//! policy (the control arms) or by an external policy through
//! witness-policy/1.

pub mod config;
pub mod engine;
pub mod external;
pub mod fixtures;
pub mod metrics;
pub mod model;
pub mod scripted;
pub mod world;

pub use model::{Harness, MODEL};

pub const VERSION: &str = "witness-harness/1";
