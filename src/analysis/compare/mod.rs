//! `compare` without the I/O: given where each run sits (scenario, arm
//! variant, seed) and its values, the verdict and paired effect of every arm
//! against the baseline in every scenario. The pairing of runs and their
//! tests live in `pairs`, the verdicts and their sentences in `claims`,
//! and reading a results folder in `folder`.

mod claims;
mod effect;
mod folder;
mod ordinal;
mod pairs;

pub use claims::{resolution, show_p};
pub use effect::EffectWord;
pub use folder::{run, Report, Request};

use std::collections::HashMap;

use super::design::Design;
use super::multiplicity::Adjust;
use super::permutation::PMethod;
use super::verdict::{Reason, Tier};
use crate::model::{Better, Judge};

crate::words! {
    /// When the baseline's own placebo flips: `zero` makes every verdict in
    /// the scenario inconclusive; `fisher` only those whose arm does not
    /// flip significantly more often than the placebo.
    pub enum BaselineRule {
        Zero = "zero",
        Fisher = "fisher",
    }
}

/// How a table's p-values are read.
#[derive(Clone, Copy, Debug)]
pub struct Testing {
    pub adjust: Adjust,
    pub rule: BaselineRule,
    pub alpha: f64,
    /// The smallest effect of interest, overriding the metric's own.
    pub sesoi: Option<f64>,
}

pub enum Comparator {
    /// A metric with declared bounds [lo, hi]; similarity
    /// 1 - |x - y| / (hi - lo); a seed flips when its values differ by
    /// more than `flip_delta`, in the metric's units.
    Metric {
        name: String,
        flip_delta: f64,
        lo: f64,
        hi: f64,
    },
    /// A categorical outcome; any difference is a flip.
    Outcome { name: String },
    /// A metric without bounds, or with missing values, compared by order:
    /// a win, loss or tie per seed by the column's direction. A seed flips
    /// when its values differ by more than `flip_delta` (declared), else
    /// by more than the placebo's 95 % quantile of change; a value present
    /// on one side only always flips.
    Ordinal {
        name: String,
        flip_delta: Option<f64>,
    },
}

impl Comparator {
    pub fn name(&self) -> &str {
        match self {
            Comparator::Metric { name, .. }
            | Comparator::Outcome { name }
            | Comparator::Ordinal { name, .. } => name,
        }
    }
}

crate::record! {
    /// One arm against the baseline in one scenario: a row of compare.csv.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CompareRow {
        /// the scenario: common-axis values, seed and replicate aside
        scenario: String,
        /// the arm variant compared
        arm: String,
        /// the baseline variant
        baseline: String,
        /// the metric or outcome compared
        comparator: String,
        /// confirmed, inconclusive or not_confirmed
        verdict: Tier,
        /// the rule that decided
        reason: Reason,
        /// one sentence, bounded by the scenario and the comparator
        claim: String,
        /// seeds whose answer flipped against the baseline's
        flips: u64,
        /// paired seeds
        samples: u64,
        /// mean similarity to the baseline
        similarity_mean: f64 [0.0, 1.0],
        /// population standard deviation of the similarities
        similarity_sd: f64,
        /// lowest similarity
        similarity_min: f64 [0.0, 1.0],
        /// seeds on which the baseline's placebo flipped
        placebo_flips: u64,
        /// the placebo's flip rate, Clopper-Pearson 95 % interval, low end
        placebo_flip_low: f64 [0.0, 1.0],
        /// the placebo's flip rate, Clopper-Pearson 95 % interval, high end
        placebo_flip_high: f64 [0.0, 1.0],
        /// the per-seed change that counts as a flip, in the metric's units (null for an outcome)
        flip_delta: Option<f64>,
        /// the largest per-seed |arm - baseline| in the metric (where both values exist)
        max_abs_diff: Option<f64>,
        /// ordinal comparisons: the median arm - baseline where both values exist
        median_diff: Option<f64>,
        /// ordinal comparisons: seeds left out for a missing value the column gives no place
        left_out: Option<u64>,
        /// one-sided (1 - alpha) lower bound of the mean of placebo similarity less arm similarity; above 0 the arm is outside the null band (null: too few seeds to ever be)
        band_lower_bound: Option<f64>,
        /// the placebo's 5 % quantile of similarity: the descriptive noise level
        placebo_q05: f64 [0.0, 1.0],
        /// the placebo's lowest similarity (the old floor, reported only)
        floor_min: f64 [0.0, 1.0],
        /// whether the band decided the verdict
        band_gated: bool,
        /// every run read what the arm declared
        applied: bool,
        /// the first knob the arm declared that a run did not read
        not_applied_knob: Option<String>,
        /// the metric of the paired effect; null under --outcome without --metric
        effect_metric: Option<String>,
        /// which way the effect metric is better: lower, higher or neither
        direction: Better,
        /// mean paired difference, arm - baseline
        effect_mean: Option<f64>,
        /// 95 % Student-t interval of the mean difference (marginal, not adjusted), low end
        effect_ci_low: Option<f64>,
        /// 95 % Student-t interval, high end
        effect_ci_high: Option<f64>,
        /// how the interval was made
        ci_method: Option<String>,
        /// the average effect in a word: better, worse, higher, lower, negligible, equivalent, undetermined
        effect_verdict: Option<EffectWord>,
        /// paired test of arm against baseline: sign-flip permutation (metric) or exact sign test (outcome, on the effect metric)
        p_value: Option<f64>,
        /// p_value adjusted over the table's testable rows (null for a row that cannot be tested)
        p_adjusted: Option<f64>,
        /// how p_value was computed: exact-enumeration, sequential-mc or exact-sign-test
        p_method: Option<PMethod>,
        /// the smallest p the test could give these seeds
        p_min: Option<f64>,
        /// sign patterns counted (0 for the sign test)
        patterns: Option<u64>,
        /// some paired difference is not zero, so the row is tested and counted in the family
        testable: bool,
        /// testable rows in the table: the family p_adjusted is adjusted over
        family_size: u64,
        /// the smallest effect of interest (the metric's, or --sesoi)
        sesoi: Option<f64>,
        /// equivalence within +-sesoi: the larger of two one-sided paired t tests
        tost_p: Option<f64>,
        /// tost_p adjusted over the rows that have one
        tost_p_adjusted: Option<f64>,
        /// p_adjusted below alpha
        significant: Option<bool>,
        /// holm, bh or none
        adjustment: Adjust,
        /// --baseline-rule fisher: one-sided Fisher p (adjusted) that the arm flips more than the placebo
        placebo_fisher_p: Option<f64>,
    }
}

/// Per-run answers, indexed by run_id: the metric (compared, or only
/// measured as the paired effect under an outcome), and the outcome.
pub struct Answers<'a> {
    pub metric: Option<(&'a str, &'a [f64])>,
    pub outcome: Option<&'a [String]>,
    /// Per run: decisions an external policy did not give (0 for built-in
    /// arms); none when no arm is external.
    pub fallbacks: Option<&'a [u64]>,
    /// How the metric is judged (neutral without one).
    pub judge: Judge,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("--baseline {baseline}: no arm named '{baseline}'; arms here: {arms}")]
    UnknownBaseline { baseline: String, arms: String },
    #[error(
        "no placebo runs for the baseline '{0}': add `placebo = true` to its [[arm]] in the manifest \
         and run it again (into a new folder, or with --force); compare needs them to tell effects from noise"
    )]
    NoPlacebo(String),
    #[error(
        "--where {filter:?} keeps no run of the baseline '{baseline}'; let them through (e.g. add \
         arm={baseline}), or choose a baseline among the arms it keeps: {arms}"
    )]
    BaselineLeftOut {
        filter: String,
        baseline: String,
        arms: String,
    },
    #[error(
        "--baseline {baseline}: that is the placebo of '{of}', not an arm to compare against; \
         pass --baseline {of}"
    )]
    BaselineIsPlacebo { baseline: String, of: String },
    #[error(
        "--where {filter:?} leaves out the placebo runs of the baseline '{baseline}' (arm {placebo}); \
         every key of --where must let them through, e.g. arm={placebo} beside the baseline's own \
         arm (a placebo's runs differ from its arm's in their replicate); compare needs them to \
         tell effects from noise"
    )]
    PlaceboLeftOut {
        filter: String,
        baseline: String,
        placebo: String,
    },
    #[error(
        "{metric} of run {run} is {value}, outside its declared bounds [{lo}, {hi}]; \
         run `witness verify` on the folder"
    )]
    OutOfBounds {
        metric: String,
        run: usize,
        value: f64,
        lo: f64,
        hi: f64,
    },
    #[error(
        "arm '{arm}' has no run for seed {seed} in scenario ({scenario}); arms must share seeds"
    )]
    MissingSeed {
        arm: String,
        seed: i64,
        scenario: String,
    },
}

/// What every comparison of one call shares: the design, the baseline and
/// its placebo, the comparator and the answers, and each run's place.
struct Setup<'a> {
    d: &'a Design,
    baseline: &'a str,
    /// The baseline's variant and the variant whose runs are its placebo.
    base: usize,
    placebo: usize,
    cmp: &'a Comparator,
    a: &'a Answers<'a>,
    testing: &'a Testing,
    /// The run at (scenario, variant, design point, seed).
    at: HashMap<(usize, usize, u64, i64), usize>,
}

impl Setup<'_> {
    /// How alike runs `x` and `y` answered, from 0 to 1 (for an ordinal
    /// metric: 1 when the values are the same, missing alike included).
    fn sim(&self, x: usize, y: usize) -> f64 {
        match (self.cmp, self.a.outcome, self.a.metric) {
            (Comparator::Outcome { .. }, Some(o), _) => f64::from(u8::from(o[x] == o[y])),
            (Comparator::Metric { lo, hi, .. }, _, Some((_, m))) => {
                1.0 - (m[x] - m[y]).abs() / (hi - lo)
            }
            (Comparator::Ordinal { .. }, _, Some((_, m))) => {
                let same = m[x] == m[y] || (m[x].is_nan() && m[y].is_nan());
                f64::from(u8::from(same))
            }
            _ => unreachable!("a metric comparator has its metric"),
        }
    }

    /// Whether run `x`'s answer changed from run `y`'s; `threshold` is an
    /// ordinal metric's flip size in this scenario.
    fn flipped(&self, x: usize, y: usize, threshold: f64) -> bool {
        match (self.cmp, self.a.outcome, self.a.metric) {
            (Comparator::Outcome { .. }, Some(o), _) => o[x] != o[y],
            (Comparator::Metric { flip_delta, .. }, _, Some((_, m))) => {
                super::verdict::flips(m[x], m[y], *flip_delta)
            }
            (Comparator::Ordinal { .. }, _, Some((_, m))) => match (m[x].is_nan(), m[y].is_nan()) {
                (true, true) => false,
                (true, false) | (false, true) => true,
                (false, false) => super::verdict::flips(m[x], m[y], threshold),
            },
            _ => unreachable!("a metric comparator has its metric"),
        }
    }

    /// Whether the placebo's band may decide a verdict (only on a metric).
    fn band_gates(&self) -> bool {
        matches!(self.cmp, Comparator::Metric { .. })
    }
}

pub fn compare(
    d: &Design,
    baseline: &str,
    cmp: &Comparator,
    a: &Answers,
    testing: &Testing,
) -> Result<Vec<CompareRow>, CompareError> {
    let base = d.variant(baseline).ok_or_else(|| {
        let labels: Vec<&str> = d
            .variants
            .iter()
            .enumerate()
            .filter(|(v, _)| !d.placebos.contains(&Some(*v)))
            .map(|(_, v)| v.label.as_str())
            .collect();
        CompareError::UnknownBaseline {
            baseline: baseline.into(),
            arms: labels.join(", "),
        }
    })?;
    if let Some(of) = d.placebos.iter().position(|p| *p == Some(base)) {
        return Err(CompareError::BaselineIsPlacebo {
            baseline: baseline.into(),
            of: d.variants[of].label.clone(),
        });
    }
    // A model without a replicate parameter is a function of its seed:
    // rerunning the baseline gives its own runs back, so they are its placebo.
    let placebo = match (d.placebos[base], d.replicable) {
        (Some(p), _) => p,
        (None, false) => base,
        (None, true) => return Err(CompareError::NoPlacebo(baseline.into())),
    };
    if let (Comparator::Metric { name, lo, hi, .. }, Some((_, values))) = (cmp, a.metric) {
        if let Some((id, x)) = values
            .iter()
            .enumerate()
            .find(|(id, x)| d.place(*id as u64).is_some() && !(*lo..=*hi).contains(*x))
        {
            return Err(CompareError::OutOfBounds {
                metric: name.clone(),
                run: id,
                value: *x,
                lo: *lo,
                hi: *hi,
            });
        }
    }
    let mut at: HashMap<(usize, usize, u64, i64), usize> = HashMap::new();
    for (id, p) in d.places.iter().enumerate() {
        if let Some(p) = p {
            at.insert((p.scenario, p.variant, p.point, p.seed), id);
        }
    }
    let setup = Setup {
        d,
        baseline,
        base,
        placebo,
        cmp,
        a,
        testing,
        at,
    };
    // First every comparison and its raw p-values, then the adjustment over
    // the whole table, then the verdicts (the Fisher rule needs adjusted p).
    let mut pending = setup.pending()?;
    setup.test(&mut pending);
    Ok(setup.rows(&pending))
}
