//! `witness compare`: arm verdicts against a baseline, as a terminal
//! table, `compare.csv` and `compare.json` in the results folder.

use std::path::PathBuf;

use crate::analysis::compare::{
    run as verdicts, BaselineRule, Comparator, CompareRow, Request, Testing,
};
use crate::analysis::multiplicity::Adjust;
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
    /// A seed flips when arm and baseline differ by more than this, in the
    /// metric's units [default: the metric's own, else a fifth of its
    /// range].
    #[arg(long, value_name = "DELTA")]
    pub flip_delta: Option<f64>,
    /// The same as a flip delta of (1 - this) times the metric's range
    /// (0.8 is the default delta of a fifth).
    #[arg(long)]
    pub flip_below: Option<f64>,
    /// Only these runs, e.g. "graph=hub,truth=false" (values as values:
    /// gain=9 is gain=9.0).
    #[arg(long = "where", value_name = "KEY=VALUE,...")]
    pub filter: Option<String>,
    /// How the paired p-values are adjusted over the whole table: holm
    /// (family-wise error), bh (false discovery rate) or none.
    #[arg(long, default_value = "holm", value_parser = parse_adjust)]
    pub adjust: Adjust,
    /// When the baseline's placebo flips: fisher (the placebo voids only
    /// the verdicts of arms whose flips are not significantly more than
    /// its own, one-sided Fisher exact test adjusted like the p-values) or
    /// zero (any placebo flip makes the scenario's verdicts inconclusive;
    /// for small pilots).
    #[arg(long, default_value = "fisher", value_parser = parse_rule)]
    pub baseline_rule: BaselineRule,
    /// The level adjusted p-values are compared with.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// The smallest effect of interest, in the metric's units: an effect
    /// inside +-this is tested for equivalence (TOST) [default: the
    /// metric's own, e.g. 0.05 for the cascade's shares of agents].
    #[arg(long, value_name = "DELTA")]
    pub sesoi: Option<f64>,
}

fn parse_adjust(s: &str) -> std::result::Result<Adjust, String> {
    Adjust::from_name(s).ok_or_else(|| format!("{s:?}: allowed holm, bh, none"))
}

fn parse_rule(s: &str) -> std::result::Result<BaselineRule, String> {
    BaselineRule::from_name(s).ok_or_else(|| format!("{s:?}: allowed zero, fisher"))
}

pub fn compare(a: &CompareArgs, registry: &Registry) -> Result<u8> {
    let results = ResultsDir::open(&a.dir, registry)?;
    let report = verdicts(
        &results,
        &Request {
            baseline: &a.baseline,
            metric: a.metric.as_deref(),
            outcome: a.outcome.as_deref(),
            flip_delta: a.flip_delta,
            flip_below: a.flip_below,
            filter: a.filter.as_deref(),
            testing: Testing {
                adjust: a.adjust,
                rule: a.baseline_rule,
                alpha: a.alpha,
                sesoi: a.sesoi,
            },
        },
    )?;
    print_table(&report.rows)?;
    outln!("placebo: {}", report.placebo)?;
    for w in &report.warnings {
        outln!("warning: {w}")?;
    }
    let table = TableData::of_records(&report.rows);
    let csv = results.file("compare.csv");
    table
        .write(&csv, Format::Csv, &[])
        .map_err(|e| Error::store(&csv, e))?;
    let domain = matches!(report.comparator, Comparator::Outcome { .. });
    let doc = serde_json::json!({
        "manifest_sha256": results.plan.manifest.hash,
        "baseline": a.baseline,
        // The runs the verdicts are over: all, or those --where kept.
        "where": a.filter,
        "comparator": report.comparator.name(),
        "comparator_kind": match report.comparator {
            Comparator::Outcome { .. } => "domain",
            Comparator::Ordinal { .. } => "ordinal",
            Comparator::Metric { .. } => "metric",
        },
        "placebo": report.placebo,
        "flip_delta": report.rows.first().and_then(|r| r.flip_delta),
        "effect": report.metric.map(|m| serde_json::json!({ "metric": m,
                    "interval": "95% Student-t interval of the mean paired difference (marginal, not adjusted)" })),
        "p_value": serde_json::json!({
            "test": if domain { "exact sign test of the paired effect-metric differences (ties dropped)" }
                    else { "two-sided sign-flip permutation test of the paired differences: every sign pattern up to 20 non-zero differences, else sequential Monte Carlo (stops at 20 exceedances; capped at max(10000, ceil(10 m / alpha) - 1) patterns), streams keyed by each row's labels" },
            "adjustment": a.adjust.name(),
            "family": "the testable rows of this table (some paired difference not zero)",
            "alpha": a.alpha,
        }),
        "baseline_rule": a.baseline_rule.name(),
        "warnings": report.warnings,
        "rows": table.json_rows(),
    });
    let json = results.file("compare.json");
    write_json(&json, &doc).map_err(|e| Error::store(&json, e))?;
    outln!("wrote {} and {}", csv.display(), json.display())?;
    Ok(0)
}

fn print_table(rows: &[CompareRow]) -> Result<()> {
    let mut last = "";
    for r in rows {
        if r.scenario != last {
            outln!("\n{}", r.scenario)?;
            let effect = match &r.effect_metric {
                Some(m) => format!("effect on {m} (arm - {}) [95% CI]", r.baseline),
                None => "(no paired effect: pass --metric to add one)".into(),
            };
            outln!(
                "  {:<28} {:<14} {:>7} {:>9} {:>8} {:>8}  {effect}",
                "arm",
                "verdict",
                "flips",
                "sim mean",
                "band lb",
                format!("p {}", r.adjustment.name())
            )?;
            last = &r.scenario;
        }
        let applied = if r.applied { "" } else { "  (not applied)" };
        let word = r.effect_verdict.map_or("", |w| w.name());
        let effect = match (r.effect_mean, r.effect_ci_low, r.effect_ci_high) {
            (Some(m), Some(lo), Some(hi)) => format!("{m:+.4} [{lo:+.4}, {hi:+.4}] {word}"),
            (Some(m), _, _) => format!("{m:+.4} {word}"),
            _ => String::new(),
        };
        let p = r
            .p_adjusted
            .map_or("-".to_string(), crate::analysis::compare::show_p);
        outln!(
            "  {:<28} {:<14} {:>3}/{:<3} {:>9.3} {:>8} {p:>8}  {effect}{applied}",
            r.arm,
            r.verdict.label(),
            r.flips,
            r.samples,
            r.similarity_mean,
            r.band_lower_bound
                .map_or("-".to_string(), |b| format!("{b:.3}")),
        )?;
    }
    if let Some(r) = rows.first() {
        outln!("\n{}", r.claim)?;
    }
    Ok(())
}
