//! How `compare` and `summary` see an experiment: every run placed in a
//! scenario (its common-axis values except seed and replicate), an arm
//! variant (its arm, plus the arm's own axis values) and a seed. Derived from
//! the manifest's plan, so the value columns are all that is read from disk.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use crate::grid::Plan;

pub const NOT_SCENARIO_AXES: &[&str] = &["seed", "replicate"];

#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub label: String,
    pub arm: usize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Place {
    pub scenario: usize,
    pub variant: usize,
    pub seed: i64,
}

pub struct Design {
    pub scenarios: Vec<String>,
    pub variants: Vec<Variant>,
    /// Indexed by run_id.
    pub places: Vec<Place>,
    /// (variant, scenario) -> the first knob the variant declares that one
    /// of its runs there does not read.
    pub not_applied: HashMap<(usize, usize), &'static str>,
}

fn label(pairs: &[String]) -> String {
    pairs.join(", ")
}

pub fn design(plan: &Plan) -> Result<Design, String> {
    let m = plan.manifest;
    let model = plan.model();
    let has_seed = model.params().iter().any(|p| p.name == "seed");
    let mut scenarios: Vec<String> = Vec::new();
    let mut scenario_index: HashMap<String, usize> = HashMap::new();
    let mut variants: Vec<Variant> = Vec::new();
    let mut variant_index: HashMap<String, usize> = HashMap::new();
    let mut places = Vec::with_capacity(plan.total as usize);
    let mut not_applied = HashMap::new();
    let mut seen: HashMap<(usize, usize, i64), u64> = HashMap::new();
    for id in 0..plan.total {
        let run = plan.run(id);
        let arm = &m.arms[run.arm];
        let shown = |names: &mut dyn Iterator<Item = &'static str>| -> Vec<String> {
            names
                .filter(|n| !NOT_SCENARIO_AXES.contains(n))
                .map(|n| format!("{n}={}", run.params.get(n).plain()))
                .collect()
        };
        let s_label = label(&shown(&mut m.common.iter().map(|a| a.name)));
        let s_label = if s_label.is_empty() {
            "all runs".to_string()
        } else {
            s_label
        };
        let v_parts = shown(&mut arm.axes.iter().map(|a| a.name));
        let v_label = if v_parts.is_empty() {
            arm.name.clone()
        } else {
            format!("{}[{}]", arm.name, label(&v_parts))
        };
        let next = scenarios.len();
        let scenario = *scenario_index.entry(s_label.clone()).or_insert_with(|| {
            scenarios.push(s_label);
            next
        });
        let next = variants.len();
        let variant = *variant_index.entry(v_label.clone()).or_insert_with(|| {
            variants.push(Variant {
                label: v_label,
                arm: run.arm,
            });
            next
        });
        let seed = if has_seed { run.params.int("seed") } else { 0 };
        if let Some(other) = seen.insert((scenario, variant, seed), id) {
            return Err(format!(
                "runs {other} and {id} share arm {}, scenario ({}) and seed {seed}: compare pairs one run per seed; \
                 vary `replicate` through `placebo = true`, not a grid axis",
                variants[variant].label, scenarios[scenario]
            ));
        }
        if let Entry::Vacant(slot) = not_applied.entry((variant, scenario)) {
            let ignored = model.ignored(&run.params);
            let mut declared = arm
                .fixed
                .iter()
                .map(|(k, _)| *k)
                .chain(arm.axes.iter().map(|a| a.name));
            if let Some(k) = declared.find(|k| ignored.contains(k)) {
                slot.insert(k);
            }
        }
        places.push(Place {
            scenario,
            variant,
            seed,
        });
    }
    Ok(Design {
        scenarios,
        variants,
        places,
        not_applied,
    })
}
