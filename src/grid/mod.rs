//! Grid expansion: arms in the order written, each crossed with its own axes
//! and then the common axes, last axis fastest. A run is found from its id
//! by mixed-radix arithmetic, so a plan of millions of runs costs nothing to
//! hold and any chunk can be expanded on its own. Sizes are computed with
//! checked arithmetic, so no grid is ever miscounted.

use crate::manifest::{Axis, Manifest};
use crate::model::DynModel;
use crate::params::{ParamError, Resolved};
use crate::search::schedule::Geometry;
use crate::search::Schedule;

mod key;
mod validate;

pub use key::run_key;
pub use validate::Validation;

/// An experiment's runs in order. Owns its manifest, so a results folder
/// can hold both. A raced plan holds the runs of the rungs scheduled so
/// far (its `total` grows as rungs are decided); every other plan is its
/// full grid.
#[derive(Clone)]
pub struct Plan {
    pub manifest: Manifest,
    /// Runs of each arm (its axes times the common axes).
    arm_sizes: Vec<u64>,
    pub total: u64,
    /// The full grid's size.
    grid_total: u64,
    schedule: Option<Schedule>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub run_id: u64,
    pub arm: usize,
    pub params: Resolved,
    /// The index of the run's design point, when the manifest has a
    /// `[design]` other than the grid.
    pub design_point: Option<u64>,
    /// The rung of a raced plan the run belongs to.
    pub rung: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{file}: run {run_id} (arm {arm}: {settings}) is invalid: {source}")]
    Invalid {
        file: String,
        run_id: u64,
        arm: String,
        settings: String,
        source: Box<ParamError>,
    },
    #[error(
        "{file}: the grid has {total} runs, over the limit of {limit}; \
         pass --max-runs {total} to run it anyway, or shrink the grid"
    )]
    TooLarge {
        file: String,
        /// The exact size, which may exceed what a u64 holds.
        total: u128,
        limit: u64,
    },
    #[error(
        "{file}: the grid has more runs than witness can number (over 2^64: {size}); shrink the grid"
    )]
    Unnumberable { file: String, size: String },
    #[error("{file}: run {run_id} (arm {arm}): {message}")]
    External {
        file: String,
        run_id: u64,
        arm: String,
        message: String,
    },
}

impl PlanError {
    fn run_id(&self) -> u64 {
        match self {
            PlanError::Invalid { run_id, .. } | PlanError::External { run_id, .. } => *run_id,
            _ => 0,
        }
    }
}

/// Where a raced plan's candidates (each arm's own axis points) sit in the
/// full grid; a search has no design, so each holds the common axes.
fn geometry(m: &Manifest, arm_sizes: &[u64], resource: usize) -> Geometry {
    let per_candidate: u64 = m.common.iter().map(|a| a.values.len() as u64).product();
    let stride: u64 = m.common[resource + 1..]
        .iter()
        .map(|a| a.values.len() as u64)
        .product();
    let mut starts = Vec::new();
    let mut exempt = Vec::new();
    let mut offset = 0;
    for (a, &n) in arm_sizes.iter().enumerate() {
        // A placebo and the arm it reruns are compare's reference: they
        // run every resource value and are never removed.
        let reference =
            m.arms[a].placebo_of.is_some() || m.arms.iter().any(|x| x.placebo_of == Some(a));
        starts.extend((0..n / per_candidate).map(|p| offset + p * per_candidate));
        exempt.extend((0..n / per_candidate).map(|_| reference));
        offset += n;
    }
    Geometry {
        starts,
        exempt,
        per_candidate,
        stride,
        values: m.common[resource].values.len() as u64,
    }
}

/// The number of points of some axes, exactly, or `None` past u128.
fn size(axes: &[Axis]) -> Option<u128> {
    axes.iter()
        .try_fold(1u128, |n, a| n.checked_mul(a.values.len() as u128))
}

impl Plan {
    /// The plan of a manifest, refusing grids whose runs cannot be numbered.
    pub fn new(manifest: Manifest) -> Result<Plan, PlanError> {
        let points = manifest.design.as_ref().map_or(1, |d| d.len() as u128);
        let common = size(&manifest.common).and_then(|n| n.checked_mul(points));
        let exact: Option<Vec<u128>> = manifest
            .arms
            .iter()
            .map(|a| size(&a.axes)?.checked_mul(common?))
            .collect();
        let total = exact
            .as_ref()
            .and_then(|sizes| sizes.iter().try_fold(0u128, |t, &n| t.checked_add(n)));
        let fits = |n: u128| u64::try_from(n).ok();
        match (exact, total.and_then(fits)) {
            (Some(sizes), Some(total)) => {
                let arm_sizes: Vec<u64> = sizes.into_iter().map(|n| n as u64).collect();
                let schedule = manifest.search.clone().map(|search| {
                    let geometry = geometry(&manifest, &arm_sizes, search.resource);
                    Schedule::new(search, geometry, manifest.chunk_runs as u64)
                });
                Ok(Plan {
                    total: schedule.as_ref().map_or(total, Schedule::len),
                    grid_total: total,
                    schedule,
                    arm_sizes,
                    manifest,
                })
            }
            _ => Err(PlanError::Unnumberable {
                file: manifest.file.clone(),
                size: total.map_or("more than 2^128".into(), |t| t.to_string()),
            }),
        }
    }

    pub fn model(&self) -> &'static dyn DynModel {
        self.manifest.model
    }

    pub fn check_size(&self, limit: u64) -> Result<(), PlanError> {
        if self.total > limit {
            return Err(PlanError::TooLarge {
                file: self.manifest.file.clone(),
                total: u128::from(self.total),
                limit,
            });
        }
        Ok(())
    }

    /// The full grid's size (a raced plan runs part of it).
    pub fn grid_total(&self) -> u64 {
        self.grid_total
    }

    /// Run `run_id`'s place in the full grid: the run id itself, except
    /// in a raced plan, whose runs are numbered in the order they were
    /// scheduled.
    pub fn grid_id(&self, run_id: u64) -> u64 {
        self.schedule.as_ref().map_or(run_id, |s| s.grid_id(run_id))
    }

    /// The race of a manifest with `[search]`.
    pub fn schedule(&self) -> Option<&Schedule> {
        self.schedule.as_ref()
    }

    /// Records the metric of the undecided rung's runs and schedules the
    /// next rung, if one is due (see `Schedule::record`).
    pub fn record_rung(&mut self, metric: &[f64]) {
        let s = self.schedule.as_mut().expect("a raced plan");
        s.record(metric);
        self.total = s.len();
    }

    pub fn chunk_count(&self) -> u64 {
        match &self.schedule {
            Some(s) => s.chunk_count(),
            None => self.total.div_ceil(self.manifest.chunk_runs as u64),
        }
    }

    /// The runs of a chunk: fixed blocks of `chunk_runs`, which in a raced
    /// plan start again at each rung.
    pub fn chunk_runs(&self, chunk: u64) -> std::ops::Range<u64> {
        match &self.schedule {
            Some(s) => s.chunk_runs(chunk),
            None => {
                let k = self.manifest.chunk_runs as u64;
                chunk * k..((chunk + 1) * k).min(self.total)
            }
        }
    }

    /// The chunk that holds a run.
    pub fn chunk_of(&self, run_id: u64) -> u64 {
        match &self.schedule {
            Some(s) => s.chunk_of(run_id),
            None => run_id / self.manifest.chunk_runs as u64,
        }
    }

    /// Whether every run of the plan is known (a race is decided to its end).
    pub fn finished(&self) -> bool {
        self.schedule.as_ref().is_none_or(Schedule::finished)
    }

    pub fn run(&self, run_id: u64) -> RunSpec {
        assert!(
            run_id < self.total,
            "run {run_id} outside a plan of {}",
            self.total
        );
        match &self.schedule {
            None => self.grid_run(run_id),
            Some(s) => RunSpec {
                run_id,
                rung: Some(s.rung_of(run_id) as u32),
                ..self.grid_run(self.grid_id(run_id))
            },
        }
    }

    /// The run at a point of the full grid, numbered by that point.
    pub fn grid_run(&self, grid_id: u64) -> RunSpec {
        let run_id = grid_id;
        let (mut arm, mut rest) = (0, run_id);
        while rest >= self.arm_sizes[arm] {
            rest -= self.arm_sizes[arm];
            arm += 1;
        }
        let a = &self.manifest.arms[arm];
        let mut params = self.manifest.base.clone();
        for (k, v) in &a.fixed {
            params.set(*k, v.clone());
        }
        // Decode from the fastest (last) axis backwards: the common axes,
        // then the design point, then the arm's own axes.
        let mut decode = |axis: &Axis, rest: &mut u64| {
            let n = axis.values.len() as u64;
            params.set(axis.id, axis.values[(*rest % n) as usize].clone());
            *rest /= n;
        };
        for axis in self.manifest.common.iter().rev() {
            decode(axis, &mut rest);
        }
        let design_point = self.manifest.design.as_ref().map(|d| {
            let n = d.len() as u64;
            let k = rest % n;
            rest /= n;
            k
        });
        for axis in a.axes.iter().rev() {
            decode(axis, &mut rest);
        }
        if let (Some(d), Some(k)) = (&self.manifest.design, design_point) {
            for (j, (id, _)) in d.params.iter().enumerate() {
                params.set(*id, d.value(k as usize, j));
            }
        }
        RunSpec {
            run_id,
            arm,
            params,
            design_point,
            rung: None,
        }
    }

    /// The run ids of each arm, in order.
    pub fn arm_ranges(&self) -> Vec<std::ops::Range<u64>> {
        let mut start = 0;
        self.arm_sizes
            .iter()
            .map(|&n| {
                start += n;
                start - n..start
            })
            .collect()
    }

    pub fn arm_name(&self, arm: usize) -> &str {
        &self.manifest.arms[arm].name
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A plan from a manifest's text (for this module's tests and its
    /// submodules').
    pub(in crate::grid) fn plan(text: &str) -> Plan {
        let m = Manifest::parse("test.toml", text, &crate::model::Registry::builtin()).unwrap();
        Plan::new(m).unwrap()
    }

    fn show(p: &Plan, id: u64) -> String {
        let r = p.run(id);
        let v = |k: &str| r.params.named(k).unwrap().to_string();
        format!(
            "{} {} {} {}",
            p.arm_name(r.arm),
            v("communication"),
            v("seed"),
            v("truth")
        )
    }

    #[test]
    fn arms_then_arm_axes_then_common_axes_last_fastest() {
        let p = plan(
            r#"
            [experiment]
            name = "order"
            model = "witness"
            [grid]
            seed = { from = 1, to = 2 }
            truth = [false, true]
            [[arm]]
            name = "e"
            policy = "endorsement"
            [[arm]]
            name = "r"
            policy = "reserved"
            grid = { communication = [0.5, 0.9] }
            "#,
        );
        let got: Vec<String> = (0..p.total).map(|i| show(&p, i)).collect();
        let want = [
            "e 0.8 1 false",
            "e 0.8 1 true",
            "e 0.8 2 false",
            "e 0.8 2 true",
            "r 0.5 1 false",
            "r 0.5 1 true",
            "r 0.5 2 false",
            "r 0.5 2 true",
            "r 0.9 1 false",
            "r 0.9 1 true",
            "r 0.9 2 false",
            "r 0.9 2 true",
        ];
        assert_eq!(got, want);
        assert_eq!(p.arm_ranges(), vec![0..4, 4..12]);
    }

    proptest! {
        #[test]
        fn expansion_is_the_full_cartesian_product_in_order(
            sizes in prop::collection::vec(1usize..4, 1..4),
            arms in 1usize..4,
        ) {
            // Axes over distinct integer parameters; each arm pins its own seed.
            let names = ["check_delay", "module_links", "hub_links"];
            let mut text = String::from("[experiment]\nname = \"p\"\nmodel = \"witness\"\n[grid]\n");
            for (k, n) in sizes.iter().enumerate() {
                text += &format!("{} = {{ from = 1, to = {n} }}\n", names[k]);
            }
            for a in 0..arms {
                text += &format!("[[arm]]\nname = \"a{a}\"\nfixed = {{ seed = {a} }}\n");
            }
            let p = plan(&text);
            let per_arm: usize = sizes.iter().product();
            prop_assert_eq!(p.total as usize, per_arm * arms);
            let tuples: Vec<Vec<i64>> = (0..p.total)
                .map(|i| {
                    let r = p.run(i);
                    let int = |k: &str| r.params.named(k).and_then(|v| v.as_i64()).unwrap();
                    let mut t = vec![int("seed")];
                    t.extend(names[..sizes.len()].iter().map(|k| int(k)));
                    t
                })
                .collect();
            let mut sorted = tuples.clone();
            sorted.sort();
            sorted.dedup();
            prop_assert_eq!(&sorted, &tuples, "not strictly increasing: order or duplicates wrong");
        }
    }
}
