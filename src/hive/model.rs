//! The hive model behind the runner's `Model` boundary: a run is one policy
//! over `rooms` episodes; its summary row carries the published metrics and
//! ending counts, and an optional `episodes` table one row per room.

use super::config::{Config, HiveParams, Member};
use super::episode::{play_in, Ending, Scratch};
use super::external::{Writer, TURN};
use super::policy::Mechanism;
use super::room::{Room, OPTIONS};
use super::VERSION;
use crate::model::Judge;
use crate::model::{
    DecisionPoint, DetailTable, Footprint, Model, Position, Ran, Ranking, Registered, RunContext,
    Stored, TableSpec, Violation,
};
use crate::params::{ParamError, ParamSet};

crate::record! {
    /// A run's summary: its columns of `runs.parquet`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct HiveSummary {
        /// total turns / rooms
        turns_per_episode: f64 => Judge::lower(),
        /// 100 x converged / rooms
        decided_pct: f64 [0.0, 100.0],
        /// 100 x converged on the true option / rooms
        correct_pct: f64 [0.0, 100.0] => Judge::higher(),
        /// member messages posted over all rooms
        turns: u64,
        /// rooms that converged (decided)
        converged: u64,
        /// rooms that converged on the true option
        correct: u64,
        /// rooms that ended deadlocked
        deadlocked: u64,
        /// rooms that ran out of budget
        exhausted: u64,
        /// rooms where no member bid
        idle: u64,
        /// turns allowed per room after presets (1 for the ladder)
        effective_budget: u64,
        /// quorum threshold after presets; null for ladder and vote
        effective_threshold: Option<u64>,
        /// repetition cap after presets; null for ladder and vote
        effective_repetition: Option<u64>,
        /// dominance cap after presets; null for ladder and vote
        effective_dominance: Option<u64>,
    }
}

crate::record! {
    /// One room of a run: a row of `episodes.parquet`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct EpisodeRow {
        /// room index i, seeded mix(seed, i)
        episode: u64,
        /// the true option
        truth: String,
        /// converged, deadlocked, exhausted or idle
        ending: String,
        /// the option converged on; null unless converged
        decided: Option<String>,
        /// converged on the true option
        correct: bool,
        /// member messages posted in the room
        turns: u64,
    }
}

pub const EPISODES: DetailTable<EpisodeRow> =
    DetailTable::new("episodes", false, "one row per run and room");

pub struct Hive;

/// One room under the run's mechanism: (room, ending, turns).
fn episode(c: &Config, i: u64, scratch: &mut Scratch, writer: &mut Writer) -> (Room, Ending, u64) {
    let room = Room::new(c.seed, i, c.agents, c.topics, c.noise);
    let (ending, turns) = match c.mechanism {
        Mechanism::Ladder => (Ending::Converged(room.ladder()), 1),
        Mechanism::Vote => (
            Ending::Converged(room.vote(c.policy.budget)),
            c.policy.budget,
        ),
        Mechanism::Hive => {
            let o = play_in(scratch, &room, &c.policy, false, writer);
            (o.ending, o.turns)
        }
    };
    (room, ending, turns)
}

/// What the per-room identities look at, as words (live or stored).
struct Facts<'a> {
    episode: u64,
    truth: &'a str,
    ending: &'a str,
    decided: Option<&'a str>,
    correct: bool,
    turns: u64,
}

impl Facts<'_> {
    fn check(&self, budget: u64) -> Option<Violation> {
        let fail = |detail: String| {
            Some(Violation {
                identity:
                    "turns within budget, exhausted at the budget, correct = decided on truth"
                        .into(),
                at: Some(Position::Episode(self.episode)),
                detail,
            })
        };
        let (turns, ending) = (self.turns, self.ending);
        if turns > budget || (ending == "exhausted" && turns != budget) {
            return fail(format!(
                "{turns} turns with budget {budget}, ending {ending}"
            ));
        }
        if self.decided.is_some() != (ending == "converged") {
            return fail(format!("ending {ending} with decided {:?}", self.decided));
        }
        if self.correct != (self.decided == Some(self.truth)) {
            return fail(format!(
                "correct = {} with decided {:?}, truth {}",
                self.correct, self.decided, self.truth
            ));
        }
        None
    }
}

impl Model for Hive {
    const NAME: &'static str = "hive";
    const VERSION: &'static str = VERSION;
    const DOC: &'static str =
        "hive-rooms/1: rooms of members deliberating by marker lines until a quorum fold converges";
    type Params = HiveParams;
    type Config = Config;
    type Summary = HiveSummary;
    const TABLES: &'static [TableSpec] = &[EPISODES.spec];

    fn configure(p: HiveParams) -> Result<Config, ParamError> {
        Config::new(p)
    }

    fn ignored(c: &Config) -> ParamSet {
        c.ignored()
    }

    fn decision_point(c: &Config) -> Option<&'static DecisionPoint> {
        (c.member == Member::External).then_some(&TURN)
    }

    fn run(c: &Config, cx: &mut RunContext) -> Ran<HiveSummary> {
        let mut ends = [0u64; 4];
        let (mut turns, mut correct) = (0, 0);
        let mut violation = None;
        let mut scratch = Scratch::default();
        let keep = cx.wants(&EPISODES);
        let mut rows = Vec::new();
        let mut decide = |asks| cx.decide(asks);
        for i in 0..c.rooms {
            let mut writer = match c.member {
                Member::Builtin => Writer::Builtin,
                Member::External => Writer::External {
                    episode: i,
                    decide: &mut decide,
                    failed: None,
                },
            };
            let (room, ending, t) = episode(c, i, &mut scratch, &mut writer);
            if let Writer::External {
                failed: Some(_), ..
            } = writer
            {
                // The runner records the failure; the rooms so far are dropped.
                break;
            }
            turns += t;
            ends[match ending {
                Ending::Converged(_) => 0,
                Ending::Deadlocked => 1,
                Ending::Exhausted => 2,
                Ending::Idle => 3,
            }] += 1;
            let decided = match ending {
                Ending::Converged(t) => Some(OPTIONS[t as usize]),
                _ => None,
            };
            let facts = Facts {
                episode: i,
                truth: OPTIONS[room.truth as usize],
                ending: ending.name(),
                decided,
                correct: ending == Ending::Converged(room.truth),
                turns: t,
            };
            correct += u64::from(facts.correct);
            if violation.is_none() {
                violation = facts.check(c.budget());
            }
            if keep {
                rows.push(EpisodeRow {
                    episode: i,
                    truth: facts.truth.into(),
                    ending: facts.ending.into(),
                    decided: facts.decided.map(str::to_string),
                    correct: facts.correct,
                    turns: t,
                });
            }
        }
        if let Some(mut table) = cx.table(&EPISODES) {
            for r in &rows {
                table.push(r);
            }
        }
        let e = c.rooms as f64;
        let knob = |x: u64| (c.mechanism == Mechanism::Hive).then_some(x);
        let summary = HiveSummary {
            turns_per_episode: turns as f64 / e,
            decided_pct: 100.0 * ends[0] as f64 / e,
            correct_pct: 100.0 * correct as f64 / e,
            turns,
            converged: ends[0],
            correct,
            deadlocked: ends[1],
            exhausted: ends[2],
            idle: ends[3],
            effective_budget: c.budget(),
            effective_threshold: knob(c.policy.fold.threshold as u64),
            effective_repetition: knob(u64::from(c.policy.repetition)),
            effective_dominance: knob(c.policy.dominance),
        };
        Ran { summary, violation }
    }

    fn footprint(c: &Config) -> Footprint {
        Footprint {
            rows: vec![c.rooms],
            working_bytes: 1 << 16,
            grows_with: ParamSet::of(&[HiveParams::rooms]),
        }
    }

    fn audit(c: &Config, stored: &Stored) -> Option<Violation> {
        let rows = match stored.rows(&EPISODES)? {
            Ok(rows) => rows,
            Err(e) => {
                return Some(Violation {
                    identity: "episode rows hold their declared types".into(),
                    at: None,
                    detail: e.to_string(),
                })
            }
        };
        if rows.len() as u64 != c.rooms {
            return Some(Violation {
                identity: "one episode row per room".into(),
                at: None,
                detail: format!("{} rows, expected {}", rows.len(), c.rooms),
            });
        }
        rows.iter().enumerate().find_map(|(i, row)| {
            if row.episode != i as u64 {
                return Some(Violation {
                    identity: "episodes stored in order".into(),
                    at: Some(Position::Episode(i as u64)),
                    detail: format!("found episode {}", row.episode),
                });
            }
            Facts {
                episode: row.episode,
                truth: &row.truth,
                ending: &row.ending,
                decided: row.decided.as_deref(),
                correct: row.correct,
                turns: row.turns,
            }
            .check(c.budget())
        })
    }
}

/// The hive as registered: its headline metrics and ranking.
pub static MODEL: Registered<Hive> = Registered::new()
    .headline(&["correct_pct", "decided_pct", "turns_per_episode"])
    .ranking(Ranking {
        doc: "correct x 10000 div rooms, then converged x 10000 div rooms, then -(turns x 100 div rooms), highest first, ties in grid order",
        key: |p, s| {
            let e = p.rooms as i64;
            let i = |x: u64| x as i64;
            vec![
                i(s.correct) * 10_000 / e,
                i(s.converged) * 10_000 / e,
                -(i(s.turns) * 100 / e),
            ]
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
    });
