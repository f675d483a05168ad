//! The cascade model, witness-engine/1: how a false "tests pass" report
//! spreads over a graph of agents under different belief policies. The
//! algorithm lives in the engine modules; `model` adapts it to the runner.

pub mod belief;
pub mod config;
pub mod engine;
pub mod export;
pub mod external;
pub mod graph;
pub mod ledger;
pub mod metrics;
pub mod model;
pub mod quorum;
mod round;

pub use model::{Cascade, MODEL};

pub const VERSION: &str = "witness-engine/1";
