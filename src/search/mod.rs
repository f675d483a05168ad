//! Early stopping over a grid's candidates, pure: which candidates (an arm
//! with one point of its own axes) go on to the next rung of a race or of
//! successive halving, given every score seen so far. A score is a
//! candidate's metric at one value of the resource axis (its seed, say);
//! candidates are compared on the same resource values, so the comparison
//! is paired. Nothing here depends on threads or on the order runs
//! finished: the decision is a function of the scores alone.

pub mod schedule;

pub use schedule::{Rung, Schedule};

use crate::analysis::multiplicity::holm;
use crate::math::special::student_t_upper;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// A candidate leaves when a paired test against the current best
    /// rejects, Holm-adjusted over the candidates tested in the rung.
    Race,
    /// The best 1/eta of the candidates go on (Hyperband's inner loop).
    Halving,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Race => "race",
            Method::Halving => "halving",
        }
    }
}

/// A manifest's `[search]`, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    pub method: Method,
    /// A summary column of the model.
    pub metric: &'static str,
    pub maximize: bool,
    /// Index of the resource axis among the manifest's common axes.
    pub resource: usize,
    /// Resource values of the first rung.
    pub first: usize,
    /// Growth of the resource per rung, and halving's cut.
    pub eta: usize,
    /// Resource values at most (at most the axis' length).
    pub max: usize,
    pub alpha: f64,
    pub keep_at_least: usize,
}

impl Search {
    /// How many resource values the candidates of each rung have been run
    /// on in all: first, first x eta, first x eta^2, ... up to `max`.
    pub fn budgets(&self) -> Vec<usize> {
        let mut out = vec![self.first.min(self.max)];
        while *out.last().expect("one rung") < self.max {
            let next = out.last().expect("one rung").saturating_mul(self.eta);
            out.push(next.min(self.max));
        }
        out
    }
}

/// Why a candidate left.
#[derive(Clone, Debug, PartialEq)]
pub enum Exit {
    /// The paired test against `best` rejected.
    Tested {
        best: usize,
        p: f64,
        p_adjusted: f64,
    },
    /// Halving placed it `place`-th (from 1) where the first `kept` went on.
    Halved { place: usize, kept: usize },
    /// A score was not a number (a failed run).
    NotFinite,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Eliminated {
    pub candidate: usize,
    pub exit: Exit,
}

/// What a rung decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// Candidates that go on, ascending.
    pub alive: Vec<usize>,
    pub removed: Vec<Eliminated>,
    /// The candidate with the best mean score in the rung.
    pub best: usize,
}

/// Scores oriented so that larger is better, and their mean (NaN when any
/// score is not finite, which ranks last).
fn oriented_mean(s: &Search, scores: &[f64]) -> f64 {
    let sign = if s.maximize { 1.0 } else { -1.0 };
    if scores.iter().any(|x| !x.is_finite()) {
        return f64::NAN;
    }
    sign * scores.iter().sum::<f64>() / scores.len().max(1) as f64
}

/// Indices into `alive` from the best mean to the worst; equal means keep
/// candidate order, non-finite means come last.
fn ranked(means: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..means.len()).collect();
    order.sort_by(|&i, &j| {
        let key = |k: usize| (means[k].is_nan(), -means[k]);
        let (a, b) = (key(i), key(j));
        a.0.cmp(&b.0).then(a.1.total_cmp(&b.1))
    });
    order
}

/// One-sided p-value of the paired t-test that the mean of `d` is above 0
/// (`scipy.stats.ttest_rel(a, b, alternative="greater")` on d = a - b).
/// Fewer than two values test nothing (1). Equal differences have no
/// variance, where the t statistic is infinite and says nothing about
/// chance: they get the exact sign test's 2^-n when positive (n equal
/// wins in a row), 1 otherwise, so two equal steps of a discrete metric
/// are not taken for certainty.
pub fn paired_t_greater(d: &[f64]) -> f64 {
    let n = d.len();
    if n < 2 {
        return 1.0;
    }
    let mean = d.iter().sum::<f64>() / n as f64;
    let var = d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    if var == 0.0 {
        return if mean > 0.0 {
            0.5f64.powi(n as i32)
        } else {
            1.0
        };
    }
    // The upper tail is computed directly, so small p-values stay accurate
    // where 1 - cdf would cancel.
    student_t_upper(mean / (var / n as f64).sqrt(), (n - 1) as f64)
}

/// Decides a rung. `alive` are the candidates that ran it (ascending),
/// `scores[k]` candidate `alive[k]`'s scores on every resource value so
/// far, all candidates on the same values in the same order; `last` says
/// the budget is spent (halving then keeps everyone it ranked).
pub fn decide(s: &Search, alive: &[usize], scores: &[Vec<f64>], last: bool) -> Decision {
    assert_eq!(alive.len(), scores.len(), "one score list per candidate");
    let means: Vec<f64> = scores.iter().map(|x| oriented_mean(s, x)).collect();
    let order = ranked(&means);
    let best = order[0];
    let mut out: Vec<Option<Exit>> = means
        .iter()
        .map(|m| m.is_nan().then_some(Exit::NotFinite))
        .collect();
    match s.method {
        Method::Halving if !last => {
            let kept = alive.len().div_ceil(s.eta).max(s.keep_at_least);
            for (place, &k) in order.iter().enumerate().skip(kept) {
                if out[k].is_none() {
                    out[k] = Some(Exit::Halved {
                        place: place + 1,
                        kept,
                    });
                }
            }
        }
        Method::Halving => {}
        Method::Race if !means[best].is_nan() => {
            let sign = if s.maximize { 1.0 } else { -1.0 };
            let tested: Vec<usize> = (0..alive.len())
                .filter(|&k| k != best && !means[k].is_nan())
                .collect();
            let p: Vec<f64> = tested
                .iter()
                .map(|&k| {
                    let d: Vec<f64> = scores[best]
                        .iter()
                        .zip(&scores[k])
                        .map(|(b, c)| sign * (b - c))
                        .collect();
                    paired_t_greater(&d)
                })
                .collect();
            let adjusted = holm(&p);
            for (j, &k) in tested.iter().enumerate() {
                if adjusted[j] < s.alpha {
                    out[k] = Some(Exit::Tested {
                        best: alive[best],
                        p: p[j],
                        p_adjusted: adjusted[j],
                    });
                }
            }
        }
        Method::Race => {}
    }
    // The floor: the best-placed of the removed come back first.
    let mut staying = out.iter().filter(|e| e.is_none()).count();
    for &k in &order {
        if staying >= s.keep_at_least.min(alive.len()) {
            break;
        }
        if out[k].is_some() {
            out[k] = None;
            staying += 1;
        }
    }
    let mut decision = Decision {
        alive: Vec::new(),
        removed: Vec::new(),
        best: alive[best],
    };
    for (k, exit) in out.into_iter().enumerate() {
        match exit {
            None => decision.alive.push(alive[k]),
            Some(exit) => decision.removed.push(Eliminated {
                candidate: alive[k],
                exit,
            }),
        }
    }
    decision
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(method: Method) -> Search {
        Search {
            method,
            metric: "m",
            maximize: true,
            resource: 0,
            first: 2,
            eta: 3,
            max: 10,
            alpha: 0.05,
            keep_at_least: 1,
        }
    }

    #[test]
    fn budgets_grow_by_eta_up_to_max() {
        assert_eq!(search(Method::Race).budgets(), vec![2, 6, 10]);
        let one = Search {
            first: 1,
            ..search(Method::Halving)
        };
        assert_eq!(one.budgets(), vec![1, 3, 9, 10]);
        let all = Search {
            first: 12,
            ..search(Method::Halving)
        };
        assert_eq!(all.budgets(), vec![10]);
    }

    #[test]
    fn the_paired_t_test_matches_known_values() {
        // d = [1, 2, 3, 4]: t = 2.5 / sqrt(1.6667 / 4) = 3.873 on 3 df;
        // scipy.stats.ttest_1samp(d, 0, alternative="greater") gives
        // p = 0.015233145831085489.
        let p = paired_t_greater(&[1.0, 2.0, 3.0, 4.0]);
        assert!((p - 0.015_233_145_831_085_489).abs() < 1e-12, "{p}");
        let q = paired_t_greater(&[-1.0, -2.0, -3.0, -4.0]);
        assert!((p + q - 1.0).abs() < 1e-12);
        assert_eq!(paired_t_greater(&[0.5]), 1.0);
        assert_eq!(paired_t_greater(&[0.5, 0.5]), 0.25);
        assert_eq!(paired_t_greater(&[2.0; 10]), 1.0 / 1024.0);
        assert_eq!(paired_t_greater(&[0.0, 0.0]), 1.0);
    }

    #[test]
    fn halving_keeps_the_best_third_and_the_floor() {
        let s = search(Method::Halving);
        let scores: Vec<Vec<f64>> = (0..9).map(|k| vec![k as f64 % 5.0]).collect();
        let alive: Vec<usize> = (10..19).collect();
        let d = decide(&s, &alive, &scores, false);
        // Means 0 1 2 3 4 0 1 2 3: the best three are 4, then the 3s.
        assert_eq!(d.alive, vec![13, 14, 18]);
        assert_eq!(d.best, 14);
        assert_eq!(d.removed.len(), 6);
        assert!(decide(&s, &alive, &scores, true).removed.is_empty());
        let floor = Search {
            keep_at_least: 5,
            ..s
        };
        assert_eq!(decide(&floor, &alive, &scores, false).alive.len(), 5);
    }

    #[test]
    fn the_race_removes_what_is_clearly_worse_and_keeps_what_is_close() {
        let s = search(Method::Race);
        let base = [0.90, 0.92, 0.91, 0.93, 0.90, 0.92];
        let shift = |by: f64, wobble: f64| -> Vec<f64> {
            base.iter()
                .enumerate()
                .map(|(i, x)| x - by + if i % 2 == 0 { wobble } else { -wobble })
                .collect()
        };
        let scores = vec![
            base.to_vec(),
            shift(0.30, 0.001),
            shift(0.001, 0.01),
            shift(0.2, 0.002),
        ];
        let d = decide(&s, &[0, 1, 2, 3], &scores, false);
        assert_eq!(d.best, 0);
        assert_eq!(d.alive, vec![0, 2]);
        let gone: Vec<usize> = d.removed.iter().map(|e| e.candidate).collect();
        assert_eq!(gone, vec![1, 3]);
        let Exit::Tested { p, p_adjusted, .. } = &d.removed[0].exit else {
            panic!("tested");
        };
        assert!(p_adjusted >= p && *p_adjusted < 0.05);
        // Minimising turns the race around.
        let min = Search {
            maximize: false,
            ..s.clone()
        };
        assert_eq!(decide(&min, &[0, 1, 2, 3], &scores, false).best, 1);
    }

    #[test]
    fn a_failed_score_leaves_the_race_unless_the_floor_needs_it() {
        let s = search(Method::Race);
        let scores = vec![vec![1.0, 1.0], vec![f64::NAN, 2.0]];
        let d = decide(&s, &[0, 1], &scores, false);
        assert_eq!(d.alive, vec![0]);
        assert_eq!(d.removed[0].exit, Exit::NotFinite);
        let all_bad = vec![vec![f64::NAN], vec![f64::NAN]];
        assert_eq!(decide(&s, &[0, 1], &all_bad, false).alive.len(), 1);
    }
}
