//! Grid expansion: arms in the order written, each crossed with its own axes
//! and then the common axes, last axis fastest. A run is found from its id
//! by mixed-radix arithmetic, so a plan of millions of runs costs nothing to
//! hold and any chunk can be expanded on its own. Sizes are computed with
//! checked arithmetic, so no grid is ever miscounted.

use rayon::prelude::*;

use crate::manifest::{Axis, Manifest};
use crate::model::DynModel;
use crate::params::{ParamError, ParamSet, Resolved, Value};

/// An experiment's runs in order. Owns its manifest, so a results folder
/// can hold both.
pub struct Plan {
    pub manifest: Manifest,
    /// Runs of each arm (its axes times the common axes).
    arm_sizes: Vec<u64>,
    pub total: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunSpec {
    pub run_id: u64,
    pub arm: usize,
    pub params: Resolved,
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
}

impl PlanError {
    fn run_id(&self) -> u64 {
        match self {
            PlanError::Invalid { run_id, .. } => *run_id,
            _ => 0,
        }
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
        let common = size(&manifest.common);
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
            (Some(sizes), Some(total)) => Ok(Plan {
                manifest,
                arm_sizes: sizes.into_iter().map(|n| n as u64).collect(),
                total,
            }),
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

    pub fn run(&self, run_id: u64) -> RunSpec {
        assert!(
            run_id < self.total,
            "run {run_id} outside a plan of {}",
            self.total
        );
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
        // Decode from the fastest (last) axis backwards.
        for axis in a.axes.iter().chain(&self.manifest.common).rev() {
            let n = axis.values.len() as u64;
            params.set(axis.id, axis.values[(rest % n) as usize].clone());
            rest /= n;
        }
        RunSpec {
            run_id,
            arm,
            params,
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
    /// run starts (the first bad run by id is reported), and warns about
    /// settings that no run of their arm, or no run at all, reads.
    pub fn validate(&self) -> Result<Vec<String>, PlanError> {
        let model = self.model();
        // Parameters ignored by every run of a range; errors keep the
        // lowest run id so the report does not depend on threads.
        let never_read = |ids: std::ops::Range<u64>| -> Result<ParamSet, PlanError> {
            ids.into_par_iter()
                .map(|id| {
                    let run = self.run(id);
                    model.check(&run.params).map_err(|e| self.invalid(&run, e))
                })
                .reduce(
                    || Ok(ParamSet::ALL),
                    |a: Result<ParamSet, PlanError>, b| match (a, b) {
                        (Ok(x), Ok(y)) => Ok(x.intersection(y)),
                        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
                        (Err(x), Err(y)) => Err(if x.run_id() <= y.run_id() { x } else { y }),
                    },
                )
        };
        let mut warnings = Vec::new();
        let mut all = ParamSet::ALL;
        let specs = model.params();
        for (arm, range) in self.manifest.arms.iter().zip(self.arm_ranges()) {
            let never = never_read(range)?;
            all = all.intersection(never);
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
        for a in self.manifest.common.iter().filter(|a| all.contains(a.id)) {
            warnings.push(format!(
                "[grid] `{}` is read by no run (no effect, but it multiplies the runs)",
                a.name
            ));
        }
        Ok(warnings)
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
/// parameter, defaults included, so it survives edits to the manifest.
pub fn run_key(model: &str, p: &Resolved) -> String {
    let mut text = format!("model={model}\n");
    for (k, v) in &p.values {
        let v = match v {
            Value::Float(x) => format!("{x:?}"),
            other => other.to_string(),
        };
        text += &format!("{k}={v}\n");
    }
    crate::manifest::sha256_hex(text.as_bytes())[..16].to_string()
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
        assert_ne!(run_key("witness", &a), run_key("witness", &b));
        // The same resolved parameters from a different manifest: same key.
        let p2 = plan(
            "[experiment]\nname = \"other\"\nmodel = \"witness\"\n[fixed]\nseed = 2\ngain = 6.0\n",
        );
        assert_eq!(
            run_key("witness", &p2.run(0).params),
            run_key("witness", &b)
        );
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
