//! witness: a batch-experiment runner for agent-based models of how AI
//! agents spread, check and trust claims.
//!
//! The core (models, seeding, parameters, grid expansion, identity checks)
//! does no I/O; the sinks and the command line live at the edges.

pub mod analysis;
pub mod cascade;
pub mod cli;
pub mod grid;
pub mod hive;
pub mod jsondiff;
pub mod manifest;
pub mod model;
pub mod models;
pub mod params;
pub mod rng;
pub mod runner;
pub mod sink;
pub mod trust;
pub mod trustsim;
