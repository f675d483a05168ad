//! Grid expansion: arms in the order written, each crossed with its own axes
//! and then the common axes, last axis fastest. A run is found from its id
//! by mixed-radix arithmetic, so a plan of millions of runs costs nothing to
//! hold and any chunk can be expanded on its own. Sizes are computed with
//! checked arithmetic, so no grid is ever miscounted.

use rayon::prelude::*;

use crate::manifest::{Axis, Manifest};
use crate::model::DynModel;
use crate::params::{ParamError, ParamSet, Resolved};
use crate::search::schedule::Geometry;
use crate::search::Schedule;

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

/// What checking a whole plan found.
pub struct Validation {
    pub warnings: Vec<String>,
    /// Bytes each chunk holds in memory while it runs (its buffered rows
    /// and the largest run's working memory).
    pub chunk_bytes: Vec<u64>,
}

impl Validation {
    /// Memory at the peak: the `threads` largest chunks at once.
    pub fn peak_bytes(&self, threads: usize) -> u64 {
        let mut b = self.chunk_bytes.clone();
        b.sort_unstable_by(|x, y| y.cmp(x));
        b.iter()
            .take(threads.max(1))
            .fold(0, |a, &x| a.saturating_add(x))
    }
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
                ..self.grid_run(s.grid_id(run_id))
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

    /// Checks every run against the model's cross-parameter rules before any
    /// run starts (the first bad run by id is reported), warns about
    /// settings that no run of their arm, or no run at all, reads, and sizes
    /// each chunk in memory.
    pub fn validate(&self) -> Result<Validation, PlanError> {
        let model = self.model();
        let m = &self.manifest;
        // Every point of the full grid: a race may reach any of them.
        let k = m.chunk_runs as u64;
        let chunks = self.grid_total.div_ceil(k);
        let arms = m.arms.len();
        // Bytes a buffered row of each wanted detail table, and of `runs`.
        let row_bytes = |columns: usize| 24 + 40 * (columns as u64 + 1);
        let detail: Vec<Option<u64>> = model
            .tables()
            .iter()
            .zip(&m.tables)
            .map(|(t, &want)| want.then(|| row_bytes(t.columns.len())))
            .collect();
        let runs_row = row_bytes(3 + model.params().len() + model.summary_columns().len() + 2);
        // Per chunk: the parameters each arm's runs ignore (all of them, as
        // a starting point) and the chunk's bytes; errors keep the lowest
        // run id so the report does not depend on threads.
        let per_chunk = |c: u64| -> Result<(Vec<ParamSet>, u64), PlanError> {
            let mut never = vec![ParamSet::ALL; arms];
            let (mut rows, mut working) = (0u64, 0u64);
            for id in c * k..((c + 1) * k).min(self.grid_total) {
                let run = self.grid_run(id);
                let checked = model
                    .checked(&run.params)
                    .map_err(|e| self.invalid(&run, e))?;
                never[run.arm] = never[run.arm].intersection(checked.ignored);
                self.check_decider(&run, checked.decision)?;
                let fp = checked.footprint;
                let detail_bytes: u64 = detail
                    .iter()
                    .zip(fp.rows.iter().chain(std::iter::repeat(&0)))
                    .filter_map(|(b, n)| b.map(|b| b.saturating_mul(*n)))
                    .fold(0, u64::saturating_add);
                rows = rows.saturating_add(detail_bytes).saturating_add(runs_row);
                working = working.max(fp.working_bytes);
            }
            Ok((never, rows.saturating_add(working)))
        };
        let results: Vec<Result<(Vec<ParamSet>, u64), PlanError>> =
            (0..chunks).into_par_iter().map(per_chunk).collect();
        let mut never = vec![ParamSet::ALL; arms];
        let mut chunk_bytes = Vec::with_capacity(chunks as usize);
        let mut first_error: Option<PlanError> = None;
        for r in results {
            match r {
                Ok((n, bytes)) => {
                    for (a, n) in never.iter_mut().zip(n) {
                        *a = a.intersection(n);
                    }
                    chunk_bytes.push(bytes);
                }
                Err(e) => {
                    if first_error.as_ref().is_none_or(|f| e.run_id() < f.run_id()) {
                        first_error = Some(e);
                    }
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        Ok(Validation {
            warnings: self.warnings(&never),
            chunk_bytes,
        })
    }

    /// Settings that no run of their arm, or no run at all, reads, and
    /// common axes some arms do not read (their runs repeat).
    fn warnings(&self, never: &[ParamSet]) -> Vec<String> {
        let m = &self.manifest;
        let specs = self.model().params();
        let mut warnings = Vec::new();
        let mut all = ParamSet::ALL;
        for (arm, never) in m.arms.iter().zip(never) {
            all = all.intersection(*never);
            let set = arm
                .fixed
                .iter()
                .map(|(k, _)| *k)
                .chain(arm.axes.iter().map(|a| a.id));
            for k in set.filter(|k| never.contains(*k)) {
                warnings.push(format!(
                    "arm {}: sets `{}`, which its runs do not read (no effect)",
                    arm.name,
                    k.spec(specs).name
                ));
            }
        }
        if let Some(d) = &m.design {
            for (id, name) in &d.params {
                let deaf: Vec<&str> = m
                    .arms
                    .iter()
                    .zip(never)
                    .filter(|(_, n)| n.contains(*id))
                    .map(|(a, _)| a.name.as_str())
                    .collect();
                if !deaf.is_empty() {
                    warnings.push(format!(
                        "[design] `{name}` is not read by arm(s) {}: its sensitivity there is zero by construction",
                        deaf.join(", ")
                    ));
                }
            }
        }
        let sizes = self.arm_ranges();
        for a in &m.common {
            if all.contains(a.id) {
                warnings.push(format!(
                    "[grid] `{}` is read by no run (no effect, but it multiplies the runs)",
                    a.name
                ));
                continue;
            }
            let deaf: Vec<usize> = (0..m.arms.len())
                .filter(|&i| never[i].contains(a.id))
                .collect();
            if deaf.is_empty() || a.values.len() < 2 {
                continue;
            }
            let names: Vec<&str> = deaf.iter().map(|&i| m.arms[i].name.as_str()).collect();
            let repeats: u64 = deaf
                .iter()
                .map(|&i| {
                    (sizes[i].end - sizes[i].start) / a.values.len() as u64
                        * (a.values.len() as u64 - 1)
                })
                .sum();
            warnings.push(format!(
                "[grid] `{}` is not read by arm(s) {}: their runs repeat for each of its {} values ({repeats} duplicate runs); \
                 move `{}` into the arms that read it",
                a.name,
                names.join(", "),
                a.values.len(),
                a.name
            ));
        }
        warnings
    }

    /// A run that hands out decisions needs an arm with an external
    /// policy, and an external policy needs runs that hand decisions out.
    fn check_decider(
        &self,
        run: &RunSpec,
        point: Option<&'static crate::model::DecisionPoint>,
    ) -> Result<(), PlanError> {
        let arm = &self.manifest.arms[run.arm];
        let message = match (point, &arm.external) {
            (None, None) => return Ok(()),
            (Some(p), None) => format!(
                "hands its decisions (`{}`) to an external policy, but the arm has no `external = {{ command = [...] }}`; \
                 add one, or choose a built-in policy",
                p.name
            ),
            (None, Some(_)) => "has `external = { ... }`, but with these parameters the model decides by its built-in rules; \
                 remove `external`, or set the arm's policy to \"external\" (the hive: member = \"external\")"
                .to_string(),
            (Some(p), Some(ext)) => match &ext.fallback {
                crate::policy::Fallback::Safe(a) if a != p.safe => format!(
                    "external fallback = {a:?}: `{}` has the safe action {:?}; allowed: \"fail_run\" or {:?}",
                    p.name, p.safe, p.safe
                ),
                _ => return Ok(()),
            },
        };
        Err(PlanError::External {
            file: self.manifest.file.clone(),
            run_id: run.run_id,
            arm: arm.name.clone(),
            message,
        })
    }

    fn invalid(&self, run: &RunSpec, source: ParamError) -> PlanError {
        let a = &self.manifest.arms[run.arm];
        let varied = a.axes.iter().chain(&self.manifest.common);
        let settings: Vec<String> = varied
            .map(|x| format!("{} = {}", x.name, run.params.get(x.id)))
            .collect();
        PlanError::Invalid {
            file: self.manifest.file.clone(),
            run_id: run.run_id,
            arm: a.name.clone(),
            settings: settings.join(", "),
            source: Box::new(source),
        }
    }
}

/// A stable name for a run: a hash of its model and every resolved
/// parameter, defaults included, so it survives edits to the manifest. A
/// parameter added later (`ParamSpec::added`) counts only away from its
/// default, so keys written before it existed stay valid.
pub fn run_key(model: &dyn crate::model::DynModel, p: &Resolved) -> String {
    // One buffer written in place: every run of a grid computes its key,
    // and a string per parameter was a tenth of a grid of small runs.
    let mut text = String::with_capacity(512);
    text.push_str("model=");
    text.push_str(model.name());
    text.push('\n');
    let quiet = p.quiet(model.params());
    for (i, (k, v)) in p.values.iter().enumerate() {
        if !quiet.contains(crate::params::ParamId(i)) {
            // What `{k}={v}` writes (`Value`'s Display writes floats as
            // `{:?}` does), without `fmt` for the common values.
            text.push_str(k);
            text.push('=');
            v.push_display(&mut text);
            text.push('\n');
        }
    }
    let mut key = crate::manifest::sha256_hex(text.as_bytes());
    key.truncate(16);
    key
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn plan(text: &str) -> Plan {
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

    #[test]
    fn run_keys_depend_on_every_resolved_parameter_only() {
        let p = plan("[experiment]\nname = \"k\"\nmodel = \"witness\"\n[grid]\nseed = [1, 2]\n");
        let (a, b) = (p.run(0).params, p.run(1).params);
        let m = p.model();
        assert_ne!(run_key(m, &a), run_key(m, &b));
        // The same resolved parameters from a different manifest: same key.
        let p2 = plan(
            "[experiment]\nname = \"other\"\nmodel = \"witness\"\n[fixed]\nseed = 2\ngain = 6.0\n",
        );
        assert_eq!(run_key(m, &p2.run(0).params), run_key(m, &b));
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
