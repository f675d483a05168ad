//! The cascade model, witness-engine/1: how a false "tests pass" report
//! spreads over a graph of agents under different belief policies. This
//! module adapts the engine to the runner's `Model` boundary; the algorithm
//! lives in the submodules.

pub mod config;
pub mod engine;
pub mod export;
pub mod graph;
pub mod ledger;
pub mod metrics;
pub mod quorum;

use crate::model::{
    col, ColType, Column, CurveSpec, Model, OutcomeSpec, Row, RunOutput, TableSpec, Violation,
};
use crate::params::{ParamError, ParamSpec, Resolved, Value};
use config::Config;
use engine::{Parallelism, Run};
use metrics::{Counters, Snapshot};

pub const VERSION: &str = "witness-engine/1";

use ColType::{Bool, Float, Int, Str};

pub const SUMMARY: &[Column] = &[
    col("peak_mistaken", Float, "max over snapshots of mistaken / N"),
    col(
        "mean_mistaken",
        Float,
        "mean over snapshots 0..=R of mistaken / N",
    ),
    col("final_mistaken", Float, "mistaken / N at round R"),
    col("peak_uncertain", Float, "max of uncertain / N"),
    col("mean_uncertain", Float, "mean of uncertain / N"),
    col("final_uncertain", Float, "uncertain / N at round R"),
    col("peak_brier", Float, "max of the Brier score"),
    col("mean_brier", Float, "mean of the Brier score"),
    col("final_brier", Float, "Brier score at round R"),
    col("final_correct", Float, "correct / N at round R"),
    col(
        "final_probe_reach",
        Float,
        "agents holding probe:0 / N at round R",
    ),
    col("final_checked", Float, "checked agents / N at round R"),
    col("final_pending", Int, "checks still pending at round R"),
    Column {
        name: "first_clear_round",
        ty: Int,
        nullable: true,
        doc: "first round from which mistaken stays 0; null if mistaken(R) > 0",
    },
    col("requested", Int, "checks requested in the run"),
    col("completed", Int, "checks completed"),
    col("canceled", Int, "pending checks canceled by a correction"),
    col("messages", Int, "messages read"),
    col("effort", Int, "effort units spent (4 per agent-round)"),
];

pub const TRAJECTORY: &[Column] = &[
    col("round", Int, "snapshot round, 0..=R"),
    col("support", Int, "agents with p >= 0.65"),
    col("refute", Int, "agents with p <= 0.35"),
    col("uncertain", Int, "other agents"),
    col("correct", Int, "support if truth else refute"),
    col("mistaken", Int, "refute if truth else support"),
    col("brier", Float, "mean of (p - truth)^2"),
    col("mean_belief", Float, "mean of p"),
    col("probe_reach", Int, "agents whose ledger holds probe:0"),
    col("report_reach", Int, "agents whose ledger holds report:0"),
    col("checked", Int, "agents with a direct check"),
    col("requested", Int, "cumulative checks requested"),
    col("completed", Int, "cumulative checks completed"),
    col("canceled", Int, "cumulative checks canceled"),
    col("messages", Int, "cumulative messages read"),
    col("effort", Int, "cumulative effort units"),
    col("pending", Int, "checks pending now"),
];

pub const AGENTS: &[Column] = &[
    col("agent", Int, "agent id"),
    col("degree", Int, "number of neighbours"),
    col("p", Float, "final belief"),
    col("checked", Bool, "directly checked by the end"),
    col("roots", Str, "ledger roots, sorted, comma-separated"),
    col("requested", Int, "checks this agent requested"),
];

pub const TABLES: &[TableSpec] = &[
    TableSpec {
        name: "trajectories",
        columns: TRAJECTORY,
        default_on: true,
        doc: "one row per run and round",
    },
    TableSpec {
        name: "agents",
        columns: AGENTS,
        default_on: false,
        doc: "one row per run and agent, final state",
    },
];

pub const OUTCOMES: &[OutcomeSpec] = &[
    OutcomeSpec {
        name: "cleared",
        doc: "cleared if mistaken reached 0 and stayed there to the end, else not_cleared",
        columns: &["first_clear_round"],
        classify: |_, v| if v[0] == Value::Null { "not_cleared" } else { "cleared" },
    },
    OutcomeSpec {
        name: "terminal_majority",
        doc: "supported / refuted if more than half the agents end supporting / refuting the claim, else split",
        columns: &["final_correct", "final_mistaken"],
        classify: |p, v| {
            let f = |x: &Value| if let Value::Float(f) = x { *f } else { 0.0 };
            let (correct, mistaken) = (f(&v[0]), f(&v[1]));
            let (support, refute) = if p.bool("truth") { (correct, mistaken) } else { (mistaken, correct) };
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

pub struct Cascade;

impl Model for Cascade {
    fn name(&self) -> &'static str {
        "witness"
    }
    fn version(&self) -> &'static str {
        VERSION
    }
    fn params(&self) -> &'static [ParamSpec] {
        config::PARAMS
    }
    fn validate(&self, p: &Resolved) -> Result<(), ParamError> {
        Config::from_resolved(p).map(|_| ())
    }
    fn ignored(&self, p: &Resolved) -> Vec<&'static str> {
        Config::from_resolved(p)
            .map(|c| c.ignored())
            .unwrap_or_default()
    }
    fn summary_columns(&self) -> &'static [Column] {
        SUMMARY
    }
    fn tables(&self) -> &'static [TableSpec] {
        TABLES
    }
    fn run(&self, p: &Resolved, want: &[bool]) -> RunOutput {
        let cfg = Config::from_resolved(p).expect("the runner validates parameters first");
        let run = engine::simulate(&cfg, Parallelism::Auto);
        let summary = summary_row(&metrics::summarize(&run.trajectory, cfg.population));
        let trajectories = if want[0] {
            run.trajectory.iter().map(snapshot_row).collect()
        } else {
            vec![]
        };
        let agents = if want[1] { agent_rows(&run) } else { vec![] };
        RunOutput {
            summary,
            tables: vec![trajectories, agents],
            violation: run.violation,
        }
    }
    fn curves(&self) -> Option<CurveSpec> {
        Some(CurveSpec {
            table: "trajectories",
            x: "round",
            columns: &["mistaken", "uncertain", "correct"],
            divide_by: "population",
            y_label: "fraction of agents",
        })
    }
    fn headline_metrics(&self) -> &'static [&'static str] {
        &[
            "peak_mistaken",
            "mean_mistaken",
            "first_clear_round",
            "requested",
        ]
    }
    fn outcomes(&self) -> &'static [OutcomeSpec] {
        OUTCOMES
    }
    fn audit(&self, p: &Resolved, table: usize, rows: &[Row]) -> Option<Violation> {
        if table != 0 {
            return None;
        }
        let n = p.int("population") as u64;
        let expected = p.int("rounds") as u64 + 1;
        if rows.len() as u64 != expected {
            return Some(Violation {
                identity: "one trajectory row per round 0..=R".into(),
                round: None,
                detail: format!("{} rows, expected {expected}", rows.len()),
            });
        }
        rows.iter().enumerate().find_map(|(r, row)| {
            let s = row_snapshot(row);
            if s.round as usize != r {
                return Some(Violation {
                    identity: "rounds stored in order".into(),
                    round: Some(r as u64),
                    detail: format!("found round {}", s.round),
                });
            }
            metrics::check_counts(&s, n)
        })
    }
}

fn int(x: u64) -> Value {
    Value::Int(x as i64)
}

fn summary_row(s: &metrics::Summary) -> Row {
    let c = &s.counters;
    vec![
        Value::Float(s.peak_mistaken),
        Value::Float(s.mean_mistaken),
        Value::Float(s.final_mistaken),
        Value::Float(s.peak_uncertain),
        Value::Float(s.mean_uncertain),
        Value::Float(s.final_uncertain),
        Value::Float(s.peak_brier),
        Value::Float(s.mean_brier),
        Value::Float(s.final_brier),
        Value::Float(s.final_correct),
        Value::Float(s.final_probe_reach),
        Value::Float(s.final_checked),
        int(s.final_pending),
        s.first_clear_round.map_or(Value::Null, |r| int(r as u64)),
        int(c.requested),
        int(c.completed),
        int(c.canceled),
        int(c.messages),
        int(c.effort),
    ]
}

fn snapshot_row(s: &Snapshot) -> Row {
    let c = &s.counters;
    vec![
        int(s.round as u64),
        int(s.support),
        int(s.refute),
        int(s.uncertain),
        int(s.correct),
        int(s.mistaken),
        Value::Float(s.brier),
        Value::Float(s.mean_belief),
        int(s.probe_reach),
        int(s.report_reach),
        int(s.checked),
        int(c.requested),
        int(c.completed),
        int(c.canceled),
        int(c.messages),
        int(c.effort),
        int(s.pending),
    ]
}

/// The inverse of `snapshot_row`, for auditing stored trajectories.
fn row_snapshot(row: &Row) -> Snapshot {
    let i = |k: usize| match &row[k] {
        Value::Int(x) => *x as u64,
        v => panic!("trajectory column {} holds {v}", TRAJECTORY[k].name),
    };
    let f = |k: usize| match &row[k] {
        Value::Float(x) => *x,
        v => panic!("trajectory column {} holds {v}", TRAJECTORY[k].name),
    };
    Snapshot {
        round: i(0) as u32,
        support: i(1),
        refute: i(2),
        uncertain: i(3),
        correct: i(4),
        mistaken: i(5),
        brier: f(6),
        mean_belief: f(7),
        probe_reach: i(8),
        report_reach: i(9),
        checked: i(10),
        counters: Counters {
            requested: i(11),
            completed: i(12),
            canceled: i(13),
            messages: i(14),
            effort: i(15),
        },
        pending: i(16),
    }
}

fn agent_rows(run: &Run) -> Vec<Row> {
    run.agents
        .iter()
        .enumerate()
        .map(|(i, a)| {
            vec![
                int(i as u64),
                int(run.graph.degree(i) as u64),
                Value::Float(a.p),
                Value::Bool(a.checked),
                Value::Str(a.ledger.sorted_names().join(",")),
                int(a.requested as u64),
            ]
        })
        .collect()
}
