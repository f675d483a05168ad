//! Grid expansion: arms in the order written, each crossed with its own axes
//! and then the common axes, last axis fastest. A run is found from its id
//! by mixed-radix arithmetic, so a plan of millions of runs costs nothing to
//! hold and any chunk can be expanded on its own.

use rayon::prelude::*;

use crate::manifest::{Axis, Manifest};
use crate::model::Model;
use crate::params::{ParamError, Resolved, Value};

pub struct Plan<'m> {
    pub manifest: &'m Manifest,
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
        total: u64,
        limit: u64,
    },
}

impl PlanError {
    fn run_id(&self) -> u64 {
        match self {
            PlanError::Invalid { run_id, .. } => *run_id,
            PlanError::TooLarge { .. } => 0,
        }
    }
}

fn size(axes: &[Axis]) -> u64 {
    axes.iter().map(|a| a.values.len() as u64).product()
}

impl<'m> Plan<'m> {
    pub fn new(manifest: &'m Manifest) -> Plan<'m> {
        let common = size(&manifest.common);
        let arm_sizes: Vec<u64> = manifest
            .arms
            .iter()
            .map(|a| size(&a.axes) * common)
            .collect();
        let total = arm_sizes.iter().sum();
        Plan {
            manifest,
            arm_sizes,
            total,
        }
    }

    pub fn model(&self) -> &'static dyn Model {
        self.manifest.model
    }

    pub fn check_size(&self, limit: u64) -> Result<(), PlanError> {
        if self.total > limit {
            return Err(PlanError::TooLarge {
                file: self.manifest.file.clone(),
                total: self.total,
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
            params.set(k, v.clone());
        }
        // Decode from the fastest (last) axis backwards.
        for axis in a.axes.iter().chain(&self.manifest.common).rev() {
            let n = axis.values.len() as u64;
            params.set(axis.name, axis.values[(rest % n) as usize].clone());
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
        let specs = model.params();
        let bit = |k: &str| {
            1u128
                << specs
                    .iter()
                    .position(|s| s.name == k)
                    .expect("declared parameter")
        };
        // Parameters ignored by every run of a range, as a bit set; errors
        // keep the lowest run id so the report does not depend on threads.
        let never_read = |ids: std::ops::Range<u64>| -> Result<u128, PlanError> {
            ids.into_par_iter()
                .map(|id| {
                    let run = self.run(id);
                    model
                        .validate(&run.params)
                        .map_err(|e| self.invalid(&run, e))?;
                    Ok(model
                        .ignored(&run.params)
                        .iter()
                        .fold(0u128, |m, k| m | bit(k)))
                })
                .reduce(
                    || Ok(!0u128),
                    |a: Result<u128, PlanError>, b| match (a, b) {
                        (Ok(x), Ok(y)) => Ok(x & y),
                        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
                        (Err(x), Err(y)) => Err(if x.run_id() <= y.run_id() { x } else { y }),
                    },
                )
        };
        let mut warnings = Vec::new();
        let mut all = !0u128;
        let mut start = 0u64;
        for (arm, &n) in self.manifest.arms.iter().zip(&self.arm_sizes) {
            let never = never_read(start..start + n)?;
            start += n;
            all &= never;
            let set = arm
                .fixed
                .iter()
                .map(|(k, _)| *k)
                .chain(arm.axes.iter().map(|a| a.name));
            for k in set.filter(|k| never & bit(k) != 0) {
                warnings.push(format!(
                    "arm {}: sets `{k}`, which its runs do not read (no effect)",
                    arm.name
                ));
            }
        }
        for k in self
            .manifest
            .common
            .iter()
            .map(|a| a.name)
            .filter(|k| all & bit(k) != 0)
        {
            warnings.push(format!(
                "[grid] `{k}` is read by no run (no effect, but it multiplies the runs)"
            ));
        }
        Ok(warnings)
    }

    fn invalid(&self, run: &RunSpec, source: ParamError) -> PlanError {
        let a = &self.manifest.arms[run.arm];
        let varied = a.axes.iter().chain(&self.manifest.common).map(|x| x.name);
        let settings: Vec<String> = varied
            .map(|k| format!("{k} = {}", run.params.get(k)))
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

    fn manifest(text: &str) -> Manifest {
        Manifest::parse("test.toml", text).unwrap()
    }

    fn show(p: &Plan, id: u64) -> String {
        let r = p.run(id);
        let v = |k: &str| r.params.get(k).to_string();
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
        let m = manifest(
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
        let p = Plan::new(&m);
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
        let m =
            manifest("[experiment]\nname = \"k\"\nmodel = \"witness\"\n[grid]\nseed = [1, 2]\n");
        let p = Plan::new(&m);
        let (a, b) = (p.run(0).params, p.run(1).params);
        assert_ne!(run_key("witness", &a), run_key("witness", &b));
        // The same resolved parameters from a different manifest: same key.
        let m2 = manifest(
            "[experiment]\nname = \"other\"\nmodel = \"witness\"\n[fixed]\nseed = 2\ngain = 6.0\n",
        );
        assert_eq!(
            run_key("witness", &Plan::new(&m2).run(0).params),
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
            let m = manifest(&text);
            let p = Plan::new(&m);
            let per_arm: usize = sizes.iter().product();
            prop_assert_eq!(p.total as usize, per_arm * arms);
            let tuples: Vec<Vec<i64>> = (0..p.total)
                .map(|i| {
                    let r = p.run(i);
                    let mut t = vec![r.params.int("seed")];
                    t.extend(names[..sizes.len()].iter().map(|k| r.params.int(k)));
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
