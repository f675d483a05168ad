//! Checking a whole plan before any run starts: every run against the
//! model's cross-parameter rules, settings that no run reads, an external
//! arm's decider, and each chunk's memory.

use rayon::prelude::*;

use super::{Plan, PlanError, RunSpec};
use crate::params::{ParamError, ParamSet};

/// What checking a whole plan found.
pub struct Validation {
    pub warnings: Vec<String>,
    /// Bytes each chunk holds in memory while it runs (its buffered rows
    /// and the largest run's working memory).
    pub chunk_bytes: Vec<u64>,
    /// The parameters the runs' sizes grow with (any run's).
    pub grows_with: ParamSet,
}

/// What one chunk's runs show: the parameters each arm's runs ignore,
/// the bytes the chunk holds while it runs, and what those grow with.
struct ChunkCheck {
    never: Vec<ParamSet>,
    bytes: u64,
    grows_with: ParamSet,
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

impl Plan {
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
        let per_chunk = |c: u64| -> Result<ChunkCheck, PlanError> {
            let mut never = vec![ParamSet::ALL; arms];
            let (mut rows, mut working) = (0u64, 0u64);
            let mut grows_with = ParamSet::EMPTY;
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
                grows_with = grows_with.union(fp.grows_with);
            }
            Ok(ChunkCheck {
                never,
                bytes: rows.saturating_add(working),
                grows_with,
            })
        };
        let results: Vec<Result<ChunkCheck, PlanError>> =
            (0..chunks).into_par_iter().map(per_chunk).collect();
        let mut never = vec![ParamSet::ALL; arms];
        let mut chunk_bytes = Vec::with_capacity(chunks as usize);
        let mut first_error: Option<PlanError> = None;
        let mut grows_with = ParamSet::EMPTY;
        for r in results {
            match r {
                Ok(ChunkCheck {
                    never: n,
                    bytes,
                    grows_with: grows,
                }) => {
                    grows_with = grows_with.union(grows);
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
            grows_with,
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
