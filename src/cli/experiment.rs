//! `witness plan`, `witness run` and `witness merge`: manifests in, result
//! folders out, with progress on a terminal and a one-line summary elsewhere.

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{InputError, EXIT_FAILED};
use crate::grid::Plan;
use crate::manifest::Manifest;
use crate::runner::{self, chunk_count, shard, Options, Report};

pub const DEFAULT_MAX_RUNS: u64 = 10_000_000;

pub fn load(path: &Path) -> Result<Manifest> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError(format!("{}: cannot read the manifest: {e}", path.display())))?;
    Manifest::parse(&path.display().to_string(), &text)
        .map_err(|e| InputError(e.to_string()).into())
}

/// Expands and checks the whole grid; prints warnings to stderr.
fn checked_plan<'m>(
    m: &'m Manifest,
    max_runs: u64,
    quiet: bool,
) -> Result<(Plan<'m>, Vec<String>)> {
    let plan = Plan::new(m);
    plan.check_size(max_runs)
        .map_err(|e| InputError(e.to_string()))?;
    let warnings = plan.validate().map_err(|e| InputError(e.to_string()))?;
    if !quiet {
        for w in &warnings {
            eprintln!("warning: {w}");
        }
    }
    Ok((plan, warnings))
}

pub fn plan(path: &Path, max_runs: u64) -> Result<u8> {
    let m = load(path)?;
    let (plan, warnings) = checked_plan(&m, max_runs, true)?;
    let model = m.model;
    println!(
        "experiment {} (model {}, {})",
        m.name,
        model.name(),
        model.version()
    );
    if !m.description.is_empty() {
        println!("           {}", m.description);
    }
    let common: u64 = m.common.iter().map(|a| a.values.len() as u64).product();
    println!(
        "runs       {} ({} arm(s), {} common grid points each)",
        plan.total,
        m.arms.len(),
        common
    );
    for a in &m.common {
        println!("axis       {} = {}", a.name, summarize_values(&a.values));
    }
    for (i, arm) in m.arms.iter().enumerate() {
        let pinned: Vec<String> = arm
            .fixed
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        let axes: Vec<String> = arm
            .axes
            .iter()
            .map(|a| format!("{} = {}", a.name, summarize_values(&a.values)))
            .collect();
        let runs = arm
            .axes
            .iter()
            .map(|a| a.values.len() as u64)
            .product::<u64>()
            * common;
        println!(
            "arm {i:<6} {} ({runs} runs) {} {}",
            arm.name,
            pinned.join(", "),
            axes.join(", ")
        );
    }
    println!(
        "chunks     {} of up to {} runs",
        chunk_count(&plan),
        m.chunk_runs
    );
    let est = super::estimate::estimate(&plan);
    println!("{est}");
    if warnings.is_empty() {
        println!("warnings   none");
    }
    for w in &warnings {
        println!("warning    {w}");
    }
    Ok(0)
}

fn summarize_values(values: &[crate::params::Value]) -> String {
    let text: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    if text.len() > 8 {
        format!(
            "{} values: {}, {}, ..., {}",
            text.len(),
            text[0],
            text[1],
            text[text.len() - 1]
        )
    } else {
        format!("[{}]", text.join(", "))
    }
}

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
    /// Number of shards for `--shard auto`: required under a Kubernetes
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
}

pub fn run(a: &RunArgs) -> Result<u8> {
    let m = load(&a.manifest)?;
    let (plan, _) = checked_plan(&m, a.max_runs, a.quiet)?;
    let shard = match &a.shard {
        None => None,
        Some(s) => {
            Some(shard::parse(s, a.shard_count, &|k| std::env::var(k).ok()).map_err(InputError)?)
        }
    };
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&m.name));
    let bar = progress_bar(plan.total, a.quiet);
    let started = Instant::now();
    let opts = Options {
        threads: a.threads.or_else(slurm_cpus),
        shard,
        force: a.force,
    };
    let report = runner::execute(&plan, &dir, &opts, &|n| bar.inc(n)).map_err(|e| match e {
        runner::RunError::OtherManifest { .. } => anyhow::Error::new(InputError(e.to_string())),
        e => anyhow::Error::new(e),
    })?;
    bar.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    let threads = opts.threads.unwrap_or_else(rayon::current_num_threads);
    write_timing(
        &dir,
        &report,
        shard.map(|s| (s.index, s.count)),
        secs,
        threads,
    )?;
    if !a.quiet {
        eprintln!("{}", one_line(&m.name, &dir, &report, shard, secs, threads));
    }
    Ok(report_failures(&report.failures))
}

/// Inside a Slurm allocation, use the CPUs it granted rather than every
/// core of the node.
fn slurm_cpus() -> Option<usize> {
    std::env::var("SLURM_CPUS_PER_TASK")
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&n| n > 0)
}

fn progress_bar(total: u64, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {rate}  ETA {eta}")
            .expect("a valid template")
            .with_key(
                "rate",
                |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0} runs/s", s.per_sec());
                },
            ),
    );
    bar
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
        return format!(
            "{name}: already complete in {} ({} runs); nothing to do",
            dir.display(),
            r.runs_in_shard
        );
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
    if !r.assembled {
        line += &format!(
            "\nparts written; when every shard is done, run: witness merge {}",
            dir.display()
        );
    }
    line
}

fn write_timing(
    dir: &Path,
    r: &Report,
    shard: Option<(u64, u64)>,
    secs: f64,
    threads: usize,
) -> Result<()> {
    let layout = runner::layout::Layout::new(dir);
    let doc = serde_json::json!({
        "wall_seconds": secs,
        "threads": threads,
        "runs_executed": r.runs_executed,
        "chunks_resumed": r.chunks_resumed,
        "shard": shard.map(|(k, n)| format!("{k}/{n}")),
        "unix_time": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
    });
    let path = layout.timing(shard);
    crate::sink::atomic::write(&path, serde_json::to_string_pretty(&doc)?.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

fn report_failures(failures: &[(u64, String)]) -> u8 {
    if failures.is_empty() {
        return 0;
    }
    eprintln!(
        "{} run(s) broke an accounting identity (an engine bug; please report it):",
        failures.len()
    );
    for (id, why) in failures.iter().take(20) {
        eprintln!("  run {id}: {why}");
    }
    EXIT_FAILED
}

pub fn merge(dir: &Path, quiet: bool) -> Result<u8> {
    let failures = runner::merge(dir)?;
    if !quiet {
        eprintln!("merged {} -> runs.parquet and its tables", dir.display());
    }
    Ok(report_failures(&failures))
}

pub fn verify(dir: &Path, replay: u64, all: bool) -> Result<u8> {
    use crate::runner::verify::{verify, Replay};
    let mode = if all {
        Replay::All
    } else {
        Replay::Sample(replay)
    };
    let r = verify(dir, mode)?;
    if r.problems.is_empty() {
        println!(
            "verify ok: {}: {} runs; manifest hash matches; identities re-derived for {} runs; {} runs replayed identically",
            dir.display(),
            r.runs,
            r.audited,
            r.replayed
        );
        return Ok(0);
    }
    println!(
        "verify FAILED: {}: {} problem(s)",
        dir.display(),
        r.problems.len()
    );
    for p in r.problems.iter().take(20) {
        println!("  {p}");
    }
    if r.problems.len() > 20 {
        println!("  ... and {} more", r.problems.len() - 20);
    }
    Ok(EXIT_FAILED)
}
