//! The boundary between the runner and a model. A model declares its
//! parameters and output columns, runs one resolved parameter set, and can
//! re-check its accounting identities from stored rows. The runner knows
//! nothing else about it, so adding a model means adding a module and one
//! line in `models::ALL`, never touching the runner.

use crate::params::{ParamError, ParamSpec, Resolved, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColType {
    Bool,
    Int,
    Float,
    Str,
}

#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub name: &'static str,
    pub ty: ColType,
    pub nullable: bool,
    pub doc: &'static str,
}

/// A column that is never null.
pub const fn col(name: &'static str, ty: ColType, doc: &'static str) -> Column {
    Column {
        name,
        ty,
        nullable: false,
        doc,
    }
}

/// A column that may hold nulls.
pub const fn col_null(name: &'static str, ty: ColType, doc: &'static str) -> Column {
    Column {
        name,
        ty,
        nullable: true,
        doc,
    }
}

/// A per-run detail table (e.g. one row per round), written only when the
/// manifest's `[output]` asks for it.
#[derive(Clone, Copy, Debug)]
pub struct TableSpec {
    /// The `[output]` key and the file stem (`trajectories.parquet`).
    pub name: &'static str,
    pub columns: &'static [Column],
    pub default_on: bool,
    pub doc: &'static str,
}

/// A broken accounting identity: an engine bug, recorded with the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub identity: String,
    pub round: Option<u64>,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.round {
            Some(r) => write!(
                f,
                "identity `{}` fails at round {r}: {}",
                self.identity, self.detail
            ),
            None => write!(f, "identity `{}` fails: {}", self.identity, self.detail),
        }
    }
}

pub type Row = Vec<Value>;

/// What one run produces: its summary row (in `summary_columns` order), the
/// rows of each requested detail table (in `tables` order; empty when not
/// requested), and the first broken identity, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOutput {
    pub summary: Row,
    pub tables: Vec<Vec<Row>>,
    pub violation: Option<Violation>,
}

/// A categorical outcome of a run, computed from its parameters and some of
/// its summary columns; `compare --outcome` uses it as a domain comparator.
#[derive(Clone, Copy)]
pub struct OutcomeSpec {
    pub name: &'static str,
    pub doc: &'static str,
    /// Summary columns `classify` receives, in this order.
    pub columns: &'static [&'static str],
    pub classify: fn(&Resolved, &[Value]) -> &'static str,
}

/// Per-round curves `plot` draws from a detail table: each column divided
/// by a parameter (e.g. counts of agents over `population`).
#[derive(Clone, Copy)]
pub struct CurveSpec {
    pub table: &'static str,
    pub x: &'static str,
    pub columns: &'static [&'static str],
    pub divide_by: &'static str,
    pub y_label: &'static str,
}

/// How `rank` orders a results folder's runs: an integer key from the
/// parameters and some summary columns, highest first, equal keys in grid
/// order; `show` names the columns printed, each with its decimals.
#[derive(Clone, Copy)]
pub struct RankSpec {
    pub doc: &'static str,
    /// Summary columns `key` receives, in this order.
    pub columns: &'static [&'static str],
    pub key: fn(&Resolved, &[Value]) -> Vec<i64>,
    pub show: &'static [(&'static str, usize)],
}

pub trait Model: Sync {
    /// The name manifests use in `[experiment] model`.
    fn name(&self) -> &'static str;
    /// The algorithm version; a change of results is a new version.
    fn version(&self) -> &'static str;
    fn params(&self) -> &'static [ParamSpec];
    /// Rules that tie parameters together, beyond each one's own range.
    fn validate(&self, p: &Resolved) -> Result<(), ParamError>;
    /// Parameters this configuration does not read.
    fn ignored(&self, p: &Resolved) -> Vec<&'static str>;
    fn summary_columns(&self) -> &'static [Column];
    fn tables(&self) -> &'static [TableSpec];
    /// Runs a validated parameter set; `want[k]` says whether table k is kept.
    fn run(&self, p: &Resolved, want: &[bool]) -> RunOutput;
    /// Re-derives the identities that stored rows of table `table` must
    /// satisfy; `None` when they hold or the table carries none.
    fn audit(&self, p: &Resolved, table: usize, rows: &[Row]) -> Option<Violation>;
    /// The summary columns `summary` shows when none are asked for.
    fn headline_metrics(&self) -> &'static [&'static str] {
        &[]
    }
    /// The per-round curves `plot` draws, if the model has any.
    fn curves(&self) -> Option<CurveSpec> {
        None
    }
    /// The order `rank` sorts runs in, if the model defines one.
    fn ranking(&self) -> Option<RankSpec> {
        None
    }
    /// Categorical outcomes for domain comparators.
    fn outcomes(&self) -> &'static [OutcomeSpec] {
        &[]
    }
}
