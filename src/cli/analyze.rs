//! `witness compare` and `witness summary`: read only the columns they need
//! from runs.parquet, place runs with the manifest's plan, and write a
//! terminal table plus CSV (and JSON for compare) into the results folder.

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

use super::InputError;
use crate::analysis::compare::{compare as compare_rows, Answers, Comparator, Row};
use crate::analysis::groups::{design, NOT_SCENARIO_AXES};
use crate::analysis::stats::{mean, sample_sd, t_interval, BOOTSTRAP_RESAMPLES};
use crate::grid::Plan;
use crate::params::Value;
use crate::runner::layout::Layout;
use crate::sink::parquet::read_columns;

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Float(x) => Some(*x),
        Value::Int(i) => Some(*i as f64),
        Value::Bool(b) => Some(*b as u8 as f64),
        _ => None,
    }
}

/// Where `v` stands among the values a grid axis named `name` lists, so
/// groups sort in the manifest's order (30 before 120), not as text.
fn axis_position(m: &crate::manifest::Manifest, name: &str, v: &Value) -> usize {
    m.common
        .iter()
        .chain(m.arms.iter().flat_map(|a| &a.axes))
        .filter(|a| a.name == name)
        .find_map(|a| a.values.iter().position(|x| x == v))
        .unwrap_or(0)
}

/// Reads `names` from DIR/runs.parquet, checking it holds runs 0..total.
pub(super) fn columns(dir: &Path, plan: &Plan, names: &[&str]) -> Result<Vec<Vec<Value>>> {
    let path = Layout::new(dir).table("runs");
    let mut asked = vec!["run_id"];
    asked.extend_from_slice(names);
    let mut cols =
        read_columns(&path, &asked).map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    let ids = cols.remove(0);
    let in_order = ids
        .iter()
        .enumerate()
        .all(|(i, v)| *v == Value::Int(i as i64));
    if ids.len() as u64 != plan.total || !in_order {
        anyhow::bail!(
            "{}: holds {} runs, not runs 0..{} of its manifest; run `witness verify {}`",
            path.display(),
            ids.len(),
            plan.total,
            dir.display()
        );
    }
    Ok(cols)
}

pub struct CompareArgs<'a> {
    pub baseline: &'a str,
    pub metric: &'a str,
    pub outcome: Option<&'a str>,
    pub flip_below: f64,
}

pub fn compare(dir: &Path, a: &CompareArgs) -> Result<u8> {
    if !(a.flip_below > 0.0 && a.flip_below <= 1.0) {
        return Err(
            InputError(format!("--flip-below {}: allowed 0 < x <= 1", a.flip_below)).into(),
        );
    }
    let manifest = Layout::new(dir).read_manifest()?;
    let plan = Plan::new(&manifest);
    let model = plan.model();
    let d = design(&plan).map_err(InputError)?;
    let outcome = match a.outcome {
        None => None,
        Some(name) => Some(
            model
                .outcomes()
                .iter()
                .find(|o| o.name == name)
                .ok_or_else(|| {
                    let names: Vec<&str> = model.outcomes().iter().map(|o| o.name).collect();
                    InputError(format!(
                        "--outcome {name}: unknown outcome; allowed: {}",
                        names.join(", ")
                    ))
                })?,
        ),
    };
    if !model.summary_columns().iter().any(|c| c.name == a.metric) {
        let names: Vec<&str> = model.summary_columns().iter().map(|c| c.name).collect();
        return Err(InputError(format!(
            "--metric {}: not a summary column of model {}; allowed: {}",
            a.metric,
            model.name(),
            names.join(", ")
        ))
        .into());
    }
    let mut names = vec![a.metric];
    if let Some(o) = outcome {
        names.extend_from_slice(o.columns);
    }
    let cols = columns(dir, &plan, &names)?;
    let metric: Vec<f64> = cols[0]
        .iter()
        .map(|v| {
            number(v)
                .ok_or_else(|| InputError(format!("--metric {}: not a numeric column", a.metric)))
        })
        .collect::<Result<_, _>>()?;
    let outcomes: Option<Vec<String>> = outcome.map(|o| {
        (0..plan.total as usize)
            .map(|id| {
                let values: Vec<Value> = cols[1..].iter().map(|c| c[id].clone()).collect();
                (o.classify)(&plan.run(id as u64).params, &values).to_string()
            })
            .collect()
    });
    let cmp = match outcome {
        Some(o) => Comparator::Outcome {
            name: o.name.to_string(),
        },
        None => Comparator::Metric {
            name: a.metric.to_string(),
            flip_below: a.flip_below,
        },
    };
    let answers = Answers {
        metric_name: a.metric,
        metric: &metric,
        outcome: outcomes.as_deref(),
    };
    let rows = compare_rows(&d, a.baseline, &cmp, &answers).map_err(InputError)?;
    print_compare(&rows);
    write_compare(dir, &manifest.hash, a, &rows)?;
    Ok(0)
}

fn print_compare(rows: &[Row]) {
    let mut last = "";
    for r in rows {
        if r.scenario != last {
            println!("\n{}", r.scenario);
            println!(
                "  {:<28} {:<14} {:>7} {:>9} {:>8}  effect on {} (arm - {}) [95% CI]",
                "arm", "verdict", "flips", "sim mean", "floor", r.effect_metric, r.baseline
            );
            last = &r.scenario;
        }
        let applied = if r.applied { "" } else { "  (not applied)" };
        println!(
            "  {:<28} {:<14} {:>3}/{:<3} {:>9.3} {:>8.3}  {:+.4} [{:+.4}, {:+.4}]{applied}",
            r.arm,
            r.verdict.label(),
            r.flips,
            r.samples,
            r.similarity_mean,
            r.floor,
            r.effect_mean,
            r.effect_ci_low,
            r.effect_ci_high
        );
    }
    if let Some(r) = rows.first() {
        println!("\n{}", r.claim);
    }
}

fn write_compare(dir: &Path, hash: &str, a: &CompareArgs, rows: &[Row]) -> Result<()> {
    let csv_path = dir.join("compare.csv");
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    crate::sink::atomic::write(&csv_path, &w.into_inner()?)
        .with_context(|| csv_path.display().to_string())?;
    let doc = serde_json::json!({
        "manifest_sha256": hash,
        "baseline": a.baseline,
        "comparator": a.outcome.unwrap_or(a.metric),
        "comparator_kind": if a.outcome.is_some() { "domain" } else { "metric" },
        "flip_below": a.outcome.is_none().then_some(a.flip_below),
        "effect": { "metric": a.metric, "interval": "95% percentile bootstrap of the mean paired difference",
                    "resamples": BOOTSTRAP_RESAMPLES },
        "rows": rows,
    });
    let json_path = dir.join("compare.json");
    crate::sink::atomic::write(&json_path, serde_json::to_string_pretty(&doc)?.as_bytes())
        .with_context(|| json_path.display().to_string())?;
    println!("wrote {} and {}", csv_path.display(), json_path.display());
    Ok(())
}

pub fn summary(dir: &Path, by: Option<&str>, metrics: Option<&str>) -> Result<u8> {
    let manifest = Layout::new(dir).read_manifest()?;
    let plan = Plan::new(&manifest);
    let model = plan.model();
    let d = design(&plan).map_err(InputError)?;
    let by: Vec<String> = match by {
        Some(list) => list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        None => std::iter::once("arm".to_string())
            .chain(
                manifest
                    .common
                    .iter()
                    .map(|a| a.name.to_string())
                    .filter(|n| !NOT_SCENARIO_AXES.contains(&n.as_str())),
            )
            .collect(),
    };
    for b in &by {
        if b != "arm" && !model.params().iter().any(|p| p.name == b) {
            return Err(InputError(format!(
                "--by {b}: not `arm` or a parameter of model {}",
                model.name()
            ))
            .into());
        }
    }
    let metrics: Vec<&str> = match metrics {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect(),
        None if !model.headline_metrics().is_empty() => model.headline_metrics().to_vec(),
        None => model
            .summary_columns()
            .iter()
            .take(3)
            .map(|c| c.name)
            .collect(),
    };
    let cols = columns(dir, &plan, &metrics)?;
    // Group key -> one list of values per metric.
    let mut groups: BTreeMap<Vec<(usize, String)>, Vec<Vec<f64>>> = BTreeMap::new();
    for id in 0..plan.total {
        let run = plan.run(id);
        let key: Vec<(usize, String)> = by
            .iter()
            .map(|b| {
                if b == "arm" {
                    let v = d.places[id as usize].variant;
                    (v, d.variants[v].label.clone())
                } else {
                    let v = run.params.get(b);
                    (axis_position(&manifest, b, v), v.plain())
                }
            })
            .collect();
        let slot = groups
            .entry(key)
            .or_insert_with(|| vec![Vec::new(); metrics.len()]);
        for (k, col) in cols.iter().enumerate() {
            if let Some(x) = number(&col[id as usize]) {
                slot[k].push(x);
            }
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = by.clone();
    header.extend(["metric", "n", "mean", "sd", "ci95_low", "ci95_high"].map(String::from));
    w.write_record(&header)?;
    println!("{}", header.join("\t"));
    for (key, values) in &groups {
        for (k, xs) in values.iter().enumerate() {
            let (m, sd) = if xs.is_empty() {
                (f64::NAN, f64::NAN)
            } else {
                (mean(xs), sample_sd(xs))
            };
            let (lo, hi) = t_interval(xs).unwrap_or((f64::NAN, f64::NAN));
            let mut rec: Vec<String> = key.iter().map(|(_, v)| v.clone()).collect();
            rec.push(metrics[k].to_string());
            rec.push(xs.len().to_string());
            rec.extend([m, sd, lo, hi].map(|x| format!("{x}")));
            w.write_record(&rec)?;
            let shown: Vec<String> = rec[..by.len() + 2]
                .iter()
                .cloned()
                .chain([m, sd, lo, hi].map(|x| format!("{x:.4}")))
                .collect();
            println!("{}", shown.join("\t"));
        }
    }
    let path = dir.join("summary.csv");
    crate::sink::atomic::write(&path, &w.into_inner()?)
        .with_context(|| path.display().to_string())?;
    println!("wrote {}", path.display());
    Ok(0)
}
