//! `rank` without the I/O: runs ordered by the model's ranking key,
//! highest first, equal keys in grid order, with the model's chosen
//! columns at their printed precision.

use super::design::Design;
use crate::grid::Plan;
use crate::model::{ColType, Column, RecordError, Row};
use crate::params::Value;
use crate::store::TableData;

fn shown(v: &Value, decimals: usize) -> String {
    match v {
        Value::Float(x) => format!("{x:.decimals$}"),
        other => other.plain(),
    }
}

/// The ranked table (rank, run_id, label, shown columns), every run.
/// `summaries[id]` is run `id`'s summary row.
pub fn rank(
    plan: &Plan,
    d: &Design,
    summaries: &[Row],
    grid_order: bool,
) -> Result<Option<TableData>, RecordError> {
    let model = plan.model();
    let Some((_, show)) = model.ranking() else {
        return Ok(None);
    };
    // Each kept run's key, id and place in the full grid. A raced folder
    // numbers its runs in rung order, so ties and `grid_order` go by the
    // grid: the manifest's order of candidates, whatever the race did.
    let mut order: Vec<(Vec<i64>, u64, u64)> = (0..plan.total)
        .filter(|&id| d.place(id).is_some())
        .map(|id| {
            let key = model.rank_key(&plan.run(id).params, &summaries[id as usize])?;
            Ok((key, id, plan.grid_id(id)))
        })
        .collect::<Result<_, RecordError>>()?;
    order.sort_by_key(|o| o.2);
    // Stable: equal keys keep grid order.
    let mut ranked: Vec<usize> = (0..order.len()).collect();
    ranked.sort_by(|&a, &b| order[b].0.cmp(&order[a].0));
    // Each run's place in the ranking, by its position in grid order; with
    // `grid_order` the rows keep the manifest's order but still carry it.
    let mut place = vec![0; order.len()];
    for (r, &i) in ranked.iter().enumerate() {
        place[i] = r + 1;
    }
    let rows_in: Vec<(usize, u64)> = if grid_order {
        order
            .iter()
            .enumerate()
            .map(|(i, o)| (place[i], o.1))
            .collect()
    } else {
        ranked.iter().map(|&i| (place[i], order[i].1)).collect()
    };
    let label = |id: u64| {
        let p = d.place(id).expect("kept runs only");
        let scenario = &d.scenarios[p.scenario];
        let variant = &d.variants[p.variant].label;
        // A design point is named by the values it sets.
        let point = plan.manifest.design.as_ref().map(|design| {
            let values = design.point(p.point as usize);
            let set: Vec<String> = design
                .params
                .iter()
                .zip(&values)
                .map(|((_, name), v)| format!("{name}={}", v.plain()))
                .collect();
            format!("point {}: {}", p.point, set.join(", "))
        });
        let mut parts = vec![variant.clone()];
        parts.extend(point);
        if !scenario.is_whole() {
            parts.push(scenario.label());
        }
        parts.join(" | ")
    };
    let summary_columns = model.summary_columns();
    let at = |name: &str| {
        summary_columns
            .iter()
            .position(|c| c.name == name)
            .expect("ranking columns are summary columns (checked for every model)")
    };
    let mut columns = vec![
        Column::new("rank", ColType::Int, false, "1 = best"),
        Column::new("run_id", ColType::Int, false, ""),
        Column::new("label", ColType::Str, false, "arm variant | scenario"),
    ];
    columns.extend(
        show.iter()
            .map(|(n, _)| Column::new(n, ColType::Str, true, "")),
    );
    let rows = rows_in
        .iter()
        .map(|(rank, id)| {
            let mut row = vec![Value::from(*rank), Value::from(*id), Value::Str(label(*id))];
            row.extend(show.iter().map(|(n, decimals)| {
                Value::Str(shown(&summaries[*id as usize][at(n)], *decimals))
            }));
            row
        })
        .collect();
    Ok(Some(TableData { columns, rows }))
}

/// Reads what `rank` needs from a results folder and ranks its runs.
pub fn run(
    results: &crate::results::ResultsDir,
    grid_order: bool,
    filter: Option<&str>,
) -> crate::Result<TableData> {
    let plan = &results.plan;
    let model = plan.model();
    let d = Design::kept(plan, filter)?;
    let summaries = results.summary_rows()?;
    let path = results.layout.table("runs").display().to_string();
    rank(plan, &d, &summaries, grid_order)
        .map_err(|source| crate::Error::Record { path, source })?
        .ok_or_else(|| {
            crate::Error::Usage(format!(
                "model {} defines no ranking; use `witness summary` or `witness compare`",
                model.name()
            ))
        })
}
