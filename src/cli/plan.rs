//! `witness plan`: a manifest checked and described, with warnings and an
//! estimate of time and size, before anything runs.

use std::path::Path;

use crate::error::{Error, Result};
use crate::grid::{Plan, Validation};
use crate::model::Registry;
use crate::params::Value;
use crate::policy::Policies;
use crate::runner::estimate::{estimate, human_bytes};

/// A scratch folder that removes itself.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempfile_dir() -> Result<Scratch> {
    let dir = std::env::temp_dir().join(format!("witness-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::Usage(format!("{}: {e}", dir.display())))?;
    Ok(Scratch(dir))
}

/// Expands and checks the whole grid, and that `threads` chunks of it fit
/// in `max_memory` bytes (default: half the machine's memory).
pub(super) fn checked_plan(
    path: &Path,
    max_runs: u64,
    threads: usize,
    max_memory: Option<f64>,
    starts_policies: bool,
    registry: &Registry,
) -> Result<(Plan, Vec<String>)> {
    let plan = Plan::new(super::load(path, registry)?)?;
    plan.check_size(max_runs)?;
    let v = plan.validate()?;
    check_memory(&plan, &v, threads, max_memory)?;
    if starts_policies {
        check_commands(&plan)?;
    }
    Ok((plan, v.warnings))
}

/// Every external arm that will start a process names a program that exists.
fn check_commands(plan: &Plan) -> Result<()> {
    for arm in &plan.manifest.arms {
        let Some(ext) = arm.external.as_ref().filter(|e| !e.replay) else {
            continue;
        };
        crate::policy::probe::program(ext).map_err(|e| {
            Error::Usage(format!(
                "{}: [[arm]] {} external command {:?}: {e}",
                plan.manifest.file, arm.name, ext.command
            ))
        })?;
    }
    Ok(())
}

/// What `plan` says of each external arm; with `probe`, what it learned
/// from starting the policy and timing one run.
fn describe_policies(plan: &Plan, probe: Option<&Policies>) -> Result<()> {
    for (i, arm) in plan.manifest.arms.iter().enumerate() {
        let Some(ext) = &arm.external else { continue };
        let how = if ext.replay {
            "answers from the record log only (replay = \"require\")".to_string()
        } else {
            format!(
                "`{}`, {} process(es), timeout {} s, {} retries",
                ext.shown(),
                ext.jobs,
                ext.timeout.as_secs_f64(),
                ext.retries
            )
        };
        outln!("policy     arm {}: {how}", arm.name)?;
        let Some(live) = probe.and_then(|p| p.arm(i)) else {
            if !ext.replay {
                outln!(
                    "           not started; `plan --probe-policy` starts it once and times a run"
                )?;
            }
            continue;
        };
        if let Some(why) = live.stopped() {
            outln!("           FAILED: {why}")?;
            continue;
        }
        match live.identity() {
            Ok(id) => outln!(
                "           reports {} {} (digest {})",
                id.name,
                id.version,
                id.digest
            )?,
            Err(e) => outln!("           FAILED: {e}")?,
        }
        let (asked, rate) = live.rate();
        if asked > 0 {
            outln!(
                "           decided the {asked} decisions of the sampled runs at {rate:.0} decisions/s per process"
            )?;
        }
    }
    Ok(())
}

/// The memory a command may plan for, in bytes, and where that limit came
/// from: `--max-memory GB` when given, else half the machine's memory.
pub(super) fn memory_limit(max_memory: Option<f64>) -> (u64, String) {
    match max_memory {
        Some(gb) => ((gb * 1e9) as u64, "--max-memory".to_string()),
        None => {
            let total = machine_memory();
            (
                total / 2,
                format!("half of this machine's {}", human_bytes(total as f64)),
            )
        }
    }
}

/// Parses `--max-memory`: a positive number of GB (10^9 bytes). Zero, a
/// negative number or NaN would refuse every run for a reason the message
/// could not name, so they are refused here instead.
pub(super) fn parse_gigabytes(text: &str) -> std::result::Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(gb) if gb > 0.0 && !gb.is_nan() => Ok(gb),
        _ => Err(format!(
            "`{text}` is not a positive number of GB; give one such as 16 or 0.5 (inf for no limit)"
        )),
    }
}

/// The machine's memory, from /proc/meminfo (8 GB where it cannot be read).
pub(super) fn machine_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(8_000_000_000)
}

fn check_memory(
    plan: &Plan,
    v: &Validation,
    threads: usize,
    max_memory: Option<f64>,
) -> Result<()> {
    let (limit, whose) = memory_limit(max_memory);
    let threads = threads.min(v.chunk_bytes.len()).max(1);
    let need = v.peak_bytes(threads);
    if need <= limit {
        return Ok(());
    }
    let largest = v.chunk_bytes.iter().copied().max().unwrap_or(0);
    let sizes = v.grows_with.names(plan.model().params());
    let sizes = if sizes.is_empty() {
        "the run's size".to_string()
    } else {
        format!("the run's size ({})", sizes.join(", "))
    };
    Err(Error::Usage(format!(
        "{}: the runs would hold about {} in memory at once ({threads} chunk(s) of up to {} runs at a time, \
         the largest {}), over the limit of {} ({whose}); turn off a large table in [output], lower \
         chunk_runs, --threads or {sizes}, or pass --max-memory GB",
        plan.manifest.file,
        human_bytes(need as f64),
        plan.manifest.chunk_runs,
        human_bytes(largest as f64),
        human_bytes(limit as f64),
    )))
}

fn summarize_values(values: &[Value]) -> String {
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

pub fn plan(
    path: &Path,
    max_runs: u64,
    max_memory: Option<f64>,
    probe_policy: bool,
    registry: &Registry,
) -> Result<u8> {
    // The memory check counts the chunks a default `run` holds at once.
    let threads = super::run::asked_threads(None)?.unwrap_or_else(rayon::current_num_threads);
    let (plan, warnings) = checked_plan(path, max_runs, threads, max_memory, true, registry)?;
    // A probe's answers go to a scratch folder, removed afterwards.
    let scratch = tempfile_dir()?;
    let probe = probe_policy
        .then(|| crate::runner::policies(&plan, scratch.path(), &crate::policy::Source::Live));
    let m = &plan.manifest;
    let model = m.model;
    let specs = model.params();
    outln!(
        "experiment {} (model {}, {})",
        m.name,
        model.name(),
        model.version()
    )?;
    if !m.description.is_empty() {
        outln!("           {}", m.description)?;
    }
    let common: u64 = m.common.iter().map(|a| a.values.len() as u64).product();
    outln!(
        "runs       {}{} ({} arm(s), {} common grid points each)",
        if m.search.is_some() { "at most " } else { "" },
        plan.grid_total(),
        m.arms.len(),
        common
    )?;
    for a in &m.common {
        outln!("axis       {} = {}", a.name, summarize_values(&a.values))?;
    }
    if let (Some(s), Some(schedule)) = (&m.search, plan.schedule()) {
        let budgets: Vec<String> = s.budgets().iter().map(usize::to_string).collect();
        let test = match s.method {
            crate::search::Method::Race => format!(
                "a candidate leaves when a paired t-test against the best rejects at alpha = {} (Holm)",
                s.alpha
            ),
            crate::search::Method::Halving => format!("the best 1/{} go on after each rung", s.eta),
        };
        outln!(
            "search     {} over {} candidates by {} ({} is better), adding `{}` values: {} in all by rung",
            s.method.name(),
            schedule.candidates(),
            s.metric,
            if s.maximize { "higher" } else { "lower" },
            m.common[s.resource].name,
            budgets.join(", ")
        )?;
        outln!(
            "           {test}, keeping at least {}; rung 0 runs {} (the estimate below is for the full grid)",
            s.keep_at_least, plan.total
        )?;
    }
    if let Some(d) = &m.design {
        for (k, line) in d.describe().iter().enumerate() {
            outln!("{:<10} {line}", if k == 0 { "design" } else { "" })?;
        }
        outln!(
            "           each arm runs every design point at every common grid point ({} x {common})",
            d.len()
        )?;
    }
    for ((i, arm), range) in m.arms.iter().enumerate().zip(plan.arm_ranges()) {
        let pinned: Vec<String> = arm
            .fixed
            .iter()
            .map(|(k, v)| format!("{} = {v}", k.spec(specs).name))
            .collect();
        let axes: Vec<String> = arm
            .axes
            .iter()
            .map(|a| format!("{} = {}", a.name, summarize_values(&a.values)))
            .collect();
        outln!(
            "arm {i:<6} {} ({} runs) {} {}",
            arm.name,
            range.end - range.start,
            pinned.join(", "),
            axes.join(", ")
        )?;
    }
    outln!(
        "chunks     {} of up to {} runs{}",
        plan.chunk_count(),
        m.chunk_runs,
        if m.search.is_some() {
            " in rung 0 (each rung starts a chunk)"
        } else {
            ""
        }
    )?;
    outln!("{}", estimate(&plan, probe.as_ref()))?;
    describe_policies(&plan, probe.as_ref())?;
    if let Some(p) = &probe {
        p.shutdown();
    }
    if warnings.is_empty() {
        outln!("warnings   none")?;
    }
    for w in &warnings {
        outln!("warning    {w}")?;
    }
    Ok(0)
}
