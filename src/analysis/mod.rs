//! The analysis verbs' pure parts: arm verdicts, summary statistics, and the
//! grouping of stored runs into scenarios, arms and seeds.

pub mod compare;
pub mod groups;
pub mod stats;
pub mod verdict;
