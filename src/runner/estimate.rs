//! `plan`'s estimate of time and size: it runs the first run of each arm (a
//! few at most) and a few more spread evenly over the grid (run cost often
//! grows along an axis, such as a budget), times them, and sizes their rows
//! before compression. The figures scale those samples; they are
//! estimates, and say so.

use std::time::Instant;

use crate::grid::Plan;
use crate::model::Columns;
use crate::params::Value;
use crate::policy::Policies;
use crate::runner::tables::{run_into, tables};

const SAMPLES: usize = 4;
const SPREAD: u64 = 4;

/// A byte count for people: B, kB, MB or GB, to one decimal.
pub fn human_bytes(b: f64) -> String {
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

/// The estimate; `probe` holds live external arms (writing their log to a
/// scratch folder) when their runs are to be timed too, else those runs
/// are left out of the timing.
pub fn estimate(plan: &Plan, probe: Option<&Policies>) -> String {
    // Timed on points of the full grid (a race runs part of it).
    let external = |id: u64| plan.manifest.arms[plan.grid_run(id).arm].external.is_some();
    let mut ids: Vec<u64> = plan
        .arm_ranges()
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| r.start)
        .take(SAMPLES)
        .collect();
    ids.extend(
        (1..=SPREAD).map(|k| {
            (u128::from(k) * u128::from(plan.grid_total()) / u128::from(SPREAD + 1)) as u64
        }),
    );
    ids.sort_unstable();
    ids.dedup();
    ids.retain(|&id| probe.is_some() || !external(id));
    let tables = tables(&plan.manifest);
    let mut rows: Vec<Columns> = tables.iter().map(|t| Columns::new(&t.columns)).collect();
    let none = Policies::none();
    let mut logs = probe.and_then(|p| p.chunk(0).ok());
    // Seconds per run, built-in and external.
    let mut spent = [(0.0f64, 0u64); 2];
    for &id in &ids {
        let started = Instant::now();
        let ext = external(id);
        // A raced plan's rows carry the rung their run belongs to; a
        // sample is timed as if in the first.
        let spec = crate::grid::RunSpec {
            rung: plan.schedule().map(|_| 0),
            ..plan.grid_run(id)
        };
        run_into(
            plan,
            &tables,
            &spec,
            &mut rows,
            probe.unwrap_or(&none),
            logs.as_mut(),
        );
        let s = &mut spent[usize::from(ext)];
        s.0 += started.elapsed().as_secs_f64();
        s.1 += 1;
    }
    let counts = {
        let mut c = [0u64; 2];
        for (arm, r) in plan.manifest.arms.iter().zip(plan.arm_ranges()) {
            c[usize::from(arm.external.is_some())] += r.end - r.start;
        }
        c
    };
    let threads = rayon::current_num_threads();
    let mut lines = Vec::new();
    let per_run = |k: usize| spent[k].0 / spent[k].1.max(1) as f64;
    let mut secs = counts[0] as f64 * per_run(0) / threads as f64;
    let timed = if spent[1].1 > 0 || counts[1] == 0 {
        let jobs: usize = plan
            .manifest
            .arms
            .iter()
            .filter_map(|a| a.external.as_ref())
            .map(|e| e.jobs)
            .max()
            .unwrap_or(1);
        secs += counts[1] as f64 * per_run(1) / threads.min(jobs).max(1) as f64;
        String::new()
    } else {
        format!(
            "; the {} runs of external arms are not timed (`plan --probe-policy` times one)",
            counts[1]
        )
    };
    lines.push(format!(
        "estimate   ~{} on {threads} thread(s) ({:.2} ms per run, timed on {} sample run(s){timed})",
        human_secs(secs),
        (spent[0].0 + spent[1].0) * 1e3 / ids.len().max(1) as f64,
        ids.len()
    ));
    let mut total = 0.0;
    for (table, rows) in tables.iter().zip(&rows) {
        let bytes: usize = rows.to_rows().iter().flatten().map(cell_bytes).sum();
        let scale = plan.grid_total() as f64 / ids.len().max(1) as f64;
        total += bytes as f64 * scale;
        lines.push(format!(
            "output     {}.parquet: ~{:.0} rows, at most ~{} before compression",
            table.name,
            rows.rows() as f64 * scale,
            human_bytes(bytes as f64 * scale)
        ));
    }
    lines.push(format!(
        "           at most ~{} in all; zstd usually shrinks this several times",
        human_bytes(total)
    ));
    lines.join("\n")
}
