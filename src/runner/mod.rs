//! Executes a plan: fixed chunks of runs fan out over a rayon pool, each
//! finished chunk becomes durable part files, and the final tables are
//! assembled from the parts in chunk order (from this process's copies in
//! memory, within a budget, rather than the files: `kept`), most of them
//! while the chunks still run (`stream`). Because parts
//! do not depend on which thread, process or machine made them, the final
//! bytes are the same for any thread count, after any crash and resume,
//! and after a sharded run and `merge`.

mod assemble;
mod chunk;
pub mod estimate;
mod job;
mod kept;
pub mod layout;
pub mod lock;
mod race;
mod sealed;
pub mod shard;
pub mod shards;
mod stream;
pub mod tables;
pub mod verify;

use std::path::Path;

use assemble::remove_parts;
pub use assemble::{failures_in, merge};
use job::Job;
use layout::Layout;
pub use sealed::{is_complete, seal_state, Sealed};
use tables::{tables, Table};

use crate::grid::Plan;
use crate::policy::{ArmPolicy, Policies, Source};
use crate::store::StoreError;

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
    #[error("{path} is a file, not a folder; give --out a folder (it is made if missing)")]
    NotAFolder { path: String },
    #[error(
        "{dir} holds {file}, a name witness writes, but no manifest.toml: it is not a results folder, \
         and a run would replace that file; give --out a new or empty folder"
    )]
    Occupied { dir: String, file: String },
    #[error(
        "{dir} holds another manifest's results; --force replaces them only in an unsharded run \
         (a shard cannot tell when the others are done); remove the folder, or run into another one"
    )]
    ForceSharded { dir: String },
    #[error(
        "{dir} holds the results of another manifest (sha256 {theirs}…, this one is {ours}…); \
         choose another folder with --out, or pass --force to replace those results"
    )]
    OtherManifest {
        dir: String,
        theirs: String,
        ours: String,
    },
    #[error(
        "{dir} holds the results of another manifest: the same text, but {file} differs from the copy the folder keeps \
         (or the copy is gone); choose another folder with --out, or pass --force to replace those results"
    )]
    OtherSource { dir: String, file: String },
    /// The results are not (yet) one complete, consistent set.
    #[error("{dir}: {message}")]
    Incomplete { dir: String, message: String },
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    #[error(transparent)]
    Plan(#[from] crate::grid::PlanError),
    #[error("could not start {threads} threads: {message}")]
    Pool { threads: usize, message: String },
    /// An external policy cannot be used (it does not start, or its log
    /// disagrees with it); what was saved stays saved.
    #[error("{message}")]
    Policy { message: String },
    /// The command was given something it cannot work with.
    #[error("{message}")]
    Usage { message: String },
    /// Another process runs the same shard into the folder.
    #[error("{message}")]
    Busy { message: String },
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

impl Shard {
    /// Whether chunk `c` is this shard's: shards take chunks in turn.
    pub fn owns(&self, c: u64) -> bool {
        c % self.count == self.index
    }
}

/// `Default`: every core, no shard, nothing forced, live external
/// policies, no waiting.
#[derive(Default)]
pub struct Options {
    pub threads: Option<usize>,
    pub shard: Option<Shard>,
    pub force: bool,
    /// Where external arms' answers come from.
    pub policy: Source,
    /// Wait for another process running the same shard instead of
    /// stopping.
    pub wait: bool,
}

/// The external arms of a plan, for a run into (or a check of) `dir`.
pub fn policies(plan: &Plan, dir: &Path, source: &Source) -> Policies {
    let model = plan.model();
    let ranges = plan.arm_ranges();
    let arms = plan
        .manifest
        .arms
        .iter()
        .zip(&ranges)
        .map(|(arm, runs)| {
            let ext = arm.external.as_ref()?;
            let point = model
                .checked(&plan.grid_run(runs.clone().next()?).params)
                .ok()?
                .decision?;
            Some(ArmPolicy::new(
                &arm.name,
                ext,
                point,
                (model.name(), model.version()),
                dir,
                source,
            ))
        })
        .collect();
    Policies::new(arms)
}

/// What a run reports as it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Runs found done by an earlier, interrupted process.
    Resumed(u64),
    /// Runs executed by this one.
    Ran(u64),
    /// The plan now holds this many runs (a race scheduled a rung).
    Planned(u64),
    /// A shard of a race waits for this many chunks of other shards.
    Waiting(u64),
}

/// Whether a signal asked the run to stop (`crate::shutdown`): no new
/// chunk starts, chunks in flight are abandoned at their next run, and
/// what is saved stays saved.
pub fn interrupted() -> bool {
    crate::shutdown::requested()
}

#[derive(Debug, Default)]
pub struct Report {
    pub chunks: u64,
    pub chunks_resumed: u64,
    /// Chunks of this shard saved when the run ended.
    pub chunks_done: u64,
    pub runs_executed: u64,
    pub runs_in_shard: u64,
    pub already_complete: bool,
    /// Final tables were written (false for a shard of several).
    pub assembled: bool,
    /// Chunks already in every final table when the last chunk finished
    /// (written while the others ran; assembly adds the rest).
    pub streamed: u64,
    /// Stopped by Ctrl-C before finishing.
    pub interrupted: bool,
    /// The run replaced another manifest's results (`--force`).
    pub replaced: bool,
    /// Chunks whose parts were damaged and were run again.
    pub redone: Vec<u64>,
    /// Why the folder's seal no longer held (a sealed file changed), so
    /// the results were made again.
    pub rebuilt: Option<String>,
    /// (run_id, what failed) for runs whose identities broke.
    pub failures: Vec<(u64, String)>,
    /// Per external arm: (arm, decisions asked of its processes, decisions
    /// per second of a process's time, processes).
    pub policies: Vec<(String, u64, f64, usize)>,
}

pub fn execute(
    plan: &Plan,
    dir: &Path,
    opts: &Options,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Report, RunError> {
    let target = Layout::new(dir);
    let tables = tables(&plan.manifest);
    let shard = opts.shard.unwrap_or(Shard { index: 0, count: 1 });
    // A complete folder is known before anything is locked or written.
    if let Some((plan, report)) = sealed::settled(plan, &target, &tables, shard)? {
        progress(Progress::Planned(plan.total));
        return Ok(report);
    }
    let work = target.prepare(&plan.manifest, opts.force, shard.count > 1)?;
    let _lock = lock::acquire(&target.dir, shard, opts.wait)?;
    // Another shard may be writing into this folder right now: its
    // temporaries are its own, and `merge` (one process) clears what a
    // killed shard left.
    if shard.count == 1 {
        work.remove_temporaries();
    }
    // A raced plan resumes at the first rung the folder cannot decide.
    let mut plan = plan.clone();
    race::grow(&mut plan, &work)?;
    progress(Progress::Planned(plan.total));
    let mut report = Report {
        replaced: work.is_staging(),
        ..Report::default()
    };
    let sealed = match shard.count {
        1 => seal_state(&plan, &work, &tables)?,
        // A shard leaves the seal to `merge`; in a folder already merged
        // (a resubmitted array task) it has nothing to do.
        _ if sealed::is_whole(&plan, &work, &tables) => Sealed::Whole,
        _ => Sealed::Absent,
    };
    if let Sealed::Stale(why) = &sealed {
        report.rebuilt = Some(why.clone());
    }
    if sealed == Sealed::Whole {
        sealed::report_complete(&plan, &work, shard, &mut report)?;
        if shard.count == 1 {
            remove_parts(&work)?;
        }
        if work.is_staging() {
            target.promote(&work, &table_names(&tables), &plan.manifest.sources)?;
        }
        return Ok(report);
    }
    let policies = policies(&plan, &work.dir, &opts.policy);
    let job = Job {
        target: &target,
        work: &work,
        tables: &tables,
        shard,
        policies: &policies,
        // A shard's parts are assembled by `merge`, in another process.
        kept: kept::Kept::new(if shard.count > 1 { 0 } else { kept::BUDGET }),
        streams: if shard.count > 1 {
            stream::Streams::default()
        } else {
            stream::Streams::open(&plan, &work, &tables)
        },
        committer: crate::store::commit::Committer::start(),
        progress,
    };
    let result = job.run(&mut plan, opts, &mut report);
    policies.shutdown();
    report.policies = policies
        .arms()
        .filter(|a| a.pool.is_some())
        .map(|a| {
            let (asked, rate) = a.rate();
            (a.arm.clone(), asked, rate, a.ext.jobs)
        })
        .collect();
    result?;
    Ok(report)
}

fn table_names(tables: &[Table]) -> Vec<&str> {
    tables.iter().map(|t| t.name).collect()
}
