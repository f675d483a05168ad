//! `plan`'s estimate of time and size: it runs the first run of each arm (a
//! few at most) and a few more spread evenly over the grid (run cost often
//! grows along an axis, such as a budget), times them, and sizes their rows
//! before compression. The figures scale those samples; they are
//! estimates, and say so.

use std::time::Instant;

use crate::grid::Plan;
use crate::model::Row;
use crate::params::Value;
use crate::runner::tables::{run_into, tables};

const SAMPLES: usize = 4;
const SPREAD: u64 = 4;

fn human_bytes(b: f64) -> String {
    match b {
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.1} MB", b / 1e6),
        b if b >= 1e3 => format!("{:.1} kB", b / 1e3),
        b => format!("{b:.0} B"),
    }
}

fn cell_bytes(v: &Value) -> usize {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Int(_) | Value::Float(_) => 8,
        Value::Str(s) => s.len() + 4,
        Value::List(l) => 8 * l.len() + 4,
    }
}

fn human_secs(s: f64) -> String {
    match s {
        s if s >= 3600.0 => format!("{:.1} h", s / 3600.0),
        s if s >= 60.0 => format!("{:.1} min", s / 60.0),
        s => format!("{s:.2} s"),
    }
}

pub fn estimate(plan: &Plan) -> String {
    let mut ids: Vec<u64> = plan
        .arm_ranges()
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| r.start)
        .take(SAMPLES)
        .collect();
    ids.extend(
        (1..=SPREAD)
            .map(|k| (u128::from(k) * u128::from(plan.total) / u128::from(SPREAD + 1)) as u64),
    );
    ids.sort_unstable();
    ids.dedup();
    let tables = tables(&plan.manifest);
    let mut rows: Vec<Vec<Row>> = tables.iter().map(|_| Vec::new()).collect();
    let started = Instant::now();
    for &id in &ids {
        run_into(
            plan,
            &tables,
            id,
            &mut rows,
            &crate::policy::Policies::none(),
            None,
        );
    }
    let per_run = started.elapsed().as_secs_f64() / ids.len().max(1) as f64;
    let threads = rayon::current_num_threads();
    let mut lines = vec![format!(
        "estimate   ~{} on {threads} thread(s) ({:.2} ms per run, timed on {} sample run(s))",
        human_secs(per_run * plan.total as f64 / threads as f64),
        per_run * 1e3,
        ids.len()
    )];
    let mut total = 0.0;
    for (table, rows) in tables.iter().zip(&rows) {
        let bytes: usize = rows.iter().flatten().map(cell_bytes).sum();
        let scale = plan.total as f64 / ids.len().max(1) as f64;
        total += bytes as f64 * scale;
        lines.push(format!(
            "output     {}.parquet: ~{:.0} rows, at most ~{} before compression",
            table.name,
            rows.len() as f64 * scale,
            human_bytes(bytes as f64 * scale)
        ));
    }
    lines.push(format!(
        "           at most ~{} in all; zstd usually shrinks this several times",
        human_bytes(total)
    ));
    lines.join("\n")
}
