//! trust-v1's bounds against independent high-precision references: Beta
//! quantiles for shapes from 1 to 5000, computed with mpmath at 60 digits
//! by quadrature (tests/fixtures/trust/beta_quantiles.py), must agree
//! within 1e-9.

use witness::trust::beta::quantile;

#[test]
fn quantiles_match_the_mpmath_references_within_1e_9() {
    let text = include_str!("fixtures/trust/beta_quantiles.csv");
    let mut worst: (f64, String) = (0.0, String::new());
    let mut n = 0;
    for line in text.lines().skip(1) {
        let f: Vec<f64> = line.split(',').map(|x| x.parse().unwrap()).collect();
        let got = quantile(f[0], f[1], f[2]);
        let err = (got - f[3]).abs();
        if err > worst.0 {
            worst = (err, line.to_string());
        }
        n += 1;
    }
    assert_eq!(n, 56, "every reference was read");
    eprintln!("worst error {:e} at {}", worst.0, worst.1);
    assert!(worst.0 <= 1e-9, "worst error {:e} at {}", worst.0, worst.1);
}
