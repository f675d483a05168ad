//! Latin hypercube samples: each factor's range cut into `n` equal strata,
//! each stratum used by exactly one sample, the pairing of strata across
//! factors and the place within a stratum drawn from a seeded stream.

use crate::rng::Stream;

/// Stream tag of the design draws, apart from every model's.
const TAG: u64 = 0x006C_6873;

/// `n` points in the unit cube over `d` factors.
pub fn points(n: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut out = vec![vec![0.0; d]; n];
    for j in 0..d {
        let mut s = Stream::keyed(seed, &[TAG, j as u64]);
        let mut strata: Vec<usize> = (0..n).collect();
        // Fisher-Yates, from the top.
        for i in (1..n).rev() {
            let k = s.below(i as u64 + 1) as usize;
            strata.swap(i, k);
        }
        for (row, &k) in out.iter_mut().zip(&strata) {
            row[j] = (k as f64 + s.unit()) / n as f64;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn each_stratum_of_each_factor_is_used_once(n in 1usize..200, d in 1usize..6, seed: u64) {
            let p = points(n, d, seed);
            prop_assert_eq!(p.len(), n);
            for j in 0..d {
                let mut used = vec![false; n];
                for row in &p {
                    prop_assert!((0.0..1.0).contains(&row[j]));
                    let k = (row[j] * n as f64) as usize;
                    prop_assert!(!used[k], "factor {} stratum {} twice", j, k);
                    used[k] = true;
                }
            }
        }
    }

    #[test]
    fn the_seed_decides_the_points() {
        assert_eq!(points(10, 3, 7), points(10, 3, 7));
        assert_ne!(points(10, 3, 7), points(10, 3, 8));
    }
}
