//! The cascade behind the runner's `Model` boundary: a run is one engine
//! simulation; its summary row is the run summary of docs/models/cascade.md §10.2, and its detail
//! tables are the trajectory (one row per round) and the final agents.

use super::config::{CascadeParams, Config, Family, Policy};
use super::engine::{self, Parallelism};
use super::export::CascadeExport;
use super::external::AGENT_ROUND;
use super::graph;
use super::metrics::{self, Snapshot, Summary};
use super::VERSION;
use crate::model::{
    Curves, DecisionPoint, DetailTable, Footprint, Model, Outcome, Position, Ran, Registered,
    RunContext, Stored, TableSpec, Violation,
};
use crate::params::{ParamError, ParamSet};

crate::record! {
    /// One agent at the end of a run: a row of `agents.parquet`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct AgentRow {
        /// agent id
        agent: u64,
        /// number of neighbours
        degree: u64,
        /// final belief
        p: f64 [0.0, 1.0],
        /// directly checked by the end
        checked: bool,
        /// ledger roots, sorted, comma-separated
        roots: String,
        /// checks this agent requested
        requested: u64,
    }
}

pub const TRAJECTORIES: DetailTable<Snapshot> =
    DetailTable::new("trajectories", true, "one row per run and round");
pub const AGENTS: DetailTable<AgentRow> =
    DetailTable::new("agents", false, "one row per run and agent, final state");

pub struct Cascade;

impl Model for Cascade {
    const NAME: &'static str = "witness";
    const VERSION: &'static str = VERSION;
    const DOC: &'static str = "witness-engine/1: a false \"tests pass\" report spreading over a graph of agents under a belief-update policy";
    type Params = CascadeParams;
    type Config = Config;
    type Summary = Summary;
    const TABLES: &'static [TableSpec] = &[TRAJECTORIES.spec, AGENTS.spec];

    fn configure(p: CascadeParams) -> Result<Config, ParamError> {
        Config::new(p)
    }

    fn ignored(c: &Config) -> ParamSet {
        c.ignored()
    }

    fn decision_point(cfg: &Config) -> Option<&'static DecisionPoint> {
        (cfg.policy == Policy::External).then_some(&AGENT_ROUND)
    }

    fn run(cfg: &Config, cx: &mut RunContext) -> Ran<Summary> {
        let run = if cfg.policy == Policy::External {
            engine::simulate_deciding(cfg, &mut |asks| cx.decide(asks))
        } else {
            engine::simulate(cfg, Parallelism::Auto)
        };
        if cx.failure().is_some() {
            // The runner records the failure; a partial trajectory is not kept.
            return Ran {
                summary: metrics::summarize(&run.trajectory, cfg.population),
                violation: None,
            };
        }
        if let Some(mut rows) = cx.table(&TRAJECTORIES) {
            for s in &run.trajectory {
                rows.push(s);
            }
        }
        if let Some(mut rows) = cx.table(&AGENTS) {
            for (i, a) in run.agents.iter().enumerate() {
                rows.push(&AgentRow {
                    agent: i as u64,
                    degree: run.graph.degree(i) as u64,
                    p: a.p,
                    checked: a.checked,
                    roots: a.ledger.sorted_names().join(","),
                    requested: u64::from(a.requested),
                });
            }
        }
        Ran {
            summary: metrics::summarize(&run.trajectory, cfg.population),
            violation: run.violation,
        }
    }

    fn footprint(cfg: &Config) -> Footprint {
        // Agents and their buffers: about 80 bytes an agent at a million
        // (measured with the default graph), with room to spare.
        // An external round also holds every agent's request (measured:
        // about 1.5 KB an agent as JSON values).
        let per_agent = if cfg.policy == Policy::External {
            2_000
        } else {
            400
        };
        // The graph grows with its edges, not its agents.
        let graph_bytes = graph::peak_bytes(cfg.graph, cfg.population, &cfg.graph_params);
        type P = CascadeParams;
        let links = match cfg.graph {
            Family::Modular => ParamSet::of(&[P::module_links]),
            Family::Hub => ParamSet::of(&[P::hub_links]),
            Family::Ring | Family::SmallWorld => ParamSet::EMPTY,
        };
        Footprint {
            rows: vec![u64::from(cfg.rounds) + 1, cfg.population as u64],
            working_bytes: (per_agent * cfg.population as u64).saturating_add(graph_bytes),
            grows_with: ParamSet::of(&[P::population, P::rounds]).union(links),
        }
    }

    fn audit(cfg: &Config, stored: &Stored) -> Option<Violation> {
        let rows = match stored.rows(&TRAJECTORIES)? {
            Ok(rows) => rows,
            Err(e) => {
                return Some(Violation {
                    identity: "trajectory rows hold their declared types".into(),
                    at: None,
                    detail: e.to_string(),
                })
            }
        };
        let n = cfg.population as u64;
        let expected = u64::from(cfg.rounds) + 1;
        if rows.len() as u64 != expected {
            return Some(Violation {
                identity: "one trajectory row per round 0..=R".into(),
                at: None,
                detail: format!("{} rows, expected {expected}", rows.len()),
            });
        }
        rows.iter().enumerate().find_map(|(r, s)| {
            if s.round as usize != r {
                return Some(Violation {
                    identity: "rounds stored in order".into(),
                    at: Some(Position::Round(r as u64)),
                    detail: format!("found round {}", s.round),
                });
            }
            metrics::check_counts(s, n)
        })
    }
}

static OUTCOMES: &[Outcome<Cascade>] = &[
    Outcome {
        name: "cleared",
        doc: "cleared if mistaken reached 0 and stayed there to the end, else not_cleared",
        classify: |_, s| {
            if s.first_clear_round.is_none() {
                "not_cleared"
            } else {
                "cleared"
            }
        },
    },
    Outcome {
        name: "terminal_majority",
        doc: "supported / refuted if more than half the agents end supporting / refuting the claim, else split",
        classify: |p, s| {
            let (support, refute) = if p.truth {
                (s.final_correct, s.final_mistaken)
            } else {
                (s.final_mistaken, s.final_correct)
            };
            if support > 0.5 {
                "supported"
            } else if refute > 0.5 {
                "refuted"
            } else {
                "split"
            }
        },
    },
];

/// The cascade as registered: its outcomes, curves and export.
pub static MODEL: Registered<Cascade> = Registered::new()
    .aliases(&["cascade"])
    .headline(&[
        "peak_mistaken",
        "mean_mistaken",
        "first_clear_round",
        "requested",
    ])
    .outcomes(OUTCOMES)
    .curves(Curves {
        table: "trajectories",
        x: "round",
        columns: &["mistaken", "uncertain", "correct"],
        y_label: "fraction of agents",
        scale: |p| p.population as f64,
    })
    .export(&CascadeExport);
