//! Chunks: the unit of parallel work, of resume and of shards. Chunk c
//! holds runs [c k, (c+1) k) (`Plan::chunk_runs`; shards take chunks
//! round-robin); a finished chunk is one part file per table,
//! each recording the manifest, the chunk and a digest of its rows, and the
//! `runs` part, written last, marks the chunk done.

use super::job::Job;
use super::kept::{Kept, KeptPart};
use super::layout::Layout;
use super::tables::{metadata, run_into, Table};
use super::{interrupted, Progress, RunError};
use crate::grid::Plan;
use crate::model::Columns;
use crate::store::digest::RowDigest;
use crate::store::{parquet, FileMeta};

/// A chunk is done when its `runs` part exists and says it is this
/// manifest's chunk. (Assembly checks every part in full.)
pub fn done(layout: &Layout, plan: &Plan, chunk: u64) -> bool {
    let path = layout.part("runs", chunk);
    path.exists()
        && parquet::metadata(&path)
            .ok()
            .and_then(|kv| FileMeta::from_kv(&kv).ok())
            .is_some_and(|m| belongs(&m, plan, "runs", chunk))
}

/// Whether a part's metadata says it holds `table`'s rows of `chunk` for
/// this manifest.
pub fn belongs(m: &FileMeta, plan: &Plan, table: &str, chunk: u64) -> bool {
    m.manifest_sha256 == plan.manifest.hash
        && m.table == table
        && m.chunk == Some(chunk)
        && m.runs_total == plan.grid_total()
        && m.digest.is_some()
}

/// The most rows a chunk's table is given room for after its first run.
const RESERVE_ROWS: usize = 1 << 16;

/// The runs of a chunk whose identities failed, with why.
pub(super) type Failures = Vec<(u64, String)>;

/// Runs a chunk of a job and writes its parts (keeping them in memory
/// too, within the budget); `None` when Ctrl-C stopped it first (nothing
/// of it is written then).
pub(super) fn run(plan: &Plan, job: &Job, chunk: u64) -> Result<Option<Failures>, RunError> {
    let Job {
        work: layout,
        tables,
        shard,
        policies,
        progress,
        ..
    } = *job;
    let kept = &job.kept;
    let mut rows: Vec<Columns> = tables.iter().map(|t| Columns::new(&t.columns)).collect();
    let mut failures = Vec::new();
    let stopped = |message| Err(RunError::Policy { message });
    if interrupted() {
        return Ok(None);
    }
    if let Some(why) = policies.stopped() {
        return stopped(why);
    }
    let mut logs = policies.chunk(chunk).map_err(|e| RunError::Policy {
        message: format!("the record log cannot be read: {e}"),
    })?;
    let ids = plan.chunk_runs(chunk);
    let (first, count) = (ids.start, ids.end - ids.start);
    for id in ids {
        if interrupted() {
            return Ok(None);
        }
        let failed = run_into(
            plan,
            tables,
            &plan.run(id),
            &mut rows,
            policies,
            Some(&mut logs),
        );
        // A signal may have stopped a policy mid-run: the run is cut
        // short, not failed, and nothing of this chunk is written.
        if interrupted() {
            return Ok(None);
        }
        if let Some(why) = policies.stopped() {
            // The run was cut short; answers had so far are in the log.
            return stopped(why);
        }
        if id == first {
            // Runs of a grid give tables of similar sizes: room for the
            // rest like the first saves growing each column a dozen times.
            // Capped, since a first run may be far larger than the others.
            let rest = (count - 1) as usize;
            for t in &mut rows {
                t.reserve((t.rows() * rest).min(RESERVE_ROWS));
            }
        }
        if let Some(v) = failed {
            failures.push((id, v));
        }
        progress(Progress::Ran(1));
    }
    // Detail parts first: the `runs` part, put in place last, marks the
    // chunk done. They are encoded here and made durable on the job's
    // committer thread, so this thread goes on to the next chunk.
    let mut staged = Vec::with_capacity(tables.len());
    for (table, rows) in tables.iter().zip(rows) {
        let path = layout.part(table.name, chunk);
        let dir = path.parent().expect("parts live in a folder");
        std::fs::create_dir_all(dir).map_err(|e| RunError::io(dir, e))?;
        let mut digest = RowDigest::new();
        digest.add_columns(&rows);
        let (count, digest) = (digest.rows(), digest.finish());
        let meta = FileMeta {
            // The full grid's size: a raced plan grows, its parts stay.
            runs_total: plan.grid_total(),
            chunk: Some(chunk),
            shard: Some((shard.index, shard.count)),
            rows: Some(count),
            digest: Some(digest.clone()),
            ..metadata(plan, table.name)
        };
        let batch =
            parquet::columns_batch(&table.columns, rows).map_err(|e| RunError::write(&path, e))?;
        staged.push(
            parquet::stage_as(
                &path,
                &table.columns,
                [Ok(batch.clone())],
                &meta.to_kv(),
                parquet::Codec::Part,
            )
            .map_err(|e| RunError::write(&path, e))?,
        );
        kept.offer(
            table.name,
            chunk,
            KeptPart {
                batch,
                digest,
                rows: count,
            },
        );
    }
    job.committer
        .commit(staged)
        .map_err(|f| RunError::io(&f.path, f.error))?;
    // Encode what now continues the final tables while other chunks run.
    job.streams.advance(tables, kept);
    Ok(Some(failures))
}

/// Removes a chunk's parts, runs part first, so it counts as not done.
pub fn remove(layout: &Layout, tables: &[Table], chunk: u64, kept: &Kept) -> Result<(), RunError> {
    for t in tables.iter().rev() {
        kept.forget(t.name, chunk);
        let path = layout.part(t.name, chunk);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(RunError::io(&path, e))
            }
            _ => {}
        }
    }
    Ok(())
}
