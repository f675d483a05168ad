//! `verify`: does a results folder still say what its manifest and this
//! build say it should? Checks every file's manifest hash and versions,
//! every run's id, key and parameters, re-derives the accounting identities
//! from the stored detail rows, and re-runs a sample of runs (or all),
//! requiring identical discrete values and floats within 1e-12. Streams the
//! tables in windows of runs, so memory does not grow with the folder.

use rayon::prelude::*;
use std::path::Path;

use super::layout::Layout;
use super::tables::{tables, Table, KEY_ENGINE, KEY_HASH};
use super::RunError;
use crate::grid::{run_key, Plan};
use crate::model::Row;
use crate::params::Value;
use crate::sink::parquet;

const WINDOW: u64 = 2048;
pub const FLOAT_TOLERANCE: f64 = 1e-12;

pub enum Replay {
    Sample(u64),
    All,
}

#[derive(Debug, Default)]
pub struct VerifyReport {
    pub runs: u64,
    pub audited: u64,
    pub replayed: u64,
    pub problems: Vec<String>,
}

/// Rows of one table, one at a time, across batches.
struct RowStream {
    batches: Box<dyn Iterator<Item = Result<arrow_array::RecordBatch, arrow_schema::ArrowError>>>,
    buffer: std::vec::IntoIter<Row>,
    peeked: Option<Row>,
    path: String,
}

impl RowStream {
    /// The file's metadata, its schema, and a stream of its rows.
    fn open(
        path: &Path,
    ) -> Result<(parquet::Metadata, arrow_schema::SchemaRef, RowStream), RunError> {
        let (kv, reader) = parquet::open(path).map_err(|e| RunError::parquet(path, e))?;
        let schema = arrow_array::RecordBatchReader::schema(&reader);
        let stream = RowStream {
            batches: Box::new(reader),
            buffer: Vec::new().into_iter(),
            peeked: None,
            path: path.display().to_string(),
        };
        Ok((kv, schema, stream))
    }

    fn peek(&mut self) -> Result<Option<&Row>, RunError> {
        if self.peeked.is_none() {
            self.peeked = match self.buffer.next() {
                Some(r) => Some(r),
                None => match self.batches.next() {
                    None => None,
                    Some(b) => {
                        let b = b.map_err(|e| RunError::Parquet {
                            path: self.path.clone(),
                            message: e.to_string(),
                        })?;
                        self.buffer = parquet::rows(&b).into_iter();
                        self.buffer.next()
                    }
                },
            };
        }
        Ok(self.peeked.as_ref())
    }

    /// Takes rows while their run_id (column 0) is below `end`.
    fn take_below(&mut self, end: u64) -> Result<Vec<Row>, RunError> {
        let mut out = Vec::new();
        while let Some(row) = self.peek()? {
            match row[0] {
                Value::Int(id) if (id as u64) < end => {
                    out.push(self.peeked.take().expect("peeked"))
                }
                _ => break,
            }
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
/// `skip` is the number of leading schema columns the rows leave out.
fn first_difference(table: &Table, skip: usize, stored: &[Row], fresh: &[Row]) -> Option<String> {
    if stored.len() != fresh.len() {
        return Some(format!(
            "{}: {} rows stored, {} on replay",
            table.name,
            stored.len(),
            fresh.len()
        ));
    }
    for (i, (s, f)) in stored.iter().zip(fresh).enumerate() {
        for (k, (a, b)) in s.iter().zip(f).enumerate() {
            if !same(a, b) {
                let col = table.schema.field(k + skip).name();
                return Some(format!(
                    "{}.{col} (row {i}): stored {a}, replay gives {b}",
                    table.name
                ));
            }
        }
    }
    None
}

pub fn verify(dir: &Path, replay: Replay) -> Result<VerifyReport, RunError> {
    let layout = Layout::new(dir);
    let manifest = layout.read_manifest()?;
    let plan = Plan::new(&manifest);
    let model = plan.model();
    let tables = tables(model, &manifest.tables);
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
        let (kv, found, stream) = RowStream::open(&path)?;
        let expected: Vec<(String, String)> = table
            .schema
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().to_string()))
            .collect();
        let actual: Vec<(String, String)> = found
            .fields()
            .iter()
            .map(|f| (f.name().clone(), f.data_type().to_string()))
            .collect();
        if actual != expected {
            let first = expected.iter().zip(&actual).find(|(e, a)| e != a);
            let detail = match first {
                Some((e, a)) => format!("column {} is {}, expected {} {}", a.0, a.1, e.0, e.1),
                None => format!("{} columns, expected {}", actual.len(), expected.len()),
            };
            return Err(RunError::Parquet {
                path: path.display().to_string(),
                message: format!(
                    "not the schema witness writes ({detail}); was it rewritten by another tool?"
                ),
            });
        }
        let get = |k: &str| {
            kv.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
                .unwrap_or("(missing)")
        };
        if get(KEY_HASH) != manifest.hash {
            report.problems.push(format!(
                "{}: manifest hash {} does not match manifest.toml ({})",
                path.display(),
                get(KEY_HASH),
                manifest.hash
            ));
        }
        if get(KEY_ENGINE) != model.version() {
            report.problems.push(format!(
                "{}: written by {}, this build runs {}",
                path.display(),
                get(KEY_ENGINE),
                model.version()
            ));
        }
        streams.push(stream);
    }
    let sampled = |id: u64| match replay {
        Replay::All => true,
        Replay::Sample(0) => false,
        Replay::Sample(n) => {
            let n = n.min(plan.total);
            // Evenly spread: run ids floor(i * total / n) for i in 0..n.
            let i = (id * n).div_ceil(plan.total);
            i < n && i * plan.total / n == id
        }
    };
    let runs_at = tables.len() - 1;
    let mut start = 0;
    while start < plan.total {
        let end = (start + WINDOW).min(plan.total);
        let rows: Vec<Vec<Row>> = streams
            .iter_mut()
            .map(|s| s.take_below(end))
            .collect::<Result<_, _>>()?;
        let checked: Vec<(u64, bool, Vec<String>)> = (start..end)
            .into_par_iter()
            .map(|id| check_run(&plan, &tables, &rows, id, sampled(id)))
            .collect();
        for (_, replayed, p) in checked {
            report.replayed += replayed as u64;
            report.problems.extend(p);
        }
        report.runs += rows[runs_at].len() as u64;
        if runs_at > 0 {
            report.audited += end - start;
        }
        start = end;
    }
    if let Some(extra) = streams[runs_at].peek()? {
        report.problems.push(format!(
            "runs.parquet: holds run {} beyond the manifest's {} runs",
            extra[0], plan.total
        ));
    }
    Ok(report)
}

fn id_of(row: &Row) -> u64 {
    match row[0] {
        Value::Int(id) => id as u64,
        _ => u64::MAX,
    }
}

/// A run's rows of one detail table (sorted by run_id), without the run_id.
fn rows_of(rows: &[Row], id: u64) -> Vec<Row> {
    let lo = rows.partition_point(|r| id_of(r) < id);
    rows[lo..]
        .iter()
        .take_while(|r| id_of(r) == id)
        .map(|r| r[1..].to_vec())
        .collect()
}

fn check_run(
    plan: &Plan,
    tables: &[Table],
    rows: &[Vec<Row>],
    id: u64,
    replay: bool,
) -> (u64, bool, Vec<String>) {
    let model = plan.model();
    let spec = plan.run(id);
    let (details, runs_table) = tables.split_at(tables.len() - 1);
    let runs = &rows[details.len()];
    let who = format!("run {id} ({})", plan.arm_name(spec.arm));
    let mut problems = Vec::new();
    let Some(stored) = runs.iter().find(|r| id_of(r) == id) else {
        return (id, false, vec![format!("{who}: missing from runs.parquet")]);
    };
    let key = run_key(model.name(), &spec.params);
    if stored[1] != Value::Str(key.clone()) {
        problems.push(format!(
            "{who}: run_key {} stored, the manifest gives {key}",
            stored[1]
        ));
    }
    for (k, (name, v)) in spec.params.values.iter().enumerate() {
        if !same(&stored[3 + k], v) {
            problems.push(format!(
                "{who}: parameter {name} stored as {}, the manifest gives {v}",
                stored[3 + k]
            ));
        }
    }
    let failed_at = stored.len() - 2;
    if stored[failed_at] == Value::Bool(true) {
        problems.push(format!(
            "{who}: recorded a broken identity: {}",
            stored[failed_at + 1]
        ));
    }
    let stored_details: Vec<Vec<Row>> = details
        .iter()
        .enumerate()
        .map(|(t, _)| rows_of(&rows[t], id))
        .collect();
    for (table, stored_rows) in details.iter().zip(&stored_details) {
        let k = table.model_table.expect("a detail table");
        if let Some(v) = model.audit(&spec.params, k, stored_rows) {
            problems.push(format!("{who}: {}: {v}", table.name));
        }
    }
    if replay {
        let out = model.run(&spec.params, &plan.manifest.tables);
        let fresh = super::tables::run_row(plan, &spec, &out);
        if let Some(d) = first_difference(&runs_table[0], 0, std::slice::from_ref(stored), &[fresh])
        {
            problems.push(format!("{who}: {d}"));
        }
        for (table, stored_rows) in details.iter().zip(&stored_details) {
            let k = table.model_table.expect("a detail table");
            if let Some(d) = first_difference(table, 1, stored_rows, &out.tables[k]) {
                problems.push(format!("{who}: {d}"));
            }
        }
    }
    (id, replay, problems)
}
