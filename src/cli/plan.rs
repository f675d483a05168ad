//! `witness plan`: a manifest checked and described, with warnings and an
//! estimate of time and size, before anything runs.

use std::path::Path;

use crate::error::Result;
use crate::grid::Plan;
use crate::model::Registry;
use crate::params::Value;
use crate::runner::{chunk_count, estimate::estimate};

/// Expands and checks the whole grid.
pub(super) fn checked_plan(
    path: &Path,
    max_runs: u64,
    registry: &Registry,
) -> Result<(Plan, Vec<String>)> {
    let plan = Plan::new(super::load(path, registry)?)?;
    plan.check_size(max_runs)?;
    let warnings = plan.validate()?;
    Ok((plan, warnings))
}

fn summarize_values(values: &[Value]) -> String {
    let text: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    if text.len() > 8 {
        format!(
            "{} values: {}, {}, ..., {}",
            text.len(),
            text[0],
            text[1],
            text[text.len() - 1]
        )
    } else {
        format!("[{}]", text.join(", "))
    }
}

pub fn plan(path: &Path, max_runs: u64, registry: &Registry) -> Result<u8> {
    let (plan, warnings) = checked_plan(path, max_runs, registry)?;
    let m = &plan.manifest;
    let model = m.model;
    let specs = model.params();
    println!(
        "experiment {} (model {}, {})",
        m.name,
        model.name(),
        model.version()
    );
    if !m.description.is_empty() {
        println!("           {}", m.description);
    }
    let common: u64 = m.common.iter().map(|a| a.values.len() as u64).product();
    println!(
        "runs       {} ({} arm(s), {} common grid points each)",
        plan.total,
        m.arms.len(),
        common
    );
    for a in &m.common {
        println!("axis       {} = {}", a.name, summarize_values(&a.values));
    }
    for ((i, arm), range) in m.arms.iter().enumerate().zip(plan.arm_ranges()) {
        let pinned: Vec<String> = arm
            .fixed
            .iter()
            .map(|(k, v)| format!("{} = {v}", k.spec(specs).name))
            .collect();
        let axes: Vec<String> = arm
            .axes
            .iter()
            .map(|a| format!("{} = {}", a.name, summarize_values(&a.values)))
            .collect();
        println!(
            "arm {i:<6} {} ({} runs) {} {}",
            arm.name,
            range.end - range.start,
            pinned.join(", "),
            axes.join(", ")
        );
    }
    println!(
        "chunks     {} of up to {} runs",
        chunk_count(&plan),
        m.chunk_runs
    );
    println!("{}", estimate(&plan));
    if warnings.is_empty() {
        println!("warnings   none");
    }
    for w in &warnings {
        println!("warning    {w}");
    }
    Ok(0)
}
