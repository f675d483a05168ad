//! What a belief-update rule computes from an agent's state: the chance it
//! asks for a check, the source-tracking and trust-v1 beliefs of a ledger
//! (docs/models/cascade.md §6 and §7), and the clamp every belief passes.
//! A ledger has five states, so the ledger-only beliefs are tabled once per
//! run instead of recomputed per agent-round.

use super::config::{Allocation, Config, Policy};
use super::ledger::{self, Ledger};
use crate::math;

/// The chance an agent asks for a check, with what does not depend on
/// the agent worked out once per run. The factor `1 - c` is the same
/// expression either way, so the probabilities keep their bits.
#[derive(Clone, Copy, Debug)]
pub(super) enum CheckRule {
    /// The same chance whatever the belief (fixed allocation, reserved).
    Fixed(f64),
    /// (1 - c)(1 - 0.85 q) with q = 2 |p - 0.5|: holds `1 - c`.
    Adaptive(f64),
}

impl CheckRule {
    pub fn of(cfg: &Config) -> CheckRule {
        let c = cfg.communication;
        match (cfg.policy, cfg.allocation) {
            (Policy::Reserved, _) => CheckRule::Fixed((1.0 - c).max(0.15)),
            (_, Allocation::Fixed) => CheckRule::Fixed(1.0 - c),
            (_, Allocation::Adaptive) => CheckRule::Adaptive(1.0 - c),
        }
    }

    #[inline]
    pub fn probability(self, p: f64) -> f64 {
        match self {
            CheckRule::Fixed(x) => x,
            CheckRule::Adaptive(spare) => {
                let q = 2.0 * (p - 0.5).abs();
                spare * (1.0 - 0.85 * q)
            }
        }
    }
}

pub fn clip(x: f64) -> f64 {
    x.clamp(0.01, 0.99)
}

/// The belief of each ledger state under a policy whose belief is a
/// function of the ledger alone (source_aware, reserved, trust); the same
/// functions computed once per state, indexed by the state's bits.
pub(super) struct LedgerBeliefs([f64; 8]);

impl LedgerBeliefs {
    pub fn new(policy: Policy, truth: bool) -> LedgerBeliefs {
        let mut table = [0.5; 8];
        for l in Ledger::ALL {
            table[l.bits()] = match policy {
                Policy::Trust => trust_belief(&l, truth),
                _ => belief_from_ledger(&l, truth),
            };
        }
        LedgerBeliefs(table)
    }

    #[inline]
    pub fn of(&self, l: &Ledger) -> f64 {
        self.0[l.bits()]
    }
}

/// The trust-v1 value of a ledger (docs/models/cascade.md §7.3): each root is its own
/// independence group; the report is a review (base 0.6, confidence 0.7,
/// reputation 1), the probe a usage signal agreeing with the truth.
pub fn trust_belief(l: &Ledger, truth: bool) -> f64 {
    use crate::trust::{
        weight, Group, Posterior, BASE_REVIEW, BASE_USAGE, DEFAULT_REVIEW_CONFIDENCE,
    };
    let groups: Vec<Group> = l
        .roots()
        .iter()
        .map(|&root| {
            if ledger::verified(root) {
                Group {
                    weight: weight(BASE_USAGE, false, 1.0, 1.0, 1.0),
                    polarity: if ledger::polarity(root, truth) > 0 {
                        1.0
                    } else {
                        0.0
                    },
                }
            } else {
                Group {
                    weight: weight(BASE_REVIEW, false, DEFAULT_REVIEW_CONFIDENCE, 1.0, 1.0),
                    polarity: 1.0,
                }
            }
        })
        .collect();
    clip(Posterior::new(1.0, 1.0, &groups).value())
}

/// ln(0.68 / 0.32): one root's log-odds (the harness's dedupe policy
/// steps by it too). Computed once, not per read.
pub(crate) static LOG_ODDS_STEP: std::sync::LazyLock<f64> =
    std::sync::LazyLock::new(|| math::ln(0.68f64 / 0.32));

/// Source tracking: a verified root decides; otherwise one log-odds step per
/// distinct root, so copies of one report never add up.
pub fn belief_from_ledger(l: &Ledger, truth: bool) -> f64 {
    let verified: i32 = l
        .roots()
        .iter()
        .filter(|&&r| ledger::verified(r))
        .map(|&r| ledger::polarity(r, truth))
        .sum();
    if verified > 0 {
        return 0.99;
    }
    if verified < 0 {
        return 0.01;
    }
    let step = *LOG_ODDS_STEP;
    let log_odds = l.roots().iter().fold(0.0, |acc, &r| {
        acc + ledger::polarity(r, truth) as f64 * step
    });
    clip(1.0 / (1.0 + math::exp(-log_odds.clamp(-4.6, 4.6))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cascade::ledger::{PROBE, REPORT};

    #[test]
    fn one_positive_root_gives_the_documented_belief() {
        let mut l = Ledger::default();
        assert_eq!(belief_from_ledger(&l, false), 0.5);
        l.insert(REPORT);
        assert_eq!(belief_from_ledger(&l, false), 0.6799999999999999);
        l.insert(PROBE);
        assert_eq!(belief_from_ledger(&l, false), 0.01);
        assert_eq!(belief_from_ledger(&l, true), 0.99);
    }

    #[test]
    fn trust_beliefs_match_the_check_values_of_trust_md() {
        let mut report = Ledger::default();
        report.insert(REPORT);
        assert!((trust_belief(&report, false) - 0.5868).abs() < 5e-5);
        let mut probe = Ledger::default();
        probe.insert(PROBE);
        assert!((trust_belief(&probe, true) - 2.0 / 3.0).abs() < 1e-15);
        assert!((trust_belief(&probe, false) - 1.0 / 3.0).abs() < 1e-15);
        let mut both = report;
        both.insert(PROBE);
        assert!((trust_belief(&both, true) - 0.7076).abs() < 5e-5);
        assert!((trust_belief(&both, false) - 0.4152).abs() < 5e-5);
        assert_eq!(trust_belief(&Ledger::default(), true), 0.5);
    }

    #[test]
    fn the_tables_hold_the_functions_values() {
        for truth in [false, true] {
            let (sa, tr) = (
                LedgerBeliefs::new(Policy::SourceAware, truth),
                LedgerBeliefs::new(Policy::Trust, truth),
            );
            for l in Ledger::ALL {
                assert_eq!(sa.of(&l).to_bits(), belief_from_ledger(&l, truth).to_bits());
                assert_eq!(tr.of(&l).to_bits(), trust_belief(&l, truth).to_bits());
            }
        }
    }
}
