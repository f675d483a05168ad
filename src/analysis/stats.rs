//! Small statistics for the analysis verbs: means, spreads, Student-t
//! intervals, and a seeded bootstrap of a paired mean difference.

use crate::math::special;
use crate::rng::Stream;

pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// The bootstrap's stream seed; with the scenario and arm indices it keys
/// every interval, so `compare` prints the same table every time.
pub const BOOTSTRAP_SEED: u64 = 0x0b00_75a7;

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample standard deviation (n - 1); NaN for fewer than two values, where
/// it is undefined (as in pandas and R), not 0, which would read as "no
/// spread" beside an interval that cannot be computed.
pub fn sample_sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return f64::NAN;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// The 95 % Student-t interval of the mean; `None` for fewer than two values.
pub fn t_interval(xs: &[f64]) -> Option<(f64, f64)> {
    if xs.len() < 2 {
        return None;
    }
    let t = special::student_t_quantile(0.975, (xs.len() - 1) as f64);
    let half = t * sample_sd(xs) / (xs.len() as f64).sqrt();
    let m = mean(xs);
    Some((m - half, m + half))
}

/// The 95 % percentile bootstrap interval of the mean of `diffs`, from
/// `BOOTSTRAP_RESAMPLES` resamples drawn with the engine's draw protocol.
pub fn bootstrap_mean(diffs: &[f64], key_parts: &[u64]) -> (f64, f64) {
    let n = diffs.len();
    let mut s = Stream::keyed(BOOTSTRAP_SEED, key_parts);
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            (0..n)
                .map(|_| diffs[s.below(n as u64) as usize])
                .sum::<f64>()
                / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let lo = (0.025 * BOOTSTRAP_RESAMPLES as f64).floor() as usize;
    let hi = (0.975 * BOOTSTRAP_RESAMPLES as f64).ceil() as usize - 1;
    (means[lo], means[hi])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_interval_matches_a_hand_computed_case() {
        // n = 4, mean 2.5, sd = 1.2909944, t(0.975, 3) = 3.1824463
        let (lo, hi) = t_interval(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!(
            (hi - 2.5 - 3.182_446_305 * 1.290_994_449 / 2.0).abs() < 1e-6,
            "{hi}"
        );
        assert!((2.5 - lo - (hi - 2.5)).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_is_seeded_and_brackets_the_mean() {
        let d = [0.1, 0.3, -0.2, 0.4, 0.0, 0.25];
        let a = bootstrap_mean(&d, &[1, 2]);
        assert_eq!(a, bootstrap_mean(&d, &[1, 2]));
        assert!(a.0 < mean(&d) && mean(&d) < a.1, "{a:?}");
        assert_eq!(bootstrap_mean(&[0.5; 5], &[0]), (0.5, 0.5));
    }
}
