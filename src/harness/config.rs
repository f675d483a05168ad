//! The harness model's parameters and the validated configuration a run
//! works from. The world (graph families and their knobs, truth, the
//! report's reach, seeds) is the cascade's, under the same names, so a
//! harness grid and a cascade grid over the same seeds share graphs and
//! report recipients.

use super::fixtures::Fixture;
use crate::cascade::config::{Family, GraphParams};
use crate::params::{Kind, ParamError, ParamSet, Params, Resolved};

crate::words! {
    /// Who decides an agent's turn.
    pub enum Policy {
        /// Relays the last belief it received; never probes.
        Echo = "echo",
        /// Weighs distinct cited roots; probes now and then until it holds a probe.
        Dedupe = "dedupe",
        /// Probes in its first turn, then relays what it saw.
        Prober = "prober",
        /// Each turn is asked of an external policy.
        External = "external",
    }
}

crate::params! {
    /// Every parameter of the harness, in `runs.parquet` column order.
    pub struct HarnessParams {
        /// number of agents N
        population: usize = 50, Kind::int(3, 100_000);
        /// turns R after round 0
        rounds: u32 = 20, Kind::int(1, 10_000);
        /// is the positive claim ("tests pass") true?
        truth: bool = false, Kind::Bool;
        /// graph family (the cascade's)
        graph: Family = Family::SmallWorld, Kind::choice::<Family>();
        /// who decides each turn: a scripted policy or an external one
        policy: Policy = Policy::Echo, Kind::choice::<Policy>(), Arm;
        /// chance an agent starts holding the "tests pass" report
        report_fraction: f64 = 0.3, Kind::float(0.0, 1.0);
        /// actions (probes and relays) each agent may take over the run
        budget: u32 = 12, Kind::int(1, 100_000);
        /// received messages an agent keeps in view, newest last
        context: usize = 8, Kind::int(0, 1000);
        /// the recorded tool output a probe returns
        observations: Fixture = Fixture::RunnerShadowed, Kind::choice::<Fixture>();
        /// master seed
        seed: u64 = 42, Kind::int(0, i64::MAX), Seed;
        /// varies only the turn draws (placebo rerun)
        replicate: u64 = 0, Kind::int(0, i64::MAX), Replicate;
        /// small_world: chance of a random shortcut per node
        shortcut_prob: f64 = 0.05, Kind::float(0.0, 1.0);
        /// modular: communities M (N >= 2M)
        communities: usize = 5, Kind::int(2, 50_000);
        /// modular: extra links per node
        module_links: usize = 2, Kind::int(0, 100);
        /// modular: chance a link stays in the community
        within_prob: f64 = 0.9, Kind::float(0.0, 1.0);
        /// hub: share of nodes that are hubs (> 0)
        hub_fraction: f64 = 0.02, Kind::float(0.0, 0.5);
        /// hub: links from each non-hub to hubs
        hub_links: usize = 2, Kind::int(1, 100);
    }
}

/// The graph knobs, by the harness's own parameter ids.
const GRAPH_PARAMS: ParamSet = ParamSet::of(&[
    HarnessParams::shortcut_prob,
    HarnessParams::communities,
    HarnessParams::module_links,
    HarnessParams::within_prob,
    HarnessParams::hub_fraction,
    HarnessParams::hub_links,
]);

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub population: usize,
    pub rounds: u32,
    pub truth: bool,
    pub graph: Family,
    pub policy: Policy,
    pub report_fraction: f64,
    pub budget: u32,
    pub context: usize,
    pub observations: Fixture,
    pub seed: u64,
    pub replicate: u64,
    pub graph_params: GraphParams,
}

impl Config {
    pub fn new(p: HarnessParams) -> Result<Config, ParamError> {
        let graph_params = GraphParams {
            shortcut_prob: p.shortcut_prob,
            communities: p.communities,
            module_links: p.module_links,
            within_prob: p.within_prob,
            hub_fraction: p.hub_fraction,
            hub_links: p.hub_links,
        };
        graph_params.check(p.graph, p.population)?;
        Ok(Config {
            population: p.population,
            rounds: p.rounds,
            truth: p.truth,
            graph: p.graph,
            policy: p.policy,
            report_fraction: p.report_fraction,
            budget: p.budget,
            context: p.context,
            observations: p.observations,
            seed: p.seed,
            replicate: p.replicate,
            graph_params,
        })
    }

    pub fn from_resolved(p: &Resolved) -> Result<Config, ParamError> {
        Config::new(HarnessParams::from_resolved(p))
    }

    /// The graph knobs the family does not read (the family's table is
    /// kept by the cascade, by name).
    pub fn ignored(&self) -> ParamSet {
        let reads = self.graph.params().names(crate::cascade::config::PARAMS);
        let mut out = ParamSet::EMPTY;
        for id in GRAPH_PARAMS.ids(HarnessParams::SPECS.len()) {
            if !reads.contains(&id.spec(HarnessParams::SPECS).name) {
                out.insert(id);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(set: &[(&str, crate::params::Value)]) -> Result<Config, ParamError> {
        let mut r = Resolved::defaults(HarnessParams::SPECS);
        for (k, v) in set {
            let at = HarnessParams::SPECS
                .iter()
                .position(|s| s.name == *k)
                .unwrap();
            r.set(crate::params::ParamId(at), v.clone());
        }
        Config::from_resolved(&r)
    }

    #[test]
    fn a_family_ignores_the_other_families_knobs() {
        use crate::params::Value;
        let c = config(&[("graph", Value::Str("ring".into()))]).unwrap();
        assert!(c.ignored().contains(HarnessParams::shortcut_prob));
        let c = config(&[]).unwrap();
        let ignored = c.ignored();
        assert!(!ignored.contains(HarnessParams::shortcut_prob));
        assert!(ignored.contains(HarnessParams::hub_links));
        assert!(!ignored.contains(HarnessParams::budget));
    }

    #[test]
    fn the_cascade_graph_rules_apply() {
        use crate::params::Value;
        let e = config(&[
            ("graph", Value::Str("modular".into())),
            ("population", Value::Int(8)),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("communities"), "{e}");
        let e = config(&[
            ("graph", Value::Str("modular".into())),
            ("population", Value::Int(3)),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("at least 2 communities of 2"), "{e}");
    }
}
