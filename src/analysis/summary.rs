//! `summary` without the I/O: runs grouped by arm and parameter values,
//! each metric's mean, sample standard deviation and 95 % Student-t
//! interval per group. Groups follow the manifest's value order (noise 30
//! before 120), not text order.

use std::collections::BTreeMap;

use super::design::{is_descriptive, Design};
use super::stats::{mean, sample_sd, t_interval};
use crate::grid::Plan;
use crate::model::{ColType, Column};
use crate::params::{lookup, ParamId, Value};
use crate::store::TableData;

/// The group value of a parameter the run's arm does not read.
pub const NOT_READ: &str = "(not read)";

/// What runs are grouped by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupKey {
    /// The arm variant (arm plus its own axes' values).
    Arm,
    Param(ParamId),
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SummaryError {
    #[error("--by {0}: not `arm` or a parameter of model {1}; parameters: {2}")]
    UnknownGroup(String, String, String),
    #[error("--metrics {0}: not a numeric summary column of model {1}; allowed: {2}")]
    NotAMetric(String, String, String),
}

impl GroupKey {
    pub fn parse(plan: &Plan, name: &str) -> Result<GroupKey, SummaryError> {
        if name == "arm" {
            return Ok(GroupKey::Arm);
        }
        let model = plan.model();
        lookup(model.params(), name)
            .map(GroupKey::Param)
            .map_err(|_| {
                let names: Vec<&str> = model.params().iter().map(|p| p.name).collect();
                SummaryError::UnknownGroup(name.into(), model.name().into(), names.join(", "))
            })
    }

    fn name(self, plan: &Plan) -> &'static str {
        match self {
            GroupKey::Arm => "arm",
            GroupKey::Param(id) => id.spec(plan.model().params()).name,
        }
    }
}

/// The default grouping: the arm, then every common axis but the seed and
/// the replicate.
pub fn default_groups(plan: &Plan) -> Vec<GroupKey> {
    let specs = plan.model().params();
    std::iter::once(GroupKey::Arm)
        .chain(
            plan.manifest
                .common
                .iter()
                .filter(|a| is_descriptive(specs, a))
                .map(|a| GroupKey::Param(a.id)),
        )
        .collect()
}

/// The summary columns that hold numbers, which `summary` can average.
pub fn numeric_metrics(plan: &Plan) -> Vec<&'static str> {
    plan.model()
        .summary_columns()
        .iter()
        .filter(|c| matches!(c.ty, ColType::Int | ColType::Float | ColType::Bool))
        .map(|c| c.name)
        .collect()
}

/// Checks metric names against the model's numeric summary columns.
pub fn check_metrics(plan: &Plan, metrics: &[&str]) -> Result<(), SummaryError> {
    let allowed = numeric_metrics(plan);
    match metrics.iter().find(|m| !allowed.contains(m)) {
        None => Ok(()),
        Some(m) => Err(SummaryError::NotAMetric(
            m.to_string(),
            plan.model().name().into(),
            allowed.join(", "),
        )),
    }
}

/// Where `v` stands among the values a grid axis of `id` lists, so groups
/// sort in the manifest's order.
fn axis_position(plan: &Plan, id: ParamId, v: &Value) -> usize {
    let m = &plan.manifest;
    m.common
        .iter()
        .chain(m.arms.iter().flat_map(|a| &a.axes))
        .filter(|a| a.id == id)
        .find_map(|a| a.values.iter().position(|x| x == v))
        .unwrap_or(0)
}

/// For grouping parameters a `[design]` sets: each value's place in the
/// numeric order of the values its points take, so groups sort as numbers.
fn design_order(
    plan: &Plan,
    by: &[GroupKey],
) -> std::collections::HashMap<(ParamId, String), usize> {
    let mut out = std::collections::HashMap::new();
    let Some(design) = &plan.manifest.design else {
        return out;
    };
    for b in by {
        let GroupKey::Param(p) = *b else { continue };
        let Some(k) = design.params.iter().position(|(id, _)| *id == p) else {
            continue;
        };
        let mut values: Vec<Value> = (0..design.len()).map(|i| design.value(i, k)).collect();
        values.sort_by(|x, y| match (x.as_f64(), y.as_f64()) {
            (Some(a), Some(b)) => a.total_cmp(&b),
            _ => x.plain().cmp(&y.plain()),
        });
        values.dedup();
        for (i, v) in values.iter().enumerate() {
            out.insert((p, v.plain()), i);
        }
    }
    out
}

/// One group's values of each metric, and how many runs it holds.
type Cell = (Vec<Vec<f64>>, usize);

/// The summary table: a row per group and metric. `columns[k][run_id]` is
/// metric k's value in each run.
pub fn summarize(
    plan: &Plan,
    d: &Design,
    by: &[GroupKey],
    metrics: &[&'static str],
    columns: &[Vec<Value>],
) -> Summary {
    let mut groups: BTreeMap<Vec<(usize, String)>, Cell> = BTreeMap::new();
    let design_order = design_order(plan, by);
    for id in 0..plan.total {
        let Some(place) = d.place(id) else { continue };
        let run = plan.run(id);
        // A run of an arm that does not read `threshold` is not grouped
        // under its default.
        let ignores = d.ignored[&(place.variant, place.scenario)];
        let key: Vec<(usize, String)> = by
            .iter()
            .map(|b| match *b {
                GroupKey::Arm => {
                    let v = place.variant;
                    (v, d.variants[v].label.clone())
                }
                GroupKey::Param(p) if ignores.contains(p) => (usize::MAX, NOT_READ.into()),
                GroupKey::Param(p) => {
                    let v = run.params.get(p);
                    let at = design_order
                        .get(&(p, v.plain()))
                        .copied()
                        .unwrap_or_else(|| axis_position(plan, p, v));
                    (at, v.plain())
                }
            })
            .collect();
        let (slot, runs) = groups
            .entry(key)
            .or_insert_with(|| (vec![Vec::new(); metrics.len()], 0));
        *runs += 1;
        for (k, col) in columns.iter().enumerate() {
            if let Some(x) = col[id as usize].as_f64() {
                slot[k].push(x);
            }
        }
    }
    let text = |name: &'static str| Column::new(name, ColType::Str, false, "");
    let mut out: Vec<Column> = by.iter().map(|b| text(b.name(plan))).collect();
    out.push(text("metric"));
    out.push(Column::new("n", ColType::Int, false, "runs with a value"));
    for name in ["mean", "sd", "ci95_low", "ci95_high"] {
        out.push(Column::new(name, ColType::Float, true, ""));
    }
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for (key, (values, runs)) in &groups {
        for (k, xs) in values.iter().enumerate() {
            if xs.len() < *runs {
                let cell: Vec<String> = by
                    .iter()
                    .zip(key)
                    .map(|(b, (_, v))| format!("{}={v}", b.name(plan)))
                    .collect();
                missing.push(format!(
                    "{}: {} has no value in {} of {runs} runs; n, the mean and the interval are over the {} with one",
                    if cell.is_empty() { "all runs".to_string() } else { cell.join(", ") },
                    metrics[k],
                    runs - xs.len(),
                    xs.len()
                ));
            }
            // NaN where undefined: the mean of no values, the spread of
            // fewer than two.
            let (m, sd) = (mean(xs), sample_sd(xs));
            let (lo, hi) = t_interval(xs).unwrap_or((f64::NAN, f64::NAN));
            let mut row: Vec<Value> = key.iter().map(|(_, v)| Value::Str(v.clone())).collect();
            row.push(Value::from(metrics[k]));
            row.push(Value::from(xs.len()));
            row.extend([m, sd, lo, hi].map(Value::Float));
            rows.push(row);
        }
    }
    Summary {
        table: TableData { columns: out, rows },
        missing,
    }
}

/// The summary table, and a note for each cell where a metric has no
/// value in some runs (a run that never cleared has no
/// `first_clear_round`), since dropping them moves the mean.
pub struct Summary {
    pub table: TableData,
    pub missing: Vec<String>,
}

/// A summary column the user named, or the model's first headline metric.
pub fn metric_or_default(
    model: &dyn crate::model::DynModel,
    asked: Option<&str>,
    flag: &str,
) -> crate::Result<&'static str> {
    let columns = model.summary_columns();
    let names = || {
        columns
            .iter()
            .map(|c| c.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match asked {
        Some(name) => columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.name)
            .ok_or_else(|| {
                crate::Error::Usage(format!(
                    "{flag} {name}: not a summary column of model {}; allowed: {}",
                    model.name(),
                    names()
                ))
            }),
        None => model.headline_metrics().first().copied().ok_or_else(|| {
            crate::Error::Usage(format!(
                "model {} has no headline metric; pass {flag} (one of {})",
                model.name(),
                names()
            ))
        }),
    }
}

/// Reads what `summary` needs from a results folder and runs it: groups
/// `by` (default: arm and the common axes), `metrics` (default: the
/// model's headline metrics).
pub fn run(
    results: &crate::results::ResultsDir,
    by: &[String],
    metrics: &[String],
    filter: Option<&str>,
) -> crate::Result<Summary> {
    let plan = &results.plan;
    let model = plan.model();
    let d = Design::kept(plan, filter)?;
    let by = if by.is_empty() {
        default_groups(plan)
    } else {
        by.iter()
            .map(|b| GroupKey::parse(plan, b))
            .collect::<Result<_, _>>()?
    };
    let metrics: Vec<&'static str> = if metrics.is_empty() {
        match model.headline_metrics() {
            [] => numeric_metrics(plan).into_iter().take(3).collect(),
            h => h.to_vec(),
        }
    } else {
        let allowed = numeric_metrics(plan);
        metrics
            .iter()
            .map(|m| {
                allowed.iter().copied().find(|a| a == m).ok_or_else(|| {
                    SummaryError::NotAMetric(m.clone(), model.name().into(), allowed.join(", "))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let columns = results.runs_columns(&metrics)?;
    Ok(summarize(plan, &d, &by, &metrics, &columns))
}
