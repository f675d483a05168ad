//! The paired effect of an arm and the word that states it: the mean
//! difference with its Student-t interval, the equivalence test against
//! the smallest effect of interest (TOST), and "better", "worse",
//! "negligible", "equivalent" or "undetermined", never "no effect".

use crate::analysis::stats::{mean, sample_sd, t_interval};
use crate::math::special::student_t_upper;
use crate::model::Better;

crate::words! {
    /// What the average paired effect is, as far as the tests can say.
    pub enum EffectWord {
        Better = "better",
        Worse = "worse",
        Higher = "higher",
        Lower = "lower",
        Negligible = "negligible",
        Equivalent = "equivalent",
        Undetermined = "undetermined",
        NoVariation = "undetermined (no variation)",
    }
}

/// The mean paired difference and its marginal 95 % t interval (none for
/// fewer than two seeds).
pub(super) fn interval(diffs: &[f64]) -> (f64, Option<(f64, f64)>) {
    (mean(diffs), t_interval(diffs))
}

/// Two one-sided paired t tests that the mean difference lies within
/// (-delta, +delta); the larger p (as `statsmodels`' `ttost_paired`).
/// `None` for fewer than two seeds.
pub(super) fn tost(diffs: &[f64], delta: f64) -> Option<f64> {
    let n = diffs.len();
    if n < 2 {
        return None;
    }
    let (m, sd) = (mean(diffs), sample_sd(diffs));
    if sd == 0.0 {
        // Every difference the same: inside the margin, or not.
        return Some(if m.abs() < delta { 0.0 } else { 1.0 });
    }
    let se = sd / (n as f64).sqrt();
    let df = (n - 1) as f64;
    let above_low = student_t_upper((m + delta) / se, df);
    let below_high = student_t_upper((delta - m) / se, df);
    Some(above_low.max(below_high))
}

/// The effect word (first match wins): significant and equivalent is
/// negligible; significant alone is better or worse by the column's
/// direction (higher or lower without one); equivalent alone is
/// equivalent; anything else is undetermined.
pub(super) fn word(
    testable: bool,
    significant: bool,
    equivalent: bool,
    better: Better,
    d: f64,
) -> EffectWord {
    if !testable {
        return EffectWord::NoVariation;
    }
    match (significant, equivalent) {
        (true, true) => EffectWord::Negligible,
        // d is arm - baseline in the metric's units.
        (true, false) => match (better, d > 0.0) {
            (Better::Lower, true) | (Better::Higher, false) => EffectWord::Worse,
            (Better::Lower, false) | (Better::Higher, true) => EffectWord::Better,
            (Better::Neither, true) => EffectWord::Higher,
            (Better::Neither, false) => EffectWord::Lower,
        },
        (false, true) => EffectWord::Equivalent,
        (false, false) => EffectWord::Undetermined,
    }
}

/// How the direction reads in a claim.
pub(super) fn direction_text(better: Better) -> &'static str {
    match better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
        Better::Neither => "no better direction declared",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tost_equals_two_one_sided_t_tests() {
        // The larger of the two one-sided p-values, recomputed here; the
        // interop check holds it to statsmodels' ttost_paired.
        let d = [0.1, -0.2, 0.3, 0.0, 0.2, -0.1];
        let p = tost(&d, 0.5).unwrap();
        let (m, sd) = (mean(&d), sample_sd(&d));
        let se = sd / 6f64.sqrt();
        let want = student_t_upper((m + 0.5) / se, 5.0).max(student_t_upper((0.5 - m) / se, 5.0));
        assert_eq!(p, want);
        assert!(p < 0.05, "{p}");
        assert_eq!(tost(&[0.3, 0.3], 0.1), Some(1.0));
        assert_eq!(tost(&[0.3], 0.1), None);
    }

    #[test]
    fn the_first_matching_word_wins_and_a_harm_is_never_better() {
        assert_eq!(
            word(true, true, true, Better::Lower, 0.1),
            EffectWord::Negligible
        );
        assert_eq!(
            word(true, true, false, Better::Lower, 0.4),
            EffectWord::Worse
        );
        assert_eq!(
            word(true, true, false, Better::Lower, -0.07),
            EffectWord::Better
        );
        assert_eq!(
            word(true, true, false, Better::Neither, -0.07),
            EffectWord::Lower
        );
        assert_eq!(
            word(true, false, true, Better::Lower, 0.0),
            EffectWord::Equivalent
        );
        assert_eq!(
            word(true, false, false, Better::Lower, 0.2),
            EffectWord::Undetermined
        );
        assert_eq!(
            word(false, false, false, Better::Lower, 0.0),
            EffectWord::NoVariation
        );
    }
}
