//! hive-rooms/1 (hive.md): rooms of members deliberating by marker lines,
//! with a quorum fold deciding convergence. Built so far: the random
//! numbers, the marker parser and the standings fold. The episode engine,
//! the members, the arms and the `Model` implementation are still to come,
//! so the runner does not list this model yet.

pub mod fold;
pub mod markers;
pub mod rng;
