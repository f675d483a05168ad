//! `witness rank`: order a results folder's runs by the model's ranking key
//! (e.g. the hive benchmark's correct, then decided, then fewer turns) and
//! print the top ones with the model's chosen columns, at their printed
//! precision; rank.csv keeps the full list.

use anyhow::{Context, Result};
use std::path::Path;

use super::analyze::columns;
use super::InputError;
use crate::analysis::groups::design;
use crate::grid::Plan;
use crate::params::Value;
use crate::runner::layout::Layout;

fn shown(v: &Value, decimals: usize) -> String {
    match v {
        Value::Float(x) => format!("{x:.decimals$}"),
        other => other.plain(),
    }
}

pub fn rank(dir: &Path, top: usize, grid_order: bool) -> Result<u8> {
    let manifest = Layout::new(dir).read_manifest()?;
    let plan = Plan::new(&manifest);
    let model = plan.model();
    let Some(spec) = model.ranking() else {
        return Err(InputError(format!(
            "model {} defines no ranking; use `witness summary` or `witness compare`",
            model.name()
        ))
        .into());
    };
    let d = design(&plan).map_err(InputError)?;
    let key_cols = columns(dir, &plan, spec.columns)?;
    let show_names: Vec<&str> = spec.show.iter().map(|(n, _)| *n).collect();
    let show_cols = columns(dir, &plan, &show_names)?;
    let mut order: Vec<(Vec<i64>, u64)> = (0..plan.total)
        .map(|id| {
            let run = plan.run(id);
            let vals: Vec<Value> = key_cols.iter().map(|c| c[id as usize].clone()).collect();
            ((spec.key)(&run.params, &vals), id)
        })
        .collect();
    if !grid_order {
        // Stable: equal keys keep grid order.
        order.sort_by(|a, b| b.0.cmp(&a.0));
    }
    let label = |id: u64| {
        let p = d.places[id as usize];
        let scenario = &d.scenarios[p.scenario];
        let variant = &d.variants[p.variant].label;
        if scenario == "all runs" {
            variant.clone()
        } else {
            format!("{variant} | {scenario}")
        }
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["rank", "run_id", "label"];
    header.extend(&show_names);
    w.write_record(&header)?;
    println!("{}", header.join("\t"));
    for (rank, (_, id)) in order.iter().enumerate() {
        let mut rec = vec![(rank + 1).to_string(), id.to_string(), label(*id)];
        rec.extend(
            spec.show
                .iter()
                .enumerate()
                .map(|(k, (_, decimals))| shown(&show_cols[k][*id as usize], *decimals)),
        );
        if rank < top {
            println!("{}", rec.join("\t"));
        }
        w.write_record(&rec)?;
    }
    if order.len() > top {
        println!("... {} more in rank.csv", order.len() - top);
    }
    let path = dir.join("rank.csv");
    crate::sink::atomic::write(&path, &w.into_inner()?)
        .with_context(|| path.display().to_string())?;
    println!("wrote {} (key: {})", path.display(), spec.doc);
    Ok(0)
}
