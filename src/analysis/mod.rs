//! The analysis verbs' computations, without file I/O: the design of an
//! experiment (scenarios, arm variants, seeds), arm verdicts, summary
//! statistics, ranking, and the data behind charts. The CLI reads columns
//! through `results::ResultsDir`, calls these, and writes what they return.

pub mod compare;
pub mod curves;
pub mod design;
pub mod figures;
pub mod filter;
pub mod heatmap;
pub mod multiplicity;
pub mod permutation;
pub mod plot;
pub mod rank;
pub mod report;
pub mod search;
pub mod sensitivity;
pub mod stats;
pub mod summary;
pub mod verdict;
