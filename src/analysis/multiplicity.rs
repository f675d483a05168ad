//! P-values for `compare`'s paired comparisons and their adjustment over a
//! whole table, pure. A metric comparison is tested by flipping the signs
//! of the per-seed differences (exactly, over every sign pattern, for up to
//! `EXACT_UP_TO` seeds; by seeded random patterns beyond); an outcome
//! comparison by the exact sign test on the effect metric's differences;
//! a placebo's flips against an arm's by a one-sided Fisher exact test.
//! Holm's step-down and Benjamini-Hochberg's step-up adjust a family.

use crate::math;
use crate::math::special::ln_binomial;
use crate::rng::Stream;

/// Seeds up to which the permutation test enumerates all 2^n patterns.
pub const EXACT_UP_TO: usize = 16;
/// Random sign patterns beyond that.
pub const PATTERNS: usize = 10_000;
const SEED: u64 = 0x5167_f11b;

/// Sums within this (relative) distance of the observed one count as at
/// least as extreme, so floating-point reordering cannot drop the identity.
fn at_least(t: f64, observed: f64) -> bool {
    t >= observed - 1e-12 * observed.max(1.0)
}

/// Two-sided sign-flip permutation p-value of the mean of `d` being 0.
/// Exact for up to `EXACT_UP_TO` values; otherwise (1 + hits) / (1 + B)
/// over `PATTERNS` patterns from a stream keyed by `key`.
pub fn sign_flip(d: &[f64], key: &[u64]) -> f64 {
    let n = d.len();
    if n == 0 {
        return 1.0;
    }
    let observed = d.iter().sum::<f64>().abs();
    if n <= EXACT_UP_TO {
        let hits = (0u32..1 << n)
            .filter(|mask| {
                let t: f64 = d
                    .iter()
                    .enumerate()
                    .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
                    .sum();
                at_least(t.abs(), observed)
            })
            .count();
        return hits as f64 / (1u64 << n) as f64;
    }
    let mut s = Stream::keyed(SEED, key);
    let raw: Vec<u64> = d.iter().map(|x| x.to_bits()).collect();
    let hits = (0..PATTERNS)
        .filter(|_| {
            // A random bit flips each value's sign bit: no branch to
            // mispredict on random patterns, and the same sums as negating.
            let mut t = 0.0;
            for block in raw.chunks(64) {
                let bits = s.next_u64();
                for (j, &x) in block.iter().enumerate() {
                    t += f64::from_bits(x ^ ((bits >> j & 1) << 63));
                }
            }
            at_least(t.abs(), observed)
        })
        .count();
    (1 + hits) as f64 / (1 + PATTERNS) as f64
}

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

        #[test]
        fn the_small_permutation_test_counts_every_sign_pattern(d in prop::collection::vec(-5i32..=5, 1..10)) {
            let x: Vec<f64> = d.iter().map(|&v| f64::from(v)).collect();
            // Integers: sums are exact, so the count is a plain enumeration.
            let n = x.len();
            let obs = x.iter().sum::<f64>().abs();
            let mut hits = 0;
            for mask in 0..1u32 << n {
                let t: f64 = (0..n).map(|i| if mask >> i & 1 == 1 { -x[i] } else { x[i] }).sum();
                hits += usize::from(t.abs() >= obs);
            }
            prop_assert_eq!(sign_flip(&x, &[0]), hits as f64 / (1u64 << n) as f64);
        }
    }

    #[test]
    fn the_large_permutation_test_is_seeded_and_sensible() {
        let shifted: Vec<f64> = (0..40).map(|i| 0.5 + (i % 7) as f64 * 0.1).collect();
        let p = sign_flip(&shifted, &[1, 2]);
        assert_eq!(p, sign_flip(&shifted, &[1, 2]));
        assert!(p < 0.001, "{p}");
        let centred: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        assert!(sign_flip(&centred, &[3]) > 0.5);
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
