//! The two-sided sign-flip permutation test of paired differences, exact
//! whenever it can be: every sign pattern of up to `EXACT_UP_TO` non-zero
//! differences, else sequential Monte Carlo (Besag and Clifford) that
//! stops once the answer is clearly not small and otherwise runs to a cap
//! sized to the family, so its floor is never what keeps a row from
//! significance. Pure; the random patterns come from a stream keyed by
//! the row's content.

use crate::rng::Stream;

/// Non-zero differences up to which every sign pattern is counted.
pub const EXACT_UP_TO: usize = 20;
/// Exceedances at which the sequential test stops (p = h / patterns).
const STOP_AT: u64 = 20;
/// The fewest patterns a Monte-Carlo p may be drawn from at its cap.
const MIN_CAP: u64 = 10_000;
const SEED: u64 = 0x5167_f11b;

crate::words! {
    /// How a p-value was computed.
    pub enum PMethod {
        ExactEnumeration = "exact-enumeration",
        SequentialMc = "sequential-mc",
        /// The binomial sign test of an outcome comparison's effect metric.
        ExactSignTest = "exact-sign-test",
    }
}

/// A permutation p-value and what it can and cannot show.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PValue {
    pub p: f64,
    pub method: PMethod,
    /// The smallest p this test could have given these differences.
    pub p_min: f64,
    /// Sign patterns counted.
    pub patterns: u64,
}

impl PValue {
    /// A Monte-Carlo p that no pattern reached: only a bound is known.
    pub fn at_floor(&self) -> bool {
        self.method == PMethod::SequentialMc && self.p <= self.p_min
    }
}

/// The Monte-Carlo cap for a family of `m` tests at level `alpha`: its
/// floor 1 / (cap + 1) is at most a tenth of Holm's first threshold.
pub fn mc_cap(m: usize, alpha: f64) -> u64 {
    let want = (10.0 * m as f64 / alpha).ceil() as u64;
    want.saturating_sub(1).max(MIN_CAP)
}

/// The two-sided p-value that the differences `d` are symmetric about 0
/// (statistic: their sum). Zero differences do not change the sum under
/// any pattern, so only the others are flipped. `key` names the row's
/// stream; `cap` bounds a Monte-Carlo test.
pub fn sign_flip(d: &[f64], key: &[u64], cap: u64) -> PValue {
    let nz: Vec<f64> = d.iter().copied().filter(|x| *x != 0.0).collect();
    if nz.len() <= EXACT_UP_TO {
        let n = nz.len() as i32;
        return PValue {
            p: exact(&nz),
            method: PMethod::ExactEnumeration,
            p_min: (2.0 / 2f64.powi(n)).min(1.0),
            patterns: 1u64 << nz.len(),
        };
    }
    let (p, patterns) = sequential(&nz, key, cap);
    PValue {
        p,
        method: PMethod::SequentialMc,
        p_min: 1.0 / (cap + 1) as f64,
        patterns,
    }
}

/// What the sums of a pattern must reach to count as at least as extreme:
/// the observed |sum| less a tolerance, so that sums equal in exact
/// arithmetic are not told apart by the order of floating-point adds.
fn threshold(nz: &[f64]) -> f64 {
    let scale: f64 = nz.iter().map(|x| x.abs()).sum();
    nz.iter().sum::<f64>().abs() - 1e-10 * scale
}

/// Every sign pattern, counted by meeting in the middle: the sums of each
/// half's patterns (each a short sum, so no error accumulates), then for
/// each sum of one half the sums of the other that reach the threshold,
/// by binary search.
fn exact(nz: &[f64]) -> f64 {
    let reach = threshold(nz);
    if reach <= 0.0 {
        return 1.0;
    }
    let (left, right) = halves(nz);
    let hits: u64 = left
        .into_iter()
        .map(|x| {
            // x + y >= reach, or x + y <= -reach: two disjoint tails.
            let up = right.len() - right.partition_point(|y| x + y < reach);
            let down = right.partition_point(|y| x + y <= -reach);
            (up + down) as u64
        })
        .sum();
    hits as f64 / 2f64.powi(nz.len() as i32)
}

/// The sums of every sign pattern of each half of `nz`: the first half's
/// as they come, the second's sorted for binary search. Each is a short
/// sum, so no rounding accumulates over the 2^n patterns.
fn halves(nz: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let sums = |half: &[f64]| -> Vec<f64> {
        (0u32..1 << half.len())
            .map(|mask| {
                half.iter()
                    .enumerate()
                    .map(|(i, x)| if mask >> i & 1 == 1 { -x } else { *x })
                    .sum()
            })
            .collect()
    };
    let (a, b) = nz.split_at(nz.len() / 2);
    let mut right = sums(b);
    right.sort_unstable_by(f64::total_cmp);
    (sums(a), right)
}

/// The one-sided p-value P(sum of signed |v| >= sum v) over every sign
/// pattern of the non-zero values (up to `EXACT_UP_TO` of them).
fn upper_tail(v: &[f64]) -> f64 {
    let nz: Vec<f64> = v.iter().copied().filter(|x| *x != 0.0).collect();
    if nz.is_empty() {
        return 1.0;
    }
    let scale: f64 = nz.iter().map(|x| x.abs()).sum();
    let reach = nz.iter().sum::<f64>() - 1e-10 * scale;
    let (left, right) = halves(&nz);
    let hits: usize = left
        .into_iter()
        .map(|x| right.len() - right.partition_point(|y| x + y < reach))
        .sum();
    hits as f64 / 2f64.powi(nz.len() as i32)
}

/// The one-sided (1 - alpha) lower confidence bound of the mean of `e`:
/// for up to `EXACT_UP_TO` values, the least shift mu at which the exact
/// one-sided sign-flip test of e - mu no longer rejects (found by
/// bisection; minus infinity when too few values can ever reject);
/// beyond, the Student-t bound.
pub fn lower_bound(e: &[f64], alpha: f64) -> f64 {
    let n = e.len();
    if n == 0 {
        return f64::NEG_INFINITY;
    }
    if n > EXACT_UP_TO {
        let sd = crate::analysis::stats::sample_sd(e);
        let t = crate::math::special::student_t_quantile(1.0 - alpha, (n - 1) as f64);
        return crate::analysis::stats::mean(e) - t * sd / (n as f64).sqrt();
    }
    let rejects = |mu: f64| {
        let shifted: Vec<f64> = e.iter().map(|x| x - mu).collect();
        upper_tail(&shifted) <= alpha
    };
    let least = e.iter().copied().fold(f64::INFINITY, f64::min);
    let most = e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // Below every value all differences are positive: the smallest p
    // these values allow. If even that does not reject, nothing does.
    let (mut lo, mut hi) = (least - 1.0, most);
    if !rejects(lo) {
        return f64::NEG_INFINITY;
    }
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if rejects(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Random patterns until `STOP_AT` reach the threshold (p = h / l) or the
/// cap is drawn (p = (g + 1) / (cap + 1)). Returns p and the patterns.
fn sequential(nz: &[f64], key: &[u64], cap: u64) -> (f64, u64) {
    let reach = threshold(nz);
    if reach <= 0.0 {
        return (1.0, 0);
    }
    let mut s = Stream::keyed(SEED, key);
    let raw: Vec<u64> = nz.iter().map(|x| x.to_bits()).collect();
    let mut hits = 0u64;
    for drawn in 1..=cap {
        // A random bit flips each value's sign bit: the same sums as
        // negating, with no branch to mispredict.
        let mut t = 0.0;
        for block in raw.chunks(64) {
            let bits = s.next_u64();
            for (j, &x) in block.iter().enumerate() {
                t += f64::from_bits(x ^ ((bits >> j & 1) << 63));
            }
        }
        if t.abs() >= reach {
            hits += 1;
            if hits == STOP_AT {
                return (hits as f64 / drawn as f64, drawn);
            }
        }
    }
    ((hits + 1) as f64 / (cap + 1) as f64, cap)
}

/// A stream key from a row's content (its labels), so that a row's
/// random numbers do not depend on where it sits in a table.
pub fn content_key(parts: &[&str]) -> [u64; 2] {
    let text = parts.join("\u{1f}");
    let h = xxhash_rust::xxh3::xxh3_128(text.as_bytes());
    [h as u64, (h >> 64) as u64]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The plain count over every pattern, for integers (exact sums).
    fn brute(x: &[f64]) -> f64 {
        let n = x.len();
        let obs = x.iter().sum::<f64>().abs();
        let hits = (0..1u32 << n)
            .filter(|mask| {
                let t: f64 = (0..n)
                    .map(|i| if mask >> i & 1 == 1 { -x[i] } else { x[i] })
                    .sum();
                t.abs() >= obs
            })
            .count();
        hits as f64 / (1u64 << n) as f64
    }

    proptest! {
        #[test]
        fn the_exact_test_counts_every_sign_pattern(d in prop::collection::vec(-5i32..=5, 1..14)) {
            let x: Vec<f64> = d.iter().map(|&v| f64::from(v)).collect();
            prop_assert_eq!(sign_flip(&x, &[0], MIN_CAP).p, brute(&x));
        }

        #[test]
        fn lattice_values_tie_as_they_would_exactly(k in prop::collection::vec(-50i32..=50, 1..12)) {
            // Fractions of 50 agents: sums that tie exactly must tie here.
            let x: Vec<f64> = k.iter().map(|&v| f64::from(v) / 50.0).collect();
            let whole: Vec<f64> = k.iter().map(|&v| f64::from(v)).collect();
            prop_assert_eq!(sign_flip(&x, &[0], MIN_CAP).p, brute(&whole));
        }
    }

    #[test]
    fn twenty_differences_of_one_sign_give_two_in_two_to_the_twenty() {
        let d = [0.45; 20];
        let p = sign_flip(&d, &[0], MIN_CAP);
        assert_eq!(p.method, PMethod::ExactEnumeration);
        assert_eq!(p.p, 2.0 / 1_048_576.0);
        assert_eq!(p.p_min, p.p);
        // Zeros are left out: still exact, still the same p.
        let mut with_zeros = d.to_vec();
        with_zeros.extend([0.0; 30]);
        assert_eq!(sign_flip(&with_zeros, &[0], MIN_CAP).p, p.p);
    }

    #[test]
    fn monte_carlo_stops_early_when_p_is_large_and_runs_to_its_cap_when_small() {
        let centred: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.1 })
            .collect();
        let p = sign_flip(&centred, &[3], 120_000);
        assert_eq!(p.method, PMethod::SequentialMc);
        assert!(p.patterns < 1_000 && p.p > 0.1, "{p:?}");
        let shifted: Vec<f64> = (0..40).map(|i| 0.5 + (i % 7) as f64 * 0.1).collect();
        let p = sign_flip(&shifted, &[1, 2], 120_000);
        assert_eq!(p, sign_flip(&shifted, &[1, 2], 120_000), "seeded");
        assert_eq!((p.patterns, p.p), (120_000, 1.0 / 120_001.0));
        assert!(p.at_floor());
    }

    #[test]
    fn the_lower_bound_inverts_the_one_sided_test() {
        // Three seeds can never reject at 5 % (the least p is 1/8).
        assert_eq!(lower_bound(&[0.8, 0.8, 0.8], 0.05), f64::NEG_INFINITY);
        // Twenty equal values: rejected below them, not at or above.
        let lb = lower_bound(&[0.3; 20], 0.05);
        assert!((lb - 0.3).abs() < 1e-9, "{lb}");
        // Around zero: the bound is below zero.
        let mixed: Vec<f64> = (0..12)
            .map(|i| if i % 2 == 0 { 0.1 } else { -0.1 })
            .collect();
        assert!(lower_bound(&mixed, 0.05) < 0.0);
        // A shift moves the bound by as much.
        let e: Vec<f64> = (0..10).map(|i| 0.05 * i as f64).collect();
        let moved: Vec<f64> = e.iter().map(|x| x + 1.0).collect();
        assert!((lower_bound(&moved, 0.05) - lower_bound(&e, 0.05) - 1.0).abs() < 1e-9);
        // Many values: the t bound.
        let many: Vec<f64> = (0..40).map(|i| (i % 5) as f64 * 0.1).collect();
        let sd = crate::analysis::stats::sample_sd(&many);
        let t = crate::math::special::student_t_quantile(0.95, 39.0);
        let m = crate::analysis::stats::mean(&many);
        assert_eq!(lower_bound(&many, 0.05), m - t * sd / 40f64.sqrt());
    }

    #[test]
    fn the_cap_puts_the_floor_below_a_tenth_of_holms_first_threshold() {
        assert_eq!(mc_cap(8, 0.05), 10_000);
        assert_eq!(mc_cap(600, 0.05), 119_999);
        let floor = 1.0 / (mc_cap(600, 0.05) + 1) as f64;
        assert!(floor <= 0.05 / 600.0 / 10.0);
        assert_ne!(content_key(&["a", "b"]), content_key(&["ab", ""]));
    }
}
