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
    /// A flip is a similarity strictly below `flip_below`. A domain
    /// comparator gives similarities of 0 or 1, so any difference flips.
    pub fn of(sims: &[f64], flip_below: f64) -> SimStats {
        let n = sims.len() as f64;
        let mean = sims.iter().sum::<f64>() / n;
        let var = sims.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / n;
        SimStats {
            flips: sims.iter().filter(|&&s| s < flip_below).count(),
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
    /// The first knob the arm declared but its runs did not read.
    pub not_applied: Option<&'a str>,
    /// Decisions of the arm's runs (and of the baseline's) that an external
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
    /// The null band's floor: the placebo's lowest similarity.
    pub floor: f64,
    /// Whether the band decided this verdict (tier 3 or the band clause of 4).
    pub gated: bool,
    pub claim: String,
}

pub fn verdict(c: &Case) -> Verdict {
    let s = c.stats;
    let floor = c.placebo.min;
    let outside_band = s.mean < floor;
    let done = |tier, reason, gated, claim: String| Verdict {
        tier,
        reason,
        floor,
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
    if c.fell_back != (0, 0) {
        let (arm, base) = c.fell_back;
        let whose = match (arm, base) {
            (a, 0) => format!("{a} of arm '{}''s decisions", c.arm),
            (0, b) => format!("{b} of the baseline '{}''s decisions", c.baseline),
            (a, b) => format!(
                "{a} of arm '{}''s and {b} of the baseline's decisions",
                c.arm
            ),
        };
        return done(
            Tier::Inconclusive,
            Reason::FellBack,
            false,
            format!(
                "Inconclusive: {whose} fell back to the safe action because the external policy gave no usable answer, \
                 so those runs are not what the policy would have done {}.",
                c.bound
            ),
        );
    }
    if s.majority() && c.band_gates && !outside_band {
        return done(
            Tier::Inconclusive,
            Reason::InsideNullBand,
            true,
            format!(
                "Inconclusive: arm '{}' changed the answer on {}/{} seeds, but its mean similarity {:.3} is not below \
                 the baseline's own noise floor {:.3}: rerunning the baseline alone changes answers as much {}.",
                c.arm, s.flips, s.samples, s.mean, floor, c.bound
            ),
        );
    }
    if s.majority() {
        let band = if c.band_gates {
            format!(", below the baseline's noise floor {floor:.3}")
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

    fn run(placebo: &[f64], arm: &[f64], gates: bool) -> Verdict {
        let p = SimStats::of(placebo, 0.8);
        let a = SimStats::of(arm, 0.8);
        verdict(&Case {
            baseline: "base",
            arm: "arm",
            placebo: &p,
            stats: &a,
            band_gates: gates,
            not_applied: None,
            fell_back: (0, 0),
            bound: "on this scenario by this comparator",
            placebo_outflipped: false,
        })
    }

    // The table of the arm-verdict rules, row by row.
    #[test]
    fn row_1_a_majority_flip_below_a_perfect_floor_is_confirmed() {
        let v = run(&[1.0, 1.0, 1.0], &[0.2, 0.2, 0.2], true);
        assert_eq!((v.tier, v.floor), (Tier::Confirmed, 1.0));
        assert!(
            v.claim.contains("3/3") && v.claim.contains("1.000"),
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
        assert!(
            v.claim.contains("2/3") && v.claim.contains("0.860") && v.claim.contains("0.820"),
            "{}",
            v.claim
        );
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
    fn row_6_no_flip_is_not_confirmed() {
        let v = run(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0], true);
        assert_eq!(v.tier, Tier::NotConfirmed);
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
    fn the_floor_comparison_is_strict() {
        // 4.25 / 5 is exactly the double nearest 0.85, as is the floor.
        let placebo = [0.85; 5];
        let at_floor = [0.75, 0.75, 0.75, 1.0, 1.0];
        assert_eq!(SimStats::of(&at_floor, 0.8).mean, 0.85);
        assert_eq!(
            run(&placebo, &at_floor, true).reason,
            Reason::InsideNullBand
        );
        let below = [0.75, 0.75, 0.75, 1.0, 0.99];
        assert_eq!(run(&placebo, &below, true).tier, Tier::Confirmed);
    }

    #[test]
    fn an_arm_that_outflips_the_placebo_is_judged_despite_the_placebos_flips() {
        let p = SimStats::of(&[0.7, 1.0, 1.0, 1.0, 1.0], 0.8);
        let a = SimStats::of(&[0.1, 0.1, 0.1, 0.1, 1.0], 0.8);
        let case = |outflipped| Case {
            baseline: "base",
            arm: "arm",
            placebo: &p,
            stats: &a,
            band_gates: true,
            not_applied: None,
            fell_back: (0, 0),
            bound: "here",
            placebo_outflipped: outflipped,
        };
        assert_eq!(verdict(&case(false)).reason, Reason::UnstableBaseline);
        let v = verdict(&case(true));
        assert_eq!((v.tier, v.reason), (Tier::Confirmed, Reason::MajorityFlip));
    }

    #[test]
    fn an_arm_that_did_not_take_effect_is_inconclusive_and_named() {
        let p = SimStats::of(&[1.0, 1.0, 1.0], 0.8);
        let a = SimStats::of(&[0.0, 0.0, 0.0], 0.8);
        let v = verdict(&Case {
            baseline: "base",
            arm: "reserved-fixed",
            placebo: &p,
            stats: &a,
            band_gates: true,
            not_applied: Some("allocation"),
            fell_back: (0, 0),
            bound: "here",
            placebo_outflipped: false,
        });
        assert_eq!((v.tier, v.reason), (Tier::Inconclusive, Reason::NotApplied));
        assert!(v.claim.contains("`allocation`"));
    }

    #[test]
    fn an_arm_whose_policy_fell_back_is_inconclusive_however_clear_its_flips() {
        let p = SimStats::of(&[1.0, 1.0, 1.0], 0.8);
        let a = SimStats::of(&[0.0, 0.0, 0.0], 0.8);
        let case = |fell_back| Case {
            baseline: "base",
            arm: "llm",
            placebo: &p,
            stats: &a,
            band_gates: true,
            not_applied: None,
            fell_back,
            bound: "here",
            placebo_outflipped: false,
        };
        let v = verdict(&case((7, 0)));
        assert_eq!((v.tier, v.reason), (Tier::Inconclusive, Reason::FellBack));
        assert!(
            v.claim.contains("7 of arm 'llm''s decisions fell back"),
            "{}",
            v.claim
        );
        assert!(verdict(&case((0, 2)))
            .claim
            .contains("2 of the baseline 'base''s"));
        assert_eq!(verdict(&case((0, 0))).tier, Tier::Confirmed);
    }
}
