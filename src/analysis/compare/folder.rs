//! `compare` on a results folder: the checks of the request, the values
//! read from the runs table, and the comparator they make.

use super::{compare, Answers, Comparator, CompareError, CompareRow, Testing};
use crate::analysis::design::Design;

/// What `compare` is asked.
pub struct Request<'a> {
    pub baseline: &'a str,
    /// The metric compared and the effect size; the model's first
    /// headline metric when `None`.
    pub metric: Option<&'a str>,
    /// A categorical outcome to compare instead of the metric.
    pub outcome: Option<&'a str>,
    /// `--flip-delta`: the per-seed change that is a flip, in the
    /// metric's units [default: the metric's own, else a fifth of its
    /// range].
    pub flip_delta: Option<f64>,
    /// `--flip-below s`: the same as a delta of (1 - s) times the range.
    pub flip_below: Option<f64>,
    /// `--where`: the runs compared.
    pub filter: Option<&'a str>,
    pub testing: Testing,
}

/// The verdicts of a results folder, and the comparator they used.
pub struct Report {
    pub rows: Vec<CompareRow>,
    /// The metric compared or measured as the effect, if any.
    pub metric: Option<&'static str>,
    pub comparator: Comparator,
    /// What the baseline's noise was measured against.
    pub placebo: String,
    /// What the table cannot show, said once (e.g. no row can reach
    /// significance with these seeds).
    pub warnings: Vec<String>,
}

/// Reads what `compare` needs from a results folder and runs it.
pub fn run(results: &crate::results::ResultsDir, req: &Request) -> crate::Result<Report> {
    use crate::Error;
    if !(req.testing.alpha > 0.0 && req.testing.alpha < 1.0) {
        return Err(Error::Usage(format!(
            "--alpha {}: allowed 0 < alpha < 1 (0.05 is the default)",
            req.testing.alpha
        )));
    }
    if let Some(d) = req.testing.sesoi.filter(|d| !(d.is_finite() && *d > 0.0)) {
        return Err(Error::Usage(format!(
            "--sesoi {d}: the smallest effect of interest is a positive number in the metric's units, e.g. 0.05"
        )));
    }
    if let Some(s) = req.flip_below.filter(|s| !(*s > 0.0 && *s <= 1.0)) {
        return Err(Error::Usage(format!(
            "--flip-below {s}: allowed 0 < x <= 1"
        )));
    }
    if let Some(d) = req.flip_delta.filter(|d| !(d.is_finite() && *d >= 0.0)) {
        return Err(Error::Usage(format!(
            "--flip-delta {d}: a per-seed change in the metric's units, 0 or more"
        )));
    }
    if req.flip_delta.is_some() && req.flip_below.is_some() {
        return Err(Error::Usage(
            "--flip-delta and --flip-below say the same thing two ways: give one".into(),
        ));
    }
    let model = results.model();
    let plan = &results.plan;
    let d = Design::kept(plan, req.filter)?;
    // Under an outcome the metric is only the effect size, and only when
    // asked for; otherwise it is what is compared: by its values when it
    // has bounds, by order (wins and losses) when it has none.
    let metric = match (req.outcome, req.metric) {
        (Some(_), None) => None,
        (_, asked) => Some(crate::analysis::summary::metric_or_default(
            model, asked, "--metric",
        )?),
    };
    let outcome = match req.outcome {
        None => None,
        Some(name) => {
            let outcomes = model.outcomes();
            let i = outcomes
                .iter()
                .position(|(n, _)| *n == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = outcomes.iter().map(|(n, _)| *n).collect();
                    let allowed = if names.is_empty() {
                        "none (this model defines no outcomes)".to_string()
                    } else {
                        names.join(", ")
                    };
                    Error::Usage(format!(
                        "--outcome {name}: unknown outcome of model {}; allowed: {allowed}",
                        model.name()
                    ))
                })?;
            Some((i, outcomes[i].0))
        }
    };
    let column = metric.map(|m| {
        model
            .summary_columns()
            .iter()
            .find(|c| c.name == m)
            .expect("a summary column")
    });
    // Compared by order: a missing value is data (NaN here), placed by the
    // column's judgement.
    let by_order = req.outcome.is_none() && column.is_some_and(|c| bounds_of(c).is_none());
    let metric_values: Option<Vec<f64>> = match metric {
        None => None,
        Some(metric) => Some(
            results.runs_columns(&[metric])?.remove(0)
                .iter()
                .enumerate()
                .map(|(id, v)| match (d.place(id as u64), v.as_f64()) {
                    (None, _) => Ok(f64::NAN),
                    (Some(_), Some(x)) => Ok(x),
                    (Some(_), None) if by_order && matches!(v, crate::params::Value::Null) => Ok(f64::NAN),
                    (Some(_), None) => Err(Error::Usage(format!(
                        "--metric {metric}: run {id} holds {v}; compare needs a number in every run it compares"
                    ))),
                })
                .collect::<crate::Result<_>>()?,
        ),
    };
    let classes: Option<Vec<String>> = match outcome {
        None => None,
        Some((i, _)) => {
            let summaries = results.summary_rows()?;
            let path = results.layout.table("runs").display().to_string();
            let classify = |id: u64| {
                model
                    .classify(i, &plan.run(id).params, &summaries[id as usize])
                    .map(str::to_string)
                    .map_err(|source| Error::Record {
                        path: path.clone(),
                        source,
                    })
            };
            Some(
                (0..plan.total)
                    .map(classify)
                    .collect::<crate::Result<_>>()?,
            )
        }
    };
    let comparator = match (outcome, metric) {
        (Some((_, name)), _) => Comparator::Outcome { name: name.into() },
        (None, None) => unreachable!("without an outcome the metric is compared"),
        (None, Some(metric)) => {
            let column = column.expect("the metric's column");
            match bounds_of(column) {
                None => Comparator::Ordinal {
                    name: metric.into(),
                    flip_delta: req.flip_delta.or(column.judge.flip_delta),
                },
                Some((lo, hi)) => Comparator::Metric {
                    name: metric.into(),
                    flip_delta: match (req.flip_delta, req.flip_below, column.judge.flip_delta) {
                        (Some(d), _, _) => d,
                        (None, Some(s), _) => (1.0 - s) * (hi - lo),
                        (None, None, Some(d)) => d,
                        (None, None, None) => DEFAULT_FLIP_SHARE * (hi - lo),
                    },
                    lo,
                    hi,
                },
            }
        }
    };
    let fallbacks: Option<Vec<u64>> = match plan.manifest.has_external() {
        false => None,
        true => Some(
            results
                .runs_columns(&["fallbacks"])?
                .remove(0)
                .iter()
                .map(|v| v.as_f64().map_or(0, |x| x as u64))
                .collect(),
        ),
    };
    let answers = Answers {
        metric: metric.zip(metric_values.as_deref()),
        outcome: classes.as_deref(),
        fallbacks: fallbacks.as_deref(),
        judge: metric
            .and_then(|m| model.summary_columns().iter().find(|c| c.name == m))
            .map_or(crate::model::Judge::NEUTRAL, |c| c.judge),
    };
    let rows = match compare(&d, req.baseline, &comparator, &answers, &req.testing) {
        // The placebo may be there and only filtered out: say so, not
        // "add a placebo to the manifest".
        Err(CompareError::NoPlacebo(baseline)) if req.filter.is_some() => {
            let all = Design::of(plan)?;
            let placebo = all
                .variant(&baseline)
                .and_then(|v| all.placebos[v])
                .map(|p| plan.arm_name(all.variants[p].arm).to_string());
            Err(match placebo {
                Some(placebo) => CompareError::PlaceboLeftOut {
                    filter: req.filter.unwrap_or_default().into(),
                    baseline,
                    placebo,
                },
                None => CompareError::NoPlacebo(baseline),
            })
        }
        // The baseline may be there and only filtered out.
        Err(CompareError::UnknownBaseline { baseline, arms })
            if req.filter.is_some() && Design::of(plan)?.variant(&baseline).is_some() =>
        {
            Err(CompareError::BaselineLeftOut {
                filter: req.filter.unwrap_or_default().into(),
                baseline,
                arms,
            })
        }
        r => r,
    }?;
    let base = d.variant(req.baseline).expect("compare found it");
    let placebo = match d.placebos[base] {
        Some(p) => d.variants[p].label.clone(),
        None => format!(
            "{} itself: model {} has no replicate parameter, so a rerun of its runs is identical",
            req.baseline,
            model.name()
        ),
    };
    let warnings = super::resolution(&rows, req.testing.adjust, req.testing.alpha)
        .into_iter()
        .collect();
    Ok(Report {
        rows,
        metric,
        comparator,
        placebo,
        warnings,
    })
}

/// The share of a metric's range a seed must change by to flip, unless
/// the metric or the call says otherwise (the old `--flip-below 0.8`).
const DEFAULT_FLIP_SHARE: f64 = 0.2;

/// A metric's range, when it has one a flip can be a share of.
fn bounds_of(c: &crate::model::Column) -> Option<(f64, f64)> {
    match c.bounds {
        crate::model::Bounds::Range(lo, hi) if hi > lo => Some((lo, hi)),
        _ => None,
    }
}
