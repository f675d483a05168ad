//! Executes a plan: fixed chunks of runs fan out over a rayon pool, each
//! finished chunk becomes durable part files, and the final tables are
//! assembled from the parts in chunk order. Because parts do not depend on
//! which thread, process or machine made them, the final bytes are the same
//! for any thread count, after any crash and resume, and after a sharded
//! run and `merge`.

mod assemble;
pub mod estimate;
pub mod layout;
pub mod shard;
pub mod tables;
pub mod verify;

use rayon::prelude::*;
use std::path::Path;

pub use assemble::{assemble, failures_in, merge};
use layout::Layout;
use tables::{metadata, run_into, tables, Table};

use crate::grid::Plan;
use crate::model::Row;
use crate::store::{parquet, FileMeta, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The filesystem refused (a folder that cannot be made, a full disk).
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A table could not be written.
    #[error("{path}: {source}")]
    Write { path: String, source: StoreError },
    /// A stored file does not read back as witness wrote it.
    #[error("{path}: {source}")]
    Corrupt { path: String, source: StoreError },
    #[error("{dir}: not a results folder (no manifest.toml); give a folder written by `witness run` or `witness merge`")]
    NotResults { dir: String },
    #[error(
        "{dir} holds the results of another manifest (sha256 {theirs}…, this one is {ours}…); \
         choose another folder with --out, or pass --force to replace those results"
    )]
    OtherManifest {
        dir: String,
        theirs: String,
        ours: String,
    },
    /// The results are not (yet) one complete, consistent set.
    #[error("{dir}: {message}")]
    Incomplete { dir: String, message: String },
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    #[error(transparent)]
    Plan(#[from] crate::grid::PlanError),
    #[error("could not start {threads} threads: {message}")]
    Pool { threads: usize, message: String },
}

impl RunError {
    pub fn io(path: &Path, source: std::io::Error) -> RunError {
        RunError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    pub fn write(path: &Path, source: StoreError) -> RunError {
        RunError::Write {
            path: path.display().to_string(),
            source,
        }
    }

    pub fn corrupt(path: &Path, source: StoreError) -> RunError {
        RunError::Corrupt {
            path: path.display().to_string(),
            source,
        }
    }

    /// 1 when a check of stored results failed, 2 when the input or the
    /// environment was wrong.
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Corrupt { .. } | RunError::Incomplete { .. } => crate::error::EXIT_FAILED,
            _ => crate::error::EXIT_BAD_INPUT,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

pub struct Options {
    pub threads: Option<usize>,
    pub shard: Option<Shard>,
    pub force: bool,
}

#[derive(Debug, Default)]
pub struct Report {
    pub chunks: u64,
    pub chunks_resumed: u64,
    pub runs_executed: u64,
    pub runs_in_shard: u64,
    pub already_complete: bool,
    /// Final tables were written (false for a shard of several).
    pub assembled: bool,
    /// (run_id, what failed) for runs whose identities broke.
    pub failures: Vec<(u64, String)>,
}

/// Chunk c holds runs [c k, (c+1) k); shards take chunks round-robin.
pub fn chunk_runs(plan: &Plan, chunk: u64) -> std::ops::Range<u64> {
    let k = plan.manifest.chunk_runs as u64;
    chunk * k..((chunk + 1) * k).min(plan.total)
}

pub fn chunk_count(plan: &Plan) -> u64 {
    plan.total.div_ceil(plan.manifest.chunk_runs as u64)
}

pub fn execute(
    plan: &Plan,
    dir: &Path,
    opts: &Options,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Report, RunError> {
    let layout = Layout::new(dir);
    let tables = tables(plan.model(), &plan.manifest.tables);
    let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
    layout.prepare(&plan.manifest.text, &names, opts.force)?;
    let mut report = Report {
        chunks: chunk_count(plan),
        ..Report::default()
    };
    let runs_final = layout.table("runs");
    if runs_final.exists() && !layout.parts().exists() {
        report.already_complete = true;
        report.runs_in_shard = plan.total;
        report.failures = failures_in(&runs_final)?;
        return Ok(report);
    }
    let shard = opts.shard.unwrap_or(Shard { index: 0, count: 1 });
    let mine: Vec<u64> = (0..report.chunks)
        .filter(|c| c % shard.count == shard.index)
        .collect();
    let mut todo = Vec::new();
    for &c in &mine {
        report.runs_in_shard += chunk_runs(plan, c).count() as u64;
        if part_done(&layout, plan, c) {
            report.chunks_resumed += 1;
            progress(chunk_runs(plan, c).count() as u64);
        } else {
            todo.push(c);
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .map_err(|e| RunError::Pool {
            threads: opts.threads.unwrap_or(0),
            message: e.to_string(),
        })?;
    let executed: Vec<Vec<(u64, String)>> = pool.install(|| {
        todo.par_iter()
            .map(|&c| run_chunk(plan, &layout, &tables, c, shard, progress))
            .collect::<Result<_, _>>()
    })?;
    report.runs_executed = todo
        .iter()
        .map(|&c| chunk_runs(plan, c).count() as u64)
        .sum();
    if shard.count == 1 {
        report.failures = assemble(plan, &layout, &tables)?;
        report.assembled = true;
    } else {
        report.failures = executed.into_iter().flatten().collect();
    }
    Ok(report)
}

/// A chunk is done when its `runs` part exists and belongs to this manifest.
fn part_done(layout: &Layout, plan: &Plan, chunk: u64) -> bool {
    let path = layout.part("runs", chunk);
    path.exists()
        && parquet::metadata(&path)
            .ok()
            .and_then(|kv| FileMeta::from_kv(&kv).ok())
            .is_some_and(|m| m.manifest_sha256 == plan.manifest.hash)
}

fn run_chunk(
    plan: &Plan,
    layout: &Layout,
    tables: &[Table],
    chunk: u64,
    shard: Shard,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<(u64, String)>, RunError> {
    let mut rows: Vec<Vec<Row>> = tables.iter().map(|_| Vec::new()).collect();
    let mut failures = Vec::new();
    for id in chunk_runs(plan, chunk) {
        if let Some(v) = run_into(plan, tables, id, &mut rows) {
            failures.push((id, v.to_string()));
        }
        progress(1);
    }
    // Detail parts first: the `runs` part, written last, marks the chunk done.
    for (table, rows) in tables.iter().zip(rows) {
        let path = layout.part(table.name, chunk);
        let dir = path.parent().expect("parts live in a folder");
        std::fs::create_dir_all(dir).map_err(|e| RunError::io(dir, e))?;
        let meta = FileMeta {
            chunk: Some(chunk),
            shard: Some((shard.index, shard.count)),
            ..metadata(plan, table.name)
        };
        let batch = parquet::batch(&table.columns, &rows);
        parquet::write(&path, &table.columns, [batch], &meta.to_kv())
            .map_err(|e| RunError::write(&path, e))?;
    }
    Ok(failures)
}
