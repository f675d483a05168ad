//! The cascade model's parameters (section 1 and 3): their declaration for
//! the runner, and the typed, validated configuration the engine runs on.

use crate::params::{spec, Kind, ParamError, ParamSpec, Resolved, Value};

pub const GRAPHS: &[&str] = &["ring", "small_world", "modular", "hub"];
pub const POLICIES: &[&str] = &["endorsement", "source_aware", "reserved", "quorum", "trust"];
pub const COUNTS: &[&str] = &["senders", "roots"];
/// The knobs of the `quorum` policy (section 10); every other policy ignores them.
pub const QUORUM_PARAMS: &[&str] = &[
    "threshold",
    "window",
    "require_grounded",
    "require_evidential",
    "refutation_cap",
    "count",
];
pub const ALLOCATIONS: &[&str] = &["fixed", "adaptive"];
pub const GRAPH_PARAMS: &[&str] = &[
    "shortcut_prob",
    "communities",
    "module_links",
    "within_prob",
    "hub_fraction",
    "hub_links",
];

const U64_AS_TOML: i64 = i64::MAX;

/// Declaration order is the column order of `runs.parquet` and the key
/// order of exports.
pub const PARAMS: &[ParamSpec] = &[
    spec!(
        "population",
        Kind::Int {
            min: 3,
            max: 10_000_000
        },
        Value::Int(250),
        "number of agents N"
    ),
    spec!(
        "rounds",
        Kind::Int {
            min: 1,
            max: 100_000
        },
        Value::Int(60),
        "rounds R after round 0"
    ),
    spec!(
        "truth",
        Kind::Bool,
        Value::Bool(false),
        "is the positive claim true?"
    ),
    spec!(
        "graph",
        Kind::Choice(GRAPHS),
        Value::Str("small_world".into()),
        "graph family"
    ),
    spec!(
        "policy",
        Kind::Choice(POLICIES),
        Value::Str("endorsement".into()),
        "belief-update policy"
    ),
    spec!(
        "allocation",
        Kind::Choice(ALLOCATIONS),
        Value::Str("adaptive".into()),
        "check allocation (ignored by reserved)"
    ),
    spec!(
        "communication",
        Kind::Float { min: 0.0, max: 1.0 },
        Value::Float(0.8),
        "communication preference c"
    ),
    spec!(
        "gain",
        Kind::Float {
            min: 0.0,
            max: 100.0
        },
        Value::Float(6.0),
        "social reinforcement g (endorsement only)"
    ),
    spec!(
        "report_fraction",
        Kind::Float { min: 0.0, max: 1.0 },
        Value::Float(0.3),
        "chance an agent starts with the report"
    ),
    spec!(
        "probe_fraction",
        Kind::Float { min: 0.0, max: 1.0 },
        Value::Float(0.01),
        "chance an agent starts with a direct probe"
    ),
    spec!(
        "check_delay",
        Kind::Int { min: 0, max: 1000 },
        Value::Int(2),
        "rounds until a requested check arrives"
    ),
    spec!(
        "corrections",
        Kind::IntList {
            min: 1,
            max: 100_000
        },
        Value::List(vec![]),
        "rounds at which a correction is injected (each <= rounds)"
    ),
    spec!(
        "seed",
        Kind::Int {
            min: 0,
            max: U64_AS_TOML
        },
        Value::Int(42),
        "master seed"
    ),
    spec!(
        "replicate",
        Kind::Int {
            min: 0,
            max: U64_AS_TOML
        },
        Value::Int(0),
        "varies only the agent-round draws (placebo rerun)"
    ),
    spec!(
        "shortcut_prob",
        Kind::Float { min: 0.0, max: 1.0 },
        Value::Float(0.05),
        "small_world: chance of a random shortcut per node"
    ),
    spec!(
        "communities",
        Kind::Int {
            min: 2,
            max: 5_000_000
        },
        Value::Int(5),
        "modular: communities M (N >= 2M)"
    ),
    spec!(
        "module_links",
        Kind::Int { min: 0, max: 100 },
        Value::Int(2),
        "modular: extra links per node"
    ),
    spec!(
        "within_prob",
        Kind::Float { min: 0.0, max: 1.0 },
        Value::Float(0.9),
        "modular: chance a link stays in the community"
    ),
    spec!(
        "hub_fraction",
        Kind::Float { min: 0.0, max: 0.5 },
        Value::Float(0.02),
        "hub: share of nodes that are hubs (> 0)"
    ),
    spec!(
        "hub_links",
        Kind::Int { min: 1, max: 100 },
        Value::Int(2),
        "hub: links from each non-hub to hubs"
    ),
    spec!(
        "threshold",
        Kind::Int { min: 1, max: 1000 },
        Value::Int(2),
        "quorum: counted voices a side needs to carry"
    ),
    spec!(
        "window",
        Kind::Int { min: 1, max: 1000 },
        Value::Int(3),
        "quorum: rounds a read stays live"
    ),
    spec!(
        "require_grounded",
        Kind::Bool,
        Value::Bool(true),
        "quorum: a voice counts only if its sender's ledger is non-empty"
    ),
    spec!(
        "require_evidential",
        Kind::Bool,
        Value::Bool(false),
        "quorum: a voice counts only if its sender holds an agreeing verified root"
    ),
    spec!(
        "refutation_cap",
        Kind::IntOrNone { min: 1, max: 1000 },
        Value::Null,
        "quorum: support cannot carry while refuting voices >= cap"
    ),
    spec!(
        "count",
        Kind::Choice(COUNTS),
        Value::Str("senders".into()),
        "quorum: count distinct senders or distinct roots"
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Ring,
    SmallWorld,
    Modular,
    Hub,
}

impl Family {
    pub fn code(self) -> u64 {
        self as u64
    }

    pub fn name(self) -> &'static str {
        GRAPHS[self as usize]
    }

    /// The graph parameters this family reads (section 11).
    pub fn params(self) -> &'static [&'static str] {
        match self {
            Family::Ring => &[],
            Family::SmallWorld => &GRAPH_PARAMS[0..1],
            Family::Modular => &GRAPH_PARAMS[1..4],
            Family::Hub => &GRAPH_PARAMS[4..6],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Endorsement,
    SourceAware,
    Reserved,
    Quorum,
    Trust,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    Senders,
    Roots,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocation {
    Fixed,
    Adaptive,
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
}

fn index_of(options: &[&str], s: &str) -> usize {
    options
        .iter()
        .position(|o| *o == s)
        .expect("validated choice")
}

impl Config {
    /// The typed configuration, after the rules that tie parameters together.
    /// Each value was already range-checked against its declaration.
    pub fn from_resolved(p: &Resolved) -> Result<Config, ParamError> {
        let population = p.int("population") as usize;
        let rounds = p.int("rounds") as u32;
        let graph = [
            Family::Ring,
            Family::SmallWorld,
            Family::Modular,
            Family::Hub,
        ][index_of(GRAPHS, p.str("graph"))];
        let policy = [
            Policy::Endorsement,
            Policy::SourceAware,
            Policy::Reserved,
            Policy::Quorum,
            Policy::Trust,
        ][index_of(POLICIES, p.str("policy"))];
        let allocation =
            [Allocation::Fixed, Allocation::Adaptive][index_of(ALLOCATIONS, p.str("allocation"))];
        let mut corrections = Vec::new();
        for &r in p.list("corrections") {
            if r < 1 || r > rounds as i64 {
                return Err(ParamError::new(
                    "corrections",
                    format!("{:?}", p.list("corrections")),
                    &format!("round {r} is outside the run"),
                    format!("rounds in 1 ..= {rounds} (the `rounds` parameter)"),
                ));
            }
            corrections.push(r as u32);
        }
        corrections.sort();
        let graph_params = GraphParams {
            shortcut_prob: p.float("shortcut_prob"),
            communities: p.int("communities") as usize,
            module_links: p.int("module_links") as usize,
            within_prob: p.float("within_prob"),
            hub_fraction: p.float("hub_fraction"),
            hub_links: p.int("hub_links") as usize,
        };
        if graph == Family::Modular && population < 2 * graph_params.communities {
            return Err(ParamError::new(
                "communities",
                graph_params.communities,
                &format!("a modular graph of population {population} needs population >= 2 * communities"),
                format!("2 ..= {} (population / 2)", population / 2),
            ));
        }
        if graph_params.hub_fraction <= 0.0 {
            return Err(ParamError::new(
                "hub_fraction",
                format!("{:?}", graph_params.hub_fraction),
                "must be above zero",
                "a number with 0 < x <= 0.5".into(),
            ));
        }
        Ok(Config {
            population,
            rounds,
            truth: p.bool("truth"),
            graph,
            policy,
            allocation,
            communication: p.float("communication"),
            gain: p.float("gain"),
            report_fraction: p.float("report_fraction"),
            probe_fraction: p.float("probe_fraction"),
            check_delay: p.int("check_delay") as u32,
            corrections,
            seed: p.int("seed") as u64,
            replicate: p.int("replicate") as u64,
            graph_params,
            quorum: QuorumKnobs {
                threshold: p.int("threshold") as usize,
                window: p.int("window") as u32,
                require_grounded: p.bool("require_grounded"),
                require_evidential: p.bool("require_evidential"),
                refutation_cap: match p.get("refutation_cap") {
                    Value::Int(c) => Some(*c as usize),
                    _ => None,
                },
                count: [Count::Senders, Count::Roots][index_of(COUNTS, p.str("count"))],
            },
        })
    }

    /// Parameters this configuration does not read (section 11).
    pub fn ignored(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.policy != Policy::Endorsement {
            out.push("gain");
        }
        if self.policy != Policy::Quorum {
            out.extend_from_slice(QUORUM_PARAMS);
        }
        if self.policy == Policy::Reserved {
            out.push("allocation");
        }
        let used = self.graph.params();
        out.extend(GRAPH_PARAMS.iter().filter(|g| !used.contains(g)));
        out
    }
}
