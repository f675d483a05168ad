//! The trust-sim model (trust-v1/sim-1): a generated world of honest
//! reporters and one attack, scored by the same trust-v1 scorer as `witness
//! trust score`, measured against the truth the scorer never sees.

pub mod model;
pub mod world;

pub use model::{TrustSim, TrustSimSummary, MODEL};

pub const VERSION: &str = "trust-v1/sim-1";
