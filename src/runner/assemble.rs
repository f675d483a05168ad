//! Final tables from chunk parts, in chunk order, and `merge`, which checks
//! that a folder's parts are one complete, consistent set before assembling.

use std::path::Path;

use super::layout::Layout;
use super::tables::{metadata, tables, Table};
use super::{chunk_count, chunk_runs, RunError};
use crate::grid::Plan;
use crate::model::Registry;
use crate::params::Value;
use crate::store::{parquet, FileMeta, StoreError};

/// Streams every part of every table into the final files, checking that the
/// runs parts hold exactly runs 0..total in order; then removes the parts.
/// Returns the runs whose identities failed.
pub fn assemble(
    plan: &Plan,
    layout: &Layout,
    tables: &[Table],
) -> Result<Vec<(u64, String)>, RunError> {
    let chunks = chunk_count(plan);
    let mut failures = Vec::new();
    for table in tables {
        let mut next_id = 0u64;
        let mut problem: Option<RunError> = None;
        let batches = (0..chunks).flat_map(|c| {
            let path = layout.part(table.name, c);
            let located =
                move |e: StoreError| StoreError::Format(format!("{}: {e}", path.display()));
            match parquet::open(&layout.part(table.name, c)) {
                Ok(reader) => reader.map(|b| b.map_err(&located)).collect::<Vec<_>>(),
                Err(e) => vec![Err(located(e))],
            }
        });
        let checked = batches.map(|b| {
            let b = b?;
            if table.is_runs() {
                check_ids(&b, &mut next_id, &mut failures).map_err(|e| {
                    problem.get_or_insert(RunError::Incomplete {
                        dir: layout.dir.display().to_string(),
                        message: e.clone(),
                    });
                    StoreError::Format(e)
                })?;
            }
            Ok(b)
        });
        let path = layout.table(table.name);
        let kv = metadata(plan, table.name).to_kv();
        if let Err(e) = parquet::write(&path, &table.columns, checked, &kv) {
            return Err(problem.unwrap_or_else(|| match e {
                // A part that does not read back is corrupt; anything else
                // is the final file failing to be written.
                StoreError::Format(_)
                | StoreError::Parquet(_)
                | StoreError::Arrow(_)
                | StoreError::Meta(_) => RunError::corrupt(&path, e),
                StoreError::Io(_) => RunError::write(&path, e),
            }));
        }
        if table.is_runs() && next_id != plan.total {
            let _ = std::fs::remove_file(&path);
            return Err(RunError::Incomplete {
                dir: layout.dir.display().to_string(),
                message: format!(
                    "parts hold runs 0..{next_id}, the manifest has {}",
                    plan.total
                ),
            });
        }
    }
    std::fs::remove_dir_all(layout.parts()).map_err(|e| RunError::io(&layout.parts(), e))?;
    Ok(failures)
}

/// Checks a batch of `runs` rows continues the run ids from `next`, and
/// collects the runs recorded as failed.
fn check_ids(
    b: &parquet::Batch,
    next: &mut u64,
    failures: &mut Vec<(u64, String)>,
) -> Result<(), String> {
    let ids = b.ints("run_id").map_err(|e| e.to_string())?;
    let status = b.rows(&["failed", "failure"]).map_err(|e| e.to_string())?;
    for (&id, row) in ids.iter().zip(&status) {
        if id < 0 || id as u64 != *next {
            return Err(format!(
                "run {id} found where run {} belongs: a part is duplicated or missing; rerun the shard that wrote it",
                *next
            ));
        }
        if row[0] == Value::Bool(true) {
            let why = row[1].as_str().unwrap_or_default().to_string();
            failures.push((*next, why));
        }
        *next += 1;
    }
    Ok(())
}

/// Runs recorded as failed in a final `runs.parquet`.
pub fn failures_in(path: &Path) -> Result<Vec<(u64, String)>, RunError> {
    let reader = parquet::open(path).map_err(|e| RunError::corrupt(path, e))?;
    let mut out = Vec::new();
    let mut next = 0;
    for b in reader {
        let b = b.map_err(|e| RunError::corrupt(path, e))?;
        check_ids(&b, &mut next, &mut out)
            .map_err(|e| RunError::corrupt(path, StoreError::Format(e)))?;
    }
    Ok(out)
}

/// Assembles a folder written by shards: one manifest, one shard count,
/// every chunk present, then the same final files a single run writes.
pub fn merge(dir: &Path, registry: &Registry) -> Result<Vec<(u64, String)>, RunError> {
    let layout = Layout::new(dir);
    let plan = layout.read_plan(registry)?;
    let tables = tables(plan.model(), &plan.manifest.tables);
    if layout.table("runs").exists() && !layout.parts().exists() {
        return failures_in(&layout.table("runs"));
    }
    let mut missing = Vec::new();
    let mut counts = std::collections::BTreeSet::new();
    for c in 0..chunk_count(&plan) {
        for table in &tables {
            let path = layout.part(table.name, c);
            if !path.exists() {
                missing.push(c);
                break;
            }
            let kv = parquet::metadata(&path).map_err(|e| RunError::corrupt(&path, e))?;
            let meta = FileMeta::from_kv(&kv).map_err(|e| RunError::corrupt(&path, e.into()))?;
            if meta.manifest_sha256 != plan.manifest.hash {
                return Err(RunError::Incomplete {
                    dir: dir.display().to_string(),
                    message: format!(
                        "{} was written for another manifest; remove it and rerun its shard",
                        path.display()
                    ),
                });
            }
            counts.insert(meta.shard.map_or(0, |(_, n)| n));
        }
    }
    if !missing.is_empty() {
        let ranges: Vec<String> = missing
            .iter()
            .take(10)
            .map(|&c| {
                let r = chunk_runs(&plan, c);
                format!("chunk {c} (runs {}..{})", r.start, r.end)
            })
            .collect();
        return Err(RunError::Incomplete {
            dir: dir.display().to_string(),
            message: format!(
                "{} of {} chunks are missing, e.g. {}; wait for or rerun the shards that own them",
                missing.len(),
                chunk_count(&plan),
                ranges.join(", ")
            ),
        });
    }
    if counts.len() > 1 {
        let list: Vec<String> = counts.iter().map(u64::to_string).collect();
        return Err(RunError::Incomplete {
            dir: dir.display().to_string(),
            message: format!(
                "parts come from different shard counts ({}); rerun every shard with one --shard K/N",
                list.join(", ")
            ),
        });
    }
    assemble(&plan, &layout, &tables)
}
