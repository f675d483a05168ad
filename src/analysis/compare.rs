//! `compare` without the I/O: given where each run sits (scenario, arm
//! variant, seed) and its values, the verdict and paired effect of every arm
//! against the baseline in every scenario.

use serde::Serialize;
use std::collections::HashMap;

use super::groups::Design;
use super::stats::{bootstrap_mean, mean};
use super::verdict::{verdict, Case, Reason, SimStats, Tier};

pub const PLACEBO_SUFFIX: &str = ":placebo";

pub enum Comparator {
    /// A metric in [0, 1]; similarity 1 - |x - y|, flip below `flip_below`.
    Metric { name: String, flip_below: f64 },
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

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub scenario: String,
    pub arm: String,
    pub baseline: String,
    pub comparator: String,
    pub verdict: Tier,
    pub reason: Reason,
    pub claim: String,
    pub flips: usize,
    pub samples: usize,
    pub similarity_mean: f64,
    pub similarity_sd: f64,
    pub similarity_min: f64,
    pub placebo_flips: usize,
    pub floor: f64,
    pub floor_gated: bool,
    pub applied: bool,
    pub not_applied_knob: Option<String>,
    /// The metric of the paired effect (the `--metric`, also under `--outcome`).
    pub effect_metric: String,
    pub effect_mean: f64,
    pub effect_ci_low: f64,
    pub effect_ci_high: f64,
}

/// Per-run answers, indexed by run_id.
pub struct Answers<'a> {
    pub metric_name: &'a str,
    pub metric: &'a [f64],
    pub outcome: Option<&'a [String]>,
}

pub fn compare(
    d: &Design,
    baseline: &str,
    cmp: &Comparator,
    a: &Answers,
) -> Result<Vec<Row>, String> {
    let labels: Vec<&str> = d.variants.iter().map(|v| v.label.as_str()).collect();
    let base = labels.iter().position(|l| *l == baseline).ok_or_else(|| {
        format!(
            "no arm named '{baseline}'; arms here: {}",
            labels.join(", ")
        )
    })?;
    let placebo_label = format!("{baseline}{PLACEBO_SUFFIX}");
    let placebo = labels.iter().position(|l| *l == placebo_label).ok_or_else(|| {
        format!(
            "no placebo runs for the baseline '{baseline}': add `placebo = true` to its [[arm]] in the manifest \
             and run it again (into a new folder, or with --force); compare needs them to tell effects from noise"
        )
    })?;
    if let Comparator::Metric { name, .. } = cmp {
        if let Some((id, x)) = a
            .metric
            .iter()
            .enumerate()
            .find(|(_, x)| !(0.0..=1.0).contains(*x))
        {
            return Err(format!(
                "{name} of run {id} is {x}, outside [0, 1]: a metric comparator needs a fraction; \
                 choose a fraction metric (e.g. peak_mistaken) or an --outcome"
            ));
        }
    }
    let mut at: HashMap<(usize, usize, i64), usize> = HashMap::new();
    for (id, p) in d.places.iter().enumerate() {
        at.insert((p.scenario, p.variant, p.seed), id);
    }
    let sim = |x: usize, y: usize| -> f64 {
        match (cmp, a.outcome) {
            (Comparator::Outcome { .. }, Some(o)) => (o[x] == o[y]) as u8 as f64,
            _ => 1.0 - (a.metric[x] - a.metric[y]).abs(),
        }
    };
    let (flip_below, gates) = match cmp {
        Comparator::Metric { flip_below, .. } => (*flip_below, true),
        Comparator::Outcome { .. } => (0.5, false),
    };
    let mut rows = Vec::new();
    for (s, scenario) in d.scenarios.iter().enumerate() {
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
        let pair = |v: usize| -> Result<Vec<(usize, usize)>, String> {
            seeds
                .iter()
                .map(|&seed| match (at.get(&(s, base, seed)), at.get(&(s, v, seed))) {
                    (Some(&r), Some(&x)) => Ok((r, x)),
                    _ => Err(format!(
                        "arm '{}' has no run for seed {seed} in scenario ({scenario}); arms must share seeds",
                        d.variants[v].label
                    )),
                })
                .collect()
        };
        let placebo_sims: Vec<f64> = pair(placebo)?.iter().map(|&(r, x)| sim(x, r)).collect();
        let placebo_stats = SimStats::of(&placebo_sims, flip_below);
        for (v, variant) in d.variants.iter().enumerate() {
            if v == base || variant.label.ends_with(PLACEBO_SUFFIX) {
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
            rows.push(Row {
                scenario: scenario.clone(),
                arm: variant.label.clone(),
                baseline: baseline.to_string(),
                comparator: cmp.name().to_string(),
                verdict: out.tier,
                reason: out.reason,
                claim: out.claim,
                flips: stats.flips,
                samples: stats.samples,
                similarity_mean: stats.mean,
                similarity_sd: stats.sd,
                similarity_min: stats.min,
                placebo_flips: placebo_stats.flips,
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
