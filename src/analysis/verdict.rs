//! Arm verdicts (the arm-verdict rules): did switching from the baseline arm to another
//! arm change a scenario's answer, in tiers that say "inconclusive" whenever
//! noise or a misapplied arm could explain the difference. Pure: similarities
//! in, a tier and a one-sentence claim out.

use serde::Serialize;

/// Flips, samples and the spread of one arm's similarities to the reference.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimStats {
    pub flips: usize,
    pub samples: usize,
    pub mean: f64,
    /// Population standard deviation.
    pub sd: f64,
    pub min: f64,
    pub max: f64,
}

impl SimStats {
    /// The spread of `sims`, and how many seeds `flipped`.
    pub fn of(sims: &[f64], flipped: &[bool]) -> SimStats {
        let n = sims.len() as f64;
        let mean = sims.iter().sum::<f64>() / n;
        let var = sims.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / n;
        SimStats {
            flips: flipped.iter().filter(|f| **f).count(),
            samples: sims.len(),
            mean,
            sd: var.sqrt(),
            min: sims.iter().copied().fold(f64::INFINITY, f64::min),
            max: sims.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }

    /// Half is not a majority.
    pub fn majority(&self) -> bool {
        self.flips * 2 > self.samples
    }
}

/// Whether a seed's answer changed: its values differ by more than
/// `delta`, with a relative and an absolute allowance so that a pair
/// exactly at the threshold (10/50 apart at delta 0.2) never flips on the
/// rounding of its subtraction.
pub fn flips(x: f64, y: f64, delta: f64) -> bool {
    (x - y).abs() > delta * (1.0 + 1e-9) + 1e-12
}

crate::words! {
    /// A verdict's tier.
    pub enum Tier {
        Confirmed = "confirmed",
        Inconclusive = "inconclusive",
        NotConfirmed = "not_confirmed",
    }
}

impl Tier {
    /// As the terminal table shows it.
    /// What the tier answers, in words: did the answer change? (The CSV
    /// keeps the names, for scripts written against them.)
    pub fn label(self) -> String {
        match self {
            Tier::Confirmed => "answer changed",
            Tier::Inconclusive => "inconclusive",
            Tier::NotConfirmed => "answer unchanged",
        }
        .to_string()
    }
}

crate::words! {
    /// Which rule decided, in the order they are tried.
    pub enum Reason {
        UnstableBaseline = "unstable_baseline",
        NotApplied = "not_applied",
        FellBack = "fell_back",
        InsideNullBand = "inside_null_band",
        MajorityFlip = "majority_flip",
        MinorityFlip = "minority_flip",
        NoFlip = "no_flip",
    }
}

pub struct Case<'a> {
    pub baseline: &'a str,
    pub arm: &'a str,
    /// The baseline's placebo against its reference, seed by seed.
    pub placebo: &'a SimStats,
    pub stats: &'a SimStats,
    /// Metric comparators gate on the null band; domain comparators do not.
    pub band_gates: bool,
    /// The one-sided lower confidence bound of the mean, over seeds, of the
    /// placebo's similarity less the arm's (both to the same baseline
    /// run): above 0, the arm moves further from the baseline than
    /// rerunning the baseline does.
    pub band_lower_bound: f64,
    /// The first knob the arm declared but its runs did not read.
    pub not_applied: Option<&'a str>,
    /// Runs of the arm (and of the baseline) with decisions an external
    /// policy did not give, so the safe action stood in.
    pub fell_back: (u64, u64),
    /// "on truth=false, graph=hub by peak_mistaken": the claim's bound.
    pub bound: &'a str,
    /// Under `--baseline-rule fisher`: the arm flips significantly more
    /// often than the placebo, so the placebo's flips do not void it.
    pub placebo_outflipped: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    pub tier: Tier,
    pub reason: Reason,
    /// Whether the band decided this verdict (tier 3 or the band clause of 4).
    pub gated: bool,
    pub claim: String,
}

pub fn verdict(c: &Case) -> Verdict {
    let s = c.stats;
    let lb = c.band_lower_bound;
    let outside_band = lb > 0.0;
    let done = |tier, reason, gated, claim: String| Verdict {
        tier,
        reason,
        gated,
        claim,
    };
    if c.placebo.flips > 0 && !c.placebo_outflipped {
        return done(
            Tier::Inconclusive,
            Reason::UnstableBaseline,
            false,
            format!(
                "Inconclusive: rerunning the baseline '{}' with fresh agent draws already changed the answer on {}/{} seeds, \
                 so no difference from '{}' can be attributed to the arm {}.",
                c.baseline, c.placebo.flips, c.placebo.samples, c.arm, c.bound
            ),
        );
    }
    if let Some(knob) = c.not_applied {
        return done(
            Tier::Inconclusive,
            Reason::NotApplied,
            false,
            format!(
                "Inconclusive: arm '{}' sets `{knob}`, which its runs do not read, so the arm did not take effect as declared \
                 and what differs is not evidence about it {}.",
                c.arm, c.bound
            ),
        );
    }
    let (arm_fell, base_fell) = c.fell_back;
    if (arm_fell.max(base_fell) as usize) * 2 > s.samples {
        let whose = match arm_fell >= base_fell {
            true => format!("{arm_fell} of arm '{}''s {} runs", c.arm, s.samples),
            false => format!(
                "{base_fell} of the baseline '{}''s {} runs",
                c.baseline, s.samples
            ),
        };
        return done(
            Tier::Inconclusive,
            Reason::FellBack,
            false,
            format!(
                "Inconclusive: in {whose} some decisions fell back to the safe action because the external policy \
                 gave no usable answer, so most of those runs are the safe action's, not the policy's {}.",
                c.bound
            ),
        );
    }
    let shown = |x: f64| match x.is_finite() {
        true => format!("{x:.3}"),
        false => "unbounded (too few seeds to exclude rerun noise)".to_string(),
    };
    if s.majority() && c.band_gates && !outside_band {
        return done(
            Tier::Inconclusive,
            Reason::InsideNullBand,
            true,
            format!(
                "Inconclusive: arm '{}' changed the answer on {}/{} seeds, but it is not shown to move further from \
                 the baseline than rerunning the baseline does (the lower confidence bound of the gap in similarity, \
                 placebo less arm, is {}, not above 0) {}.",
                c.arm,
                s.flips,
                s.samples,
                shown(lb),
                c.bound
            ),
        );
    }
    if s.majority() {
        let band = if c.band_gates {
            format!(
                ", further than rerun noise: the gap's lower bound {} is above 0",
                shown(lb)
            )
        } else {
            String::new()
        };
        let baseline = if c.placebo.flips == 0 {
            "while the baseline reproduced itself".to_string()
        } else {
            format!(
                "while rerunning the baseline changed it on only {}/{} seeds",
                c.placebo.flips, c.placebo.samples
            )
        };
        return done(
            Tier::Confirmed,
            Reason::MajorityFlip,
            c.band_gates,
            format!(
                "Confirmed: replacing '{}' with '{}' changed the answer on {}/{} paired seeds (mean similarity {:.3} ± {:.3}{band}) \
                 {baseline}; this holds {} and no further.",
                c.baseline, c.arm, s.flips, s.samples, s.mean, s.sd, c.bound
            ),
        );
    }
    if s.flips > 0 {
        return done(
            Tier::Inconclusive,
            Reason::MinorityFlip,
            false,
            format!(
                "Inconclusive: arm '{}' changed the answer on only {}/{} seeds, not a majority; more seeds may settle it {}.",
                c.arm, s.flips, s.samples, c.bound
            ),
        );
    }
    done(
        Tier::NotConfirmed,
        Reason::NoFlip,
        false,
        format!(
            "Answer unchanged: on all {} seeds arm '{}' stayed within the flip threshold of the baseline's answer (mean similarity {:.3}) {}.",
            s.samples, c.arm, s.mean, c.bound
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::permutation::lower_bound;

    /// Similarities with a flip below 0.8 (a delta of a fifth of [0, 1]).
    fn stats(sims: &[f64]) -> SimStats {
        let flipped: Vec<bool> = sims.iter().map(|s| *s < 0.8).collect();
        SimStats::of(sims, &flipped)
    }

    fn case<'a>(p: &'a SimStats, a: &'a SimStats, band: f64) -> Case<'a> {
        Case {
            baseline: "base",
            arm: "arm",
            placebo: p,
            stats: a,
            band_gates: true,
            band_lower_bound: band,
            not_applied: None,
            fell_back: (0, 0),
            bound: "on this scenario by this comparator",
            placebo_outflipped: false,
        }
    }

    fn run(placebo: &[f64], arm: &[f64], gates: bool) -> Verdict {
        let (p, a) = (stats(placebo), stats(arm));
        let gaps: Vec<f64> = placebo.iter().zip(arm).map(|(p, a)| p - a).collect();
        verdict(&Case {
            band_gates: gates,
            ..case(&p, &a, lower_bound(&gaps, 0.05))
        })
    }

    // The table of the arm-verdict rules, row by row, with the band gated
    // by a lower confidence bound rather than the placebo's minimum.
    #[test]
    fn row_1_a_majority_flip_beyond_rerun_noise_is_confirmed_given_seeds_enough() {
        // Three seeds can never exclude noise at 5 % (the least p is 1/8).
        let v = run(&[1.0, 1.0, 1.0], &[0.2, 0.2, 0.2], true);
        assert_eq!(v.reason, Reason::InsideNullBand, "{}", v.claim);
        assert!(v.claim.contains("unbounded"), "{}", v.claim);
        let v = run(&[1.0; 5], &[0.2; 5], true);
        assert_eq!(v.tier, Tier::Confirmed, "{}", v.claim);
        assert!(
            v.claim.contains("5/5") && v.claim.contains("0.800"),
            "{}",
            v.claim
        );
    }

    #[test]
    fn row_2_a_majority_flip_inside_the_band_is_inconclusive() {
        let v = run(&[0.82, 0.82, 0.95], &[0.79, 0.79, 1.0], true);
        assert_eq!(
            (v.tier, v.reason),
            (Tier::Inconclusive, Reason::InsideNullBand)
        );
        assert!(v.claim.contains("2/3"), "{}", v.claim);
        // More seeds of the same pattern do not leave the band: the gap's
        // mean is about 0.
        let placebo = [0.82, 0.82, 0.95].repeat(10);
        let arm = [0.79, 0.79, 1.0].repeat(10);
        assert_eq!(run(&placebo, &arm, true).reason, Reason::InsideNullBand);
    }

    #[test]
    fn row_3_a_domain_comparator_is_not_gated_by_the_band() {
        let v = run(&[0.82, 0.82, 0.95], &[0.79, 0.79, 1.0], false);
        assert_eq!(v.tier, Tier::Confirmed);
        assert!(!v.gated);
    }

    #[test]
    fn row_4_one_placebo_flip_makes_the_baseline_unstable() {
        for arm in [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.5, 1.0, 0.2]] {
            let v = run(&[1.0, 0.7, 1.0], &arm, true);
            assert_eq!(
                (v.tier, v.reason),
                (Tier::Inconclusive, Reason::UnstableBaseline)
            );
            assert!(v.claim.contains("1/3"), "{}", v.claim);
        }
    }

    #[test]
    fn row_5_a_minority_flip_is_inconclusive() {
        let v = run(&[1.0, 1.0, 1.0], &[0.5, 1.0, 1.0], true);
        assert_eq!(
            (v.tier, v.reason),
            (Tier::Inconclusive, Reason::MinorityFlip)
        );
        assert!(v.claim.contains("1/3"));
    }

    #[test]
    fn row_6_no_flip_leaves_the_answer_unchanged() {
        let v = run(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0], true);
        assert_eq!(v.tier, Tier::NotConfirmed);
        assert!(v.claim.starts_with("Answer unchanged"), "{}", v.claim);
        assert!(!v.claim.contains("cannot be told apart"), "{}", v.claim);
    }

    #[test]
    fn row_7_half_is_not_a_majority() {
        let v = run(&[1.0, 1.0, 1.0, 1.0], &[0.1, 0.1, 1.0, 1.0], true);
        assert_eq!(
            (v.tier, v.reason),
            (Tier::Inconclusive, Reason::MinorityFlip)
        );
        assert!(v.claim.contains("2/4"));
    }

    #[test]
    fn a_pair_exactly_at_the_flip_delta_never_flips() {
        // Population 50: 10/50 apart is exactly the default delta of 0.2
        // and never flips, whatever the rounding; 11/50 always does.
        for base in 0..=40 {
            let y = f64::from(base) / 50.0;
            let x = f64::from(base + 10) / 50.0;
            assert!(!flips(x, y, 0.2) && !flips(y, x, 0.2), "{base}");
            if base < 40 {
                let x = f64::from(base + 11) / 50.0;
                assert!(flips(x, y, 0.2) && flips(y, x, 0.2), "{base}");
            }
        }
    }

    proptest::proptest! {
        /// Doubling the seeds of a scenario with a large real effect never
        /// turns "answer changed" into "inconclusive": the old floor (the
        /// placebo's minimum) fell as seeds grew; the gap's lower bound
        /// rises instead. Synthetic similarities: the placebo within 0.1 of
        /// the baseline, the arm about 0.45 below, 10 % of its seeds no
        /// further than the placebo's noise.
        #[test]
        fn doubling_the_seeds_of_a_large_effect_keeps_the_answer_changed(
            key in 0u64..1_000_000,
            n in 8usize..120,
        ) {
            let mut s = crate::rng::Stream::keyed(7, &[key]);
            let mut draw = |n: usize| -> (Vec<f64>, Vec<f64>) {
                let placebo = (0..n).map(|_| 0.9 + 0.1 * s.unit()).collect();
                let arm = (0..n)
                    .map(|i| if i % 10 == 9 { 0.9 + 0.1 * s.unit() } else { 0.4 + 0.25 * s.unit() })
                    .collect();
                (placebo, arm)
            };
            let (p1, a1) = draw(n);
            let (p2, a2) = draw(n);
            let (p, a) = ([p1.clone(), p2].concat(), [a1.clone(), a2].concat());
            let before = run(&p1, &a1, true);
            let after = run(&p, &a, true);
            if before.tier == Tier::Confirmed {
                proptest::prop_assert_eq!(after.tier, Tier::Confirmed, "{}", after.claim);
            }
            proptest::prop_assert_eq!(after.tier, Tier::Confirmed, "{} seeds: {}", 2 * n, after.claim);
        }
    }

    #[test]
    fn an_arm_that_outflips_the_placebo_is_judged_despite_the_placebos_flips() {
        let p = stats(&[0.7, 1.0, 1.0, 1.0, 1.0]);
        let a = stats(&[0.1, 0.1, 0.1, 0.1, 1.0]);
        assert_eq!(verdict(&case(&p, &a, 0.5)).reason, Reason::UnstableBaseline);
        let v = verdict(&Case {
            placebo_outflipped: true,
            ..case(&p, &a, 0.5)
        });
        assert_eq!((v.tier, v.reason), (Tier::Confirmed, Reason::MajorityFlip));
    }

    #[test]
    fn an_arm_that_did_not_take_effect_is_inconclusive_and_named() {
        let (p, a) = (stats(&[1.0, 1.0, 1.0]), stats(&[0.0, 0.0, 0.0]));
        let v = verdict(&Case {
            arm: "reserved-fixed",
            not_applied: Some("allocation"),
            ..case(&p, &a, 1.0)
        });
        assert_eq!((v.tier, v.reason), (Tier::Inconclusive, Reason::NotApplied));
        assert!(v.claim.contains("`allocation`"));
    }

    #[test]
    fn an_arm_whose_runs_mostly_fell_back_is_inconclusive_however_clear_its_flips() {
        let (p, a) = (stats(&[1.0, 1.0, 1.0]), stats(&[0.0, 0.0, 0.0]));
        let with = |fell_back| {
            verdict(&Case {
                arm: "llm",
                fell_back,
                ..case(&p, &a, 1.0)
            })
        };
        let v = with((2, 0));
        assert_eq!((v.tier, v.reason), (Tier::Inconclusive, Reason::FellBack));
        assert!(v.claim.contains("2 of arm 'llm''s 3 runs"), "{}", v.claim);
        assert!(with((0, 2))
            .claim
            .contains("2 of the baseline 'base''s 3 runs"));
        // A minority of runs with a fallback does not void the verdict.
        assert_eq!(with((1, 0)).tier, Tier::Confirmed);
    }
}
