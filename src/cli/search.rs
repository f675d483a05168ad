//! `witness search`: what a raced experiment decided (the survivors, the
//! rung and test that removed every other candidate, and the runs spent
//! against the full grid) in the terminal, every candidate in
//! `search.csv` and the whole outcome in `search.json`.

use std::path::Path;

use crate::analysis::search::{outcome, CandidateRow, Outcome};
use crate::error::{Error, Result};
use crate::model::Registry;
use crate::results::ResultsDir;
use crate::store::table::write_json;
use crate::store::{Format, TableData};

pub fn search(dir: &Path, top: usize, registry: &Registry) -> Result<u8> {
    let results = ResultsDir::open(dir, registry)?;
    let plan = &results.plan;
    let Some(o) = outcome(plan) else {
        return Err(Error::Usage(format!(
            "{}: its manifest has no [search]; `witness rank` or `witness summary` rank a full grid",
            dir.display()
        )));
    };
    let s = plan.schedule().expect("raced");
    let search = &s.search;
    let axis = plan.manifest.common[search.resource].name;
    outln!(
        "{}: {} over {} candidates on `{axis}`, metric {} ({} is better)",
        plan.manifest.name,
        search.method.name(),
        s.candidates(),
        search.metric,
        if search.maximize { "higher" } else { "lower" }
    )?;
    outln!("rung\t{axis} values\tcandidates\truns\tremoved")?;
    for r in &o.rungs {
        outln!(
            "{}\t{}\t{}\t{}\t{}",
            r.rung,
            values(plan, search.resource, &r.values),
            r.candidates,
            r.runs,
            r.removed
        )?;
    }
    outln!("{}", spent(&o))?;
    outln!("place\tcandidate\tmean\tvalues\toutcome")?;
    for c in o.candidates.iter().take(top) {
        outln!(
            "{}\t{}\t{}\t{}\t{}",
            c.place,
            c.candidate,
            c.mean.map_or("-".into(), |m| format!("{m:.4}")),
            c.values,
            reason(c)
        )?;
    }
    if o.candidates.len() > top {
        outln!("... {} more in search.csv", o.candidates.len() - top)?;
    }
    let table = TableData::of_records(&o.candidates);
    let csv = results.file("search.csv");
    table
        .write(&csv, Format::Csv, &[])
        .map_err(|e| Error::store(&csv, e))?;
    let doc = serde_json::json!({
        "method": search.method.name(),
        "metric": search.metric,
        "maximize": search.maximize,
        "resource": axis,
        "first": search.first,
        "eta": search.eta,
        "max": search.max,
        "alpha": (search.method == crate::search::Method::Race).then_some(search.alpha),
        "keep_at_least": search.keep_at_least,
        "runs": o.runs,
        "grid_runs": o.grid_runs,
        "survivors": o.survivors,
        "rungs": o.rungs.iter().map(|r| serde_json::json!({
            "rung": r.rung,
            // The resource's values, not their positions on its axis.
            "values": plan.manifest.common[search.resource].values[r.values.clone()]
                .iter()
                .map(crate::params::Value::to_json)
                .collect::<Vec<_>>(),
            "candidates": r.candidates,
            "runs": r.runs,
            "removed": r.removed,
        })).collect::<Vec<_>>(),
        "candidates": table.json_rows(),
    });
    let json = results.file("search.json");
    write_json(&json, &doc).map_err(|e| Error::store(&json, e))?;
    outln!("wrote {} and {}", csv.display(), json.display())?;
    Ok(0)
}

/// The runs spent, against the full grid.
fn spent(o: &Outcome) -> String {
    format!(
        "runs: {} of the full grid's {} ({:.1} %); {} survivor(s)",
        o.runs,
        o.grid_runs,
        100.0 * o.runs as f64 / o.grid_runs.max(1) as f64,
        o.survivors
    )
}

/// The resource axis' values at positions `r`, as `1` or `2..4`.
fn values(plan: &crate::grid::Plan, axis: usize, r: &std::ops::Range<usize>) -> String {
    let v = &plan.manifest.common[axis].values;
    if r.len() == 1 {
        v[r.start].plain()
    } else {
        format!("{}..{}", v[r.start].plain(), v[r.end - 1].plain())
    }
}

fn reason(c: &CandidateRow) -> String {
    match (c.outcome.as_str(), c.left_at, &c.against, c.p_adjusted) {
        ("tested", Some(k), Some(b), Some(q)) => {
            format!("removed at rung {k}: worse than {b} (Holm p = {q:.2e})")
        }
        ("halved", Some(k), _, _) => format!("removed at rung {k}: not in the best 1/eta"),
        ("not finite", Some(k), _, _) => format!("removed at rung {k}: a score is not a number"),
        _ => "survivor".into(),
    }
}
