//! Raced plans at the edge: the metric of a finished rung read back from
//! the folder, so that a plan grows rung by rung in the same way whether
//! it is being run, resumed, merged, verified or analysed. A rung's values
//! come from its chunks' `runs` parts while the race is under way, and
//! from `runs.parquet` once it is assembled.

use std::path::Path;

use super::chunk;
use super::layout::Layout;
use super::RunError;
use crate::grid::Plan;
use crate::params::Value;
use crate::store::parquet;

/// A metric cell as a score: failed runs (no value) score NaN, which
/// ranks last.
fn score(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(x) => *x,
        _ => f64::NAN,
    }
}

/// The run ids and metric of a table's rows.
fn columns(path: &Path, metric: &str) -> Result<(Vec<Value>, Vec<f64>), RunError> {
    let mut cols =
        parquet::read_columns(path, &["run_id", metric]).map_err(|e| RunError::corrupt(path, e))?;
    let values = cols.pop().expect("two columns").iter().map(score).collect();
    Ok((cols.pop().expect("two columns"), values))
}

/// Whether `ids` are the runs `start..` in order.
fn in_order(ids: &[Value], start: u64) -> bool {
    ids.iter()
        .enumerate()
        .all(|(k, v)| *v == Value::Int((start + k as u64) as i64))
}

fn incomplete(layout: &Layout, message: String) -> RunError {
    RunError::Incomplete {
        dir: layout.dir.display().to_string(),
        message,
    }
}

/// Whether `runs.parquet` is the one the folder's seal records for this
/// manifest: a damaged or altered table must not steer the race (the run
/// then drops the seal and runs the race again from its first rung).
fn sealed(layout: &Layout, plan: &Plan, table: &Path) -> bool {
    let Ok(Some(seal)) = crate::store::seal::Seal::read(&layout.dir) else {
        return false;
    };
    let Some(runs) = seal.table("runs") else {
        return false;
    };
    seal.manifest_sha256 == plan.manifest.hash
        && crate::store::digest::file_sha256(table)
            .is_ok_and(|(sha, bytes)| sha == runs.sha256 && bytes == runs.bytes)
}

/// Decides rungs while their runs are all in `layout` (parts, or the
/// assembled `runs.parquet`), scheduling each next rung. A plain plan is
/// left as it is.
pub fn grow(plan: &mut Plan, layout: &Layout) -> Result<(), RunError> {
    let Some(metric) = plan.manifest.search.as_ref().map(|s| s.metric) else {
        return Ok(());
    };
    let table = layout.table("runs");
    let mut whole: Option<Vec<f64>> = None;
    let mut trusted: Option<bool> = None;
    loop {
        let Some(s) = plan.schedule().filter(|s| !s.finished()) else {
            return Ok(());
        };
        let k = s.decisions.len();
        let (runs, chunks) = (s.rung_runs(k), s.rung_chunks(k));
        let from_parts = chunks.clone().all(|c| chunk::done(layout, plan, c));
        let values = if from_parts {
            let mut values = Vec::with_capacity((runs.end - runs.start) as usize);
            for c in chunks {
                let part = layout.part("runs", c);
                let (ids, v) = columns(&part, metric)?;
                let want = plan.chunk_runs(c);
                if ids.len() as u64 != want.end - want.start || !in_order(&ids, want.start) {
                    return Err(incomplete(
                        layout,
                        format!(
                            "{} does not hold runs {want:?} of chunk {c}; remove it and run again",
                            part.display()
                        ),
                    ));
                }
                values.extend(v);
            }
            values
        } else if *trusted.get_or_insert_with(|| sealed(layout, plan, &table)) {
            if whole.is_none() {
                let (ids, v) = columns(&table, metric)?;
                if !in_order(&ids, 0) {
                    return Err(incomplete(
                        layout,
                        format!(
                            "{} does not hold runs 0..{} in order; run `witness verify`",
                            table.display(),
                            ids.len()
                        ),
                    ));
                }
                whole = Some(v);
            }
            let all = whole.as_ref().expect("read above");
            if (all.len() as u64) < runs.end {
                return Ok(());
            }
            all[runs.start as usize..runs.end as usize].to_vec()
        } else {
            return Ok(());
        };
        plan.record_rung(&values);
    }
}
