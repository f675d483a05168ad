//! The cascade model's parameters (docs/models/cascade.md §1 and §3): their declaration for
//! the runner, and the typed, validated configuration the engine runs on.

use crate::params::{Kind, ParamError, ParamSet, Params, Resolved};

crate::words! {
    /// Graph families (docs/models/cascade.md §3).
    pub enum Family {
        Ring = "ring",
        SmallWorld = "small_world",
        Modular = "modular",
        Hub = "hub",
    }
}

crate::words! {
    /// Belief-update policies.
    pub enum Policy {
        Endorsement = "endorsement",
        SourceAware = "source_aware",
        Reserved = "reserved",
        Quorum = "quorum",
        Trust = "trust",
        /// Each agent's move is asked of an external policy.
        External = "external",
    }
}

crate::words! {
    /// What a checked agent's belief is under an external policy.
    pub enum Grounding {
        /// A checked agent keeps its grounded belief and is not asked.
        Absorbing = "absorbing",
        /// A checked agent is asked too and may answer any belief.
        Advisory = "advisory",
    }
}

crate::words! {
    /// How checks are allocated.
    pub enum Allocation {
        Fixed = "fixed",
        Adaptive = "adaptive",
    }
}

crate::words! {
    /// What the quorum policy counts.
    pub enum Count {
        Senders = "senders",
        Roots = "roots",
    }
}

crate::params! {
    /// Every parameter of the cascade. Declaration order is the column
    /// order of `runs.parquet`, the order run keys hash, and the key order
    /// of exports.
    pub struct CascadeParams {
        /// number of agents N
        population: usize = 250, Kind::int(3, 10_000_000);
        /// rounds R after round 0
        rounds: u32 = 60, Kind::int(1, 100_000);
        /// is the positive claim true?
        truth: bool = false, Kind::Bool;
        /// graph family
        graph: Family = Family::SmallWorld, Kind::choice::<Family>();
        /// belief-update policy
        policy: Policy = Policy::Endorsement, Kind::choice::<Policy>(), Arm;
        /// check allocation (ignored by reserved)
        allocation: Allocation = Allocation::Adaptive, Kind::choice::<Allocation>();
        /// communication preference c
        communication: f64 = 0.8, Kind::float(0.0, 1.0);
        /// social reinforcement g (endorsement; external policies are told it)
        gain: f64 = 6.0, Kind::float(0.0, 100.0);
        /// chance an agent starts with the report
        report_fraction: f64 = 0.3, Kind::float(0.0, 1.0);
        /// chance an agent starts with a direct probe
        probe_fraction: f64 = 0.01, Kind::float(0.0, 1.0);
        /// rounds until a requested check arrives
        check_delay: u32 = 2, Kind::int(0, 1000);
        /// rounds at which a correction is injected (each <= rounds)
        corrections: Vec<u32> = vec![], Kind::int_list(1, 100_000);
        /// master seed
        seed: u64 = 42, Kind::int(0, i64::MAX), Seed;
        /// varies only the agent-round draws (placebo rerun)
        replicate: u64 = 0, Kind::int(0, i64::MAX), Replicate;
        /// small_world: chance of a random shortcut per node
        shortcut_prob: f64 = 0.05, Kind::float(0.0, 1.0);
        /// modular: communities M (N >= 2M)
        communities: usize = 5, Kind::int(2, 5_000_000);
        /// modular: extra links per node
        module_links: usize = 2, Kind::int(0, 100);
        /// modular: chance a link stays in the community
        within_prob: f64 = 0.9, Kind::float(0.0, 1.0);
        /// hub: share of nodes that are hubs (> 0)
        hub_fraction: f64 = 0.02, Kind::float(0.0, 0.5);
        /// hub: links from each non-hub to hubs
        hub_links: usize = 2, Kind::int(1, 100);
        /// quorum: counted voices a side needs to carry
        threshold: usize = 2, Kind::int(1, 1000);
        /// quorum: rounds a read stays live
        window: u32 = 3, Kind::int(1, 1000);
        /// quorum: a voice counts only if its sender's ledger is non-empty
        require_grounded: bool = true, Kind::Bool;
        /// quorum: a voice counts only if its sender holds an agreeing verified root
        require_evidential: bool = false, Kind::Bool;
        /// quorum: support cannot carry while refuting voices >= cap
        refutation_cap: Option<usize> = None, Kind::int_or_none(1, 1000);
        /// quorum: count distinct senders or distinct roots
        count: Count = Count::Senders, Kind::choice::<Count>();
        /// external: absorbing (a checked agent keeps its grounded belief and is not asked) or advisory (it is asked and may answer any belief)
        grounding: Grounding = Grounding::Absorbing, Kind::choice::<Grounding>(), Added;
    }
}

/// Every parameter, in declaration order.
pub const PARAMS: &[crate::params::ParamSpec] = CascadeParams::SPECS;

/// The knobs of the `quorum` policy (docs/models/cascade.md §7.4); every other policy ignores them.
pub const QUORUM_PARAMS: ParamSet = ParamSet::of(&[
    CascadeParams::threshold,
    CascadeParams::window,
    CascadeParams::require_grounded,
    CascadeParams::require_evidential,
    CascadeParams::refutation_cap,
    CascadeParams::count,
]);

/// The graph families' own parameters (docs/models/cascade.md §12).
pub const GRAPH_PARAMS: ParamSet = ParamSet::of(&[
    CascadeParams::shortcut_prob,
    CascadeParams::communities,
    CascadeParams::module_links,
    CascadeParams::within_prob,
    CascadeParams::hub_fraction,
    CascadeParams::hub_links,
]);

impl Family {
    /// The family's number in the graph stream's key.
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The graph parameters this family reads (docs/models/cascade.md §12).
    pub fn params(self) -> ParamSet {
        type P = CascadeParams;
        match self {
            Family::Ring => ParamSet::EMPTY,
            Family::SmallWorld => ParamSet::of(&[P::shortcut_prob]),
            Family::Modular => ParamSet::of(&[P::communities, P::module_links, P::within_prob]),
            Family::Hub => ParamSet::of(&[P::hub_fraction, P::hub_links]),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct QuorumKnobs {
    pub threshold: usize,
    pub window: u32,
    pub require_grounded: bool,
    pub require_evidential: bool,
    pub refutation_cap: Option<usize>,
    pub count: Count,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GraphParams {
    pub shortcut_prob: f64,
    pub communities: usize,
    pub module_links: usize,
    pub within_prob: f64,
    pub hub_fraction: f64,
    pub hub_links: usize,
}

impl GraphParams {
    /// The rules that tie the graph knobs to the family and population.
    pub fn check(&self, family: Family, population: usize) -> Result<(), ParamError> {
        if family == Family::Modular && population < 4 {
            // Two communities of two is the smallest modular graph.
            return Err(ParamError::new(
                "population",
                population,
                "a modular graph needs at least 2 communities of 2 agents",
                "4 or more, or another graph family".into(),
            ));
        }
        if family == Family::Modular && population < 2 * self.communities {
            return Err(ParamError::new(
                "communities",
                self.communities,
                &format!(
                    "a modular graph of population {population} needs population >= 2 * communities"
                ),
                format!("2 ..= {} (population / 2)", population / 2),
            ));
        }
        if self.hub_fraction <= 0.0 {
            return Err(ParamError::new(
                "hub_fraction",
                format!("{:?}", self.hub_fraction),
                "must be above zero",
                "a number with 0 < x <= 0.5".into(),
            ));
        }
        Ok(())
    }
}

impl Default for GraphParams {
    fn default() -> Self {
        GraphParams {
            shortcut_prob: 0.05,
            communities: 5,
            module_links: 2,
            within_prob: 0.9,
            hub_fraction: 0.02,
            hub_links: 2,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub population: usize,
    pub rounds: u32,
    pub truth: bool,
    pub graph: Family,
    pub policy: Policy,
    pub allocation: Allocation,
    pub communication: f64,
    pub gain: f64,
    pub report_fraction: f64,
    pub probe_fraction: f64,
    pub check_delay: u32,
    /// Sorted, stable: a repeated round is a separate event.
    pub corrections: Vec<u32>,
    pub seed: u64,
    pub replicate: u64,
    pub graph_params: GraphParams,
    pub quorum: QuorumKnobs,
    pub grounding: Grounding,
}

impl Config {
    /// The typed configuration, after the rules that tie parameters together.
    /// Each value was already range-checked against its declaration.
    pub fn new(p: CascadeParams) -> Result<Config, ParamError> {
        let mut corrections = p.corrections.clone();
        if let Some(&r) = corrections.iter().find(|&&r| r < 1 || r > p.rounds) {
            return Err(ParamError::new(
                "corrections",
                format!("{:?}", p.corrections),
                &format!("round {r} is outside the run"),
                format!("rounds in 1 ..= {} (the `rounds` parameter)", p.rounds),
            ));
        }
        corrections.sort();
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
            allocation: p.allocation,
            communication: p.communication,
            gain: p.gain,
            report_fraction: p.report_fraction,
            probe_fraction: p.probe_fraction,
            check_delay: p.check_delay,
            corrections,
            seed: p.seed,
            replicate: p.replicate,
            graph_params,
            quorum: QuorumKnobs {
                threshold: p.threshold,
                window: p.window,
                require_grounded: p.require_grounded,
                require_evidential: p.require_evidential,
                refutation_cap: p.refutation_cap,
                count: p.count,
            },
            grounding: p.grounding,
        })
    }

    /// `new` from a resolved parameter set.
    pub fn from_resolved(p: &Resolved) -> Result<Config, ParamError> {
        Config::new(CascadeParams::from_resolved(p))
    }

    /// Parameters this configuration does not read (docs/models/cascade.md §12).
    pub fn ignored(&self) -> ParamSet {
        let mut out = ParamSet::EMPTY;
        // An external policy is told every parameter and may read any.
        if !matches!(self.policy, Policy::Endorsement | Policy::External) {
            out.insert(CascadeParams::gain);
        }
        if self.policy != Policy::External {
            out.insert(CascadeParams::grounding);
        }
        if self.policy != Policy::Quorum {
            out = out.union(QUORUM_PARAMS);
        }
        if self.policy == Policy::Reserved {
            out.insert(CascadeParams::allocation);
        }
        out.union(GRAPH_PARAMS.difference(self.graph.params()))
    }
}
