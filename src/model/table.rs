//! A model's detail tables (e.g. one row per round): their declaration, the
//! sink a run writes their rows into, and the stored rows `verify` hands
//! back for auditing. Rows go in and come out as the table's record type.

use std::marker::PhantomData;

use super::columns::Columns;
use super::decide::{Ask, Decided, Decider, PolicyFailure};
use super::record::{Column, Record, RecordError};
use crate::params::Value;

/// A row as stored: one value per column, in column order.
pub type Row = Vec<Value>;

/// A per-run detail table, written only when the manifest's `[output]`
/// asks for it.
#[derive(Clone, Copy, Debug)]
pub struct TableSpec {
    /// The `[output]` key and the file stem (`trajectories.parquet`).
    pub name: &'static str,
    pub columns: &'static [Column],
    pub default_on: bool,
    pub doc: &'static str,
}

/// A typed handle on a detail table: rows of type `R` go in and come out.
pub struct DetailTable<R> {
    pub spec: TableSpec,
    row: PhantomData<fn() -> R>,
}

impl<R: Record> DetailTable<R> {
    pub const fn new(name: &'static str, default_on: bool, doc: &'static str) -> Self {
        DetailTable {
            spec: TableSpec {
                name,
                columns: R::COLUMNS,
                default_on,
                doc,
            },
            row: PhantomData,
        }
    }
}

/// What a run writes besides its summary (rows of the detail tables the
/// manifest asked for), and who answers its decision point, if it has one.
pub struct RunContext<'a> {
    specs: &'static [TableSpec],
    want: Vec<bool>,
    rows: Vec<Columns>,
    decider: Option<&'a mut dyn Decider>,
    failure: Option<PolicyFailure>,
}

impl<'a> RunContext<'a> {
    /// `want[k]` says whether table `specs[k]` is kept; `rows[k]`, when
    /// given, is how many rows it will get (the model's footprint).
    pub fn new(
        specs: &'static [TableSpec],
        want: &[bool],
        rows: &[u64],
        decider: Option<&'a mut dyn Decider>,
    ) -> RunContext<'a> {
        // A table not kept, or of an unknown size, starts empty; a known
        // size is reserved up to a bound, so a wrong footprint costs
        // reallocations, not memory.
        let room = |k: usize| match (want.get(k), rows.get(k)) {
            (Some(true), Some(&n)) => n.min(1 << 16) as usize,
            _ => 0,
        };
        RunContext {
            specs,
            want: want.to_vec(),
            rows: specs
                .iter()
                .enumerate()
                .map(|(k, s)| Columns::with_capacity(s.columns, room(k)))
                .collect(),
            decider,
            failure: None,
        }
    }

    /// Asks the run's decider for one barrier's decisions. An error means
    /// the run has failed: the model stops, and whatever it returns is
    /// replaced by a failed run.
    pub fn decide(&mut self, asks: Vec<Ask>) -> Result<Vec<Decided>, PolicyFailure> {
        if let Some(f) = &self.failure {
            return Err(f.clone());
        }
        let result = match self.decider.as_deref_mut() {
            Some(d) => d.decide(asks),
            None => Err(PolicyFailure {
                key: asks.first().map_or_else(String::new, |a| a.key.clone()),
                message: "this run's arm names no external policy".into(),
            }),
        };
        if let Err(f) = &result {
            self.failure = Some(f.clone());
        }
        result
    }

    /// The decision that failed the run, if one did.
    pub fn failure(&self) -> Option<&PolicyFailure> {
        self.failure.as_ref()
    }

    /// The rows of `table`, when the manifest asked for it. Panics on a
    /// table the model did not declare (a bug any run of it shows).
    pub fn table<R: Record>(&mut self, table: &DetailTable<R>) -> Option<Rows<'_, R>> {
        let k = self
            .specs
            .iter()
            .position(|s| s.name == table.spec.name)
            .unwrap_or_else(|| panic!("table `{}` is not declared", table.spec.name));
        self.want[k].then(|| Rows {
            rows: &mut self.rows[k],
            row: PhantomData,
        })
    }

    pub fn wants<R: Record>(&self, table: &DetailTable<R>) -> bool {
        self.specs
            .iter()
            .zip(&self.want)
            .any(|(s, &w)| w && s.name == table.spec.name)
    }

    /// The rows written, one list per declared table (empty when not
    /// kept), and the decision that failed the run, if one did.
    pub fn finish(self) -> (Vec<Columns>, Option<PolicyFailure>) {
        (self.rows, self.failure)
    }
}

/// The rows of one detail table during a run.
pub struct Rows<'a, R> {
    rows: &'a mut Columns,
    row: PhantomData<fn(R)>,
}

impl<R: Record> Rows<'_, R> {
    pub fn push(&mut self, r: &R) {
        self.rows.push_with(|cols| r.push_columns(cols));
    }
}

/// A run's stored detail rows, for auditing: one list per declared table,
/// each row in the table's column order (without `run_id`).
pub struct Stored<'a> {
    pub specs: &'static [TableSpec],
    /// `None` for a table the folder does not hold.
    pub rows: Vec<Option<&'a [Row]>>,
}

impl Stored<'_> {
    /// The stored rows of `table` as records, or `None` when not stored.
    pub fn rows<R: Record>(&self, table: &DetailTable<R>) -> Option<Result<Vec<R>, RecordError>> {
        let k = self.specs.iter().position(|s| s.name == table.spec.name)?;
        let rows = self.rows.get(k).copied().flatten()?;
        Some(rows.iter().map(|r| R::from_values(r)).collect())
    }
}
