//! The report's sections other than the runs: provenance, the layout of
//! the experiment, headline metrics per cell, verdicts, trajectory charts,
//! the model's ranking and a race's outcome.

use serde_json::{json, Value as Json};

use super::{short, Context, Section, MAX_CHART_SCENARIOS, MAX_TABLE_ROWS};
use crate::analysis::compare::{self, BaselineRule, Testing};
use crate::analysis::curves::Trajectories;
use crate::analysis::multiplicity::Adjust;
use crate::store::seal::Seal;
use crate::store::TableData;

/// A cell for the page: floats shortened, a missing value null.
pub fn cell(v: &crate::params::Value) -> Json {
    match v {
        crate::params::Value::Float(x) => short(*x),
        crate::params::Value::Null => Json::Null,
        other => other.to_json(),
    }
}

/// A table as column names and rows of cells, at most `limit` rows.
fn table_of(t: &TableData, what: &str, limit: usize, notes: &mut Vec<String>) -> Json {
    if t.rows.len() > limit {
        notes.push(format!(
            "{what}: the first {limit} of {} rows are shown",
            t.rows.len()
        ));
    }
    let rows: Vec<Json> = t
        .rows
        .iter()
        .take(limit)
        .map(|r| Json::Array(r.iter().map(cell).collect()))
        .collect();
    let columns: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
    json!({ "columns": columns, "rows": rows })
}

fn table(t: &TableData, what: &str, notes: &mut Vec<String>) -> Json {
    table_of(t, what, MAX_TABLE_ROWS, notes)
}

/// Headline cells feed the pivot and the heatmap, so they are kept whole
/// far beyond a table's length.
const MAX_SUMMARY_ROWS: usize = 60_000;

/// Ranked runs shown: the top of the table is what a reader reads.
const MAX_RANKED: usize = 500;

/// Replaces a column of arm-variant labels by their indices into the
/// layout's variants, which the page turns back into labels: a label can
/// be a hundred characters and repeats in every row.
fn by_variant(cx: &Context, t: &mut TableData, column: &str) {
    let Some(k) = t.columns.iter().position(|c| c.name == column) else {
        return;
    };
    let index: std::collections::HashMap<&str, usize> = cx
        .design
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| (v.label.as_str(), i))
        .collect();
    for row in &mut t.rows {
        if let Some(&i) = row[k].as_str().and_then(|l| index.get(l)) {
            row[k] = crate::params::Value::Int(i as i64);
        }
    }
}

pub struct Provenance;

impl Section for Provenance {
    fn key(&self) -> &'static str {
        "provenance"
    }

    fn build(&self, cx: &Context, _: &mut Vec<String>) -> crate::Result<Option<Json>> {
        let plan = &cx.results.plan;
        let m = &plan.manifest;
        let model = plan.model();
        let failed = cx.results.runs_columns(&["failed", "failure"])?;
        let failures: Vec<Json> = failed[0]
            .iter()
            .zip(&failed[1])
            .enumerate()
            .filter(|(_, (f, _))| matches!(f, crate::params::Value::Bool(true)))
            .map(|(id, (_, why))| json!([id, why.plain()]))
            .collect();
        let seal = Seal::read(cx.results.dir()).ok().flatten();
        // Sizes only: `witness verify` is the check of the bytes.
        let sizes_match = seal.as_ref().is_some_and(|s| {
            s.tables.iter().all(|t| {
                std::fs::metadata(cx.results.dir().join(&t.file)).is_ok_and(|m| m.len() == t.bytes)
            })
        });
        Ok(Some(json!({
            "name": m.name,
            "description": m.description,
            "model": model.name(),
            "engine_version": model.version(),
            "written_by": seal.as_ref().map(|s| s.witness.clone()),
            "sealed": seal.is_some(),
            "sizes_match": sizes_match,
            "manifest": m.text,
            "manifest_sha256": m.hash,
            "runs": plan.total,
            "failed": failures,
        })))
    }
}

pub struct Layout;

impl Section for Layout {
    fn key(&self) -> &'static str {
        "layout"
    }

    fn build(&self, cx: &Context, _: &mut Vec<String>) -> crate::Result<Option<Json>> {
        let plan = &cx.results.plan;
        let m = &plan.manifest;
        let specs = plan.model().params();
        let values =
            |vs: &[crate::params::Value]| -> Vec<String> { vs.iter().map(|v| v.plain()).collect() };
        let axes: Vec<Json> = m
            .common
            .iter()
            .map(|a| json!({ "name": a.name, "values": values(&a.values) }))
            .collect();
        let d = &cx.design;
        let arms: Vec<Json> = m
            .arms
            .iter()
            .enumerate()
            .map(|(i, a)| {
                // The axes that name the arm's variants (not its seeds).
                let named: Vec<&str> = d
                    .variants
                    .iter()
                    .find(|v| v.arm == i)
                    .map(|v| v.settings.iter().map(|(k, _)| *k).collect())
                    .unwrap_or_default();
                let fixed: Vec<Json> = a
                    .fixed
                    .iter()
                    .map(|(k, v)| json!([k.spec(specs).name, v.plain()]))
                    .collect();
                let own: Vec<Json> = a
                    .axes
                    .iter()
                    .map(|x| json!({ "name": x.name, "values": values(&x.values) }))
                    .collect();
                json!({ "name": a.name, "fixed": fixed, "axes": own, "named": named })
            })
            .collect();
        let settings = |s: &[(&str, crate::params::Value)]| -> Json {
            Json::Object(
                s.iter()
                    .map(|(k, v)| (k.to_string(), json!(v.plain())))
                    .collect(),
            )
        };
        let scenarios: Vec<Json> = d
            .scenarios
            .iter()
            .map(|s| json!({ "label": s.label(), "settings": settings(&s.settings) }))
            .collect();
        // A variant is its arm and its own axes' values, in the arm's axis
        // order: the page rebuilds `arm[axis=value, ...]` from them.
        let variants: Vec<Json> = d
            .variants
            .iter()
            .map(|v| {
                json!([
                    v.arm,
                    v.settings
                        .iter()
                        .map(|(_, x)| x.plain())
                        .collect::<Vec<_>>()
                ])
            })
            .collect();
        Ok(Some(json!({
            "axes": axes,
            "arms": arms,
            "design": m.design.as_ref().map(|x| x.describe()),
            "scenarios": scenarios,
            "variants": variants,
            "grid_runs": plan.grid_total(),
        })))
    }
}

/// Headline metrics per arm variant and scenario: the `summary` table.
pub struct Summary;

impl Section for Summary {
    fn key(&self) -> &'static str {
        "summary"
    }

    fn build(&self, cx: &Context, notes: &mut Vec<String>) -> crate::Result<Option<Json>> {
        let summary = crate::analysis::summary::run(cx.results, &[], &[], None)?;
        if let Some(first) = summary.missing.first() {
            notes.push(format!(
                "summary: {} cell(s) have a metric without a value in some runs, e.g. {first}",
                summary.missing.len()
            ));
        }
        let mut t = summary.table;
        by_variant(cx, &mut t, "arm");
        let model = cx.results.model();
        let docs: serde_json::Map<String, Json> = model
            .summary_columns()
            .iter()
            .map(|c| (c.name.to_string(), json!(c.doc)))
            .collect();
        let mut out = table_of(
            &t,
            "the headline metrics (and so the pivot and the heatmap)",
            MAX_SUMMARY_ROWS,
            notes,
        );
        out["docs"] = Json::Object(docs);
        out["headline"] = json!(model.headline_metrics());
        // Which way each metric is better, for the heatmap's legend.
        let better: serde_json::Map<String, Json> = model
            .summary_columns()
            .iter()
            .map(|c| (c.name.to_string(), json!(c.judge.better.name())))
            .collect();
        out["better"] = Json::Object(better);
        Ok(Some(out))
    }
}

/// `compare`'s verdicts, when a baseline is given.
pub struct Verdicts;

impl Section for Verdicts {
    fn key(&self) -> &'static str {
        "verdicts"
    }

    fn build(&self, cx: &Context, notes: &mut Vec<String>) -> crate::Result<Option<Json>> {
        let Some(baseline) = cx.request.baseline else {
            return Ok(None);
        };
        let report = compare::run(
            cx.results,
            &compare::Request {
                baseline,
                metric: None,
                outcome: None,
                flip_delta: None,
                flip_below: None,
                filter: None,
                testing: Testing {
                    adjust: Adjust::Holm,
                    rule: BaselineRule::Fisher,
                    alpha: 0.05,
                    sesoi: None,
                },
            },
        )?;
        let mut out = table(&TableData::of_records(&report.rows), "the verdicts", notes);
        out["baseline"] = json!(baseline);
        out["placebo"] = json!(report.placebo);
        out["warnings"] = json!(report.warnings);
        out["alpha"] = json!(0.05);
        notes.extend(report.warnings);
        Ok(Some(out))
    }
}

/// Mean curves per scenario and arm, with a ±1 sd band.
pub struct Curves;

impl Section for Curves {
    fn key(&self) -> &'static str {
        "curves"
    }

    fn build(&self, cx: &Context, notes: &mut Vec<String>) -> crate::Result<Option<Json>> {
        let plan = &cx.results.plan;
        let Some((table, x, columns, y)) = plan.model().curves() else {
            return Ok(None);
        };
        if !cx.results.has_table(table) {
            notes.push(format!(
                "no {table}.parquet (set [output] {table} = true): no trajectory charts"
            ));
            return Ok(None);
        }
        let d = &cx.design;
        if d.scenarios.len() > MAX_CHART_SCENARIOS {
            notes.push(format!(
                "trajectories: the first {MAX_CHART_SCENARIOS} of {} scenarios are drawn",
                d.scenarios.len()
            ));
        }
        let chosen: Vec<usize> = (0..d.scenarios.len().min(MAX_CHART_SCENARIOS)).collect();
        let acc = Trajectories::read(cx.results, d, &chosen)?;
        let nums = |v: &[f64]| -> Vec<Json> { v.iter().map(|x| short(*x)).collect() };
        let figures: Vec<Json> = acc
            .figures(plan)
            .into_iter()
            .map(|(s, fig)| {
                let panels: Vec<Json> = fig
                    .panels
                    .iter()
                    .map(|p| {
                        let series: Vec<Json> = p
                            .series
                            .iter()
                            .map(|s| json!({ "label": s.label, "mean": nums(&s.mean), "low": nums(&s.low), "high": nums(&s.high) }))
                            .collect();
                        json!({ "title": p.title, "series": series })
                    })
                    .collect();
                json!({ "scenario": s, "title": fig.title, "panels": panels })
            })
            .collect();
        Ok(Some(
            json!({ "x": x, "y": y, "columns": columns, "figures": figures }),
        ))
    }
}

/// The model's ranking of runs, best first.
pub struct Ranking;

impl Section for Ranking {
    fn key(&self) -> &'static str {
        "ranking"
    }

    fn build(&self, cx: &Context, notes: &mut Vec<String>) -> crate::Result<Option<Json>> {
        let Some((doc, _)) = cx.results.model().ranking() else {
            return Ok(None);
        };
        let mut t = crate::analysis::rank::run(cx.results, false, None)?;
        t.rows.truncate(MAX_RANKED);
        let total = cx.results.plan.total;
        if total > MAX_RANKED as u64 {
            notes.push(format!(
                "ranking: the top {MAX_RANKED} of {total} runs are shown"
            ));
        }
        let mut out = table(&t, "the ranking", notes);
        out["key"] = json!(doc);
        Ok(Some(out))
    }
}

/// What a `[search]` decided.
pub struct Race;

impl Section for Race {
    fn key(&self) -> &'static str {
        "race"
    }

    fn build(&self, cx: &Context, notes: &mut Vec<String>) -> crate::Result<Option<Json>> {
        let plan = &cx.results.plan;
        let Some(o) = crate::analysis::search::outcome(plan) else {
            return Ok(None);
        };
        let s = &plan.schedule().expect("raced").search;
        let rungs: Vec<Json> = o
            .rungs
            .iter()
            .map(|r| {
                json!([
                    r.rung,
                    r.values.start,
                    r.values.end,
                    r.candidates,
                    r.runs,
                    r.removed
                ])
            })
            .collect();
        let mut t = TableData::of_records(&o.candidates);
        by_variant(cx, &mut t, "candidate");
        by_variant(cx, &mut t, "against");
        let mut out = table(&t, "the race", notes);
        out["method"] = json!(s.method.name());
        out["metric"] = json!(s.metric);
        out["resource"] = json!(plan.manifest.common[s.resource].name);
        out["rungs"] = json!(rungs);
        out["runs"] = json!(o.runs);
        out["grid_runs"] = json!(o.grid_runs);
        Ok(Some(out))
    }
}
