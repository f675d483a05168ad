//! `witness compare`: arm verdicts against a baseline, as a terminal
//! table, `compare.csv` and `compare.json` in the results folder.

use std::path::PathBuf;

use crate::analysis::compare::{run as verdicts, Comparator, CompareRow, Request};
use crate::analysis::stats::BOOTSTRAP_RESAMPLES;
use crate::error::{Error, Result};
use crate::model::Registry;
use crate::results::ResultsDir;
use crate::store::table::write_json;
use crate::store::{Format, TableData};

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// A results folder whose manifest marks the baseline `placebo = true`.
    pub dir: PathBuf,
    /// The baseline arm (its placebo arm must have run), e.g. `endorsement`
    /// or, for an arm with its own axes, `endorsement[gain=6.0]`.
    #[arg(long)]
    pub baseline: String,
    /// A summary metric in [0, 1]: the answer compared, and the effect size
    /// [default: the model's first headline metric].
    #[arg(long)]
    pub metric: Option<String>,
    /// A categorical outcome instead (e.g. cleared, terminal_majority):
    /// any difference is a flip and the noise band does not gate.
    #[arg(long)]
    pub outcome: Option<String>,
    /// A metric similarity 1 - |x - y| below this is a flip.
    #[arg(long, default_value_t = 0.8)]
    pub flip_below: f64,
    /// Only these runs, e.g. "graph=hub,truth=false" (values as values:
    /// gain=9 is gain=9.0).
    #[arg(long = "where", value_name = "KEY=VALUE,...")]
    pub filter: Option<String>,
}

pub fn compare(a: &CompareArgs, registry: &Registry) -> Result<u8> {
    let results = ResultsDir::open(&a.dir, registry)?;
    let report = verdicts(
        &results,
        &Request {
            baseline: &a.baseline,
            metric: a.metric.as_deref(),
            outcome: a.outcome.as_deref(),
            flip_below: a.flip_below,
            filter: a.filter.as_deref(),
        },
    )?;
    print_table(&report.rows);
    println!("placebo: {}", report.placebo);
    let table = TableData::of_records(&report.rows);
    let csv = results.file("compare.csv");
    table
        .write(&csv, Format::Csv, &[])
        .map_err(|e| Error::store(&csv, e))?;
    let domain = matches!(report.comparator, Comparator::Outcome { .. });
    let doc = serde_json::json!({
        "manifest_sha256": results.plan.manifest.hash,
        "baseline": a.baseline,
        "comparator": report.comparator.name(),
        "comparator_kind": if domain { "domain" } else { "metric" },
        "placebo": report.placebo,
        "flip_below": (!domain).then_some(a.flip_below),
        "effect": report.metric.map(|m| serde_json::json!({ "metric": m, "interval": "95% percentile bootstrap of the mean paired difference",
                    "resamples": BOOTSTRAP_RESAMPLES })),
        "rows": table.json_rows(),
    });
    let json = results.file("compare.json");
    write_json(&json, &doc).map_err(|e| Error::store(&json, e))?;
    println!("wrote {} and {}", csv.display(), json.display());
    Ok(0)
}

fn print_table(rows: &[CompareRow]) {
    let mut last = "";
    for r in rows {
        if r.scenario != last {
            println!("\n{}", r.scenario);
            let effect = match &r.effect_metric {
                Some(m) => format!("effect on {m} (arm - {}) [95% CI]", r.baseline),
                None => "(no paired effect: pass --metric to add one)".into(),
            };
            println!(
                "  {:<28} {:<14} {:>7} {:>9} {:>8}  {effect}",
                "arm", "verdict", "flips", "sim mean", "floor"
            );
            last = &r.scenario;
        }
        let applied = if r.applied { "" } else { "  (not applied)" };
        let effect = match (r.effect_mean, r.effect_ci_low, r.effect_ci_high) {
            (Some(m), Some(lo), Some(hi)) => format!("{m:+.4} [{lo:+.4}, {hi:+.4}]"),
            _ => String::new(),
        };
        println!(
            "  {:<28} {:<14} {:>3}/{:<3} {:>9.3} {:>8.3}  {effect}{applied}",
            r.arm,
            r.verdict.label(),
            r.flips,
            r.samples,
            r.similarity_mean,
            r.floor,
        );
    }
    if let Some(r) = rows.first() {
        println!("\n{}", r.claim);
    }
}
