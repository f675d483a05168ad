//! The special functions behind trust-v1's bounds and the analysis verbs'
//! p-values and intervals: ln Γ, ln B, the regularised incomplete beta,
//! its inverse, and Student's t tail and quantile.
//!
//! They are built from `+ - * /`, `sqrt` (all exactly rounded by IEEE 754)
//! and this module's correctly rounded `exp`, `ln` and `ln_1p`, so, like
//! the elementary functions, they give the same bits on every machine
//! (decision 152). A library that calls the C library's `exp` inside its
//! gamma function would not.

use super::{exp, ln, ln_1p};

/// ln √(2π).
const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Where the Stirling series takes over: its first omitted term is below
/// 1e-19 from here on, so smaller arguments are shifted up to it.
const STIRLING_FROM: f64 = 16.0;

/// ln Γ(z) - [(z - 1/2) ln z - z + ln √(2π)] for z >= `STIRLING_FROM`:
/// the Stirling series through its seventh term, whose coefficients are
/// B_2k / (2k (2k - 1)) for the Bernoulli numbers B_2 .. B_14.
fn stirling_rest(z: f64) -> f64 {
    let r = 1.0 / z;
    let r2 = r * r;
    r * (1.0 / 12.0
        + r2 * (-1.0 / 360.0
            + r2 * (1.0 / 1260.0
                + r2 * (-1.0 / 1680.0
                    + r2 * (1.0 / 1188.0 + r2 * (-691.0 / 360_360.0 + r2 * (1.0 / 156.0)))))))
}

/// ln Γ(x) for x > 0 (NaN otherwise). Correctly rounded at the integers
/// below 16; elsewhere below 16 the error is absolute, under 1e-14 (the
/// shift's product and ln Γ(16) ≈ 28 cancel), which is what callers that
/// exponentiate differences need; from 16 on, a few ulps.
pub fn ln_gamma(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return f64::INFINITY;
    }
    if x < STIRLING_FROM && x == x.trunc() {
        // (x - 1)! is at most 14!, exact in a double, so its logarithm is
        // correctly rounded: ln Γ(1) = ln Γ(2) = 0 exactly, which keeps
        // Beta(1, 1) priors and small binomials free of the shift's error.
        let factorial: f64 = (2..x as u32).map(f64::from).product();
        return ln(factorial);
    }
    // Γ(x) = Γ(x + k) / (x (x + 1) ... (x + k - 1)); at most 16 factors,
    // so the product neither overflows nor loses more than a few ulps.
    let (mut z, mut product) = (x, 1.0);
    while z < STIRLING_FROM {
        product *= z;
        z += 1.0;
    }
    (z - 0.5) * ln(z) - z + LN_SQRT_2PI + stirling_rest(z) - ln(product)
}

/// ln Γ(a) - ln Γ(a + b) for a >= `STIRLING_FROM` and b > 0, written so
/// the two large Stirling terms cancel analytically, not numerically: at
/// a = 5000 and b = 1/2 the direct difference would lose four digits.
fn ln_gamma_ratio(a: f64, b: f64) -> f64 {
    let s = a + b;
    -(a - 0.5) * ln_1p(b / a) - b * ln(s) + b + stirling_rest(a) - stirling_rest(s)
}

/// ln B(a, b) = ln Γ(a) + ln Γ(b) - ln Γ(a + b), for a, b > 0.
pub fn ln_beta(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() || a <= 0.0 || b <= 0.0 {
        return f64::NAN;
    }
    let (small, large) = if a <= b { (a, b) } else { (b, a) };
    if large < STIRLING_FROM {
        ln_gamma(small) + ln_gamma(large) - ln_gamma(small + large)
    } else {
        ln_gamma(small) + ln_gamma_ratio(large, small)
    }
}

/// ln of the binomial coefficient C(n, k), for k <= n.
pub fn ln_binomial(n: u64, k: u64) -> f64 {
    assert!(k <= n, "C({n}, {k}) needs k <= n");
    if k == 0 || k == n {
        return 0.0;
    }
    // C(n, k) = 1 / ((n + 1) B(k + 1, n - k + 1)), which goes through the
    // cancelling form of ln_beta when n is large.
    -ln((n + 1) as f64) - ln_beta((k + 1) as f64, (n - k + 1) as f64)
}

/// ln x and ln y for x + y = 1, each from whichever of the pair is known
/// to full relative precision: below 1/2, a number's own logarithm; above,
/// ln_1p of minus its complement.
fn ln_pair(x: f64, y: f64) -> (f64, f64) {
    let lx = if x <= 0.5 { ln(x) } else { ln_1p(-y) };
    let ly = if y <= 0.5 { ln(y) } else { ln_1p(-x) };
    (lx, ly)
}

/// The continued fraction's iteration cap: it needs O(√max(a, b)) terms,
/// so this covers shapes far beyond a trust score's or a test's.
const MAX_TERMS: u32 = 100_000;

/// F in I_x(a, b) = x^a y^b / (a B(a, b)) F, for x < (a + 1) / (a + b + 2)
/// where the continued fraction converges fast, with y = 1 - x passed in
/// exactly as the caller knows it.
fn fraction(a: f64, b: f64, x: f64, y: f64) -> f64 {
    // Modified Lentz evaluation of 1 / (1 + d1 / (1 + d2 / (1 + ...))),
    // d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)),
    // d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)).
    const TINY: f64 = 1e-300;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    // The first denominator, 1 - (a + b) x / (a + 1), rewritten with y so
    // that it does not cancel when x is near 1 and a is large.
    let mut d = 1.0 / guard((a * y + 1.0 - b * x) / (a + 1.0));
    let mut f = d;
    for m in 1..=MAX_TERMS {
        let m = f64::from(m);
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        f *= c * d;
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = c * d;
        f *= step;
        // Within an ulp of 1 (1.5 ulps allows the 2.2e-16 step above 1).
        if (step - 1.0).abs() <= 1.5 * f64::EPSILON {
            break;
        }
    }
    f
}

/// I_x(a, b) for 0 < x < 1 and y = 1 - x, with ln B(a, b) given, and the
/// kernel x^a y^b / B(a, b) it was built on, from which the quantile's
/// iteration takes the density without another `exp`.
fn incomplete(a: f64, b: f64, x: f64, y: f64, ln_b: f64) -> (f64, f64) {
    let (lx, ly) = ln_pair(x, y);
    let kernel = exp(a * lx + b * ly - ln_b);
    let value = if x < (a + 1.0) / (a + b + 2.0) {
        kernel / a * fraction(a, b, x, y)
    } else {
        // I_x(a, b) = 1 - I_y(b, a), whose fraction converges here.
        1.0 - kernel / b * fraction(b, a, y, x)
    };
    (value, kernel)
}

/// The regularised incomplete beta I_x(a, b) with y = 1 - x given as well,
/// so a caller that has 1 - x more exactly than by subtracting (Student's
/// t has it as t² / (df + t²)) keeps that precision.
pub fn beta_reg_xy(a: f64, b: f64, x: f64, y: f64) -> f64 {
    if [a, b, x, y].iter().any(|v| v.is_nan()) || a <= 0.0 || b <= 0.0 {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 0.0;
    }
    if y <= 0.0 {
        return 1.0;
    }
    incomplete(a, b, x, y, ln_beta(a, b)).0
}

/// The regularised incomplete beta I_x(a, b), for a, b > 0; 0 below x = 0
/// and 1 above x = 1.
pub fn beta_reg(a: f64, b: f64, x: f64) -> f64 {
    beta_reg_xy(a, b, x, 1.0 - x)
}

/// A start for the Beta(a, b) quantile's iteration. For a, b >= 1
/// it is the normal approximation of Abramowitz and Stegun 26.5.22, with
/// the normal deviate from their rational approximation 26.2.23 (good to
/// 5e-4: the iteration does the rest); smaller shapes take the leading term of
/// the tail series, I_x(a, b) ~ x^a / (a B(a, b)), from whichever end p
/// is nearer.
fn beta_quantile_start(a: f64, b: f64, p: f64, ln_b: f64) -> f64 {
    if a >= 1.0 && b >= 1.0 {
        let q = if p < 0.5 { p } else { 1.0 - p };
        let t = (-2.0 * ln(q)).sqrt();
        let mut z = t
            - (2.515_517 + t * (0.802_853 + t * 0.010_328))
                / (1.0 + t * (1.432_788 + t * (0.189_269 + t * 0.001_308)));
        // z is now the upper-tail deviate of q; the lower tail of p is -z.
        if p < 0.5 {
            z = -z;
        }
        let lambda = (z * z - 3.0) / 6.0;
        let (ra, rb) = (1.0 / (2.0 * a - 1.0), 1.0 / (2.0 * b - 1.0));
        let h = 2.0 / (ra + rb);
        let w = z * (h + lambda).sqrt() / h + (rb - ra) * (lambda + 5.0 / 6.0 - 2.0 / (3.0 * h));
        a / (a + b * exp(-2.0 * w))
    } else if p <= 0.5 {
        exp((ln(p * a) + ln_b) / a)
    } else {
        1.0 - exp((ln((1.0 - p) * b) + ln_b) / b)
    }
}

/// The p-quantile of Beta(a, b): the x with I_x(a, b) = p, for a, b > 0
/// and p in (0, 1); NaN for shapes that are not finite positive numbers.
///
/// Halley steps with the exact density as derivative, inside a bracket
/// that every evaluation narrows: a step that would leave the bracket is
/// replaced by its midpoint, so the iteration cannot wander off or cycle.
/// It stops when a step is below 1e-15 relative (1e-17 absolute).
pub fn beta_quantile(a: f64, b: f64, p: f64) -> f64 {
    if !(a.is_finite() && b.is_finite() && a > 0.0 && b > 0.0 && p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    let ln_b = ln_beta(a, b);
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    let mut x = beta_quantile_start(a, b, p, ln_b);
    for _ in 0..400 {
        if !(x > lo && x < hi) {
            x = 0.5 * (lo + hi);
        }
        let y = 1.0 - x;
        let (value, kernel) = incomplete(a, b, x, y, ln_b);
        let gap = value - p;
        if gap == 0.0 {
            return x;
        }
        if gap < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        // Halley's step: Newton's u = gap / density, corrected by the
        // density's own slope, density' / density = (a - 1)/x - (b - 1)/y;
        // cubic convergence saves an evaluation from the usual start.
        let density = kernel / (x * y);
        let u = gap / density;
        let corr = 1.0 - 0.5 * u * ((a - 1.0) / x - (b - 1.0) / y);
        let next = x - if corr > 0.5 { u / corr } else { u };
        let next = if next > lo && next < hi {
            next
        } else {
            0.5 * (lo + hi)
        };
        let done = (next - x).abs() <= 1e-17 + 1e-15 * x;
        x = next;
        if done || hi - lo <= f64::EPSILON * hi {
            break;
        }
    }
    x
}

/// P(T > t) for Student's t with `df` degrees of freedom, through the
/// incomplete beta so that small tails keep their relative precision
/// (1 - cdf would cancel).
pub fn student_t_upper(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 0.0 } else { 1.0 };
    }
    let t2 = t * t;
    let tail = 0.5 * beta_reg_xy(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2));
    if t > 0.0 {
        tail
    } else {
        1.0 - tail
    }
}

/// The p-quantile of Student's t with `df` degrees of freedom, p in (0, 1).
pub fn student_t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0 && df > 0.0) {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    // With y = t² / (df + t²) and x = 1 - y, P(|T| > |t|) = I_x(df/2, 1/2)
    // = 1 - I_y(1/2, df/2). Solve for whichever of y and x is small, so
    // that neither is taken from its complement's rounding.
    let q = 2.0 * p.min(1.0 - p);
    let y = beta_quantile(0.5, df / 2.0, 1.0 - q);
    let t = if y <= 0.5 {
        (df * y / (1.0 - y)).sqrt()
    } else {
        let x = beta_quantile(df / 2.0, 0.5, q);
        (df * (1.0 - x) / x).sqrt()
    };
    if p > 0.5 {
        t
    } else {
        -t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::powf;

    #[test]
    fn gamma_at_integers_and_halves() {
        // ln Γ(n) = ln (n - 1)!, exact factorials up to 20!.
        let mut factorial: u64 = 1;
        for n in 1..=20u64 {
            let got = ln_gamma(n as f64);
            let want = ln(factorial as f64);
            if n < 16 {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "n = {n}: exact below the switch"
                );
            }
            assert!(
                (got - want).abs() <= 1e-14 * want.max(1.0),
                "n = {n}: {got} vs {want}"
            );
            factorial *= n;
        }
        // Γ(1/2) = √π.
        let want = 0.5 * ln(std::f64::consts::PI);
        assert!((ln_gamma(0.5) - want).abs() < 1e-15);
        assert!(ln_gamma(0.0).is_nan() && ln_gamma(-1.0).is_nan());
    }

    #[test]
    fn beta_closed_forms() {
        // B(a, 1) = 1 / a, for a on both sides of the Stirling switch.
        for a in [0.5, 3.0, 15.5, 16.0, 40.0, 5000.0, 1e7] {
            let want = -ln(a);
            let got = ln_beta(a, 1.0);
            // Below the switch, the shift's product costs a few ulps of ln Γ(16).
            assert!(
                (got - want).abs() <= 1e-14 * want.abs().max(1.0),
                "a = {a}: {got} vs {want}"
            );
            assert_eq!(got.to_bits(), ln_beta(1.0, a).to_bits(), "symmetric");
        }
        assert_eq!(ln_binomial(7, 0), 0.0);
        for (n, k, c) in [
            (10u64, 3u64, 120.0),
            (52, 5, 2_598_960.0),
            (60, 30, 1.182_645_815_648_614_2e17),
        ] {
            let want = ln(c);
            assert!((ln_binomial(n, k) - want).abs() < 1e-13, "C({n}, {k})");
        }
    }

    #[test]
    fn incomplete_beta_closed_forms() {
        // I_x(a, 1) = x^a; I_x(1, b) = 1 - (1 - x)^b; I_x(a, b) + I_y(b, a) = 1.
        // Binary fractions, so that 1 - x is exact.
        for x in [
            1.0 / 1024.0 / 1024.0,
            0.0625,
            0.3125,
            0.5,
            0.6875,
            0.9990234375,
        ] {
            for s in [0.5, 2.0, 7.5, 300.0] {
                let got = beta_reg(s, 1.0, x);
                let want = powf(x, s);
                // The prefactor's exponent, s ln x, carries its own rounding.
                let tol = (1e-14 + 1e-15 * (s * ln(x)).abs()) * want;
                assert!((got - want).abs() <= tol, "I_{x}({s}, 1): {got} vs {want}");
                let got = beta_reg(1.0, s, x);
                let want = 1.0 - powf(1.0 - x, s);
                assert!((got - want).abs() <= 1e-14, "I_{x}(1, {s})");
                let both = beta_reg(s, 2.5, x) + beta_reg(2.5, s, 1.0 - x);
                assert!((both - 1.0).abs() <= 1e-14, "reflection at {x}, {s}");
            }
        }
        assert_eq!(beta_reg(2.0, 3.0, 0.0), 0.0);
        assert_eq!(beta_reg(2.0, 3.0, 1.0), 1.0);
        assert!(beta_reg(-2.0, 3.0, 0.5).is_nan());
    }

    #[test]
    fn student_t_edges_and_symmetry() {
        assert_eq!(student_t_upper(0.0, 7.0), 0.5);
        assert_eq!(student_t_upper(f64::INFINITY, 7.0), 0.0);
        assert_eq!(student_t_upper(f64::NEG_INFINITY, 7.0), 1.0);
        assert_eq!(student_t_quantile(0.5, 7.0), 0.0);
        for df in [1.0, 4.0, 250.0] {
            let t = student_t_quantile(0.9, df);
            // 0.9 and 0.1 are not exact complements in binary: near, not equal.
            assert!(
                (student_t_quantile(0.1, df) + t).abs() < 1e-14 * t,
                "df = {df}"
            );
            assert_eq!(student_t_quantile(0.25, df), -student_t_quantile(0.75, df));
            assert!((student_t_upper(t, df) - 0.1).abs() < 1e-14, "df = {df}");
        }
        // df = 1 is the Cauchy distribution: P(T > 1) = 1/4.
        assert!((student_t_upper(1.0, 1.0) - 0.25).abs() < 1e-15);
    }
}
