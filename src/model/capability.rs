//! What a model may offer the analysis verbs beyond running: categorical
//! outcomes (domain comparators for `compare`), per-round curves (`plot`),
//! a ranking key (`rank`) and a single-run export (`simulate`/`replay`).
//! Each is typed by the model's own parameter and summary types and is
//! optional; a registration lists the ones a model has.

use serde_json::Value as Json;

use super::Model;
use crate::params::{ParamError, Resolved};

/// A categorical outcome of a run, from its parameters and summary;
/// `compare --outcome` uses it as a domain comparator.
pub struct Outcome<M: Model> {
    pub name: &'static str,
    pub doc: &'static str,
    pub classify: fn(&M::Params, &M::Summary) -> &'static str,
}

/// Per-round curves `plot` draws from a detail table: each column, divided
/// by `scale` of the run's parameters (e.g. counts over the population).
pub struct Curves<M: Model> {
    /// A detail table of the model.
    pub table: &'static str,
    /// Its column along the x axis.
    pub x: &'static str,
    /// Its columns drawn, one panel each.
    pub columns: &'static [&'static str],
    pub y_label: &'static str,
    pub scale: fn(&M::Params) -> f64,
}

/// How `rank` orders runs: an integer key from the parameters and the
/// summary, highest first, equal keys in grid order; `show` names the
/// summary columns printed, each with its decimals.
pub struct Ranking<M: Model> {
    pub doc: &'static str,
    pub key: fn(&M::Params, &M::Summary) -> Vec<i64>,
    pub show: &'static [(&'static str, usize)],
}

/// One configuration run for a reader: what `simulate` prints, and (when
/// asked for) the JSON document `--export` writes and `replay` re-runs.
pub struct Simulation {
    pub text: String,
    pub export: Option<Json>,
    pub failed: bool,
}

/// A model's own single-run export format, in place of the generic one.
pub trait Export: Sync {
    /// Runs `p`; builds the export document only when `export` is set (it
    /// can be far larger than the run).
    fn simulate(&self, p: &Resolved, export: bool) -> Result<Simulation, ParamError>;
    /// The parameters an export document was written with.
    fn params_of(&self, doc: &Json) -> Result<Resolved, ParamError>;
}
