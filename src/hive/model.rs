//! The hive model behind the runner's `Model` boundary: a run is one policy
//! over `rooms` episodes; its summary row carries the published metrics and
//! ending counts, and an optional `episodes` table one row per room.

use super::config::{Config, PARAMS};
use super::episode::{play_in, Ending, Scratch};
use super::policy::Mechanism;
use super::room::{Room, OPTIONS};
use crate::model::{
    col, col_null, ColType, Column, Model, RankSpec, Row, RunOutput, TableSpec, Violation,
};
use crate::params::{ParamError, ParamSpec, Resolved, Value};

pub const VERSION: &str = "hive-rooms/1";

use ColType::{Bool, Float, Int, Str};

pub const SUMMARY: &[Column] = &[
    col("turns_per_episode", Float, "total turns / rooms"),
    col("decided_pct", Float, "100 x converged / rooms"),
    col(
        "correct_pct",
        Float,
        "100 x converged on the true option / rooms",
    ),
    col("turns", Int, "member messages posted over all rooms"),
    col("converged", Int, "rooms that converged (decided)"),
    col("correct", Int, "rooms that converged on the true option"),
    col("deadlocked", Int, "rooms that ended deadlocked"),
    col("exhausted", Int, "rooms that ran out of budget"),
    col("idle", Int, "rooms where no member bid"),
    col(
        "effective_budget",
        Int,
        "turns allowed per room after presets (1 for the ladder)",
    ),
    col_null(
        "effective_threshold",
        Int,
        "quorum threshold after presets; null for ladder and vote",
    ),
    col_null(
        "effective_repetition",
        Int,
        "repetition cap after presets; null for ladder and vote",
    ),
    col_null(
        "effective_dominance",
        Int,
        "dominance cap after presets; null for ladder and vote",
    ),
];

pub const EPISODES: &[Column] = &[
    col("episode", Int, "room index i, seeded mix(seed, i)"),
    col("truth", Str, "the true option"),
    col("ending", Str, "converged, deadlocked, exhausted or idle"),
    col_null(
        "decided",
        Str,
        "the option converged on; null unless converged",
    ),
    col("correct", Bool, "converged on the true option"),
    col("turns", Int, "member messages posted in the room"),
];

pub const TABLES: &[TableSpec] = &[TableSpec {
    name: "episodes",
    columns: EPISODES,
    default_on: false,
    doc: "one row per run and room",
}];

pub struct Hive;

fn int(x: u64) -> Value {
    Value::Int(x as i64)
}

/// One room under the run's mechanism: (ending, turns).
fn episode(c: &Config, i: u64, scratch: &mut Scratch) -> (Room, Ending, u64) {
    let room = Room::new(c.seed, i, c.agents, c.topics, c.noise);
    let (ending, turns) = match c.mechanism {
        Mechanism::Ladder => (Ending::Converged(room.ladder()), 1),
        Mechanism::Vote => (
            Ending::Converged(room.vote(c.policy.budget)),
            c.policy.budget,
        ),
        Mechanism::Hive => {
            let o = play_in(scratch, &room, &c.policy, false);
            (o.ending, o.turns)
        }
    };
    (room, ending, turns)
}

fn episode_row(i: u64, room: &Room, ending: Ending, turns: u64) -> Row {
    let decided = match ending {
        Ending::Converged(t) => Some(t),
        _ => None,
    };
    vec![
        int(i),
        Value::Str(OPTIONS[room.truth as usize].into()),
        Value::Str(ending.name().into()),
        decided.map_or(Value::Null, |t| Value::Str(OPTIONS[t as usize].into())),
        Value::Bool(decided == Some(room.truth)),
        int(turns),
    ]
}

/// The per-room identities a stored episode row must satisfy.
fn check_episode(c: &Config, row: &Row) -> Option<Violation> {
    episode_problem(c, row).map(|detail| Violation {
        identity: "turns within budget, exhausted at the budget, correct = decided on truth".into(),
        round: match row[0] {
            Value::Int(i) => Some(i as u64),
            _ => None,
        },
        detail,
    })
}

fn episode_problem(c: &Config, row: &Row) -> Option<String> {
    let (Value::Str(truth), Value::Str(ending), decided, Value::Bool(correct), Value::Int(turns)) =
        (&row[1], &row[2], &row[3], &row[4], &row[5])
    else {
        return Some(format!("unexpected column types in {row:?}"));
    };
    let budget = c.budget() as i64;
    if *turns > budget || (ending == "exhausted" && *turns != budget) {
        return Some(format!(
            "{turns} turns with budget {budget}, ending {ending}"
        ));
    }
    let decided = match decided {
        Value::Str(s) => Some(s),
        _ => None,
    };
    if decided.is_some() != (ending == "converged") {
        return Some(format!("ending {ending} with decided {decided:?}"));
    }
    if *correct != (decided == Some(truth)) {
        return Some(format!(
            "correct = {correct} with decided {decided:?}, truth {truth}"
        ));
    }
    None
}

impl Model for Hive {
    fn name(&self) -> &'static str {
        "hive"
    }
    fn version(&self) -> &'static str {
        VERSION
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
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
        let c = Config::from_resolved(p).expect("the runner validates parameters first");
        let mut ends = [0u64; 4];
        let (mut turns, mut correct) = (0, 0);
        let mut rows = Vec::new();
        let mut violation = None;
        let mut scratch = Scratch::default();
        for i in 0..c.rooms {
            let (room, ending, t) = episode(&c, i, &mut scratch);
            turns += t;
            ends[match ending {
                Ending::Converged(_) => 0,
                Ending::Deadlocked => 1,
                Ending::Exhausted => 2,
                Ending::Idle => 3,
            }] += 1;
            correct += u64::from(ending == Ending::Converged(room.truth));
            let row = episode_row(i, &room, ending, t);
            if violation.is_none() {
                violation = check_episode(&c, &row);
            }
            if want[0] {
                rows.push(row);
            }
        }
        let e = c.rooms as f64;
        let hive = c.mechanism == Mechanism::Hive;
        let knob = |x: u64| if hive { int(x) } else { Value::Null };
        let summary = vec![
            Value::Float(turns as f64 / e),
            Value::Float(100.0 * ends[0] as f64 / e),
            Value::Float(100.0 * correct as f64 / e),
            int(turns),
            int(ends[0]),
            int(correct),
            int(ends[1]),
            int(ends[2]),
            int(ends[3]),
            int(c.budget()),
            knob(c.policy.fold.threshold as u64),
            knob(u64::from(c.policy.repetition)),
            knob(c.policy.dominance),
        ];
        RunOutput {
            summary,
            tables: vec![rows],
            violation,
        }
    }
    fn audit(&self, p: &Resolved, table: usize, rows: &[Row]) -> Option<Violation> {
        let c = Config::from_resolved(p).ok()?;
        if table != 0 {
            return None;
        }
        if rows.len() as u64 != c.rooms {
            return Some(Violation {
                identity: "one episode row per room".into(),
                round: None,
                detail: format!("{} rows, expected {}", rows.len(), c.rooms),
            });
        }
        rows.iter().enumerate().find_map(|(i, row)| {
            if row[0] != int(i as u64) {
                return Some(Violation {
                    identity: "episodes stored in order".into(),
                    round: Some(i as u64),
                    detail: format!("found episode {}", row[0]),
                });
            }
            check_episode(&c, row)
        })
    }
    fn headline_metrics(&self) -> &'static [&'static str] {
        &["correct_pct", "decided_pct", "turns_per_episode"]
    }
    fn ranking(&self) -> Option<RankSpec> {
        Some(RankSpec {
            doc: "hive.md's key: (correct x 10000 div rooms, converged x 10000 div rooms, -(turns x 100 div rooms)), highest first, ties in grid order",
            columns: &["correct", "converged", "turns"],
            key: |p, v| {
                let e = p.int("rooms");
                let i = |k: usize| if let Value::Int(x) = v[k] { x } else { 0 };
                vec![i(0) * 10_000 / e, i(1) * 10_000 / e, -(i(2) * 100 / e)]
            },
            show: &[
                ("turns_per_episode", 2),
                ("decided_pct", 1),
                ("correct_pct", 1),
                ("converged", 0),
                ("deadlocked", 0),
                ("exhausted", 0),
                ("idle", 0),
            ],
        })
    }
}
