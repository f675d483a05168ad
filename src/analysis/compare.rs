//! `compare` without the I/O: given where each run sits (scenario, arm
//! variant, seed) and its values, the verdict and paired effect of every arm
//! against the baseline in every scenario.

use std::collections::HashMap;

use super::design::Design;
use super::stats::{bootstrap_mean, mean};
use super::verdict::{verdict, Case, Reason, SimStats, Tier};

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
        /// the metric of the paired effect
        effect_metric: String,
        /// mean paired difference, arm - baseline
        effect_mean: f64,
        /// 95 % bootstrap interval, low end
        effect_ci_low: f64,
        /// 95 % bootstrap interval, high end
        effect_ci_high: f64,
    }
}

/// Per-run answers, indexed by run_id.
pub struct Answers<'a> {
    pub metric_name: &'a str,
    pub metric: &'a [f64],
    pub outcome: Option<&'a [String]>,
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
    if let Comparator::Metric { name, lo, hi, .. } = cmp {
        if let Some((id, x)) = a
            .metric
            .iter()
            .enumerate()
            .find(|(_, x)| !(*lo..=*hi).contains(*x))
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
    let mut at: HashMap<(usize, usize, i64), usize> = HashMap::new();
    for (id, p) in d.places.iter().enumerate() {
        at.insert((p.scenario, p.variant, p.seed), id);
    }
    let span = match cmp {
        Comparator::Metric { lo, hi, .. } => hi - lo,
        Comparator::Outcome { .. } => 1.0,
    };
    let sim = |x: usize, y: usize| -> f64 {
        match (cmp, a.outcome) {
            (Comparator::Outcome { .. }, Some(o)) => f64::from(u8::from(o[x] == o[y])),
            _ => 1.0 - (a.metric[x] - a.metric[y]).abs() / span,
        }
    };
    let (flip_below, gates) = match cmp {
        Comparator::Metric { flip_below, .. } => (*flip_below, true),
        Comparator::Outcome { .. } => (0.5, false),
    };
    let is_placebo: Vec<bool> = (0..d.variants.len())
        .map(|v| d.placebos.contains(&Some(v)))
        .collect();
    let mut rows = Vec::new();
    for (s, scenario) in d.scenarios.iter().enumerate() {
        let scenario = scenario.label();
        let mut seeds: Vec<i64> = d
            .places
            .iter()
            .filter(|p| p.scenario == s && p.variant == base)
            .map(|p| p.seed)
            .collect();
        seeds.sort_unstable();
        if seeds.is_empty() {
            continue;
        }
        let pair = |v: usize| -> Result<Vec<(usize, usize)>, CompareError> {
            seeds
                .iter()
                .map(
                    |&seed| match (at.get(&(s, base, seed)), at.get(&(s, v, seed))) {
                        (Some(&r), Some(&x)) => Ok((r, x)),
                        _ => Err(CompareError::MissingSeed {
                            arm: d.variants[v].label.clone(),
                            seed,
                            scenario: scenario.clone(),
                        }),
                    },
                )
                .collect()
        };
        let placebo_sims: Vec<f64> = pair(placebo)?.iter().map(|&(r, x)| sim(x, r)).collect();
        let placebo_stats = SimStats::of(&placebo_sims, flip_below);
        for (v, variant) in d.variants.iter().enumerate() {
            if v == base || is_placebo[v] {
                continue;
            }
            let pairs = pair(v)?;
            let sims: Vec<f64> = pairs.iter().map(|&(r, x)| sim(x, r)).collect();
            let stats = SimStats::of(&sims, flip_below);
            let knob = d.not_applied.get(&(v, s)).copied();
            let bound = format!("on {scenario}, by {}", cmp.name());
            let out = verdict(&Case {
                baseline,
                arm: &variant.label,
                placebo: &placebo_stats,
                stats: &stats,
                band_gates: gates,
                not_applied: knob,
                bound: &bound,
            });
            let diffs: Vec<f64> = pairs
                .iter()
                .map(|&(r, x)| a.metric[x] - a.metric[r])
                .collect();
            let (lo, hi) = bootstrap_mean(&diffs, &[s as u64, v as u64]);
            rows.push(CompareRow {
                scenario: scenario.clone(),
                arm: variant.label.clone(),
                baseline: baseline.to_string(),
                comparator: cmp.name().to_string(),
                verdict: out.tier,
                reason: out.reason,
                claim: out.claim,
                flips: stats.flips as u64,
                samples: stats.samples as u64,
                similarity_mean: stats.mean,
                similarity_sd: stats.sd,
                similarity_min: stats.min,
                placebo_flips: placebo_stats.flips as u64,
                floor: out.floor,
                floor_gated: out.gated,
                applied: knob.is_none(),
                not_applied_knob: knob.map(str::to_string),
                effect_metric: a.metric_name.to_string(),
                effect_mean: mean(&diffs),
                effect_ci_low: lo,
                effect_ci_high: hi,
            });
        }
    }
    Ok(rows)
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
}

/// The verdicts of a results folder, and the comparator they used.
pub struct Report {
    pub rows: Vec<CompareRow>,
    pub metric: &'static str,
    pub comparator: Comparator,
    /// What the baseline's noise was measured against.
    pub placebo: String,
}

/// Reads what `compare` needs from a results folder and runs it.
pub fn run(results: &crate::results::ResultsDir, req: &Request) -> crate::Result<Report> {
    use crate::Error;
    if !(req.flip_below > 0.0 && req.flip_below <= 1.0) {
        return Err(Error::Usage(format!(
            "--flip-below {}: allowed 0 < x <= 1",
            req.flip_below
        )));
    }
    let model = results.model();
    let plan = &results.plan;
    let d = Design::of(plan)?;
    let metric = super::summary::metric_or_default(model, req.metric, "--metric")?;
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
    let values = results.runs_columns(&[metric])?.remove(0);
    let metric_values: Vec<f64> = values
        .iter()
        .map(|v| {
            v.as_f64().ok_or_else(|| {
                Error::Usage(format!(
                    "--metric {metric}: a run holds {v}; compare needs a number in every run"
                ))
            })
        })
        .collect::<crate::Result<_>>()?;
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
    let comparator = match outcome {
        Some((_, name)) => Comparator::Outcome { name: name.into() },
        None => {
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
    let answers = Answers {
        metric_name: metric,
        metric: &metric_values,
        outcome: classes.as_deref(),
    };
    let rows = compare(&d, req.baseline, &comparator, &answers)?;
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
