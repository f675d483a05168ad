//! Final tables from chunk parts, in chunk order, and `merge`, which checks
//! that a folder's parts are one complete, consistent set before assembling.

use ::parquet::errors::ParquetError;
use arrow_array::{Array, BooleanArray, Int64Array, RecordBatch, StringArray};
use std::path::Path;

use super::layout::Layout;
use super::tables::{metadata, tables, Table, KEY_HASH, KEY_SHARD};
use super::{chunk_count, chunk_runs, RunError};
use crate::grid::Plan;
use crate::sink::parquet;

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
        let is_runs = table.model_table.is_none();
        let mut next_id = 0u64;
        let mut problem: Option<RunError> = None;
        let batches = (0..chunks).flat_map(|c| {
            let path = layout.part(table.name, c);
            match parquet::open(&path) {
                Ok((_, reader)) => reader
                    .map(move |b| {
                        b.map_err(|e| ParquetError::General(format!("{}: {e}", path.display())))
                    })
                    .collect::<Vec<_>>(),
                Err(e) => vec![Err(ParquetError::General(format!(
                    "{}: {e}",
                    path.display()
                )))],
            }
        });
        let checked = batches.map(|b| {
            let b = b?;
            if is_runs {
                check_ids(&b, &mut next_id, &mut failures).map_err(|e| {
                    problem.get_or_insert(RunError::Incomplete {
                        dir: layout.dir.display().to_string(),
                        message: e.clone(),
                    });
                    ParquetError::General(e)
                })?;
            }
            Ok(b)
        });
        let path = layout.table(table.name);
        let kv = metadata(plan, table.name);
        if let Err(e) = parquet::write(&path, &table.schema, checked, &kv) {
            return Err(problem.unwrap_or_else(|| RunError::io(&path, e)));
        }
        if is_runs && next_id != plan.total {
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

fn check_ids(
    b: &RecordBatch,
    next: &mut u64,
    failures: &mut Vec<(u64, String)>,
) -> Result<(), String> {
    let ids = b
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .ok_or("runs part without run_id")?;
    let n = b.num_columns();
    let failed = b
        .column(n - 2)
        .as_any()
        .downcast_ref::<BooleanArray>()
        .ok_or("runs part without failed")?;
    let why = b
        .column(n - 1)
        .as_any()
        .downcast_ref::<StringArray>()
        .ok_or("runs part without failure")?;
    for i in 0..b.num_rows() {
        let id = ids.value(i) as u64;
        if id != *next {
            return Err(format!(
                "run {id} found where run {} belongs: a part is duplicated or missing; rerun the shard that wrote it",
                *next
            ));
        }
        if failed.value(i) {
            failures.push((
                id,
                if why.is_null(i) {
                    String::new()
                } else {
                    why.value(i).to_string()
                },
            ));
        }
        *next += 1;
    }
    Ok(())
}

/// Runs recorded as failed in a final `runs.parquet`.
pub fn failures_in(path: &Path) -> Result<Vec<(u64, String)>, RunError> {
    let (_, reader) = parquet::open(path).map_err(|e| RunError::parquet(path, e))?;
    let mut out = Vec::new();
    let mut next = 0;
    for b in reader {
        let b = b.map_err(|e| RunError::parquet(path, e))?;
        check_ids(&b, &mut next, &mut out).map_err(|e| RunError::parquet(path, e))?;
    }
    Ok(out)
}

/// Assembles a folder written by shards: one manifest, one shard count,
/// every chunk present, then the same final files a single run writes.
pub fn merge(dir: &Path) -> Result<Vec<(u64, String)>, RunError> {
    let layout = Layout::new(dir);
    let manifest = layout.read_manifest()?;
    let plan = Plan::new(&manifest);
    let tables = tables(plan.model(), &manifest.tables);
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
            let (kv, _) = parquet::open(&path).map_err(|e| RunError::parquet(&path, e))?;
            let get = |k: &str| {
                kv.iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            if get(KEY_HASH) != manifest.hash {
                return Err(RunError::Incomplete {
                    dir: dir.display().to_string(),
                    message: format!(
                        "{} was written for another manifest; remove it and rerun its shard",
                        path.display()
                    ),
                });
            }
            counts.insert(get(KEY_SHARD).split('/').nth(1).unwrap_or("?").to_string());
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
        let list: Vec<String> = counts.into_iter().collect();
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
