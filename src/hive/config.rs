//! The hive model's parameters: their declaration for the runner, and the
//! validated configuration a run plays. Knobs left unset take the preset of
//! the chosen policy (`hive` or `hive+`), so `policy = "hive+"` alone is the
//! published arm for any number of members.

use super::fold::Policy;
use super::policy::{hive, hive_plus, Mechanism, RoomPolicy};
use crate::params::{spec, Kind, ParamError, ParamSpec, Resolved, Value};

pub const POLICIES: &[&str] = &["ladder", "vote", "hive", "hive+"];
/// Knobs of the deliberating policies; the ladder and the vote read none
/// of them except the vote's `budget`.
pub const KNOBS: &[&str] = &[
    "budget",
    "threshold",
    "blind",
    "repetition",
    "dominance",
    "window",
    "grounded",
    "refutation_cap",
    "evidential",
];

pub const PARAMS: &[ParamSpec] = &[
    spec!(
        "seed",
        Kind::Int {
            min: 0,
            max: i64::MAX
        },
        Value::Int(1),
        "run seed S; room i is seeded mix(S, i)"
    ),
    spec!(
        "rooms",
        Kind::Int {
            min: 1,
            max: 100_000_000
        },
        Value::Int(500),
        "episodes (rooms) per run"
    ),
    spec!(
        "agents",
        Kind::Int { min: 2, max: 8 },
        Value::Int(5),
        "members per room, in the order planner, critic, archivist, scout, auditor, historian, builder, reviewer"
    ),
    spec!(
        "topics",
        Kind::Int { min: 2, max: 8 },
        Value::Int(4),
        "options per room: stage, ship, revert, shadow, canary, freeze, split, pilot"
    ),
    spec!(
        "noise",
        Kind::Int {
            min: 0,
            max: 1_000_000
        },
        Value::Int(90),
        "evaluation noise: each evaluation is 100 (true) or 40 (decoy) plus a uniform draw in -noise..=noise"
    ),
    spec!(
        "policy",
        Kind::Choice(POLICIES),
        Value::Str("hive+".into()),
        "ladder (one member answers), vote (plurality over budget turns), hive or hive+ (quorum presets)"
    ),
    spec!(
        "budget",
        Kind::IntOrNone {
            min: 1,
            max: 1_000_000
        },
        Value::Null,
        "turns before the episode is exhausted (vote: votes cast); none: the preset, 12 for hive, max(3n, 6) for hive+ and vote"
    ),
    spec!(
        "threshold",
        Kind::IntOrNone { min: 1, max: 8 },
        Value::Null,
        "counted supporters a topic needs to carry; none: the preset, 2 for hive, max(min(n/2+1, n-1), 2) for hive+"
    ),
    spec!(
        "blind",
        Kind::Bool,
        Value::Bool(true),
        "blind round: until every member has posted, a speaker sees only the task and its own messages"
    ),
    spec!(
        "repetition",
        Kind::IntOrNone { min: 1, max: 8 },
        Value::Null,
        "supports of a topic with this many counted supporters add no salience; none: 3 for hive, 2 for hive+"
    ),
    spec!(
        "dominance",
        Kind::IntOrNone { min: 0, max: 100 },
        Value::Null,
        "a member's share of grounded traces above this percentage is dominant; none: 50 for hive, 40 for hive+"
    ),
    spec!(
        "window",
        Kind::Int {
            min: 1,
            max: 1_000_000
        },
        Value::Int(100),
        "the fold keeps traces with sequence in at-window..=at"
    ),
    spec!(
        "grounded",
        Kind::Bool,
        Value::Bool(true),
        "supports and objections count only when they cite something"
    ),
    spec!(
        "refutation_cap",
        Kind::IntOrNone {
            min: 1,
            max: 1_000_000
        },
        Value::Null,
        "a topic refuted by this many members cannot carry, and members refute rivals they rate far below their favourite; none: off"
    ),
    spec!(
        "evidential",
        Kind::Bool,
        Value::Bool(false),
        "a support counts only if its citation chain reaches evidence, an objection only from a member who gave evidence"
    ),
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub seed: u64,
    pub rooms: u64,
    pub agents: usize,
    pub topics: usize,
    pub noise: u64,
    pub mechanism: Mechanism,
    /// The effective knobs: presets with the manifest's overrides applied.
    pub policy: RoomPolicy,
}

fn opt(p: &Resolved, name: &str) -> Option<i64> {
    match p.get(name) {
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

impl Config {
    pub fn from_resolved(p: &Resolved) -> Result<Config, ParamError> {
        let agents = p.int("agents") as usize;
        let name = p.str("policy");
        let mechanism = match name {
            "ladder" => Mechanism::Ladder,
            "vote" => Mechanism::Vote,
            _ => Mechanism::Hive,
        };
        let mut policy = if name == "hive" {
            hive(agents)
        } else {
            hive_plus(agents)
        };
        if let Some(b) = opt(p, "budget") {
            policy.budget = b as u64;
        }
        if let Some(t) = opt(p, "threshold") {
            policy.fold.threshold = t as usize;
        }
        if let Some(r) = opt(p, "repetition") {
            policy.repetition = r as u32;
        }
        if let Some(d) = opt(p, "dominance") {
            policy.dominance = d as u64;
        }
        policy.blind = p.bool("blind");
        policy.fold = Policy {
            window: p.int("window") as u64,
            require_grounded: p.bool("grounded"),
            require_evidential: p.bool("evidential"),
            refutation_cap: opt(p, "refutation_cap").map(|c| c as usize),
            ..policy.fold
        };
        if mechanism == Mechanism::Hive && policy.fold.threshold > agents {
            return Err(ParamError::new(
                "threshold",
                policy.fold.threshold,
                &format!("no topic can carry with more supporters than the {agents} members"),
                format!("an integer in 1 ..= agents ({agents})"),
            ));
        }
        Ok(Config {
            seed: p.int("seed") as u64,
            rooms: p.int("rooms") as u64,
            agents,
            topics: p.int("topics") as usize,
            noise: p.int("noise") as u64,
            mechanism,
            policy,
        })
    }

    /// Parameters this configuration does not read.
    pub fn ignored(&self) -> Vec<&'static str> {
        match self.mechanism {
            Mechanism::Ladder => KNOBS.to_vec(),
            Mechanism::Vote => KNOBS[1..].to_vec(),
            Mechanism::Hive => vec![],
        }
    }

    /// Turns an episode may take.
    pub fn budget(&self) -> u64 {
        match self.mechanism {
            Mechanism::Ladder => 1,
            _ => self.policy.budget,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&'static str, Value)]) -> Result<Config, ParamError> {
        let mut p = Resolved::defaults(PARAMS);
        for (k, v) in pairs {
            p.set(k, v.clone());
        }
        Config::from_resolved(&p)
    }

    #[test]
    fn unset_knobs_take_the_preset_and_set_ones_override_it() {
        let c = with(&[]).unwrap();
        assert_eq!(c.policy, hive_plus(5));
        let c = with(&[("policy", Value::Str("hive".into()))]).unwrap();
        assert_eq!(c.policy, hive(5));
        let c = with(&[
            ("threshold", Value::Int(2)),
            ("refutation_cap", Value::Int(2)),
        ])
        .unwrap();
        assert_eq!(c.policy.fold.threshold, 2);
        assert_eq!(c.policy.fold.refutation_cap, Some(2));
        assert_eq!(c.policy.budget, 15);
        let c = with(&[("policy", Value::Str("vote".into()))]).unwrap();
        assert_eq!(c.budget(), 15, "the vote's budget is hive+'s");
        assert!(c.ignored().contains(&"threshold") && !c.ignored().contains(&"budget"));
    }

    #[test]
    fn a_threshold_above_the_members_is_refused() {
        let err = with(&[("agents", Value::Int(3)), ("threshold", Value::Int(4))]).unwrap_err();
        assert!(err.to_string().contains("agents (3)"), "{err}");
    }
}
