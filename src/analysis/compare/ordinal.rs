//! Comparing by order, for a metric without bounds or with missing values
//! (`first_clear_round`: a round, null when the mistake never cleared).
//! Each seed is a win, a loss or a tie for the arm by the column's
//! direction, a missing value placed as the column says; the effect is the
//! net benefit (wins - losses) / n with Tango's score interval for a
//! difference of paired proportions, beside the median paired difference
//! where both values exist; the test is the exact sign test.

use crate::model::{Better, NullMeans};

/// A value's rank key: larger is better for the arm's side. `None`: the
/// seed is left out (a missing value that means nothing).
fn key(v: f64, better: Better, null: NullMeans) -> Option<f64> {
    if v.is_nan() {
        return match null {
            NullMeans::Missing => None,
            NullMeans::Worst => Some(f64::NEG_INFINITY),
            NullMeans::Best => Some(f64::INFINITY),
        };
    }
    Some(match better {
        Better::Lower => -v,
        Better::Higher | Better::Neither => v,
    })
}

/// Per seed: +1 when the arm's value is better than the baseline's, -1
/// when worse, 0 for a tie; `None` when the seed is left out.
pub(super) fn signs(pairs: &[(f64, f64)], better: Better, null: NullMeans) -> Vec<Option<f64>> {
    pairs
        .iter()
        .map(|&(arm, base)| {
            let (a, b) = (key(arm, better, null)?, key(base, better, null)?);
            Some(match a.partial_cmp(&b) {
                Some(std::cmp::Ordering::Greater) => 1.0,
                Some(std::cmp::Ordering::Less) => -1.0,
                _ => 0.0,
            })
        })
        .collect()
}

/// The median of (arm - baseline) over seeds where both values exist.
pub(super) fn median_difference(pairs: &[(f64, f64)]) -> Option<f64> {
    let mut d: Vec<f64> = pairs
        .iter()
        .filter(|(a, b)| !a.is_nan() && !b.is_nan())
        .map(|(a, b)| a - b)
        .collect();
    if d.is_empty() {
        return None;
    }
    d.sort_unstable_by(f64::total_cmp);
    let m = d.len() / 2;
    Some(match d.len() % 2 {
        1 => d[m],
        _ => 0.5 * (d[m - 1] + d[m]),
    })
}

/// Tango's (1998) 95 % score interval for the difference of paired
/// proportions (wins - losses) / n: the set of differences whose score
/// statistic, with the nuisance proportion at its restricted maximum
/// likelihood, stays within the normal quantile. `None` without seeds.
pub(super) fn tango(wins: u64, losses: u64, n: u64) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let (b, c, nf) = (wins as f64, losses as f64, n as f64);
    const Z: f64 = 1.959_963_984_540_054;
    let score = |delta: f64| -> f64 {
        // The restricted MLE of the losses' proportion given delta.
        let a = 2.0 * nf;
        let bb = -b - c + (2.0 * nf - b + c) * delta;
        let cc = -c * delta * (1.0 - delta);
        let q = (-bb + (bb * bb - 4.0 * a * cc).max(0.0).sqrt()) / (2.0 * a);
        let var = nf * (2.0 * q + delta * (1.0 - delta));
        if var <= 0.0 {
            return if (b - c - nf * delta).abs() < 1e-12 {
                0.0
            } else {
                f64::INFINITY
            };
        }
        (b - c - nf * delta) / var.sqrt()
    };
    let estimate = (b - c) / nf;
    // The score falls as delta rises: bisect each side for |score| = Z.
    let edge = |mut inside: f64, mut outside: f64| {
        for _ in 0..100 {
            let mid = 0.5 * (inside + outside);
            if score(mid).abs() <= Z {
                inside = mid;
            } else {
                outside = mid;
            }
        }
        inside
    };
    let low = if score(-1.0).abs() <= Z {
        -1.0
    } else {
        edge(estimate, -1.0)
    };
    let high = if score(1.0).abs() <= Z {
        1.0
    } else {
        edge(estimate, 1.0)
    };
    Some((low, high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_value_is_placed_as_the_column_says() {
        let nan = f64::NAN;
        let pairs = [(3.0, 5.0), (nan, 5.0), (4.0, nan), (6.0, 6.0), (nan, nan)];
        let worst = signs(&pairs, Better::Lower, NullMeans::Worst);
        assert_eq!(
            worst,
            [Some(1.0), Some(-1.0), Some(1.0), Some(0.0), Some(0.0)]
        );
        let missing = signs(&pairs, Better::Lower, NullMeans::Missing);
        assert_eq!(missing, [Some(1.0), None, None, Some(0.0), None]);
        assert_eq!(median_difference(&pairs), Some(-1.0));
    }

    #[test]
    fn tangos_interval_holds_its_estimate_and_mirrors() {
        let (lo, hi) = tango(40, 0, 40).unwrap();
        assert_eq!(hi, 1.0);
        assert!(lo > 0.8 && lo < 1.0, "{lo}");
        let (lo, hi) = tango(12, 5, 30).unwrap();
        let est = 7.0 / 30.0;
        assert!(lo < est && est < hi, "{lo} {hi}");
        let (mlo, mhi) = tango(5, 12, 30).unwrap();
        assert!((mlo + hi).abs() < 1e-9 && (mhi + lo).abs() < 1e-9);
        let (lo, hi) = tango(0, 0, 10).unwrap();
        assert!(lo < 0.0 && hi > 0.0);
    }
}
