//! Pairing each arm's runs with the baseline's, seed by seed (at the same
//! design point), and the paired tests of their differences.

use rayon::prelude::*;

use super::{BaselineRule, Comparator, CompareError, Setup};
use crate::analysis::multiplicity::{fisher_greater, sign_flip, sign_test};
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
    /// The paired differences, for the p-value.
    pub diffs: Option<Vec<f64>>,
    pub p: Option<f64>,
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
        let (flip_below, _) = self.flip_below();
        let sim = |x: usize, y: usize| self.sim(x, y);
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
                    diffs,
                    p: None,
                    fisher,
                });
            }
        }
        Ok(pending)
    }

    /// The paired tests, the costly part (10,000 sign patterns of every
    /// seed): one row per task, each with its own keyed stream, so the
    /// values do not depend on the threads.
    pub(super) fn test(&self, pending: &mut [Pending]) {
        pending.par_iter_mut().for_each(|q| {
            q.p = q.diffs.take().map(|d| match self.cmp {
                Comparator::Metric { .. } => sign_flip(&d, &[q.s as u64, q.v as u64]),
                Comparator::Outcome { .. } => sign_test(&d),
            });
        });
    }
}
