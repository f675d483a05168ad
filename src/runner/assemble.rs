//! Final tables from chunk parts, in chunk order; the seal that records
//! them; and `merge`, which checks that a folder's parts are one complete
//! set before assembling. The order of writes is what makes a crash at any
//! moment harmless: final tables, then the seal, then the parts go. A
//! folder is complete exactly when its seal matches its files.

use rayon::prelude::*;
use std::path::Path;

use super::chunk;
use super::kept::Kept;
use super::layout::Layout;
use super::sealed::is_complete;
use super::stream::{check_ids, Stream, Streams, Tally};
use super::tables::{metadata, tables, Table};
use super::RunError;
use crate::grid::Plan;
use crate::model::Registry;
use crate::policy::log;
use crate::store::digest::{combine, file_sha256, RowDigest};
use crate::store::parquet::{self, Batch};
use crate::store::seal::{block_chunks, Seal, SealedFile, SealedTable};
use crate::store::{FileMeta, StoreError};

/// Why assembly stopped.
pub enum Assembly {
    /// These chunks' parts are missing, damaged or someone else's (with
    /// what is wrong with the first such part of each): run them again.
    Damaged(Vec<(u64, String)>),
    Failed(RunError),
}

impl From<RunError> for Assembly {
    fn from(e: RunError) -> Assembly {
        Assembly::Failed(e)
    }
}

/// A chunk's part of a table read back whole: its batches, and the
/// digest and row count its footer records, which its rows match.
struct Part {
    batches: Vec<Batch>,
    digest: String,
    rows: u64,
}

/// Reads a chunk's part of `table` and checks it: a file that reads, a
/// footer saying it is this chunk's, and rows whose digest is the one
/// recorded when the part was written (so a changed value is caught
/// before it is assembled). `Err` says what is wrong with it.
fn read_part(plan: &Plan, layout: &Layout, table: &str, c: u64) -> Result<Part, String> {
    let path = layout.part(table, c);
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let reader = parquet::open(&path).map_err(|e| at(&e))?;
    let meta = FileMeta::from_kv(&reader.metadata)
        .ok()
        .filter(|m| chunk::belongs(m, plan, table, c))
        .ok_or_else(|| at(&"not this chunk's part (another manifest's or chunk's)"))?;
    let mut digest = RowDigest::new();
    let mut batches = Vec::new();
    for b in reader {
        let b = b.map_err(|e| at(&e))?;
        digest.add_batch(&b).map_err(|e| at(&e))?;
        batches.push(b);
    }
    let (rows, digest) = (digest.rows(), digest.finish());
    if Some(rows) != meta.rows || Some(&digest) != meta.digest.as_ref() {
        return Err(at(&format!(
            "its rows do not match the digest it recorded when it was written \
             ({rows} rows, digest {digest}; recorded: {} rows, digest {})",
            meta.rows.unwrap_or(0),
            meta.digest.unwrap_or_default()
        )));
    }
    Ok(Part {
        batches,
        digest,
        rows,
    })
}

/// What is wrong with chunk `c`'s parts, if anything: the first of its
/// tables whose part is missing, unreadable, not this chunk's, or holds
/// rows other than those it recorded. Reads every part in full.
pub(super) fn chunk_problem(
    plan: &Plan,
    layout: &Layout,
    tables: &[Table],
    c: u64,
) -> Option<String> {
    tables
        .iter()
        .find_map(|t| read_part(plan, layout, t.name, c).err())
}

/// Whether every table's part of chunk `c` is there and says it is this
/// chunk's (footers only: cheap, but blind to a changed value).
pub(super) fn parts_present(plan: &Plan, layout: &Layout, tables: &[Table], c: u64) -> bool {
    tables.iter().all(|t| {
        parquet::metadata(&layout.part(t.name, c))
            .ok()
            .and_then(|kv| FileMeta::from_kv(&kv).ok())
            .is_some_and(|m| chunk::belongs(&m, plan, t.name, c))
    })
}

/// Every chunk with a part that cannot be assembled, and why, found by
/// reading every part on disk (parts kept in memory are this process's
/// own rows, and are used instead of their files); `found` are those
/// assembly stopped at, kept even if they read well now.
fn damaged_chunks(
    plan: &Plan,
    layout: &Layout,
    tables: &[Table],
    kept: &Kept,
    found: Vec<(u64, String)>,
) -> Vec<(u64, String)> {
    let mut all: Vec<(u64, String)> = (0..plan.chunk_count())
        .into_par_iter()
        .filter_map(|c| {
            let on_disk = tables
                .iter()
                .filter(|t| kept.with(t.name, c, |_| ()).is_none());
            on_disk
                .into_iter()
                .find_map(|t| read_part(plan, layout, t.name, c).err())
                .map(|why| (c, why))
        })
        .collect();
    all.extend(found);
    all.sort_by_key(|d| d.0);
    all.dedup_by_key(|d| d.0);
    all
}

/// Streams every part of every table into the final files (going on from
/// where a table's stream got while the chunks ran), checking that each
/// part read from disk is its chunk's and holds the rows whose digest it
/// recorded (a damaged one stops the table's file before it replaces
/// anything) and that the runs parts hold exactly runs 0..total in order;
/// writes the seal; then removes the parts. Returns the runs whose
/// identities failed.
pub fn assemble(
    plan: &Plan,
    layout: &Layout,
    tables: &[Table],
    kept: &Kept,
    streams: &Streams,
) -> Result<Vec<(u64, String)>, Assembly> {
    let chunks = plan.chunk_count();
    let per_block = block_chunks(chunks);
    // The tables are independent files: encode them at once, one per
    // thread, and report the first table's problem in table order.
    let done: Vec<_> = tables
        .par_iter()
        .enumerate()
        .map(|(i, t)| {
            let stream = streams.take(i);
            assemble_table(plan, layout, kept, stream, t, chunks, per_block)
        })
        .collect();
    // A damaged part anywhere is mended by running its chunk again: find
    // every such chunk at once, so one pass of reruns heals them all.
    let found: Vec<(u64, String)> = done
        .iter()
        .filter_map(|d| match d {
            Err(Assembly::Damaged(d)) => Some(d.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    if !found.is_empty() {
        return Err(Assembly::Damaged(damaged_chunks(
            plan, layout, tables, kept, found,
        )));
    }
    let mut failures = Vec::new();
    let mut sealed = Vec::new();
    for d in done {
        let (table, f) = d?;
        sealed.push(table);
        failures.extend(f);
    }
    let seal = Seal {
        witness: env!("CARGO_PKG_VERSION").into(),
        manifest_sha256: plan.manifest.hash.clone(),
        runs: plan.total,
        chunk_runs: plan.manifest.chunk_runs as u64,
        block_chunks: per_block,
        tables: sealed,
        files: seal_logs(layout)?,
    };
    seal.write(&layout.dir)
        .map_err(|e| RunError::write(&layout.seal(), e))?;
    crate::crash::point("seal written");
    remove_parts(layout)?;
    Ok(failures)
}

/// One table's final file from its parts; its seal entry and, for `runs`,
/// the runs whose identities failed.
#[allow(clippy::too_many_arguments)]
fn assemble_table(
    plan: &Plan,
    layout: &Layout,
    kept: &Kept,
    stream: Option<Stream>,
    table: &Table,
    chunks: u64,
    per_block: u64,
) -> Result<(SealedTable, Vec<(u64, String)>), Assembly> {
    let path = layout.table(table.name);
    let kv = metadata(plan, table.name).to_kv();
    // A stream goes on where it stopped if it got anywhere and its footer
    // is still this plan's; otherwise it goes (with its temporary) before
    // the table is written afresh under the same temporary name.
    let stream = stream.filter(|s| s.next > 0 && s.kv == kv);
    let (file, start, mut rec, mut tally) = match stream {
        Some(s) => (Some(s.file), s.next, s.rec, s.tally),
        None => (None, 0, Vec::new(), Tally::default()),
    };
    let mut problem: Option<Assembly> = None;
    let mut damaged: Option<(u64, String)> = None;
    let batches = (start..chunks).flat_map(|c| {
        // A part this process wrote and kept is encoded from memory, in
        // the pieces its file would be read in (the same bytes result).
        let from_memory = kept.with(table.name, c, |p| {
            rec.push((p.digest.clone(), p.rows));
            p.batch.as_read_back().map(Ok).collect::<Vec<_>>()
        });
        if let Some(pieces) = from_memory {
            return pieces;
        }
        // A part from disk is read whole and its rows checked against
        // the digest it recorded before any of them goes in.
        match read_part(plan, layout, table.name, c) {
            Ok(part) => {
                rec.push((part.digest, part.rows));
                part.batches.into_iter().map(Ok).collect()
            }
            Err(why) => {
                damaged = Some((c, why.clone()));
                vec![Err(StoreError::Format(why))]
            }
        }
    });
    let checked = batches.map(|b| {
        let b = b?;
        tally.add(table.is_runs(), &b).map_err(|e| {
            problem.get_or_insert(Assembly::Failed(RunError::Incomplete {
                dir: layout.dir.display().to_string(),
                message: e.clone(),
            }));
            StoreError::Format(e)
        })?;
        Ok(b)
    });
    let written = match file {
        Some(file) => file.extend(checked),
        None => parquet::write(&path, &table.columns, checked, &kv),
    };
    // Only a part that does not read back is damaged: an error writing
    // the final file (a full disk) is the environment's, and rerunning
    // chunks would not mend it.
    if let Some(d) = damaged {
        return Err(Assembly::Damaged(vec![d]));
    }
    if let Err(e) = written {
        return Err(problem.unwrap_or(Assembly::Failed(RunError::write(&path, e))));
    }
    crate::crash::point("final table written");
    let Tally {
        rows,
        next_id,
        failures,
    } = tally;
    let recorded: u64 = rec.iter().map(|r| r.1).sum();
    if (table.is_runs() && next_id != plan.total) || rows != recorded {
        let _ = std::fs::remove_file(&path);
        return Err(Assembly::Failed(RunError::Incomplete {
            dir: layout.dir.display().to_string(),
            message: format!(
                "the parts of {} hold {rows} rows where they record {recorded} (runs 0..{next_id} of {}); \
                 remove the folder's parts/ and run again",
                table.name, plan.total
            ),
        }));
    }
    let (sha256, bytes) = file_sha256(&path).map_err(|e| RunError::io(&path, e))?;
    let blocks = rec
        .chunks(per_block as usize)
        .map(|b| combine(b.iter().map(|(d, _)| d.as_str())))
        .collect();
    Ok((
        SealedTable {
            name: table.name.into(),
            file: format!("{}.parquet", table.name),
            bytes,
            sha256,
            rows,
            blocks,
        },
        failures,
    ))
}

/// Compresses the record logs of external arms and lists them for the seal.
fn seal_logs(layout: &Layout) -> Result<Vec<SealedFile>, RunError> {
    let failed = |e: crate::policy::log::LogError| RunError::Policy {
        message: format!("the record log cannot be completed: {e}"),
    };
    log::compress_all(&layout.dir).map_err(failed)?;
    log::log_files(&layout.dir)
        .map_err(failed)?
        .into_iter()
        .map(|path| {
            let (sha256, bytes) = file_sha256(&path).map_err(|e| RunError::io(&path, e))?;
            let file = path
                .strip_prefix(&layout.dir)
                .expect("a log of the folder")
                .to_string_lossy()
                .into_owned();
            Ok(SealedFile {
                file,
                bytes,
                sha256,
            })
        })
        .collect()
}

/// Removes the parts of a sealed folder, table by table.
pub fn remove_parts(layout: &Layout) -> Result<(), RunError> {
    let parts = layout.parts();
    if !parts.exists() {
        return Ok(());
    }
    let tables: Vec<_> = std::fs::read_dir(&parts)
        .map_err(|e| RunError::io(&parts, e))?
        .flatten()
        .map(|t| t.path())
        .collect();
    // Each table's folder on its own thread: removing many small files is
    // mostly waiting on the file system, and folders do not share locks.
    tables
        .par_iter()
        .try_for_each(|t| -> Result<(), RunError> {
            std::fs::remove_dir_all(t).map_err(|e| RunError::io(t, e))?;
            crate::crash::point("parts removed");
            Ok(())
        })?;
    std::fs::remove_dir(&parts).map_err(|e| RunError::io(&parts, e))
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

/// Assembles a folder written by shards: one manifest, every chunk present,
/// then the same final files a single run writes. Parts may come from
/// different shard counts: a part is a function of its chunk alone.
pub fn merge(dir: &Path, registry: &Registry) -> Result<Vec<(u64, String)>, RunError> {
    let layout = Layout::new(dir);
    let plan = layout.read_plan(registry)?;
    // No shard may be running, and no plain run may start meanwhile.
    super::lock::refuse_while_running(dir, "merge")?;
    let _lock = super::lock::acquire(dir, super::Shard { index: 0, count: 1 }, false)?;
    let tables = tables(&plan.manifest);
    if is_complete(&plan, &layout, &tables)? {
        remove_parts(&layout)?;
        return failures_in(&layout.table("runs"));
    }
    let missing: Vec<u64> = (0..plan.chunk_count())
        .filter(|&c| !tables.iter().all(|t| layout.part(t.name, c).exists()))
        .collect();
    if !missing.is_empty() {
        return Err(incomplete(
            &plan,
            dir,
            &missing,
            "missing",
            "wait for or rerun the shards that own them",
        ));
    }
    // Every chunk is in, so no shard is still writing: what temporaries
    // remain were left by killed ones.
    layout.remove_temporaries();
    match assemble(&plan, &layout, &tables, &Kept::new(0), &Streams::default()) {
        Ok(f) => Ok(f),
        Err(Assembly::Failed(e)) => Err(e),
        Err(Assembly::Damaged(damaged)) => {
            for (c, _) in &damaged {
                chunk::remove(&layout, &tables, *c, &Kept::new(0))?;
            }
            let chunks: Vec<u64> = damaged.iter().map(|d| d.0).collect();
            Err(incomplete(
                &plan,
                dir,
                &chunks,
                "damaged or written for another manifest, and were removed",
                &format!(
                    "rerun the shards that own them, then merge again (the first: {})",
                    damaged[0].1
                ),
            ))
        }
    }
}

fn incomplete(plan: &Plan, dir: &Path, chunks: &[u64], what: &str, fix: &str) -> RunError {
    let ranges: Vec<String> = chunks
        .iter()
        .take(10)
        .map(|&c| {
            let r = plan.chunk_runs(c);
            format!("chunk {c} (runs {}..{})", r.start, r.end)
        })
        .collect();
    RunError::Incomplete {
        dir: dir.display().to_string(),
        message: format!(
            "{} of {} chunks are {what}, e.g. {}; {fix}",
            chunks.len(),
            plan.chunk_count(),
            ranges.join(", ")
        ),
    }
}
