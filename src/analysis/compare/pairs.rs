//! Pairing each arm's runs with the baseline's, seed by seed (at the same
//! design point), and the paired tests of their differences.

use rayon::prelude::*;

use super::{ordinal, BaselineRule, Comparator, CompareError, Setup};
use crate::analysis::multiplicity::{fisher_greater, sign_test};
use crate::analysis::permutation::{content_key, lower_bound, mc_cap, sign_flip, PMethod, PValue};
use crate::analysis::verdict::SimStats;

/// One arm against the baseline in one scenario, before the p-values of
/// the whole table are adjusted.
pub(super) struct Pending {
    pub s: usize,
    pub v: usize,
    pub scenario: String,
    /// (baseline run, arm run) per seed.
    pub pairs: Vec<(usize, usize)>,
    pub stats: SimStats,
    pub placebo: SimStats,
    /// The placebo's similarities, seed by seed.
    pub placebo_sims: Vec<f64>,
    /// The band's lower bound (minus infinity: too few seeds).
    pub band: f64,
    /// The paired differences, for the p-value.
    pub diffs: Option<Vec<f64>>,
    /// Some difference is not zero, so there is something to test; rows
    /// without are left out of the family.
    pub testable: bool,
    /// Its random streams' key: the row's labels, not its place.
    pub key: [u64; 2],
    pub p: Option<PValue>,
    pub fisher: Option<f64>,
}

impl Setup<'_> {
    /// Every arm in every scenario, paired with the baseline, with its
    /// similarities, its differences and (under the Fisher rule) the raw
    /// p-value that it flips more often than the placebo.
    pub(super) fn pending(&self) -> Result<Vec<Pending>, CompareError> {
        let Setup {
            d, a, testing, at, ..
        } = self;
        let (base, placebo) = (self.base, self.placebo);
        let sim = |x: usize, y: usize| self.sim(x, y);
        let flipped = |pairs: &[(usize, usize)], threshold: f64| -> Vec<bool> {
            pairs
                .iter()
                .map(|&(r, x)| self.flipped(x, r, threshold))
                .collect()
        };
        let is_placebo: Vec<bool> = (0..d.variants.len())
            .map(|v| d.placebos.contains(&Some(v)))
            .collect();
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
            let placebo_pairs = pair(placebo)?;
            let threshold = self.ordinal_threshold(&placebo_pairs);
            let placebo_sims: Vec<f64> = placebo_pairs.iter().map(|&(r, x)| sim(x, r)).collect();
            let placebo_stats = SimStats::of(&placebo_sims, &flipped(&placebo_pairs, threshold));
            // The placebo's similarity on each baseline run, for the band.
            let placebo_at: std::collections::HashMap<usize, f64> = placebo_pairs
                .iter()
                .zip(&placebo_sims)
                .map(|(&(r, _), &s)| (r, s))
                .collect();
            for (v, &placebo_arm) in is_placebo.iter().enumerate() {
                if v == base || placebo_arm {
                    continue;
                }
                let pairs = pair(v)?;
                let sims: Vec<f64> = pairs.iter().map(|&(r, x)| sim(x, r)).collect();
                let stats = SimStats::of(&sims, &flipped(&pairs, threshold));
                let gaps: Vec<f64> = pairs
                    .iter()
                    .zip(&sims)
                    .filter_map(|(&(r, _), s)| Some(placebo_at.get(&r)? - s))
                    .collect();
                let band = lower_bound(&gaps, testing.alpha);
                // An ordinal metric is tested on its wins and losses (the
                // seeds a missing value leaves out are not among them).
                let diffs: Option<Vec<f64>> = a.metric.map(|(_, m)| match self.cmp {
                    Comparator::Ordinal { .. } => {
                        let values: Vec<(f64, f64)> =
                            pairs.iter().map(|&(r, x)| (m[x], m[r])).collect();
                        ordinal::signs(&values, a.judge.better, a.judge.null_means)
                            .into_iter()
                            .flatten()
                            .collect()
                    }
                    _ => pairs.iter().map(|&(r, x)| m[x] - m[r]).collect(),
                });
                let testable = diffs.as_ref().is_some_and(|d| d.iter().any(|x| *x != 0.0));
                let key = content_key(&[
                    &scenario,
                    &d.variants[v].label,
                    self.baseline,
                    a.metric.map_or(self.cmp.name(), |(name, _)| name),
                ]);
                let fisher = (testing.rule == BaselineRule::Fisher && placebo_stats.flips > 0)
                    .then(|| {
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
                    placebo_sims: placebo_sims.clone(),
                    band,
                    diffs,
                    testable,
                    key,
                    p: None,
                    fisher,
                });
            }
        }
        Ok(pending)
    }

    /// The paired tests, the costly part: one row per task, each with its
    /// own keyed stream, so the values depend neither on the threads nor on
    /// the table's order. A Monte-Carlo test may draw up to a cap sized to
    /// the family (the testable rows), so its floor never decides.
    pub(super) fn test(&self, pending: &mut [Pending]) {
        let family = pending.iter().filter(|q| q.testable).count();
        let cap = mc_cap(family, self.testing.alpha);
        pending.par_iter_mut().for_each(|q| {
            q.p = q.diffs.take().map(|d| match self.cmp {
                Comparator::Metric { .. } => sign_flip(&d, &q.key, cap),
                Comparator::Outcome { .. } | Comparator::Ordinal { .. } => {
                    let n = d.iter().filter(|x| **x != 0.0).count() as i32;
                    PValue {
                        p: sign_test(&d),
                        method: PMethod::ExactSignTest,
                        p_min: (2.0 / 2f64.powi(n)).min(1.0),
                        patterns: 0,
                    }
                }
            });
        });
    }
}

impl Setup<'_> {
    /// An ordinal metric's flip size in a scenario: its declared delta,
    /// else the placebo's 95 % quantile of |placebo - baseline| where both
    /// values exist (so a flip is a change rerun noise rarely makes).
    fn ordinal_threshold(&self, placebo_pairs: &[(usize, usize)]) -> f64 {
        let (Comparator::Ordinal { flip_delta, .. }, Some((_, m))) = (self.cmp, self.a.metric)
        else {
            return 0.0;
        };
        if let Some(d) = flip_delta {
            return *d;
        }
        let changes: Vec<f64> = placebo_pairs
            .iter()
            .map(|&(r, x)| (m[x] - m[r]).abs())
            .filter(|c| !c.is_nan())
            .collect();
        if changes.is_empty() {
            return 0.0;
        }
        super::claims::quantile(&changes, 0.95)
    }
}
