//! How the analysis verbs see an experiment: every run placed in a scenario
//! (its common-axis values, except the seed and replicate), an arm variant
//! (its arm, plus the arm's own axis values) and a seed. Derived from the
//! manifest's plan, so the value columns are all that is read from disk.
//! Seeds and replicates are recognised by their declared roles.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::filter::pairs;
pub use super::filter::{Filter, FilterError};
use crate::grid::Plan;
use crate::manifest::Axis;
use crate::params::{lookup, with_role, ParamId, ParamSet, ParamSpec, Role, Value};

/// A combination of the common axes' values (seed and replicate aside).
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub settings: Vec<(&'static str, Value)>,
}

pub(super) fn label(settings: &[(&'static str, Value)]) -> String {
    let parts: Vec<String> = settings
        .iter()
        .map(|(k, v)| format!("{k}={}", v.plain()))
        .collect();
    parts.join(", ")
}

impl Scenario {
    /// No common axis but seeds: the scenario is every run.
    pub fn is_whole(&self) -> bool {
        self.settings.is_empty()
    }

    pub fn label(&self) -> String {
        if self.is_whole() {
            "all runs".into()
        } else {
            label(&self.settings)
        }
    }
}

/// An arm, with the values of its own axes.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// `arm` or `arm[axis=value, ...]`.
    pub label: String,
    pub arm: usize,
    pub settings: Vec<(&'static str, Value)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Place {
    pub scenario: usize,
    pub variant: usize,
    /// The run's seed (0 for a model without one).
    pub seed: i64,
    /// The run's point of a `[design]` (0 without one): runs are paired
    /// on the design point and the seed.
    pub point: u64,
}

pub struct Design {
    pub scenarios: Vec<Scenario>,
    pub variants: Vec<Variant>,
    /// Indexed by run_id; `None` for a run the filter leaves out.
    pub places: Vec<Option<Place>>,
    /// (variant, scenario) -> the first knob the variant declares that one
    /// of its runs there does not read.
    pub not_applied: HashMap<(usize, usize), &'static str>,
    /// (variant, scenario) -> the parameters its runs there do not read
    /// (by the model's own check), so a grouping can leave them out.
    pub ignored: HashMap<(usize, usize), ParamSet>,
    /// Index of each variant's placebo variant, if it has one.
    pub placebos: Vec<Option<usize>>,
    /// Whether the model has a replicate parameter, so reruns can differ.
    pub replicable: bool,
    /// A raced folder: candidates the race removed ran fewer seeds.
    pub raced: bool,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "runs {first} and {second} share arm {variant}, scenario ({scenario}) and seed {seed}: the analysis pairs one run per seed; \
     vary `{replicate}` through `placebo = true`, not a grid axis"
)]
pub struct DesignError {
    pub first: u64,
    pub second: u64,
    pub variant: String,
    pub scenario: String,
    pub seed: i64,
    pub replicate: String,
}

/// Whether an axis describes a scenario or variant (not the seed or the
/// replicate, which are what the analysis pairs and repeats over).
pub fn is_descriptive(specs: &[ParamSpec], axis: &Axis) -> bool {
    !matches!(axis.id.spec(specs).role, Role::Seed | Role::Replicate)
}

impl Design {
    pub fn of(plan: &Plan) -> Result<Design, DesignError> {
        Design::filtered(plan, &Filter::default())
    }

    /// The design of the runs a `--where` text keeps (all without one),
    /// which must keep at least one run.
    pub fn kept(plan: &Plan, filter: Option<&str>) -> crate::Result<Design> {
        let Some(text) = filter else {
            return Ok(Design::filtered(plan, &Filter::default())?);
        };
        let f = Filter::parse(plan, text)?;
        let d = Design::filtered(plan, &f)?;
        if d.places.iter().all(Option::is_none) {
            return Err(f.keeps_nothing(plan, text).into());
        }
        if let Some(e) = f.value_no_run_has(plan, text) {
            return Err(e.into());
        }
        Ok(d)
    }

    /// The design of the runs `filter` keeps.
    pub fn filtered(plan: &Plan, filter: &Filter) -> Result<Design, DesignError> {
        let m = &plan.manifest;
        let model = plan.model();
        let specs = model.params();
        let seed_id = with_role(specs, Role::Seed);
        let mut scenarios: Vec<Scenario> = Vec::new();
        let mut scenario_index: HashMap<String, usize> = HashMap::new();
        let mut variants: Vec<Variant> = Vec::new();
        let mut variant_index: HashMap<String, usize> = HashMap::new();
        let mut places = Vec::with_capacity(plan.total as usize);
        let mut not_applied = HashMap::new();
        let mut ignored = HashMap::new();
        let mut seen: HashMap<(usize, usize, u64, i64), u64> = HashMap::new();
        for id in 0..plan.total {
            let run = plan.run(id);
            if !filter.keeps(plan, &run) {
                places.push(None);
                continue;
            }
            let arm = &m.arms[run.arm];
            let settings = |axes: &mut dyn Iterator<Item = &Axis>| -> Vec<(&'static str, Value)> {
                axes.filter(|a| is_descriptive(specs, a))
                    .map(|a| (a.name, run.params.get(a.id).clone()))
                    .collect()
            };
            let s_settings = settings(&mut m.common.iter());
            let s_label = label(&s_settings);
            let v_settings = settings(&mut arm.axes.iter());
            let v_label = if v_settings.is_empty() {
                arm.name.clone()
            } else {
                format!("{}[{}]", arm.name, label(&v_settings))
            };
            let next = scenarios.len();
            let scenario = *scenario_index.entry(s_label).or_insert_with(|| {
                scenarios.push(Scenario {
                    settings: s_settings,
                });
                next
            });
            let next = variants.len();
            let variant = *variant_index.entry(v_label.clone()).or_insert_with(|| {
                variants.push(Variant {
                    label: v_label,
                    arm: run.arm,
                    settings: v_settings,
                });
                next
            });
            let seed = seed_id
                .and_then(|s| run.params.get(s).as_i64())
                .unwrap_or(0);
            let point = run.design_point.unwrap_or(0);
            if let Some(other) = seen.insert((scenario, variant, point, seed), id) {
                return Err(DesignError {
                    first: other,
                    second: id,
                    variant: variants[variant].label.clone(),
                    scenario: scenarios[scenario].label(),
                    seed,
                    replicate: with_role(specs, Role::Replicate)
                        .map_or("replicate".into(), |r| r.spec(specs).name.to_string()),
                });
            }
            if let Entry::Vacant(slot) = ignored.entry((variant, scenario)) {
                // A run the plan validated; a model that refuses it now
                // reads nothing of what the arm declared.
                let skips = *slot.insert(model.check(&run.params).unwrap_or(ParamSet::ALL));
                let mut declared = arm
                    .fixed
                    .iter()
                    .map(|(k, _)| *k)
                    .chain(arm.axes.iter().map(|a| a.id));
                if let Some(k) = declared.find(|k| skips.contains(*k)) {
                    not_applied.insert((variant, scenario), k.spec(specs).name);
                }
            }
            places.push(Some(Place {
                scenario,
                variant,
                seed,
                point,
            }));
        }
        let placebos = variants
            .iter()
            .map(|v| {
                variants.iter().position(|p| {
                    m.arms[p.arm].placebo_of == Some(v.arm) && p.settings == v.settings
                })
            })
            .collect();
        Ok(Design {
            scenarios,
            variants,
            places,
            not_applied,
            ignored,
            placebos,
            replicable: with_role(specs, Role::Replicate).is_some(),
            raced: plan.schedule().is_some(),
        })
    }

    /// Where run `id` sits, if the filter kept it.
    pub fn place(&self, id: u64) -> Option<Place> {
        self.places.get(id as usize).copied().flatten()
    }

    /// The scenario `text` names (`truth=false, graph=hub`), its values
    /// matched as values and in any order.
    pub fn scenario(&self, plan: &Plan, text: &str) -> Result<usize, FilterError> {
        let (mut want, _) = pairs(plan, "--scenario", text)?;
        let specs = plan.model().params();
        want.sort_by_key(|(id, _)| *id);
        self.scenarios
            .iter()
            .position(|s| {
                let mut have: Vec<(ParamId, &Value)> = s
                    .settings
                    .iter()
                    .filter_map(|(n, v)| lookup(specs, n).ok().map(|id| (id, v)))
                    .collect();
                have.sort_by_key(|(id, _)| *id);
                have.len() == want.len()
                    && have
                        .iter()
                        .zip(&want)
                        .all(|(a, b)| a.0 == b.0 && a.1 == &b.1)
            })
            .ok_or_else(|| {
                let all: Vec<String> = self.scenarios.iter().map(|s| s.label()).collect();
                FilterError::NoScenario(text.into(), all.join(" | "))
            })
    }

    pub fn variant(&self, label: &str) -> Option<usize> {
        self.variants.iter().position(|v| v.label == label)
    }

    /// Whether a variant is a generated placebo.
    pub fn is_placebo(&self, plan: &Plan, v: usize) -> bool {
        plan.manifest.arms[self.variants[v].arm]
            .placebo_of
            .is_some()
    }
}
