//! Morris trajectories on a grid of `levels` values per factor: each
//! trajectory starts at a random grid point and moves one factor at a
//! time, in a random order, by the step levels / (2 (levels - 1)), so a
//! trajectory of d factors has d + 1 points and yields one elementary
//! effect per factor. Coordinates are kept as grid indices until the end,
//! so every step is exact.

use crate::rng::Stream;

const TAG: u64 = 0x6D6F_7272;

/// Grid indices a step moves: half the levels (levels is even).
pub fn step_indices(levels: usize) -> usize {
    levels / 2
}

/// `trajectories` trajectories over `d` factors, (d + 1) points each, in
/// the unit cube.
pub fn points(trajectories: usize, d: usize, levels: usize, seed: u64) -> Vec<Vec<f64>> {
    assert!(
        levels >= 2 && levels.is_multiple_of(2),
        "levels must be even"
    );
    let step = step_indices(levels);
    let top = (levels - 1) as f64;
    let mut out = Vec::with_capacity(trajectories * (d + 1));
    for t in 0..trajectories {
        let mut s = Stream::keyed(seed, &[TAG, t as u64]);
        // A start from which every factor can move by `step` in its own
        // direction and stay on the grid.
        let up: Vec<bool> = (0..d).map(|_| s.below(2) == 1).collect();
        let mut at: Vec<usize> = up
            .iter()
            .map(|&u| {
                let k = s.below(step as u64) as usize;
                if u {
                    k
                } else {
                    k + step
                }
            })
            .collect();
        let mut order: Vec<usize> = (0..d).collect();
        for i in (1..d).rev() {
            let k = s.below(i as u64 + 1) as usize;
            order.swap(i, k);
        }
        let unit = |at: &[usize]| at.iter().map(|&g| g as f64 / top).collect::<Vec<f64>>();
        out.push(unit(&at));
        for &j in &order {
            if up[j] {
                at[j] += step;
            } else {
                at[j] -= step;
            }
            out.push(unit(&at));
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
        fn each_step_moves_one_factor_by_the_level_step(
            r in 1usize..20, d in 1usize..8, half in 1usize..5, seed: u64,
        ) {
            let levels = 2 * half;
            let p = points(r, d, levels, seed);
            prop_assert_eq!(p.len(), r * (d + 1));
            let delta = levels as f64 / (2.0 * (levels - 1) as f64);
            for traj in p.chunks(d + 1) {
                let mut moved = vec![false; d];
                for pair in traj.windows(2) {
                    let changed: Vec<usize> = (0..d).filter(|&j| pair[0][j] != pair[1][j]).collect();
                    prop_assert_eq!(changed.len(), 1);
                    let j = changed[0];
                    prop_assert!(((pair[1][j] - pair[0][j]).abs() - delta).abs() < 1e-12);
                    prop_assert!(!moved[j], "factor {} moved twice", j);
                    moved[j] = true;
                }
                for x in traj.iter().flatten() {
                    prop_assert!((0.0..=1.0).contains(x));
                    // On the grid.
                    let g = x * (levels - 1) as f64;
                    prop_assert!((g - g.round()).abs() < 1e-9);
                }
            }
        }
    }
}
