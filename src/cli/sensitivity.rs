//! `witness sensitivity`: Sobol' or Morris indices of a sampled design, as
//! a terminal table, `sensitivity.csv` and `sensitivity.json`.

use std::path::PathBuf;

use crate::analysis::sensitivity::{
    run as indices, Kind, Report, Request, SensitivityRow, MAX_RESAMPLES, MIN_RESAMPLES, RESAMPLES,
};
use crate::analysis::summary::metric_or_default;
use crate::error::{Error, Result};
use crate::model::Registry;
use crate::results::ResultsDir;
use crate::store::table::write_json;
use crate::store::Format;

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum MethodArg {
    Sobol,
    Morris,
}

#[derive(clap::Args, Debug)]
pub struct SensitivityArgs {
    /// A results folder whose manifest has [design] kind = "sobol" or "morris".
    pub dir: PathBuf,
    /// The summary metric analysed [default: the model's first headline metric].
    #[arg(long)]
    pub metric: Option<String>,
    /// The indices [default: the design's own kind].
    #[arg(long, value_enum)]
    pub method: Option<MethodArg>,
    /// Common grid axes that make a scenario, comma-separated; axes left
    /// out are averaged over with the seeds [default: every axis but seed
    /// and replicate].
    #[arg(long, value_delimiter = ',')]
    pub by: Option<Vec<String>>,
    /// Bootstrap resamples behind each interval (40 ..= 100000).
    #[arg(long, default_value_t = RESAMPLES)]
    pub resamples: usize,
}

pub fn sensitivity(a: &SensitivityArgs, registry: &Registry) -> Result<u8> {
    let results = ResultsDir::open(&a.dir, registry)?;
    if a.resamples < MIN_RESAMPLES {
        return Err(Error::Usage(format!(
            "--resamples {}: a 95 % interval needs at least {MIN_RESAMPLES} resamples (below that it is the resamples' whole range); \
             leave the flag out for {RESAMPLES}",
            a.resamples
        )));
    }
    if a.resamples > MAX_RESAMPLES {
        return Err(Error::Usage(format!(
            "--resamples {}: at most {MAX_RESAMPLES} (more moves no interval's ends, and holding them would take \
             gigabytes); leave the flag out for {RESAMPLES}",
            a.resamples
        )));
    }
    let metric = metric_or_default(results.model(), a.metric.as_deref(), "--metric")?;
    let dir = a.dir.display().to_string();
    let report = indices(
        &results,
        &Request {
            metric,
            method: a.method.map(|m| match m {
                MethodArg::Sobol => Kind::Sobol,
                MethodArg::Morris => Kind::Morris,
            }),
            by: a.by.clone(),
            resamples: a.resamples,
            dir: &dir,
        },
    )?;
    print_table(&report)?;
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    let table = report.table();
    let csv = results.file("sensitivity.csv");
    table
        .write(&csv, Format::Csv, &[])
        .map_err(|e| Error::store(&csv, e))?;
    let design = results
        .plan
        .manifest
        .design
        .as_ref()
        .expect("checked by the analysis");
    let doc = serde_json::json!({
        "manifest_sha256": results.plan.manifest.hash,
        "metric": metric,
        "method": match report.kind { Kind::Sobol => "sobol", Kind::Morris => "morris" },
        "design": design.describe(),
        "output": "the metric's mean over seeds (and axes outside the scenario) at each design point",
        "interval": "95% percentile bootstrap over base samples (Sobol') or trajectories (Morris)",
        "resamples": a.resamples,
        "warnings": report.warnings,
        "rows": table.json_rows(),
    });
    let json = results.file("sensitivity.json");
    write_json(&json, &doc).map_err(|e| Error::store(&json, e))?;
    outln!("wrote {} and {}", csv.display(), json.display())?;
    Ok(0)
}

fn cell(r: &SensitivityRow) -> String {
    match (r.ci_low, r.ci_high) {
        (Some(lo), Some(hi)) => format!("{:>7.3} [{lo:>6.3}, {hi:>6.3}]", r.estimate),
        _ => format!("{:>7.3}", r.estimate),
    }
}

fn print_table(report: &Report) -> Result<()> {
    let heads: &[&str] = match report.kind {
        Kind::Sobol => &["S1", "ST"],
        Kind::Morris => &["mu_star", "mu", "sigma"],
    };
    let mut last = (String::new(), String::new());
    for r in report.rows.iter().filter(|r| r.index == heads[0]) {
        let here = (r.scenario.clone(), r.arm.clone());
        if here != last {
            let scenario = if r.scenario.is_empty() {
                "all runs"
            } else {
                &r.scenario
            };
            outln!("\n{} | {} | {}", scenario, r.arm, r.metric)?;
            let cols: Vec<String> = heads.iter().map(|h| format!("{h:<25}")).collect();
            outln!("  {:<20} {}", "factor", cols.join(" "))?;
            last = here;
        }
        let cells: Vec<String> = heads
            .iter()
            .map(|h| {
                report
                    .rows
                    .iter()
                    .find(|x| {
                        x.scenario == r.scenario
                            && x.arm == r.arm
                            && x.factor == r.factor
                            && x.index == *h
                    })
                    .map_or(String::new(), |x| format!("{:<25}", cell(x)))
            })
            .collect();
        outln!("  {:<20} {}", r.factor, cells.join(" "))?;
    }
    let pairs: Vec<&SensitivityRow> = report.rows.iter().filter(|r| r.index == "S2").collect();
    if !pairs.is_empty() {
        outln!("\nsecond order (S2)")?;
        for r in pairs {
            let scenario = if r.scenario.is_empty() {
                "all runs"
            } else {
                &r.scenario
            };
            outln!(
                "  {scenario} | {} | {} x {}: {}",
                r.arm,
                r.factor,
                r.with.as_deref().unwrap_or(""),
                cell(r)
            )?;
        }
    }
    outln!()?;
    Ok(())
}
