//! `compare` without the I/O: given where each run sits (scenario, arm
//! variant, seed) and its values, the verdict and paired effect of every arm
//! against the baseline in every scenario.

use rayon::prelude::*;
use std::collections::HashMap;

use super::design::Design;
use super::multiplicity::{fisher_greater, sign_flip, sign_test, Adjust};
use super::stats::{bootstrap_mean, mean};
use super::verdict::{verdict, Case, Reason, SimStats, Tier};

crate::words! {
    /// When the baseline's own placebo flips: `zero` makes every verdict in
    /// the scenario inconclusive; `fisher` only those whose arm does not
    /// flip significantly more often than the placebo.
    pub enum BaselineRule {
        Zero = "zero",
        Fisher = "fisher",
    }
}

/// How a table's p-values are read.
#[derive(Clone, Copy, Debug)]
pub struct Testing {
    pub adjust: Adjust,
    pub rule: BaselineRule,
    pub alpha: f64,
}

pub enum Comparator {
    /// A metric with declared bounds [lo, hi]; similarity
    /// 1 - |x - y| / (hi - lo), a flip below `flip_below`.
    Metric {
        name: String,
        flip_below: f64,
        lo: f64,
        hi: f64,
    },
    /// A categorical outcome; any difference is a flip.
    Outcome { name: String },
}

impl Comparator {
    pub fn name(&self) -> &str {
        match self {
            Comparator::Metric { name, .. } | Comparator::Outcome { name } => name,
        }
    }
}

crate::record! {
    /// One arm against the baseline in one scenario: a row of compare.csv.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CompareRow {
        /// the scenario: common-axis values, seed and replicate aside
        scenario: String,
        /// the arm variant compared
        arm: String,
        /// the baseline variant
        baseline: String,
        /// the metric or outcome compared
        comparator: String,
        /// confirmed, inconclusive or not_confirmed
        verdict: Tier,
        /// the rule that decided
        reason: Reason,
        /// one sentence, bounded by the scenario and the comparator
        claim: String,
        /// seeds whose answer flipped against the baseline's
        flips: u64,
        /// paired seeds
        samples: u64,
        /// mean similarity to the baseline
        similarity_mean: f64 [0.0, 1.0],
        /// population standard deviation of the similarities
        similarity_sd: f64,
        /// lowest similarity
        similarity_min: f64 [0.0, 1.0],
        /// seeds on which the baseline's placebo flipped
        placebo_flips: u64,
        /// the placebo's lowest similarity (the null band's floor)
        floor: f64 [0.0, 1.0],
        /// whether the band decided the verdict
        floor_gated: bool,
        /// every run read what the arm declared
        applied: bool,
        /// the first knob the arm declared that a run did not read
        not_applied_knob: Option<String>,
        /// the metric of the paired effect; null under --outcome without --metric
        effect_metric: Option<String>,
        /// mean paired difference, arm - baseline
        effect_mean: Option<f64>,
        /// 95 % bootstrap interval, low end
        effect_ci_low: Option<f64>,
        /// 95 % bootstrap interval, high end
        effect_ci_high: Option<f64>,
        /// paired test of arm against baseline: sign-flip permutation (metric) or exact sign test (outcome, on the effect metric)
        p_value: Option<f64>,
        /// p_value adjusted over every row of the table
        p_adjusted: Option<f64>,
        /// p_adjusted below alpha
        significant: Option<bool>,
        /// holm, bh or none
        adjustment: Adjust,
        /// --baseline-rule fisher: one-sided Fisher p (adjusted) that the arm flips more than the placebo
        placebo_fisher_p: Option<f64>,
    }
}

/// Per-run answers, indexed by run_id: the metric (compared, or only
/// measured as the paired effect under an outcome), and the outcome.
pub struct Answers<'a> {
    pub metric: Option<(&'a str, &'a [f64])>,
    pub outcome: Option<&'a [String]>,
    /// Per run: decisions an external policy did not give (0 for built-in
    /// arms); none when no arm is external.
    pub fallbacks: Option<&'a [u64]>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("--baseline {baseline}: no arm named '{baseline}'; arms here: {arms}")]
    UnknownBaseline { baseline: String, arms: String },
    #[error(
        "no placebo runs for the baseline '{0}': add `placebo = true` to its [[arm]] in the manifest \
         and run it again (into a new folder, or with --force); compare needs them to tell effects from noise"
    )]
    NoPlacebo(String),
    #[error(
        "{metric} of run {run} is {value}, outside its declared bounds [{lo}, {hi}]; \
         run `witness verify` on the folder"
    )]
    OutOfBounds {
        metric: String,
        run: usize,
        value: f64,
        lo: f64,
        hi: f64,
    },
    #[error(
        "--metric {metric}: compare measures similarity on a bounded scale, and {metric} declares no bounds; \
         allowed: {allowed}, or an --outcome"
    )]
    Unbounded { metric: String, allowed: String },
    #[error(
        "arm '{arm}' has no run for seed {seed} in scenario ({scenario}); arms must share seeds"
    )]
    MissingSeed {
        arm: String,
        seed: i64,
        scenario: String,
    },
}

pub fn compare(
    d: &Design,
    baseline: &str,
    cmp: &Comparator,
    a: &Answers,
    testing: &Testing,
) -> Result<Vec<CompareRow>, CompareError> {
    let base = d.variant(baseline).ok_or_else(|| {
        let labels: Vec<&str> = d
            .variants
            .iter()
            .enumerate()
            .filter(|(v, _)| !d.placebos.contains(&Some(*v)))
            .map(|(_, v)| v.label.as_str())
            .collect();
        CompareError::UnknownBaseline {
            baseline: baseline.into(),
            arms: labels.join(", "),
        }
    })?;
    // A model without a replicate parameter is a function of its seed:
    // rerunning the baseline gives its own runs back, so they are its placebo.
    let placebo = match (d.placebos[base], d.replicable) {
        (Some(p), _) => p,
        (None, false) => base,
        (None, true) => return Err(CompareError::NoPlacebo(baseline.into())),
    };
    if let (Comparator::Metric { name, lo, hi, .. }, Some((_, values))) = (cmp, a.metric) {
        if let Some((id, x)) = values
            .iter()
            .enumerate()
            .find(|(id, x)| d.place(*id as u64).is_some() && !(*lo..=*hi).contains(*x))
        {
            return Err(CompareError::OutOfBounds {
                metric: name.clone(),
                run: id,
                value: *x,
                lo: *lo,
                hi: *hi,
            });
        }
    }
    let mut at: HashMap<(usize, usize, u64, i64), usize> = HashMap::new();
    for (id, p) in d.places.iter().enumerate() {
        if let Some(p) = p {
            at.insert((p.scenario, p.variant, p.point, p.seed), id);
        }
    }
    let span = match cmp {
        Comparator::Metric { lo, hi, .. } => hi - lo,
        Comparator::Outcome { .. } => 1.0,
    };
    let sim = |x: usize, y: usize| -> f64 {
        match (cmp, a.outcome, a.metric) {
            (Comparator::Outcome { .. }, Some(o), _) => f64::from(u8::from(o[x] == o[y])),
            (_, _, Some((_, m))) => 1.0 - (m[x] - m[y]).abs() / span,
            _ => unreachable!("a metric comparator has its metric"),
        }
    };
    let (flip_below, gates) = match cmp {
        Comparator::Metric { flip_below, .. } => (*flip_below, true),
        Comparator::Outcome { .. } => (0.5, false),
    };
    let is_placebo: Vec<bool> = (0..d.variants.len())
        .map(|v| d.placebos.contains(&Some(v)))
        .collect();
    // First every comparison and its raw p-values, then the adjustment over
    // the whole table, then the verdicts (the Fisher rule needs adjusted p).
    struct Pending {
        s: usize,
        v: usize,
        scenario: String,
        pairs: Vec<(usize, usize)>,
        stats: SimStats,
        placebo: SimStats,
        /// The paired differences, for the p-value.
        diffs: Option<Vec<f64>>,
        p: Option<f64>,
        fisher: Option<f64>,
    }
    let mut pending = Vec::new();
    for (s, scenario) in d.scenarios.iter().enumerate() {
        let scenario = scenario.label();
        // Pairing units: a seed, at a design point when there is a design.
        let mut seeds: Vec<(u64, i64)> = d
            .places
            .iter()
            .flatten()
            .filter(|p| p.scenario == s && p.variant == base)
            .map(|p| (p.point, p.seed))
            .collect();
        seeds.sort_unstable();
        if seeds.is_empty() {
            continue;
        }
        let pair = |v: usize| -> Result<Vec<(usize, usize)>, CompareError> {
            seeds
                .iter()
                .filter_map(|&(point, seed)| {
                    match (
                        at.get(&(s, base, point, seed)),
                        at.get(&(s, v, point, seed)),
                    ) {
                        (Some(&r), Some(&x)) => Some(Ok((r, x))),
                        // A candidate the race removed pairs on the seeds
                        // it ran.
                        (Some(_), None) if d.raced => None,
                        _ => Some(Err(CompareError::MissingSeed {
                            arm: d.variants[v].label.clone(),
                            seed,
                            scenario: scenario.clone(),
                        })),
                    }
                })
                .collect()
        };
        let placebo_sims: Vec<f64> = pair(placebo)?.iter().map(|&(r, x)| sim(x, r)).collect();
        let placebo_stats = SimStats::of(&placebo_sims, flip_below);
        for (v, &placebo_arm) in is_placebo.iter().enumerate() {
            if v == base || placebo_arm {
                continue;
            }
            let pairs = pair(v)?;
            let sims: Vec<f64> = pairs.iter().map(|&(r, x)| sim(x, r)).collect();
            let stats = SimStats::of(&sims, flip_below);
            let diffs: Option<Vec<f64>> = a
                .metric
                .map(|(_, m)| pairs.iter().map(|&(r, x)| m[x] - m[r]).collect());
            let fisher =
                (testing.rule == BaselineRule::Fisher && placebo_stats.flips > 0).then(|| {
                    fisher_greater(
                        stats.flips as u64,
                        stats.samples as u64,
                        placebo_stats.flips as u64,
                        placebo_stats.samples as u64,
                    )
                });
            pending.push(Pending {
                s,
                v,
                scenario: scenario.clone(),
                pairs,
                stats,
                placebo: placebo_stats.clone(),
                diffs,
                p: None,
                fisher,
            });
        }
    }
    // The tests are the costly part (10,000 sign patterns of every seed):
    // one row per task, each with its own keyed stream, so the values do
    // not depend on the threads.
    pending.par_iter_mut().for_each(|q| {
        q.p = q.diffs.take().map(|d| match cmp {
            Comparator::Metric { .. } => sign_flip(&d, &[q.s as u64, q.v as u64]),
            Comparator::Outcome { .. } => sign_test(&d),
        });
    });
    // Each family: the rows that have the value, adjusted together.
    let adjusted = |get: &dyn Fn(&Pending) -> Option<f64>| -> (Vec<Option<f64>>, usize) {
        let raw: Vec<f64> = pending.iter().filter_map(get).collect();
        let mut adj = testing.adjust.apply(&raw).into_iter();
        let out = pending
            .iter()
            .map(|q| get(q).map(|_| adj.next().expect("one per value")))
            .collect();
        (out, raw.len())
    };
    let (p_adj, family) = adjusted(&|q| q.p);
    let (fisher_adj, fisher_family) = adjusted(&|q| q.fisher);
    let mut rows = Vec::with_capacity(pending.len());
    for (k, q) in pending.iter().enumerate() {
        let (s, v) = (q.s, q.v);
        let variant = &d.variants[v];
        let knob = d.not_applied.get(&(v, s)).copied();
        let bound = format!("on {}, by {}", q.scenario, cmp.name());
        let fell_back = a.fallbacks.map_or((0, 0), |f| {
            q.pairs
                .iter()
                .fold((0, 0), |(x, r), &(ri, xi)| (x + f[xi], r + f[ri]))
        });
        let outflipped = fisher_adj[k].is_some_and(|p| p < testing.alpha);
        let out = verdict(&Case {
            baseline,
            arm: &variant.label,
            placebo: &q.placebo,
            stats: &q.stats,
            band_gates: gates,
            not_applied: knob,
            fell_back,
            bound: &bound,
            placebo_outflipped: outflipped,
        });
        let effect = a.metric.map(|(name, m)| {
            let diffs: Vec<f64> = q.pairs.iter().map(|&(r, x)| m[x] - m[r]).collect();
            let (lo, hi) = bootstrap_mean(&diffs, &[s as u64, v as u64]);
            (name, mean(&diffs), lo, hi)
        });
        let mut claim = out.claim;
        if let (Some(p), Some(adj)) = (q.p, p_adj[k]) {
            let test = match cmp {
                Comparator::Metric { .. } => {
                    "Sign-flip permutation test of the per-seed differences"
                }
                Comparator::Outcome { .. } => {
                    "Exact sign test of the per-seed differences in the effect metric"
                }
            };
            claim += &format!(
                " {test}: p {} ({} {}).",
                p_is(p),
                show_p(adj),
                testing.adjust.describe(family)
            );
        }
        if let Some(f) = fisher_adj[k] {
            claim += &format!(
                " Baseline rule fisher: the arm's {}/{} flips against the placebo's {}/{}, one-sided Fisher p {} ({}){}.",
                q.stats.flips,
                q.stats.samples,
                q.placebo.flips,
                q.placebo.samples,
                p_is(f),
                testing.adjust.describe(fisher_family),
                if outflipped { ", so the placebo's flips do not void this verdict" } else { "" }
            );
        }
        rows.push(CompareRow {
            scenario: q.scenario.clone(),
            arm: variant.label.clone(),
            baseline: baseline.to_string(),
            comparator: cmp.name().to_string(),
            verdict: out.tier,
            reason: out.reason,
            claim,
            flips: q.stats.flips as u64,
            samples: q.stats.samples as u64,
            similarity_mean: q.stats.mean,
            similarity_sd: q.stats.sd,
            similarity_min: q.stats.min,
            placebo_flips: q.placebo.flips as u64,
            floor: out.floor,
            floor_gated: out.gated,
            applied: knob.is_none() && fell_back == (0, 0),
            not_applied_knob: knob.map(str::to_string),
            effect_metric: effect.map(|e| e.0.to_string()),
            effect_mean: effect.map(|e| e.1),
            effect_ci_low: effect.map(|e| e.2),
            effect_ci_high: effect.map(|e| e.3),
            p_value: q.p,
            p_adjusted: p_adj[k],
            significant: p_adj[k].map(|p| p < testing.alpha),
            adjustment: testing.adjust,
            placebo_fisher_p: fisher_adj[k],
        });
    }
    Ok(rows)
}

/// A p-value as claims print it: three decimals, or two significant
/// digits below 0.001.
pub fn show_p(p: f64) -> String {
    if p < 1e-300 {
        "< 1e-300".into()
    } else if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// "= 0.012" or "< 1e-300", after a "p".
fn p_is(p: f64) -> String {
    let shown = show_p(p);
    if shown.starts_with('<') {
        shown
    } else {
        format!("= {shown}")
    }
}

/// What `compare` is asked.
pub struct Request<'a> {
    pub baseline: &'a str,
    /// The metric compared and the effect size; the model's first
    /// headline metric when `None`.
    pub metric: Option<&'a str>,
    /// A categorical outcome to compare instead of the metric.
    pub outcome: Option<&'a str>,
    pub flip_below: f64,
    /// `--where`: the runs compared.
    pub filter: Option<&'a str>,
    pub testing: Testing,
}

/// The verdicts of a results folder, and the comparator they used.
pub struct Report {
    pub rows: Vec<CompareRow>,
    /// The metric compared or measured as the effect, if any.
    pub metric: Option<&'static str>,
    pub comparator: Comparator,
    /// What the baseline's noise was measured against.
    pub placebo: String,
}

/// Reads what `compare` needs from a results folder and runs it.
pub fn run(results: &crate::results::ResultsDir, req: &Request) -> crate::Result<Report> {
    use crate::Error;
    if !(req.testing.alpha > 0.0 && req.testing.alpha < 1.0) {
        return Err(Error::Usage(format!(
            "--alpha {}: allowed 0 < alpha < 1 (0.05 is the default)",
            req.testing.alpha
        )));
    }
    if !(req.flip_below > 0.0 && req.flip_below <= 1.0) {
        return Err(Error::Usage(format!(
            "--flip-below {}: allowed 0 < x <= 1",
            req.flip_below
        )));
    }
    let model = results.model();
    let plan = &results.plan;
    let d = Design::kept(plan, req.filter)?;
    // Under an outcome the metric is only the effect size, and only when
    // asked for; otherwise it is what is compared.
    let metric = match (req.outcome, req.metric) {
        (Some(_), None) => None,
        (_, asked) => Some(super::summary::metric_or_default(model, asked, "--metric")?),
    };
    let outcome = match req.outcome {
        None => None,
        Some(name) => {
            let outcomes = model.outcomes();
            let i = outcomes
                .iter()
                .position(|(n, _)| *n == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = outcomes.iter().map(|(n, _)| *n).collect();
                    let allowed = if names.is_empty() {
                        "none (this model defines no outcomes)".to_string()
                    } else {
                        names.join(", ")
                    };
                    Error::Usage(format!(
                        "--outcome {name}: unknown outcome of model {}; allowed: {allowed}",
                        model.name()
                    ))
                })?;
            Some((i, outcomes[i].0))
        }
    };
    let metric_values: Option<Vec<f64>> = match metric {
        None => None,
        Some(metric) => Some(
            results.runs_columns(&[metric])?.remove(0)
                .iter()
                .enumerate()
                .map(|(id, v)| match (d.place(id as u64), v.as_f64()) {
                    (None, _) => Ok(f64::NAN),
                    (Some(_), Some(x)) => Ok(x),
                    (Some(_), None) => Err(Error::Usage(format!(
                        "--metric {metric}: run {id} holds {v}; compare needs a number in every run it compares"
                    ))),
                })
                .collect::<crate::Result<_>>()?,
        ),
    };
    let classes: Option<Vec<String>> = match outcome {
        None => None,
        Some((i, _)) => {
            let summaries = results.summary_rows()?;
            let path = results.layout.table("runs").display().to_string();
            let classify = |id: u64| {
                model
                    .classify(i, &plan.run(id).params, &summaries[id as usize])
                    .map(str::to_string)
                    .map_err(|source| Error::Record {
                        path: path.clone(),
                        source,
                    })
            };
            Some(
                (0..plan.total)
                    .map(classify)
                    .collect::<crate::Result<_>>()?,
            )
        }
    };
    let comparator = match (outcome, metric) {
        (Some((_, name)), _) => Comparator::Outcome { name: name.into() },
        (None, None) => unreachable!("without an outcome the metric is compared"),
        (None, Some(metric)) => {
            let bounded = |c: &crate::model::Column| match c.bounds {
                crate::model::Bounds::Range(lo, hi) if hi > lo => Some((lo, hi)),
                _ => None,
            };
            let columns = model.summary_columns();
            let column = columns
                .iter()
                .find(|c| c.name == metric)
                .expect("a summary column");
            let (lo, hi) = bounded(column).ok_or_else(|| {
                let allowed: Vec<&str> = columns
                    .iter()
                    .filter(|c| bounded(c).is_some())
                    .map(|c| c.name)
                    .collect();
                CompareError::Unbounded {
                    metric: metric.into(),
                    allowed: allowed.join(", "),
                }
            })?;
            Comparator::Metric {
                name: metric.into(),
                flip_below: req.flip_below,
                lo,
                hi,
            }
        }
    };
    let fallbacks: Option<Vec<u64>> = match plan.manifest.has_external() {
        false => None,
        true => Some(
            results
                .runs_columns(&["fallbacks"])?
                .remove(0)
                .iter()
                .map(|v| v.as_f64().map_or(0, |x| x as u64))
                .collect(),
        ),
    };
    let answers = Answers {
        metric: metric.zip(metric_values.as_deref()),
        outcome: classes.as_deref(),
        fallbacks: fallbacks.as_deref(),
    };
    let rows = compare(&d, req.baseline, &comparator, &answers, &req.testing)?;
    let base = d.variant(req.baseline).expect("compare found it");
    let placebo = match d.placebos[base] {
        Some(p) => d.variants[p].label.clone(),
        None => format!(
            "{} itself: model {} has no replicate parameter, so a rerun of its runs is identical",
            req.baseline,
            model.name()
        ),
    };
    Ok(Report {
        rows,
        metric,
        comparator,
        placebo,
    })
}
