//! Beta quantiles for trust-v1's bounds (docs/models/trust.md §4.7), from
//! `math::special::beta_quantile`: every shape from 1 to 5000 within 1e-9
//! of high-precision references (tests/fixtures/trust/beta_quantiles.csv,
//! made with mpmath), and the same bits on every machine.

use crate::math::special;

/// The p-quantile of Beta(a, b), for a, b > 0 and p in (0, 1); NaN for
/// shapes that are not finite positive numbers.
pub fn quantile(a: f64, b: f64, p: f64) -> f64 {
    special::beta_quantile(a, b, p)
}

/// The credible interval trust-v1 reports: the 5th and 95th percentiles.
pub fn bounds(a: f64, b: f64) -> (f64, f64) {
    (quantile(a, b, 0.05), quantile(a, b, 0.95))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math;

    #[test]
    fn closed_forms() {
        // Beta(1, b): 1 - (1 - p)^(1/b); Beta(a, 1): p^(1/a).
        for b in [1.0, 2.0, 8.4, 5000.0] {
            let want = 1.0 - math::powf(0.95, 1.0 / b);
            assert!((quantile(1.0, b, 0.05) - want).abs() < 1e-12, "b = {b}");
        }
        for a in [1.5, 10.4, 5000.0] {
            let want = math::powf(0.05, 1.0 / a);
            assert!((quantile(a, 1.0, 0.05) - want).abs() < 1e-12, "a = {a}");
        }
    }
}
