//! Sensitivity indices from a design's outputs, pure. Sobol' first-order
//! (Saltelli 2010), total (Jansen) and second-order indices over Saltelli's
//! rows; Morris's mu, mu* and sigma over trajectories. The arithmetic
//! follows SALib's `analyze.sobol` and `analyze.morris` step for step (the
//! output standardised by its population standard deviation, variances
//! over A and B together, sums taken pairwise like NumPy's), so the two
//! agree to rounding; the intervals are this project's own: a percentile
//! bootstrap over base samples or trajectories, drawn from a seeded stream.

use crate::design::sobol::{role, rows_per_sample, Role};
use crate::rng::Stream;

/// NumPy's pairwise summation: blocks of 8 partial sums up to 128 values,
/// halves above, so sums match `numpy.mean` to the last bit or nearly.
pub fn pairwise_sum(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 8 {
        return x.iter().fold(0.0, |a, &b| a + b);
    }
    if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&x[..8]);
        let mut i = 8;
        while i + 8 <= n {
            for k in 0..8 {
                r[k] += x[i + k];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &x[i..] {
            res += v;
        }
        return res;
    }
    let mut half = n / 2;
    half -= half % 8;
    pairwise_sum(&x[..half]) + pairwise_sum(&x[half..])
}

fn mean(x: &[f64]) -> f64 {
    pairwise_sum(x) / x.len() as f64
}

/// Population variance, as `numpy.var`.
fn var(x: &[f64]) -> f64 {
    let m = mean(x);
    let sq: Vec<f64> = x.iter().map(|v| (v - m) * (v - m)).collect();
    mean(&sq)
}

/// Sample standard deviation (n - 1), as `numpy.std(ddof=1)`.
fn sd1(x: &[f64]) -> f64 {
    let m = mean(x);
    let sq: Vec<f64> = x.iter().map(|v| (v - m) * (v - m)).collect();
    (pairwise_sum(&sq) / (x.len() as f64 - 1.0)).sqrt()
}

/// The outputs of Saltelli's rows, split by role.
struct Parts {
    a: Vec<f64>,
    b: Vec<f64>,
    ab: Vec<Vec<f64>>,
    ba: Vec<Vec<f64>>,
}

fn split(y: &[f64], d: usize, second_order: bool) -> Parts {
    let per = rows_per_sample(d, second_order);
    let mut p = Parts {
        a: Vec::new(),
        b: Vec::new(),
        ab: vec![Vec::new(); d],
        ba: vec![Vec::new(); if second_order { d } else { 0 }],
    };
    for (i, &v) in y.iter().enumerate() {
        match role(i % per, d, second_order) {
            Role::A => p.a.push(v),
            Role::B => p.b.push(v),
            Role::AB(j) => p.ab[j].push(v),
            Role::BA(j) => p.ba[j].push(v),
        }
    }
    p
}

/// Sobol' indices: `s2[j][k]` for j < k, NaN elsewhere.
#[derive(Clone, Debug, PartialEq)]
pub struct Sobol {
    pub s1: Vec<f64>,
    pub st: Vec<f64>,
    pub s2: Option<Vec<Vec<f64>>>,
    /// The output did not vary over the A and B samples, so every index
    /// is 0 by convention (SALib's guard) rather than measured.
    pub flat: bool,
}

/// The indices of samples `pick` (all, or a bootstrap resample).
fn sobol_of(p: &Parts, pick: &[usize], second_order: bool) -> Sobol {
    let take = |v: &[f64]| pick.iter().map(|&i| v[i]).collect::<Vec<f64>>();
    let (a, b) = (take(&p.a), take(&p.b));
    let both: Vec<f64> = a.iter().chain(&b).copied().collect();
    let (lo, hi) = both
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let v = var(&both);
    // SALib's guards: a constant output, or no variance, gives zeros.
    let flat = hi - lo <= f64::EPSILON || v <= f64::EPSILON;
    let ratio = |num: f64| {
        if flat {
            0.0
        } else {
            num / v
        }
    };
    let ab: Vec<Vec<f64>> = p.ab.iter().map(|c| take(c)).collect();
    let first = |abj: &[f64]| {
        let t: Vec<f64> = (0..a.len()).map(|i| b[i] * (abj[i] - a[i])).collect();
        ratio(mean(&t))
    };
    let s1: Vec<f64> = ab.iter().map(|abj| first(abj)).collect();
    let st = ab
        .iter()
        .map(|abj| {
            let t: Vec<f64> = (0..a.len()).map(|i| (a[i] - abj[i]).powi(2)).collect();
            ratio(0.5 * mean(&t))
        })
        .collect();
    let s2 = second_order.then(|| {
        let d = ab.len();
        let mut m = vec![vec![f64::NAN; d]; d];
        for j in 0..d {
            let baj = take(&p.ba[j]);
            for k in j + 1..d {
                let t: Vec<f64> = (0..a.len())
                    .map(|i| baj[i] * ab[k][i] - a[i] * b[i])
                    .collect();
                m[j][k] = ratio(mean(&t)) - s1[j] - s1[k];
            }
        }
        m
    });
    Sobol { s1, st, s2, flat }
}

/// Standardises the outputs as SALib does: (y - mean) / population sd.
fn standardised(y: &[f64]) -> Vec<f64> {
    let m = mean(y);
    let sd = var(y).sqrt();
    y.iter().map(|v| (v - m) / sd).collect()
}

/// Sobol' indices of outputs `y` in Saltelli's row order over `d` factors.
pub fn sobol(y: &[f64], d: usize, second_order: bool) -> Sobol {
    let p = split(&standardised(y), d, second_order);
    let all: Vec<usize> = (0..p.a.len()).collect();
    sobol_of(&p, &all, second_order)
}

/// A 95 % percentile bootstrap interval.
pub type Interval = (f64, f64);

fn percentile(mut xs: Vec<f64>) -> Interval {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let lo = (0.025 * n as f64).floor() as usize;
    let hi = ((0.975 * n as f64).ceil() as usize).clamp(1, n) - 1;
    (xs[lo.min(n - 1)], xs[hi])
}

/// Sobol' indices with bootstrap intervals over base samples.
#[derive(Clone, Debug, PartialEq)]
pub struct SobolReport {
    pub estimate: Sobol,
    pub s1: Vec<Interval>,
    pub st: Vec<Interval>,
    pub s2: Option<Vec<Vec<Interval>>>,
}

pub fn sobol_report(
    y: &[f64],
    d: usize,
    second_order: bool,
    resamples: usize,
    key: &[u64],
) -> SobolReport {
    let p = split(&standardised(y), d, second_order);
    let n = p.a.len();
    let all: Vec<usize> = (0..n).collect();
    let estimate = sobol_of(&p, &all, second_order);
    let mut s = Stream::keyed(SEED, key);
    let boots: Vec<Sobol> = (0..resamples)
        .map(|_| {
            let pick: Vec<usize> = (0..n).map(|_| s.below(n as u64) as usize).collect();
            sobol_of(&p, &pick, second_order)
        })
        .collect();
    let of = |f: &dyn Fn(&Sobol) -> f64| percentile(boots.iter().map(f).collect());
    SobolReport {
        s1: (0..d).map(|j| of(&|b| b.s1[j])).collect(),
        st: (0..d).map(|j| of(&|b| b.st[j])).collect(),
        s2: second_order.then(|| {
            (0..d)
                .map(|j| {
                    (0..d)
                        .map(|k| {
                            if k > j {
                                of(&|b| b.s2.as_ref().expect("second order")[j][k])
                            } else {
                                (f64::NAN, f64::NAN)
                            }
                        })
                        .collect()
                })
                .collect()
        }),
        estimate,
    }
}

/// The bootstrap streams' seed; with the scenario and arm it keys each
/// interval, so the same folder gives the same table.
const SEED: u64 = 0x5e75_171f;

/// Morris's statistics per factor.
#[derive(Clone, Debug, PartialEq)]
pub struct Morris {
    pub mu: Vec<f64>,
    pub mu_star: Vec<f64>,
    pub sigma: Vec<f64>,
    pub mu_star_interval: Vec<Interval>,
}

/// Elementary effects, `ee[factor][trajectory]`, from the unit-cube points
/// `x` (row after row, `d` values each) and outputs `y` of trajectories of
/// d + 1 points each.
pub fn elementary_effects(x: &[f64], y: &[f64], d: usize, levels: usize) -> Vec<Vec<f64>> {
    let delta = levels as f64 / (2.0 * (levels as f64 - 1.0));
    let mut ee = vec![Vec::new(); d];
    let rows: Vec<&[f64]> = x.chunks(d).collect();
    for (xs, ys) in rows.chunks(d + 1).zip(y.chunks(d + 1)) {
        for t in 0..d {
            let j = (0..d)
                .find(|&j| xs[t + 1][j] != xs[t][j])
                .expect("a Morris step changes one factor");
            let change = if xs[t + 1][j] > xs[t][j] {
                ys[t + 1] - ys[t]
            } else {
                ys[t] - ys[t + 1]
            };
            ee[j].push(change / delta);
        }
    }
    ee
}

pub fn morris(
    x: &[f64],
    y: &[f64],
    d: usize,
    levels: usize,
    resamples: usize,
    key: &[u64],
) -> Morris {
    let ee = elementary_effects(x, y, d, levels);
    let abs: Vec<Vec<f64>> = ee
        .iter()
        .map(|e| e.iter().map(|v| v.abs()).collect())
        .collect();
    let mut s = Stream::keyed(SEED, key);
    let mu_star_interval = abs
        .iter()
        .map(|e| {
            let n = e.len();
            let means = (0..resamples)
                .map(|_| {
                    let pick: Vec<f64> = (0..n).map(|_| e[s.below(n as u64) as usize]).collect();
                    mean(&pick)
                })
                .collect();
            percentile(means)
        })
        .collect();
    Morris {
        mu: ee.iter().map(|e| mean(e)).collect(),
        mu_star: abs.iter().map(|e| mean(e)).collect(),
        sigma: ee.iter().map(|e| sd1(e)).collect(),
        mu_star_interval,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::design::{morris as mpoints, sobol::saltelli};

    #[test]
    fn pairwise_sums_equal_plain_sums_of_integers() {
        for n in [0, 1, 7, 8, 9, 127, 128, 129, 1000] {
            let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
            assert_eq!(pairwise_sum(&x), (n * n.max(1) - n) as f64 / 2.0, "{n}");
        }
    }

    #[test]
    fn an_additive_function_has_first_order_equal_to_total_and_shares_its_variance() {
        // y = x0 + 2 x1 on uniform inputs: variances 1/12 and 4/12, so
        // S = 0.2 and 0.8, no interaction.
        let x = saltelli(1 << 12, 2, true);
        let y: Vec<f64> = x.chunks(2).map(|p| p[0] + 2.0 * p[1]).collect();
        let s = sobol(&y, 2, true);
        for (got, want) in s.s1.iter().zip([0.2, 0.8]) {
            assert!((got - want).abs() < 0.01, "{s:?}");
        }
        for (got, want) in s.st.iter().zip([0.2, 0.8]) {
            assert!((got - want).abs() < 0.01, "{s:?}");
        }
        assert!(s.s2.unwrap()[0][1].abs() < 0.01);
        assert!(!s.flat);
    }

    #[test]
    fn a_constant_output_has_zero_indices() {
        let y = vec![3.0; 8 * 6];
        let s = sobol(&y, 2, true);
        assert!(s.s1.iter().chain(&s.st).all(|&v| v == 0.0), "{s:?}");
        assert!(s.flat, "zeros by convention, flagged as such");
    }

    #[test]
    fn morris_effects_of_a_linear_function_are_its_slopes() {
        let rows = mpoints::points(10, 3, 4, 1);
        let y: Vec<f64> = rows.iter().map(|p| 3.0 * p[0] - 2.0 * p[1]).collect();
        let m = morris(&rows.concat(), &y, 3, 4, 100, &[0]);
        for (got, want) in m.mu.iter().zip([3.0, -2.0, 0.0]) {
            assert!((got - want).abs() < 1e-9, "{m:?}");
        }
        assert_eq!(m.mu_star[1], 2.0);
        assert!(m.sigma.iter().all(|&s| s < 1e-9));
    }
}
