//! The verdict of each paired comparison and the sentence that states
//! it: the p-values adjusted over the whole table, the effect with its
//! bootstrap interval, and how p-values are printed.

use super::effect::{self, EffectWord};
use super::ordinal;
use super::pairs::Pending;
use super::{Comparator, CompareRow, Setup};
use crate::analysis::verdict::{verdict, Case};

impl Setup<'_> {
    /// The table's rows, in the order the comparisons were made.
    pub(super) fn rows(&self, pending: &[Pending]) -> Vec<CompareRow> {
        let Setup {
            d,
            baseline,
            cmp,
            a,
            testing,
            ..
        } = *self;
        let gates = self.band_gates();
        let flip_delta = match cmp {
            Comparator::Metric { flip_delta, .. } => Some(*flip_delta),
            Comparator::Ordinal { flip_delta, .. } => *flip_delta,
            Comparator::Outcome { .. } => None,
        };
        let ordinal = matches!(cmp, Comparator::Ordinal { .. });
        // Per scenario, the largest per-seed change of any arm: when even
        // it is within the flip delta, no arm could have changed the answer.
        let mut largest: std::collections::HashMap<usize, f64> = std::collections::HashMap::new();
        if let Some((_, m)) = a.metric {
            for q in pending {
                let most = q
                    .pairs
                    .iter()
                    .map(|&(r, x)| (m[x] - m[r]).abs())
                    .fold(0.0, f64::max);
                let at = largest.entry(q.s).or_insert(0.0);
                *at = at.max(most);
            }
        }
        // Each family: the rows that have the value, adjusted together.
        let adjusted = |get: &dyn Fn(usize) -> Option<f64>| -> (Vec<Option<f64>>, usize) {
            let raw: Vec<f64> = (0..pending.len()).filter_map(get).collect();
            let mut adj = testing.adjust.apply(&raw).into_iter();
            let out = (0..pending.len())
                .map(|k| get(k).map(|_| adj.next().expect("one per value")))
                .collect();
            (out, raw.len())
        };
        let (p_adj, family) = adjusted(&|k| {
            let q = &pending[k];
            q.p.filter(|_| q.testable).map(|p| p.p)
        });
        let sesoi = testing.sesoi.or(a.judge.sesoi);
        let diffs_of = |q: &Pending| -> Option<Vec<f64>> {
            a.metric
                .map(|(_, m)| q.pairs.iter().map(|&(r, x)| m[x] - m[r]).collect())
        };
        // An ordinal metric's (arm, baseline) values, missing as NaN.
        let values_of = |q: &Pending| -> Vec<(f64, f64)> {
            a.metric.map_or(Vec::new(), |(_, m)| {
                q.pairs.iter().map(|&(r, x)| (m[x], m[r])).collect()
            })
        };
        let tosts: Vec<Option<f64>> = pending
            .iter()
            .map(|q| {
                let d = diffs_of(q).filter(|_| !ordinal)?;
                effect::tost(&d, sesoi?).filter(|_| q.testable)
            })
            .collect();
        let (tost_adj, tost_family) = adjusted(&|k| tosts[k]);
        let (fisher_adj, fisher_family) = adjusted(&|k| pending[k].fisher);
        let mut rows = Vec::with_capacity(pending.len());
        for (k, q) in pending.iter().enumerate() {
            let (s, v) = (q.s, q.v);
            let variant = &d.variants[v];
            let knob = d.not_applied.get(&(v, s)).copied();
            let bound = format!("on {}, by {}", q.scenario, cmp.name());
            // Runs (not decisions) with any fallback, of the arm and of the
            // baseline.
            let fell_back = a.fallbacks.map_or((0, 0), |f| {
                q.pairs.iter().fold((0, 0), |(x, r), &(ri, xi)| {
                    (x + u64::from(f[xi] > 0), r + u64::from(f[ri] > 0))
                })
            });
            let outflipped = fisher_adj[k].is_some_and(|p| p < testing.alpha);
            let out = verdict(&Case {
                baseline,
                arm: &variant.label,
                placebo: &q.placebo,
                stats: &q.stats,
                band_gates: gates,
                band_lower_bound: q.band,
                not_applied: knob,
                fell_back,
                bound: &bound,
                placebo_outflipped: outflipped,
            });
            // Ordinal: the net benefit with Tango's interval; otherwise the
            // mean difference with its t interval.
            let signs =
                ordinal.then(|| ordinal::signs(&values_of(q), a.judge.better, a.judge.null_means));
            let effect = match &signs {
                Some(signs) => a.metric.map(|(name, _)| {
                    let kept: Vec<f64> = signs.iter().flatten().copied().collect();
                    let wins = kept.iter().filter(|s| **s > 0.0).count() as u64;
                    let losses = kept.iter().filter(|s| **s < 0.0).count() as u64;
                    let n = kept.len() as u64;
                    let nb = (wins as f64 - losses as f64) / (n.max(1) as f64);
                    (name, nb, ordinal::tango(wins, losses, n))
                }),
                None => a.metric.zip(diffs_of(q)).map(|((name, _), diffs)| {
                    let (m, ci) = effect::interval(&diffs);
                    (name, m, ci)
                }),
            };
            let significant = p_adj[k].is_some_and(|p| p < testing.alpha);
            let equivalent = tost_adj[k].is_some_and(|p| p < testing.alpha);
            let word = effect.map(|(_, m, _)| {
                // A net benefit is positive when the arm is better: as a
                // difference of values it points the column's way.
                let d = match (ordinal, a.judge.better) {
                    (true, crate::model::Better::Lower) => -m,
                    _ => m,
                };
                effect::word(q.testable, significant, equivalent, a.judge.better, d)
            });
            let mut claim = out.claim;
            if let (Some(delta), Some(most)) = (flip_delta, largest.get(&q.s)) {
                if !crate::analysis::verdict::flips(*most, 0.0, delta) {
                    claim += &format!(
                        " No arm can flip here: the largest per-seed change of any arm is {most:.4}, within the flip delta {delta}."
                    );
                }
            }
            if let (Some((name, m, ci)), Some(word), Some(signs)) = (effect, word, &signs) {
                let n = signs.iter().flatten().count();
                claim += &format!(
                    " Net benefit on {name} (wins less losses for the arm, over {n} seeds; {}): {m:+.3}{}: {}.",
                    effect::direction_text(a.judge.better),
                    ci.map_or(String::new(), |(lo, hi)| format!(" [{lo:+.3}, {hi:+.3}] (Tango score interval)")),
                    word.name()
                );
            } else if let (Some((name, m, ci)), Some(word)) = (effect, word) {
                claim += &effect_sentence(name, m, ci, word, a.judge.better, sesoi);
                let excludes_zero = ci.is_some_and(|(lo, hi)| lo > 0.0 || hi < 0.0);
                if excludes_zero && !significant && p_adj[k].is_some() {
                    claim += " Its interval excludes 0, but that interval is not adjusted for the table's many comparisons, and the adjusted p below does not reach alpha.";
                }
            }
            if q.p.is_some() && !q.testable {
                claim += " No test: on every seed the arm gave exactly the baseline's value.";
            }
            if let (Some(p), Some(adj)) = (q.p, p_adj[k]) {
                let test = match cmp {
                    Comparator::Metric { .. } => {
                        "Sign-flip permutation test of the per-seed differences"
                    }
                    Comparator::Outcome { .. } => {
                        "Exact sign test of the per-seed differences in the effect metric"
                    }
                    Comparator::Ordinal { .. } => "Exact sign test of the wins against the losses",
                };
                let p_text = match p.at_floor() {
                    // No random pattern reached it: only a bound is known.
                    true => format!(
                        "<= {} (no pattern of {} was as extreme)",
                        show_p(p.p_min),
                        p.patterns
                    ),
                    false => p_is(p.p),
                };
                claim += &format!(
                    " {test}: p {p_text} ({} {}).",
                    show_p(adj),
                    testing.adjust.describe(family)
                );
                if adj < testing.alpha && out.tier == crate::analysis::verdict::Tier::NotConfirmed {
                    claim += " So the arms differ on average, though no seed's answer changed by the flip threshold.";
                }
            }
            if let Some(t) = tost_adj[k] {
                claim += &format!(
                    " Equivalence within +-{} (TOST): p {} ({} {}).",
                    sesoi.unwrap_or_default(),
                    p_is(tosts[k].unwrap_or(t)),
                    show_p(t),
                    testing.adjust.describe(tost_family)
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
            let placebo_rate = clopper_pearson(q.placebo.flips, q.placebo.samples);
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
                placebo_flip_low: placebo_rate.0,
                placebo_flip_high: placebo_rate.1,
                flip_delta,
                max_abs_diff: a.metric.map(|(_, m)| {
                    q.pairs
                        .iter()
                        .map(|&(r, x)| (m[x] - m[r]).abs())
                        .fold(0.0, f64::max)
                }),
                median_diff: signs
                    .as_ref()
                    .and_then(|_| ordinal::median_difference(&values_of(q))),
                left_out: signs
                    .as_ref()
                    .map(|s| s.iter().filter(|x| x.is_none()).count() as u64),
                // Reported where it can gate: on a bounded metric.
                band_lower_bound: Some(q.band).filter(|b| gates && b.is_finite()),
                placebo_q05: quantile(&q.placebo_sims, 0.05),
                floor_min: q.placebo.min,
                band_gated: out.gated,
                applied: knob.is_none() && fell_back == (0, 0),
                not_applied_knob: knob.map(str::to_string),
                effect_metric: effect.map(|e| e.0.to_string()),
                direction: a.judge.better,
                effect_mean: effect.map(|e| e.1),
                effect_ci_low: effect.and_then(|e| e.2).map(|c| c.0),
                effect_ci_high: effect.and_then(|e| e.2).map(|c| c.1),
                ci_method: effect.and_then(|e| e.2).map(|_| {
                    match ordinal {
                        true => "tango score 95% of the net benefit (marginal)",
                        false => "student-t 95% (marginal)",
                    }
                    .to_string()
                }),
                effect_verdict: word,
                p_value: q.p.map(|p| p.p),
                p_adjusted: p_adj[k],
                p_method: q.p.map(|p| p.method),
                p_min: q.p.map(|p| p.p_min),
                patterns: q.p.map(|p| p.patterns),
                testable: q.testable,
                family_size: family as u64,
                sesoi: effect.and(sesoi),
                tost_p: tosts[k],
                tost_p_adjusted: tost_adj[k],
                significant: p_adj[k].map(|p| p < testing.alpha),
                adjustment: testing.adjust,
                placebo_fisher_p: fisher_adj[k],
            });
        }
        rows
    }
}

/// The exact (Clopper-Pearson) 95 % interval of a rate of `k` in `n`.
fn clopper_pearson(k: usize, n: usize) -> (f64, f64) {
    use crate::math::special::beta_quantile;
    let (k, n) = (k as f64, n as f64);
    let low = if k == 0.0 {
        0.0
    } else {
        beta_quantile(k, n - k + 1.0, 0.025)
    };
    let high = if k == n {
        1.0
    } else {
        beta_quantile(k + 1.0, n - k, 0.975)
    };
    (low, high)
}

/// The `q` quantile of `xs`, interpolated between order statistics as
/// numpy's and R's defaults do.
pub(super) fn quantile(xs: &[f64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    let at = q * (v.len() - 1) as f64;
    let (i, frac) = (at.floor() as usize, at - at.floor());
    match v.get(i + 1) {
        Some(next) => v[i] + frac * (next - v[i]),
        None => v[i],
    }
}

/// "Average effect on peak_mistaken: -0.0738 [-0.0892, -0.0584] (95 %
/// t interval; lower is better): better by more than 0.05."
fn effect_sentence(
    name: &str,
    m: f64,
    ci: Option<(f64, f64)>,
    word: EffectWord,
    better: crate::model::Better,
    sesoi: Option<f64>,
) -> String {
    let ci_text = ci.map_or(" (one seed: no interval)".to_string(), |(lo, hi)| {
        format!(
            " [{lo:+.4}, {hi:+.4}] (95 % t interval; {})",
            effect::direction_text(better)
        )
    });
    let beyond = match (word, ci, sesoi) {
        (
            EffectWord::Better | EffectWord::Worse | EffectWord::Higher | EffectWord::Lower,
            Some((lo, hi)),
            Some(d),
        ) if lo > d || hi < -d => {
            format!(" by more than {d}")
        }
        _ => String::new(),
    };
    format!(
        " Average effect on {name}: {m:+.4}{ci_text}: {}{beyond}.",
        word.name()
    )
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

/// The warning when no testable row can reach significance whatever its
/// data: the seeds give too few sign patterns for the family's threshold.
/// `None` when some row can.
pub fn resolution(
    rows: &[CompareRow],
    adjust: crate::analysis::multiplicity::Adjust,
    alpha: f64,
) -> Option<String> {
    use crate::analysis::multiplicity::Adjust;
    let testable: Vec<&CompareRow> = rows.iter().filter(|r| r.testable).collect();
    let m = testable.len();
    let least = testable
        .iter()
        .filter_map(|r| r.p_min)
        .fold(f64::INFINITY, f64::min);
    if m == 0 || !least.is_finite() {
        return None;
    }
    let (reachable, needs) = match adjust {
        Adjust::Holm => (m as f64 * least <= alpha, alpha / m as f64),
        Adjust::Bh | Adjust::None => (least <= alpha, alpha),
    };
    if reachable {
        return None;
    }
    let seeds = doublings(2.0 * m as f64 / alpha);
    let fix = match adjust {
        Adjust::Holm => format!(
            "run at least {seeds} seeds whose differences are not all zero, or pass --adjust bh"
        ),
        _ => format!(
            "run at least {} seeds whose differences are not all zero",
            doublings(2.0 / alpha)
        ),
    };
    Some(format!(
        "no comparison can be significant here: with {m} testable comparison(s) {} needs p <= {}, \
         but the smallest p these seeds allow is {}; {fix}",
        match adjust {
            Adjust::Holm => "Holm",
            Adjust::Bh => "Benjamini-Hochberg",
            Adjust::None => "an unadjusted test",
        },
        show_p(needs),
        show_p(least),
    ))
}

/// The least k with 2^k >= x: the seeds whose 2^k sign patterns give a
/// smallest p of 2 / 2^k at most 2 / x.
fn doublings(x: f64) -> u64 {
    let mut k = 0;
    while 2f64.powi(k) < x {
        k += 1;
    }
    k as u64
}
