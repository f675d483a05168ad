//! The hive model's parameters: their declaration for the runner, and the
//! validated configuration a run plays. Knobs left unset take the preset of
//! the chosen policy (`hive` or `hive+`), so `policy = "hive+"` alone is the
//! published arm for any number of members.

use super::fold::Policy;
use super::policy::{hive, hive_plus, Mechanism, RoomPolicy};
use crate::params::{Kind, ParamError, ParamSet, Params, Resolved};

crate::words! {
    /// The arms' mechanisms and presets.
    pub enum HivePolicy {
        Ladder = "ladder",
        Vote = "vote",
        Hive = "hive",
        HivePlus = "hive+",
    }
}

crate::words! {
    /// Who writes the members' messages.
    pub enum Member {
        /// The member rules.
        Builtin = "builtin",
        /// An external policy (the arm's `external = { ... }`).
        External = "external",
    }
}

crate::params! {
    /// Every parameter of the hive model, in the column order of
    /// `runs.parquet`.
    pub struct HiveParams {
        /// run seed S; room i is seeded mix(S, i)
        seed: u64 = 1, Kind::int(0, i64::MAX), Seed;
        /// episodes (rooms) per run
        rooms: u64 = 500, Kind::int(1, 100_000_000);
        /// members per room, in the order planner, critic, archivist, scout, auditor, historian, builder, reviewer
        agents: usize = 5, Kind::int(2, 8);
        /// options per room: stage, ship, revert, shadow, canary, freeze, split, pilot
        topics: usize = 4, Kind::int(2, 8);
        /// evaluation noise: each evaluation is 100 (true) or 40 (decoy) plus a uniform draw in -noise..=noise
        noise: u64 = 90, Kind::int(0, 1_000_000);
        /// ladder (one member answers), vote (plurality over budget turns), hive or hive+ (quorum presets)
        policy: HivePolicy = HivePolicy::HivePlus, Kind::choice::<HivePolicy>(), Arm;
        /// turns before the episode is exhausted (vote: votes cast); none: the preset, 12 for hive, max(3n, 6) for hive+ and vote
        budget: Option<u64> = None, Kind::int_or_none(1, 1_000_000);
        /// counted supporters a topic needs to carry; none: the preset, 2 for hive, max(min(n/2+1, n-1), 2) for hive+
        threshold: Option<usize> = None, Kind::int_or_none(1, 8);
        /// blind round: until every member has posted, a speaker sees only the task and its own messages
        blind: bool = true, Kind::Bool;
        /// supports of a topic with this many counted supporters add no salience; none: 3 for hive, 2 for hive+
        repetition: Option<u32> = None, Kind::int_or_none(1, 8);
        /// a member's share of grounded traces above this percentage is dominant; none: 50 for hive, 40 for hive+
        dominance: Option<u64> = None, Kind::int_or_none(0, 100);
        /// the fold keeps traces with sequence in at-window..=at
        window: u64 = 100, Kind::int(1, 1_000_000);
        /// supports and objections count only when they cite something
        grounded: bool = true, Kind::Bool;
        /// a topic refuted by this many members cannot carry, and members refute rivals they rate far below their favourite; none: off
        refutation_cap: Option<usize> = None, Kind::int_or_none(1, 1_000_000);
        /// a support counts only if its citation chain reaches evidence, an objection only from a member who gave evidence
        evidential: bool = false, Kind::Bool;
        /// builtin (the member rules write the messages) or external (an external policy writes them; hive and hive+ only)
        member: Member = Member::Builtin, Kind::choice::<Member>(), Arm, Added;
    }
}

/// Every parameter, in declaration order.
pub const PARAMS: &[crate::params::ParamSpec] = HiveParams::SPECS;

/// Knobs of the deliberating policies but the budget; the ladder reads
/// none of them and the vote only the budget.
const DELIBERATION: ParamSet = ParamSet::of(&[
    HiveParams::threshold,
    HiveParams::blind,
    HiveParams::repetition,
    HiveParams::dominance,
    HiveParams::window,
    HiveParams::grounded,
    HiveParams::refutation_cap,
    HiveParams::evidential,
]);

impl HivePolicy {
    pub fn mechanism(self) -> Mechanism {
        match self {
            HivePolicy::Ladder => Mechanism::Ladder,
            HivePolicy::Vote => Mechanism::Vote,
            HivePolicy::Hive | HivePolicy::HivePlus => Mechanism::Hive,
        }
    }
}

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
    pub member: Member,
}

impl Config {
    pub fn new(p: HiveParams) -> Result<Config, ParamError> {
        let agents = p.agents;
        let mechanism = p.policy.mechanism();
        // The ladder and the vote read hive+'s preset budget.
        let mut policy = if p.policy == HivePolicy::Hive {
            hive(agents)
        } else {
            hive_plus(agents)
        };
        if let Some(b) = p.budget {
            policy.budget = b;
        }
        if let Some(t) = p.threshold {
            policy.fold.threshold = t;
        }
        if let Some(r) = p.repetition {
            policy.repetition = r;
        }
        if let Some(d) = p.dominance {
            policy.dominance = d;
        }
        policy.blind = p.blind;
        policy.fold = Policy {
            window: p.window,
            require_grounded: p.grounded,
            require_evidential: p.evidential,
            refutation_cap: p.refutation_cap,
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
        if p.member == Member::External && mechanism != Mechanism::Hive {
            return Err(ParamError::new(
                "member",
                "external",
                &format!("the {} has no members' messages to write", p.policy),
                "builtin, or choose policy hive or hive+".into(),
            ));
        }
        Ok(Config {
            seed: p.seed,
            rooms: p.rooms,
            agents,
            topics: p.topics,
            noise: p.noise,
            mechanism,
            policy,
            member: p.member,
        })
    }

    /// `new` from a resolved parameter set.
    pub fn from_resolved(p: &Resolved) -> Result<Config, ParamError> {
        Config::new(HiveParams::from_resolved(p))
    }

    /// Parameters this configuration does not read.
    pub fn ignored(&self) -> ParamSet {
        match self.mechanism {
            Mechanism::Ladder => DELIBERATION.union(ParamSet::of(&[HiveParams::budget])),
            Mechanism::Vote => DELIBERATION,
            Mechanism::Hive => ParamSet::EMPTY,
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
    use crate::params::Value;

    fn with(pairs: &[(&'static str, Value)]) -> Result<Config, ParamError> {
        let mut p = Resolved::defaults(PARAMS);
        for (k, v) in pairs {
            p.set_named(k, v.clone());
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
        assert!(
            c.ignored().contains(HiveParams::threshold)
                && !c.ignored().contains(HiveParams::budget)
        );
    }

    #[test]
    fn a_threshold_above_the_members_is_refused() {
        let err = with(&[("agents", Value::Int(3)), ("threshold", Value::Int(4))]).unwrap_err();
        assert!(err.to_string().contains("agents (3)"), "{err}");
    }
}
