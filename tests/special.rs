//! witness's special functions (src/math/special.rs) against independent
//! references: mpmath at 50 digits (tests/fixtures/special/special.py),
//! 338 values of ln Γ, the regularised incomplete beta and its inverse,
//! and Student's t tail and quantile.

use witness::math::special::{
    beta_quantile, beta_reg, ln_gamma, student_t_quantile, student_t_upper,
};

/// The worst error allowed, relative to |want| (ln Γ: to max(|want|, 1),
/// absolute near its zeros), down to the smallest tails, which the
/// incomplete beta keeps and 1 - cdf would not. The worst case is the
/// continued fraction for a large shape with x close to 1, where its
/// terms nearly cancel: Student's t upper tail at 1.96 with 100,000
/// degrees of freedom is off by 1.4e-12 (statrs, which this replaced, was
/// off by 8e-11 there).
const TOLERANCE: f64 = 5e-12;

#[test]
fn special_functions_match_mpmath() {
    let text = include_str!("fixtures/special/special.csv");
    let mut worst: Vec<(String, f64, String)> = Vec::new();
    let mut n = 0;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        let (a, b, c, want) = (num(1), num(2), num(3), num(4));
        let (got, floor) = match f[0] {
            "ln_gamma" => (ln_gamma(a), 1.0),
            "beta_reg" => (beta_reg(a, b, c), 0.0),
            "beta_quantile" => (beta_quantile(a, b, c), 0.0),
            "student_t_upper" => (student_t_upper(a, b), 0.0),
            "student_t_quantile" => (student_t_quantile(a, b), 0.0),
            other => panic!("unknown function {other}"),
        };
        let err = if got == want {
            0.0
        } else {
            (got - want).abs() / want.abs().max(floor)
        };
        match worst.iter_mut().find(|w| w.0 == f[0]) {
            Some(w) if w.1 >= err => {}
            Some(w) => *w = (f[0].to_string(), err, format!("{line} -> {got:e}")),
            None => worst.push((f[0].to_string(), err, format!("{line} -> {got:e}"))),
        }
        n += 1;
    }
    assert_eq!(n, 338, "every reference was read");
    for (name, err, at) in &worst {
        eprintln!("{name}: worst relative error {err:.1e} at {at}");
    }
    for (name, err, at) in &worst {
        assert!(*err <= TOLERANCE, "{name}: error {err:e} at {at}");
    }
}
