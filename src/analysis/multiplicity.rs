//! P-values for `compare`'s paired comparisons and their adjustment over a
//! whole table, pure. A metric comparison is tested by flipping signs
//! (`super::permutation`); an outcome comparison by the exact sign test on
//! the effect metric's differences; a placebo's flips against an arm's by
//! a one-sided Fisher exact test. Holm's step-down and Benjamini-Hochberg's
//! step-up adjust a family.

use crate::math;
use crate::math::special::ln_binomial;

/// Two-sided exact sign test: ties (zero differences) dropped, the smaller
/// count's binomial tail doubled, capped at 1.
pub fn sign_test(d: &[f64]) -> f64 {
    let up = d.iter().filter(|&&x| x > 0.0).count() as u64;
    let down = d.iter().filter(|&&x| x < 0.0).count() as u64;
    let n = up + down;
    if n == 0 {
        return 1.0;
    }
    let k = up.min(down);
    let tail: f64 = (0..=k)
        .map(|i| math::exp(ln_binomial(n, i) - n as f64 * std::f64::consts::LN_2))
        .sum();
    (2.0 * tail).min(1.0)
}

/// One-sided Fisher exact p-value that `a` flips out of `n_a` seeds is a
/// higher rate than `b` out of `n_b`: P(X >= a) for X hypergeometric with
/// the margins fixed.
pub fn fisher_greater(a: u64, n_a: u64, b: u64, n_b: u64) -> f64 {
    let flips = a + b;
    let total = n_a + n_b;
    let ln = |x: u64| ln_binomial(n_a, x) + ln_binomial(n_b, flips - x) - ln_binomial(total, flips);
    let top = flips.min(n_a);
    (a..=top).map(|x| math::exp(ln(x))).sum::<f64>().min(1.0)
}

crate::words! {
    /// How p-values are adjusted over the table's family of comparisons.
    pub enum Adjust {
        Holm = "holm",
        Bh = "bh",
        None = "none",
    }
}

impl Adjust {
    /// As claims name it.
    pub fn describe(self, m: usize) -> String {
        match self {
            Adjust::Holm => format!("Holm-adjusted over {m} comparisons"),
            Adjust::Bh => format!("Benjamini-Hochberg-adjusted over {m} comparisons"),
            Adjust::None => format!("unadjusted, one of {m} comparisons"),
        }
    }

    pub fn apply(self, p: &[f64]) -> Vec<f64> {
        match self {
            Adjust::Holm => holm(p),
            Adjust::Bh => bh(p),
            Adjust::None => p.to_vec(),
        }
    }
}

/// Indices of `p` in ascending order (ties in input order).
fn ascending(p: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    order
}

/// Holm's step-down: the k-th smallest (from 0) times m - k, made
/// monotone by a running maximum, capped at 1.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut out = vec![0.0; m];
    let mut run = 0.0f64;
    for (k, &i) in ascending(p).iter().enumerate() {
        run = run.max(((m - k) as f64 * p[i]).min(1.0));
        out[i] = run;
    }
    out
}

/// Benjamini-Hochberg's step-up: the k-th smallest (from 1) times m / k,
/// made monotone by a running minimum from the largest, capped at 1.
pub fn bh(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut out = vec![0.0; m];
    let mut run = 1.0f64;
    let order = ascending(p);
    for (k, &i) in order.iter().enumerate().rev() {
        run = run.min(m as f64 / (k + 1) as f64 * p[i]).min(1.0);
        out[i] = run;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn holm_and_bh_keep_their_definitions(p in prop::collection::vec(0.0f64..=1.0, 1..40)) {
            let (h, b) = (holm(&p), bh(&p));
            let m = p.len() as f64;
            let order = ascending(&p);
            for w in order.windows(2) {
                // Monotone in the raw order.
                prop_assert!(h[w[0]] <= h[w[1]] && b[w[0]] <= b[w[1]]);
            }
            for i in 0..p.len() {
                prop_assert!(h[i] <= 1.0 && b[i] <= 1.0);
                prop_assert!(h[i] >= p[i] && b[i] >= p[i]);
                prop_assert!(h[i] >= b[i] - 1e-15, "Holm {} below BH {}", h[i], b[i]);
                prop_assert!(h[i] <= (m * p[i]).min(1.0) + 1e-15, "Holm above Bonferroni");
            }
            // The textbook forms, recomputed directly.
            for (k, &i) in order.iter().enumerate() {
                let want_h = order[..=k].iter().enumerate()
                    .map(|(j, &x)| ((m - j as f64) * p[x]).min(1.0)).fold(0.0, f64::max);
                prop_assert!((h[i] - want_h).abs() < 1e-12);
                let want_b = order[k..].iter().enumerate()
                    .map(|(j, &x)| (m / (k + j + 1) as f64 * p[x]).min(1.0)).fold(1.0, f64::min);
                prop_assert!((b[i] - want_b).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn sign_and_fisher_tests_match_hand_computed_values() {
        // 9 of 10 positive: 2 * (1 + 10) / 1024.
        let d: Vec<f64> = (0..10).map(|i| if i == 0 { -1.0 } else { 1.0 }).collect();
        assert!((sign_test(&d) - 22.0 / 1024.0).abs() < 1e-12);
        assert_eq!(sign_test(&[0.0, 0.0]), 1.0);
        // 3 of 3 flips against 0 of 3: the one table as extreme, 1 / C(6, 3).
        assert!((fisher_greater(3, 3, 0, 3) - 0.05).abs() < 1e-12);
        assert!((fisher_greater(0, 3, 0, 3) - 1.0).abs() < 1e-12);
        // scipy.stats.fisher_exact([[8, 2], [1, 9]], alternative="greater").
        assert!((fisher_greater(8, 10, 1, 10) - 0.002_738_747_320_790_664).abs() < 1e-12);
    }
}
