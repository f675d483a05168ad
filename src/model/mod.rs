//! The boundary between the runner and its models. A model is a type that
//! declares its parameters (a `params!` struct), its summary record and its
//! detail tables, turns a parameter set into a validated configuration,
//! runs it, and re-checks its identities from stored rows. The runner sees
//! models only through the object-safe `DynModel` that `Registered` builds
//! from this trait, plus the optional analysis capabilities a registration
//! carries, so adding a model means adding a module and one registry line.

mod capability;
mod cell;
mod columns;
mod decide;
mod erased;
mod judge;
mod record;
pub mod reference;
mod registry;
mod table;

pub use capability::{Curves, Export, Outcome, Ranking, Simulation};
pub use columns::{Cells, ColumnValues, Columns};
pub use decide::{Answer, Ask, Decided, Decider, DecisionPoint, Obs, PolicyFailure};
pub use erased::{DynModel, Registered, RunOutput};
pub use judge::{Better, Judge, NullMeans};
pub use record::{Bounds, Cell, ColType, Column, Record, RecordError};
pub use registry::{declaration_problems, Registry};
pub use table::{DetailTable, Row, Rows, RunContext, Stored, TableSpec};

use crate::params::{ParamError, ParamSet, Params};

/// A model: what the runner needs to execute and check its runs.
pub trait Model: Send + Sync + 'static {
    /// The name manifests use in `[experiment] model`; part of every run key.
    const NAME: &'static str;
    /// The algorithm version; a change of results is a new version.
    const VERSION: &'static str;
    /// One sentence on what the model is, for `describe`.
    const DOC: &'static str;
    type Params: Params;
    /// A parameter set after the rules that tie parameters together.
    type Config: Send + Sync;
    /// One row of `runs.parquet` beyond ids and parameters.
    type Summary: Record;
    /// The detail tables, in the order their `[output]` keys are listed.
    const TABLES: &'static [TableSpec] = &[];

    /// Applies the rules that tie parameters together (each value already
    /// passed its own range).
    fn configure(p: Self::Params) -> Result<Self::Config, ParamError>;
    /// Parameters this configuration does not read.
    fn ignored(_c: &Self::Config) -> ParamSet {
        ParamSet::EMPTY
    }
    /// The decision point this configuration hands out, if any: its runs
    /// ask `cx.decide` and need an arm with an external policy.
    fn decision_point(_c: &Self::Config) -> Option<&'static DecisionPoint> {
        None
    }
    /// Runs one configuration, writing detail rows into `cx`.
    fn run(c: &Self::Config, cx: &mut RunContext<'_>) -> Ran<Self::Summary>;
    /// Re-derives the identities the stored detail rows must satisfy.
    fn audit(_c: &Self::Config, _stored: &Stored) -> Option<Violation> {
        None
    }
    /// What a run holds in memory, so the runner can refuse work that would
    /// not fit instead of being killed halfway.
    fn footprint(_c: &Self::Config) -> Footprint {
        Footprint::default()
    }
}

/// A run's size in memory: the rows it gives each detail table (in
/// `TABLES` order), and the bytes it needs while it runs besides them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    pub rows: Vec<u64>,
    pub working_bytes: u64,
    /// The parameters the size grows with: what a refusal tells the user
    /// to lower.
    pub grows_with: ParamSet,
}

/// What one run produced besides detail rows.
pub struct Ran<S> {
    pub summary: S,
    /// The first broken accounting identity, if any.
    pub violation: Option<Violation>,
}

/// Where in a run an identity broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    Round(u64),
    Episode(u64),
}

/// A broken accounting identity: an engine bug, recorded with the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub identity: String,
    pub at: Option<Position>,
    pub detail: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "identity `{}` fails", self.identity)?;
        match self.at {
            Some(Position::Round(r)) => write!(f, " at round {r}")?,
            Some(Position::Episode(e)) => write!(f, " at episode {e}")?,
            None => {}
        }
        write!(f, ": {}", self.detail)
    }
}
