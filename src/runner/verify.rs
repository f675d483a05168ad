//! `verify`: does a results folder still say what its manifest and this
//! build say it should? Checks every file's manifest hash and versions,
//! every run's id, key and parameters, re-derives the accounting identities
//! from the stored detail rows, and re-runs a sample of runs (or all),
//! requiring identical discrete values and floats within 1e-12. Streams the
//! tables in windows of runs, so memory does not grow with the folder.
//! Stored rows are read by column name.

use rayon::prelude::*;
use std::collections::VecDeque;
use std::path::Path;

use super::layout::Layout;
use super::tables::{run_row, tables, Table};
use super::RunError;
use crate::grid::{run_key, Plan};
use crate::model::{Column, Registry, Row, Stored};
use crate::params::Value;
use crate::store::{parquet, FileMeta, StoreError};

const WINDOW: u64 = 2048;
pub const FLOAT_TOLERANCE: f64 = 1e-12;

pub enum Replay {
    Sample(u64),
    All,
}

#[derive(Debug, Default)]
pub struct VerifyReport {
    pub runs: u64,
    /// Runs whose stored detail rows were re-checked by the model's audit.
    pub audited: u64,
    pub replayed: u64,
    pub problems: Vec<String>,
}

/// One table's rows, run by run: each row with its run id and the values
/// of the asked columns (in the order asked).
struct RowStream {
    reader: parquet::Reader,
    names: Vec<&'static str>,
    buffer: VecDeque<(u64, Row)>,
    path: String,
}

impl RowStream {
    fn open(path: &Path, names: Vec<&'static str>) -> Result<(FileMeta, RowStream), RunError> {
        let store = |e| RunError::corrupt(path, e);
        let reader = parquet::open(path).map_err(store)?;
        let meta = FileMeta::from_kv(&reader.metadata).map_err(|e| store(e.into()))?;
        Ok((
            meta,
            RowStream {
                reader,
                names,
                buffer: VecDeque::new(),
                path: path.display().to_string(),
            },
        ))
    }

    fn fill(&mut self) -> Result<bool, RunError> {
        let located = |e: StoreError| RunError::Corrupt {
            path: self.path.clone(),
            source: e,
        };
        match self.reader.next() {
            None => Ok(false),
            Some(b) => {
                let b = b.map_err(located)?;
                let ids = b.ints("run_id").map_err(located)?;
                let rows = b.rows(&self.names).map_err(located)?;
                self.buffer
                    .extend(ids.into_iter().map(|i| i as u64).zip(rows));
                Ok(true)
            }
        }
    }

    fn peek_id(&mut self) -> Result<Option<u64>, RunError> {
        while self.buffer.is_empty() {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(self.buffer.front().map(|(id, _)| *id))
    }

    /// Takes rows while their run id is below `end`.
    fn take_below(&mut self, end: u64) -> Result<Vec<(u64, Row)>, RunError> {
        let mut out = Vec::new();
        while self.peek_id()?.is_some_and(|id| id < end) {
            out.extend(self.buffer.pop_front());
        }
        Ok(out)
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x == y || (x - y).abs() <= FLOAT_TOLERANCE,
        _ => a == b,
    }
}

/// The first cell where two row lists differ, as "table.column (row i)".
fn first_difference(
    table: &str,
    columns: &[Column],
    stored: &[Row],
    fresh: &[Row],
) -> Option<String> {
    if stored.len() != fresh.len() {
        return Some(format!(
            "{table}: {} rows stored, {} on replay",
            stored.len(),
            fresh.len()
        ));
    }
    for (i, (s, f)) in stored.iter().zip(fresh).enumerate() {
        for ((a, b), c) in s.iter().zip(f).zip(columns) {
            if !same(a, b) {
                return Some(format!(
                    "{table}.{} (row {i}): stored {a}, replay gives {b}",
                    c.name
                ));
            }
        }
    }
    None
}

/// Every column but `run_id`, the names rows are read by.
fn value_columns(table: &Table) -> Vec<Column> {
    table.columns[1..].to_vec()
}

pub fn verify(dir: &Path, replay: Replay, registry: &Registry) -> Result<VerifyReport, RunError> {
    let layout = Layout::new(dir);
    let plan = layout.read_plan(registry)?;
    let model = plan.model();
    let tables = tables(model, &plan.manifest.tables);
    let mut report = VerifyReport::default();
    let mut streams = Vec::new();
    for table in &tables {
        let path = layout.table(table.name);
        if !path.exists() {
            return Err(RunError::Incomplete {
                dir: dir.display().to_string(),
                message: format!(
                    "{} is missing; finish the run (or `witness merge`) first",
                    path.display()
                ),
            });
        }
        let found = parquet::open(&path)
            .map_err(|e| RunError::corrupt(&path, e))?
            .columns;
        let expected = parquet::column_types(&table.columns);
        if found != expected {
            let first = expected.iter().zip(&found).find(|(e, a)| e != a);
            let detail = match first {
                Some((e, a)) => format!("column {} is {}, expected {} {}", a.0, a.1, e.0, e.1),
                None => format!("{} columns, expected {}", found.len(), expected.len()),
            };
            return Err(RunError::corrupt(
                &path,
                StoreError::Format(format!(
                    "not the schema witness writes ({detail}); was it rewritten by another tool?"
                )),
            ));
        }
        let names = value_columns(table).iter().map(|c| c.name).collect();
        let (meta, stream) = RowStream::open(&path, names)?;
        if meta.manifest_sha256 != plan.manifest.hash {
            report.problems.push(format!(
                "{}: manifest hash {} does not match manifest.toml ({})",
                path.display(),
                meta.manifest_sha256,
                plan.manifest.hash
            ));
        }
        if meta.engine_version != model.version() {
            report.problems.push(format!(
                "{}: written by {}, this build runs {}",
                path.display(),
                meta.engine_version,
                model.version()
            ));
        }
        streams.push(stream);
    }
    let sampled = |id: u64| match replay {
        Replay::All => true,
        Replay::Sample(0) => false,
        Replay::Sample(n) => {
            let (n, total, id) = (
                u128::from(n.min(plan.total)),
                u128::from(plan.total),
                u128::from(id),
            );
            // Evenly spread: run ids floor(i * total / n) for i in 0..n.
            let i = (id * n).div_ceil(total);
            i < n && i * total / n == id
        }
    };
    let runs_at = tables.len() - 1;
    let mut start = 0;
    while start < plan.total {
        let end = (start + WINDOW).min(plan.total);
        let rows: Vec<Vec<(u64, Row)>> = streams
            .iter_mut()
            .map(|s| s.take_below(end))
            .collect::<Result<_, _>>()?;
        let checked: Vec<(bool, bool, Vec<String>)> = (start..end)
            .into_par_iter()
            .map(|id| check_run(&plan, &tables, &rows, id, sampled(id)))
            .collect();
        for (audited, replayed, p) in checked {
            report.audited += u64::from(audited);
            report.replayed += u64::from(replayed);
            report.problems.extend(p);
        }
        report.runs += rows[runs_at].len() as u64;
        start = end;
    }
    if let Some(extra) = streams[runs_at].peek_id()? {
        report.problems.push(format!(
            "runs.parquet: holds run {extra} beyond the manifest's {} runs",
            plan.total
        ));
    }
    Ok(report)
}

/// A run's rows of one table (sorted by run id), without the run id.
fn rows_of(rows: &[(u64, Row)], id: u64) -> Vec<Row> {
    let lo = rows.partition_point(|(i, _)| *i < id);
    rows[lo..]
        .iter()
        .take_while(|(i, _)| *i == id)
        .map(|(_, r)| r.clone())
        .collect()
}

/// (audited, replayed, problems) of one run.
fn check_run(
    plan: &Plan,
    tables: &[Table],
    rows: &[Vec<(u64, Row)>],
    id: u64,
    replay: bool,
) -> (bool, bool, Vec<String>) {
    let model = plan.model();
    let spec = plan.run(id);
    let (details, runs_table) = tables.split_at(tables.len() - 1);
    let runs_table = &runs_table[0];
    let who = format!("run {id} ({})", plan.arm_name(spec.arm));
    let mut problems = Vec::new();
    let stored = match rows_of(&rows[details.len()], id).as_slice() {
        [one] => one.clone(),
        [] => {
            return (
                false,
                false,
                vec![format!("{who}: missing from runs.parquet")],
            )
        }
        more => {
            return (
                false,
                false,
                vec![format!(
                    "{who}: stored {} times in runs.parquet",
                    more.len()
                )],
            )
        }
    };
    // The runs row as stored, by column name.
    let columns = value_columns(runs_table);
    let named = |name: &str| {
        columns
            .iter()
            .position(|c| c.name == name)
            .map(|k| &stored[k])
            .expect("a column of runs.parquet")
    };
    let key = run_key(model.name(), &spec.params);
    if *named("run_key") != Value::Str(key.clone()) {
        problems.push(format!(
            "{who}: run_key {} stored, the manifest gives {key}",
            named("run_key")
        ));
    }
    for (name, v) in &spec.params.values {
        if !same(named(name), v) {
            problems.push(format!(
                "{who}: parameter {name} stored as {}, the manifest gives {v}",
                named(name)
            ));
        }
    }
    if *named("failed") == Value::Bool(true) {
        problems.push(format!(
            "{who}: recorded a broken identity: {}",
            named("failure")
        ));
    }
    let stored_details: Vec<Vec<Row>> = (0..details.len()).map(|t| rows_of(&rows[t], id)).collect();
    let mut by_model_table: Vec<Option<&[Row]>> = vec![None; model.tables().len()];
    for (table, r) in details.iter().zip(&stored_details) {
        by_model_table[table.model_table.expect("a detail table")] = Some(r);
    }
    let audit = model.audit(
        &spec.params,
        &Stored {
            specs: model.tables(),
            rows: by_model_table,
        },
    );
    match audit {
        Ok(None) => {}
        Ok(Some(v)) => problems.push(format!("{who}: {v}")),
        Err(e) => problems.push(format!("{who}: {e}")),
    }
    let audited = !details.is_empty();
    if replay {
        match model.run(&spec.params, &plan.manifest.tables) {
            Err(e) => problems.push(format!("{who}: cannot replay: {e}")),
            Ok(out) => {
                let fresh = run_row(plan, &spec, &out)[1..].to_vec();
                if let Some(d) = first_difference("runs", &columns, &[stored], &[fresh]) {
                    problems.push(format!("{who}: {d}"));
                }
                for (table, stored_rows) in details.iter().zip(&stored_details) {
                    let k = table.model_table.expect("a detail table");
                    let cols = value_columns(table);
                    if let Some(d) =
                        first_difference(table.name, &cols, stored_rows, &out.tables[k])
                    {
                        problems.push(format!("{who}: {d}"));
                    }
                }
            }
        }
    }
    (audited, replay, problems)
}
