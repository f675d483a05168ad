//! hive-rooms/1: rooms of members deliberating by marker lines,
//! with a quorum fold deciding convergence, and the arms of the published
//! quorum benchmark (ladder, vote, hive, hive+ and its refutation and
//! evidential variants).

pub mod board;
pub mod config;
pub mod episode;
pub mod external;
pub mod fold;
pub mod live;
pub mod markers;
pub mod market;
pub mod member;
pub mod model;
pub mod policy;
pub mod rng;
pub mod room;

pub use model::{Hive, MODEL};

pub const VERSION: &str = "hive-rooms/1";
