//! trust-v1, the evidence model of docs/models/trust.md, as one pure module: independence groups and the Beta
//! posterior (used directly by the cascade's `trust` policy), and the full
//! scorer behind `witness trust score` and the trust-sim model: evidence
//! tables, weights, bounds, status, ratings, reputation and ranking.

pub mod beta;
pub mod evidence;
pub mod explain;
pub mod group;
pub mod input;
pub mod names;
pub mod output;
pub mod rank;
pub mod ratings;
pub mod read;
pub mod reputation;
pub mod score;
pub mod status;

/// One independence group: its capped weight W_g and its weighted mean
/// polarity p_g in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Group {
    pub weight: f64,
    pub polarity: f64,
}

/// A group's weight never exceeds one real-world confirmation.
pub const GROUP_CAP: f64 = 2.0;

/// Folds weighted signals (w_i, p_i) of one root into its group.
pub fn group(signals: &[(f64, f64)]) -> Group {
    let total: f64 = signals.iter().map(|s| s.0).sum();
    let polarity = if total > 0.0 {
        signals.iter().map(|s| s.0 * s.1).sum::<f64>() / total
    } else {
        0.0
    };
    Group {
        weight: total.min(GROUP_CAP),
        polarity,
    }
}

/// The Beta posterior after independent groups: alpha = alpha0 + S,
/// beta = beta0 + F, with S and F summed over groups in order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Posterior {
    pub alpha: f64,
    pub beta: f64,
}

impl Posterior {
    pub fn new(alpha0: f64, beta0: f64, groups: &[Group]) -> Posterior {
        let support: f64 = groups.iter().map(|g| g.weight * g.polarity).sum();
        let opposition: f64 = groups.iter().map(|g| g.weight * (1.0 - g.polarity)).sum();
        Posterior {
            alpha: alpha0 + support,
            beta: beta0 + opposition,
        }
    }

    /// The trust value: the posterior mean.
    pub fn value(&self) -> f64 {
        self.alpha / (self.alpha + self.beta)
    }
}

/// Signal weights (docs/models/trust.md §4.2): base x real_world x confidence x
/// reputation x decay.
pub fn weight(base: f64, real_world: bool, confidence: f64, reputation: f64, decay: f64) -> f64 {
    base * if real_world { 2.0 } else { 1.0 } * confidence * reputation * decay
}

pub const BASE_USAGE: f64 = 1.0;
pub const BASE_REVIEW: f64 = 0.6;
pub const DEFAULT_REVIEW_CONFIDENCE: f64 = 0.7;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_cap_their_weight_and_average_polarity_by_weight() {
        let g = group(&[(1.5, 1.0), (1.5, 0.0)]);
        assert_eq!(
            g,
            Group {
                weight: 2.0,
                polarity: 0.5
            }
        );
    }

    #[test]
    fn a_flat_prior_with_no_evidence_is_one_half() {
        assert_eq!(Posterior::new(1.0, 1.0, &[]).value(), 0.5);
    }
}
