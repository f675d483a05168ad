//! witness: a batch-experiment runner for agent-based models of how AI
//! agents spread, check and trust claims.
//!
//! Layers, from the core out:
//! - `rng`, `math`: the draw protocol's streams, the correctly rounded
//!   `exp`, `ln` and powers, and the gamma, beta and Student-t functions
//!   built on them, so results depend on neither the machine nor its C
//!   library;
//! - `params`, `words`, `model`: the typed boundary every model implements
//!   (parameters in, records out) and the registry of models;
//! - `cascade`, `hive`, `trustsim`, `trust`: the models and the trust-v1
//!   scorer, pure;
//! - `manifest`, `design`, `grid`, `search`: experiments declared, their
//!   sampled designs, their expansion into runs, and races that stop
//!   candidates early, pure;
//! - `policy`: external agents deciding for a model (witness-policy/1);
//! - `runner`: execution, parts, resume, shards, merge, verify;
//! - `store`: every file format (Parquet, CSV, JSON, charts);
//! - `results`, `analysis`: results folders read back, and the statistics
//!   of the analysis verbs (pure);
//! - `cli`: argument parsing, one library call and a writer per verb;
//! - `reference`: the generated pages of `docs/reference/`.

pub mod analysis;
pub mod cascade;
pub mod cli;
pub mod crash;
pub mod design;
pub mod error;
pub mod grid;
pub mod harness;
pub mod hive;
pub mod jsondiff;
pub mod manifest;
pub mod math;
pub mod model;
pub mod params;
pub mod policy;
pub mod reference;
pub mod results;
pub mod rng;
pub mod runner;
pub mod search;
pub mod shutdown;
pub mod store;
pub mod trust;
pub mod trustsim;
pub mod words;

pub use error::{Error, Result};
