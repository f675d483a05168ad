//! The runs a reader can open one by one: each listed run's place, seed,
//! the parameters it sets beyond the manifest's base, its headline metrics
//! and (for fewer runs) its own trajectory. Past the limits the runs are an
//! even sample over run ids, and the page says so.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::{short, Context, Section, MAX_LISTED_RUNS, MAX_TRAJECTORY_RUNS};
use crate::params::Value;

/// `n` run ids spread evenly over `0..total` (all of them when they fit).
fn spread(total: u64, n: usize) -> Vec<u64> {
    if total <= n as u64 {
        return (0..total).collect();
    }
    (0..n as u64)
        .map(|i| (u128::from(i) * u128::from(total) / n as u128) as u64)
        .collect()
}

pub struct Runs;

impl Section for Runs {
    fn key(&self) -> &'static str {
        "runs"
    }

    fn build(&self, cx: &Context, notes: &mut Vec<String>) -> crate::Result<Option<Json>> {
        let plan = &cx.results.plan;
        let model = plan.model();
        let metrics: Vec<&str> = model.headline_metrics().to_vec();
        let mut asked = metrics.clone();
        asked.push("failed");
        let mut cols = cx.results.runs_columns(&asked)?;
        let failed = cols.pop().expect("asked for failed");
        let listed = spread(plan.total, MAX_LISTED_RUNS);
        if (listed.len() as u64) < plan.total {
            notes.push(format!(
                "runs: {} of {} runs are listed (evenly spread over run ids); every table and chart above uses all runs",
                listed.len(),
                plan.total
            ));
        }
        let specs = model.params();
        let base = &plan.manifest.base;
        let seed = crate::params::with_role(specs, crate::params::Role::Seed);
        // A row: id, variant, scenario, seed, failed, metrics, and the
        // parameters its place does not explain (a design point's); the
        // page composes the rest from the base, the arm and the place.
        let explained = |arm: usize, id: crate::params::ParamId| {
            let m = &plan.manifest;
            Some(id) == seed
                || m.common.iter().any(|a| a.id == id)
                || m.arms[arm].fixed.iter().any(|(k, _)| *k == id)
                || m.arms[arm].axes.iter().any(|a| a.id == id)
        };
        let rows: Vec<Json> = listed
            .iter()
            .map(|&id| {
                let run = plan.run(id);
                let place = cx.design.place(id);
                let extra: serde_json::Map<String, Json> = run
                    .params
                    .values
                    .iter()
                    .zip(&base.values)
                    .enumerate()
                    .filter(|(i, ((_, v), (_, b)))| {
                        v != b && !explained(run.arm, crate::params::ParamId(*i))
                    })
                    .map(|(i, ((_, v), _))| (specs[i].name.to_string(), json!(v.plain())))
                    .collect();
                let values: Vec<Json> = cols
                    .iter()
                    .map(|c| super::sections::cell(&c[id as usize]))
                    .collect();
                json!([
                    id,
                    place.map(|p| p.variant),
                    place.map(|p| p.scenario),
                    place.map(|p| p.seed),
                    matches!(failed[id as usize], Value::Bool(true)),
                    values,
                    extra,
                ])
            })
            .collect();
        let base_params: Vec<Json> = base
            .values
            .iter()
            .enumerate()
            .map(|(i, (_, v))| json!([specs[i].name, v.plain()]))
            .collect();
        let traced = spread(listed.len() as u64, MAX_TRAJECTORY_RUNS)
            .into_iter()
            .map(|k| listed[k as usize])
            .collect::<Vec<u64>>();
        let trajectories = trajectories(cx, &traced)?;
        if trajectories.is_some() && traced.len() < listed.len() {
            notes.push(format!(
                "runs: {} of the listed runs carry their own trajectory (evenly spread)",
                traced.len()
            ));
        }
        Ok(Some(json!({
            "metrics": metrics,
            "seed": seed.map(|s| specs[s.0].name),
            "base": base_params,
            "rows": rows,
            "trajectories": trajectories,
        })))
    }
}

/// Each chosen run's curve values per x, scaled as the charts are.
fn trajectories(cx: &Context, ids: &[u64]) -> crate::Result<Option<Json>> {
    let plan = &cx.results.plan;
    let model = plan.model();
    let Some((table, x, columns, _)) = model.curves() else {
        return Ok(None);
    };
    if !cx.results.has_table(table) {
        return Ok(None);
    }
    let scale: BTreeMap<u64, f64> = ids
        .iter()
        .map(|&id| (id, model.curve_scale(&plan.run(id).params)))
        .collect();
    let mut names = vec!["run_id", x];
    names.extend_from_slice(columns);
    let mut curves: BTreeMap<u64, Vec<Vec<Json>>> = BTreeMap::new();
    cx.results.scan(table, &names, |row| {
        let Some(id) = row[0].as_i64().and_then(|i| u64::try_from(i).ok()) else {
            return;
        };
        let Some(s) = scale.get(&id) else {
            return;
        };
        let c = curves
            .entry(id)
            .or_insert_with(|| vec![Vec::new(); columns.len()]);
        for (k, v) in row[2..].iter().enumerate() {
            c[k].push(short(v.as_f64().unwrap_or(f64::NAN) / s));
        }
    })?;
    let by_run: serde_json::Map<String, Json> = curves
        .into_iter()
        .map(|(id, c)| (id.to_string(), json!(c)))
        .collect();
    Ok(Some(json!({ "x": x, "columns": columns, "runs": by_run })))
}
