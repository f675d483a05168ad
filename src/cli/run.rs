//! `witness run`: a manifest's runs into a results folder, with progress
//! on a terminal, a one-line summary otherwise, and the wall time in a
//! separate `timing.json` (results files hold nothing time-dependent).

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{progress, DEFAULT_MAX_RUNS};
use crate::error::{Error, Result, EXIT_FAILED};
use crate::model::Registry;
use crate::runner::layout::Layout;
use crate::runner::{self, shard, Options, Progress, Report};

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The experiment manifest (TOML), e.g. experiments/default.toml.
    pub manifest: PathBuf,
    /// Results folder [default: results/<experiment name>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads [default: SLURM_CPUS_PER_TASK inside Slurm, else all
    /// cores]. Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Run only shard K of N (`K/N`, from 0), or `auto` from the array-job
    /// environment (Slurm, Kubernetes Indexed Job, AWS Batch).
    #[arg(long, value_name = "K/N|auto")]
    pub shard: Option<String>,
    /// Number of shards for `--shard auto` (only with it): required under a Kubernetes
    /// Indexed Job; under Slurm it makes the task id the shard number, so a
    /// failed task can be resubmitted alone (`sbatch --array=K`).
    #[arg(long)]
    pub shard_count: Option<u64>,
    /// Replace the results of a different manifest in the output folder.
    #[arg(long)]
    pub force: bool,
    /// No progress bar and no summary line.
    #[arg(long, short)]
    pub quiet: bool,
    /// Refuse grids with more runs than this.
    #[arg(long, default_value_t = DEFAULT_MAX_RUNS)]
    pub max_runs: u64,
    /// Refuse work that would hold more than this many GB in memory at once
    /// [default: half the machine's memory].
    #[arg(long, value_name = "GB", value_parser = super::plan::parse_gigabytes)]
    pub max_memory: Option<f64>,
    /// Take every external arm's answers from the record log of this
    /// results folder instead of running its policy; a run whose requests
    /// no longer match the log fails and names the key and field.
    #[arg(long, value_name = "DIR")]
    pub policy_replay: Option<PathBuf>,
    /// When another process is running the same shard into the folder,
    /// wait for it to finish instead of stopping (exit 2).
    #[arg(long)]
    pub wait: bool,
}

pub fn run(a: &RunArgs, registry: &Registry) -> Result<u8> {
    let threads = asked_threads(a.threads)?;
    let pool_threads = threads.unwrap_or_else(rayon::current_num_threads);
    let (plan, warnings) = super::plan::checked_plan(
        &a.manifest,
        a.max_runs,
        pool_threads,
        a.max_memory,
        a.policy_replay.is_none(),
        registry,
    )?;
    if !a.quiet {
        for w in &warnings {
            eprintln!("warning: {w}");
        }
    }
    let shard = match &a.shard {
        None if a.shard_count.is_some() => {
            return Err(Error::Usage(
                "--shard-count: only with --shard auto, which reads the task number from the job's environment".into(),
            ))
        }
        None => None,
        Some(s) => Some(shard::parse(s, a.shard_count, &|k| std::env::var(k).ok())?),
    };
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&plan.manifest.name));
    let dangling = dir.symlink_metadata().is_ok_and(|m| m.is_symlink()) && !dir.exists();
    if dangling {
        let to = std::fs::read_link(&dir).unwrap_or_default();
        return Err(Error::Usage(format!(
            "--out {}: a symbolic link to {}, which does not exist; create that folder, or give another --out",
            dir.display(),
            to.display()
        )));
    }
    let (bar, rate) = progress::bar(plan.total, a.quiet);
    let started = Instant::now();
    let policy = match &a.policy_replay {
        None => crate::policy::Source::Live,
        Some(from) => {
            if !from.join("policy-log").is_dir() {
                return Err(Error::Usage(format!(
                    "--policy-replay {}: no record log there (no policy-log/ folder); give the results folder of a run with external arms",
                    from.display()
                )));
            }
            if std::fs::canonicalize(from).ok() == std::fs::canonicalize(&dir).ok() {
                return Err(Error::Usage(format!(
                    "--policy-replay {}: that is the output folder; replay into another one with --out",
                    from.display()
                )));
            }
            crate::policy::Source::ReplayFrom(from.clone())
        }
    };
    let opts = Options {
        threads,
        shard,
        force: a.force,
        policy,
        wait: a.wait,
    };
    crate::shutdown::install();
    let report = runner::execute(&plan, &dir, &opts, &|p| {
        rate.on(p);
        match p {
            Progress::Resumed(n) | Progress::Ran(n) => bar.inc(n),
            Progress::Planned(n) => bar.set_length(n),
            Progress::Waiting(n) if !a.quiet => {
                let says = format!(
                    "waiting for {n} chunk(s) of other shards to finish this rung of the race"
                );
                match bar.is_hidden() {
                    true => eprintln!("{says}"),
                    false => bar.println(says),
                }
            }
            Progress::Waiting(_) => {}
        }
    })?;
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    let threads = opts.threads.unwrap_or_else(rayon::current_num_threads);
    if report.interrupted {
        eprintln!(
            "{}: stopped by {}; {} of {} chunk(s) are saved in {}; run the same command to resume",
            plan.manifest.name,
            crate::shutdown::signal_name(),
            report.chunks_done,
            mine(&report, shard),
            dir.display()
        );
        return Ok(crate::shutdown::exit_code());
    }
    // A folder that was already complete is left exactly as it was.
    if !report.already_complete {
        let from = std::fs::canonicalize(&a.manifest).unwrap_or_else(|_| a.manifest.clone());
        write_timing(
            &dir,
            &from,
            &report,
            shard.map(|s| (s.index, s.count)),
            secs,
            threads,
        )?;
    }
    if !a.quiet {
        eprintln!(
            "{}",
            one_line(&plan.manifest.name, &dir, &report, shard, secs, threads)
        );
    }
    let fell_back = match report.assembled || report.already_complete {
        true => fallbacks(&plan.manifest, &dir)?,
        false => Vec::new(),
    };
    Ok(report_failures(&report.failures).max(report_fallbacks(&fell_back, &dir, a.quiet)))
}

/// One external arm's decisions in the final runs table, and how many of
/// them took the safe action.
struct FellBack {
    arm: String,
    action: String,
    decisions: u64,
    fallbacks: u64,
}

/// The external arms with a safe action, from the final runs table (so
/// runs an earlier process saved count too).
fn fallbacks(m: &crate::manifest::Manifest, dir: &Path) -> Result<Vec<FellBack>> {
    let mut out: Vec<FellBack> = m
        .arms
        .iter()
        .filter_map(|arm| match &arm.external.as_ref()?.fallback {
            crate::policy::Fallback::Safe(action) => Some(FellBack {
                arm: arm.name.clone(),
                action: action.clone(),
                decisions: 0,
                fallbacks: 0,
            }),
            crate::policy::Fallback::FailRun => None,
        })
        .collect();
    if out.is_empty() {
        return Ok(out);
    }
    let path = Layout::new(dir).table("runs");
    let cols = crate::store::parquet::read_columns(&path, &["arm", "decisions", "fallbacks"])
        .map_err(|e| Error::store(&path, e))?;
    for ((arm, d), f) in cols[0].iter().zip(&cols[1]).zip(&cols[2]) {
        if let Some(row) = out
            .iter_mut()
            .find(|r| Some(r.arm.as_str()) == arm.as_str())
        {
            row.decisions += d.as_i64().unwrap_or(0) as u64;
            row.fallbacks += f.as_i64().unwrap_or(0) as u64;
        }
    }
    Ok(out)
}

/// Says how many decisions of each external arm fell back; exit 1 when an
/// arm's every decision did, since its rows are then the safe action's,
/// not the policy's (said even with --quiet).
fn report_fallbacks(arms: &[FellBack], dir: &Path, quiet: bool) -> u8 {
    let mut code = 0;
    for r in arms.iter().filter(|r| r.fallbacks > 0) {
        if r.fallbacks == r.decisions {
            eprintln!(
                "error: arm {}: all {} of its decisions fell back to {:?}: the policy answered none, so its \
                 rows are the safe action's, not the policy's. Its errors are in {} (column errors of the \
                 record log) and its stderr in {}; fix the policy, then run into a new folder (--out)",
                r.arm,
                r.decisions,
                r.action,
                crate::policy::log::arm_dir(dir, &r.arm).display(),
                dir.join("policy-logs").display()
            );
            code = EXIT_FAILED;
        } else if !quiet {
            eprintln!(
                "arm {}: {} of {} decision(s) fell back to {:?} (the policy gave no usable answer for them)",
                r.arm, r.fallbacks, r.decisions, r.action
            );
        }
    }
    code
}

/// Chunks this process was to run.
fn mine(r: &Report, shard: Option<runner::Shard>) -> u64 {
    match shard {
        None => r.chunks,
        Some(s) => (s.index..r.chunks).step_by(s.count as usize).count() as u64,
    }
}

/// At most this many threads per core: results do not depend on the
/// count, and far more threads than cores only slow a run down.
const THREADS_PER_CORE: usize = 8;

/// The worker threads asked for: `--threads`, else inside a Slurm
/// allocation the CPUs it granted (not every core of the node), else
/// `None` for every core. A bad value names where it came from.
pub(super) fn asked_threads(flag: Option<usize>) -> Result<Option<usize>> {
    const SLURM: &str = "SLURM_CPUS_PER_TASK";
    let (n, from, fix) = match (flag, std::env::var(SLURM)) {
        (Some(n), _) => (
            n,
            format!("--threads {n}"),
            "leave it out to use every core",
        ),
        (None, Ok(text)) => {
            let fix = "set it to the task's CPUs or unset it (every core); `run --threads N` overrides it";
            let n = text.trim().parse::<usize>().map_err(|_| {
                Error::Usage(format!(
                    "{SLURM}={text:?}: not a whole number of CPUs; {fix}"
                ))
            })?;
            (n, format!("{SLURM}={n}"), fix)
        }
        (None, Err(_)) => return Ok(None),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if n == 0 {
        return Err(Error::Usage(format!(
            "{from}: give at least 1 thread, or {fix}"
        )));
    }
    if n > THREADS_PER_CORE * cores {
        return Err(Error::Usage(format!(
            "{from}: this machine has {cores} core(s); results do not depend on the thread count, \
             so give at most {}, or {fix}",
            THREADS_PER_CORE * cores
        )));
    }
    Ok(Some(n))
}

fn one_line(
    name: &str,
    dir: &Path,
    r: &Report,
    shard: Option<runner::Shard>,
    secs: f64,
    threads: usize,
) -> String {
    if r.already_complete {
        let which = shard.map_or(String::new(), |s| {
            format!(
                " shard {}/{}: its {} runs are",
                s.index, s.count, r.runs_in_shard
            )
        });
        return match which.is_empty() {
            true => format!(
                "{name}: already complete in {} ({} runs); nothing to do",
                dir.display(),
                r.runs_in_shard
            ),
            false => format!(
                "{name}:{which} already merged into {}; nothing to do",
                dir.display()
            ),
        };
    }
    let which = shard.map_or(String::new(), |s| {
        format!(" shard {}/{}:", s.index, s.count)
    });
    let rate = if secs > 0.0 {
        r.runs_executed as f64 / secs
    } else {
        0.0
    };
    let mut line = format!(
        "{name}:{which} {} runs ({} executed, {} chunk(s) resumed) in {secs:.2} s on {threads} thread(s), {rate:.0} runs/s -> {}",
        r.runs_in_shard,
        r.runs_executed,
        r.chunks_resumed,
        dir.display()
    );
    for (arm, asked, rate, jobs) in &r.policies {
        line.push_str(&format!(
            "\narm {arm}: {asked} decision(s) asked of up to {jobs} policy process(es) (the rest came from the record log), {rate:.0} decisions/s of a process's time"
        ));
    }
    if let Some(why) = &r.rebuilt {
        line.push_str(&format!("\nthe results were made again: {why}"));
    }
    if !r.redone.is_empty() {
        line.push_str(&format!(
            "\n{} chunk(s) had damaged parts and were run again",
            r.redone.len()
        ));
    }
    if r.replaced {
        line.push_str("\nreplaced the previous results (another manifest's) in the folder");
    }
    if !r.assembled {
        line.push_str(&format!(
            "\nparts written; when every shard is done, run: witness merge {}",
            dir.display()
        ));
    }
    line
}

fn write_timing(
    dir: &Path,
    manifest: &Path,
    r: &Report,
    shard: Option<(u64, u64)>,
    secs: f64,
    threads: usize,
) -> Result<()> {
    let doc = serde_json::json!({
        "wall_seconds": secs,
        "threads": threads,
        "runs_executed": r.runs_executed,
        "chunks_resumed": r.chunks_resumed,
        "shard": shard.map(|(k, n)| format!("{k}/{n}")),
        // Where it was run from and by what, so `witness shards` can say
        // what to run.
        "manifest": manifest.display().to_string(),
        "engine": engine(),
        "unix_time": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
    });
    let path = Layout::new(dir).timing(shard);
    crate::store::table::write_json(&path, &doc).map_err(|e| Error::store(&path, e))
}

/// The job engine this process runs under, from the variables each sets.
fn engine() -> Option<&'static str> {
    let set = |v: &str| std::env::var_os(v).is_some();
    [
        ("SLURM_JOB_ID", "slurm"),
        ("PARALLEL_SEQ", "parallel"),
        ("JOB_COMPLETION_INDEX", "kubernetes"),
        ("AWS_BATCH_JOB_ID", "aws-batch"),
        ("_CONDOR_JOB_AD", "htcondor"),
    ]
    .iter()
    .find(|(v, _)| set(v))
    .map(|&(_, e)| e)
}

/// Prints the runs whose identities broke; exit 1 when there are any.
pub(super) fn report_failures(failures: &[(u64, String)]) -> u8 {
    if failures.is_empty() {
        return 0;
    }
    let (policy, engine): (Vec<_>, Vec<_>) = failures
        .iter()
        .partition(|(_, why)| why.starts_with(crate::runner::tables::POLICY_FAILED));
    if !policy.is_empty() {
        eprintln!(
            "{} run(s) of external arms failed: a decision could not be had (recorded in runs.parquet, column policy_failure; \
             fallback = \"<safe action>\" in the arm's external table keeps such runs going):",
            policy.len()
        );
        for (id, why) in policy.iter().take(20) {
            eprintln!("  run {id}: {why}");
        }
    }
    if !engine.is_empty() {
        eprintln!(
            "{} run(s) broke an accounting identity (an engine bug; please report it):",
            engine.len()
        );
        for (id, why) in engine.iter().take(20) {
            eprintln!("  run {id}: {why}");
        }
    }
    EXIT_FAILED
}
