//! The harness behind the runner's `Model` boundary: a run is one turn
//! loop; its summary is `metrics::Summary`; its detail tables are the
//! trajectory (one row per round, re-audited by `verify`), the agents'
//! final state and, when asked for, every relay delivered.

use super::config::{Config, HarnessParams, Policy};
use super::engine;
use super::external::TURN;
use super::metrics::{self, Snapshot, Summary};
use super::world::root_name;
use super::VERSION;
use crate::cascade::config::Family;
use crate::cascade::graph::peak_bytes;
use crate::model::{
    Curves, DecisionPoint, DetailTable, Footprint, Model, Position, Ran, Registered, RunContext,
    Stored, TableSpec, Violation,
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
        /// the belief it last stated
        belief: f64 [0.0, 1.0],
        /// budget it has left
        budget_left: u64,
        /// probes it made
        probes: u64,
        /// relays it sent
        relays: u64,
        /// turns it passed
        passes: u64,
        /// round of its latest probe (null: never probed)
        latest_probe: Option<u32>,
        /// roots it holds, sorted, comma-separated
        roots: String,
    }
}

crate::record! {
    /// One relay as delivered: a row of `messages.parquet`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct MessageRow {
        /// round it was sent (its recipient sees it the round after)
        round: u32,
        /// sender
        from: u64,
        /// recipient
        to: u64,
        /// supports, refutes or unsure
        stance: String,
        /// the belief it states
        belief: f64 [0.0, 1.0],
        /// roots it cites, sorted, comma-separated
        cites: String,
    }
}

pub const TRAJECTORIES: DetailTable<Snapshot> =
    DetailTable::new("trajectories", true, "one row per run and round");
pub const AGENTS: DetailTable<AgentRow> =
    DetailTable::new("agents", false, "one row per run and agent, final state");
pub const MESSAGES: DetailTable<MessageRow> =
    DetailTable::new("messages", false, "one row per relay delivered");

pub struct Harness;

impl Model for Harness {
    const NAME: &'static str = "harness";
    const VERSION: &'static str = VERSION;
    const DOC: &'static str = "witness-harness/1: agents with a total action budget probe a recorded test, relay to one neighbour or pass, stating a belief each turn";
    type Params = HarnessParams;
    type Config = Config;
    type Summary = Summary;
    const TABLES: &'static [TableSpec] = &[TRAJECTORIES.spec, AGENTS.spec, MESSAGES.spec];

    fn configure(p: HarnessParams) -> Result<Config, ParamError> {
        Config::new(p)
    }

    fn ignored(c: &Config) -> ParamSet {
        c.ignored()
    }

    fn decision_point(c: &Config) -> Option<&'static DecisionPoint> {
        (c.policy == Policy::External).then_some(&TURN)
    }

    fn run(cfg: &Config, cx: &mut RunContext) -> Ran<Summary> {
        let keep = cx.wants(&MESSAGES);
        let run = if cfg.policy == Policy::External {
            engine::simulate(cfg, Some(&mut |asks| cx.decide(asks)), keep)
        } else {
            engine::simulate(cfg, None, keep)
        };
        let summary = metrics::summarize(&run.trajectory, cfg.population, cfg.budget);
        if run.failed {
            // The runner records the failure; partial tables are not kept.
            return Ran {
                summary,
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
                    belief: a.belief,
                    budget_left: u64::from(a.budget_left),
                    probes: u64::from(a.probes),
                    relays: u64::from(a.relays),
                    passes: u64::from(a.passes),
                    latest_probe: a.latest_probe,
                    roots: join(&a.roots),
                });
            }
        }
        if let Some(mut rows) = cx.table(&MESSAGES) {
            for (to, m) in &run.messages {
                rows.push(&MessageRow {
                    round: m.round,
                    from: u64::from(m.from.expect("a relay has a sender")),
                    to: u64::from(*to),
                    stance: m.stance.name().to_string(),
                    belief: m.belief,
                    cites: join(&m.cites),
                });
            }
        }
        Ran {
            summary,
            violation: run.violation,
        }
    }

    fn footprint(cfg: &Config) -> Footprint {
        // An agent's context of messages and the roots it holds, and for
        // an external round its observation as JSON (measured: about
        // 1 KB at the default context), with room to spare.
        let per_agent = 600 + 200 * cfg.context as u64;
        let relays = u64::from(cfg.budget.min(cfg.rounds)) * cfg.population as u64;
        // The graph, counted as the cascade's estimate counts it.
        let graph_bytes = peak_bytes(cfg.graph, cfg.population, &cfg.graph_params);
        type P = HarnessParams;
        let links = match cfg.graph {
            Family::Modular => ParamSet::of(&[P::module_links]),
            Family::Hub => ParamSet::of(&[P::hub_links]),
            Family::Ring | Family::SmallWorld => ParamSet::EMPTY,
        };
        Footprint {
            rows: vec![u64::from(cfg.rounds) + 1, cfg.population as u64, relays],
            working_bytes: (per_agent * cfg.population as u64).saturating_add(graph_bytes),
            grows_with: ParamSet::of(&[P::population, P::rounds, P::context]).union(links),
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
        let expected = u64::from(cfg.rounds) + 1;
        if rows.len() as u64 != expected {
            return Some(Violation {
                identity: "one trajectory row per round 0..=R".into(),
                at: None,
                detail: format!("{} rows, expected {expected}", rows.len()),
            });
        }
        let (n, budget) = (cfg.population as u64, u64::from(cfg.budget));
        rows.iter().enumerate().find_map(|(r, s)| {
            if s.round as usize != r {
                return Some(Violation {
                    identity: "rounds stored in order".into(),
                    at: Some(Position::Round(r as u64)),
                    detail: format!("found round {}", s.round),
                });
            }
            metrics::check_counts(s, n, budget).or_else(|| {
                r.checked_sub(1)
                    .and_then(|p| metrics::check_step(&rows[p], s))
            })
        })
    }
}

fn join(roots: &[super::world::Root]) -> String {
    roots
        .iter()
        .map(|&r| root_name(r))
        .collect::<Vec<_>>()
        .join(",")
}

/// The harness as registered: its headline metrics and curves.
pub static MODEL: Registered<Harness> = Registered::new()
    .headline(&["peak_mistaken", "mean_mistaken", "final_correct", "spent"])
    .curves(Curves {
        table: "trajectories",
        x: "round",
        columns: &["mistaken", "uncertain", "correct"],
        y_label: "fraction of agents",
        scale: |p| p.population as f64,
    });
