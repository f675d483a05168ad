//! trust-sim's generated world (docs/models/trust.md §8): honest actors report
//! on claims whose true quality is drawn per claim, and one attack tries to
//! lift bad claims. Everything is written as the scorer's input tables, so
//! the simulation exercises exactly what `witness trust score` runs.

use crate::params::Kind;
use crate::rng::Stream;
use crate::trust::evidence::Tables;
use crate::trust::input::{self, RawTable};

pub const TODAY: i64 = 1000;
/// Stream tag ("trus"), so trust-sim draws never share a cascade stream.
const TAG: u64 = 0x7472_7573;

crate::words! {
    /// The attacks trust-sim plays against trust-v1.
    pub enum Attack {
        /// No attack.
        None = "none",
        /// An ai fleet under one unverified controller.
        Sybil = "sybil",
        /// Unverified human accounts, each its own root.
        Throwaway = "throwaway",
        /// Throwaway accounts created days ago, all posting on one day.
        Burst = "burst",
        /// The attacker authors the bad claims and its fleet confirms them.
        SelfPromotion = "self_promotion",
        /// One origin source and its mirrors all supporting the bad claims.
        CopySources = "copy_sources",
        /// Independent email-verified humans, one confirmation each.
        Collusion = "collusion",
    }
}

crate::params! {
    /// trust-sim's parameters: the world a run generates and the attack
    /// on it, in the column order of `runs.parquet`.
    pub struct Setup {
        /// run seed
        seed: u64 = 1, Kind::int(0, i64::MAX), Seed;
        /// varies the world's draws (placebo reruns)
        replicate: u64 = 0, Kind::int(0, i64::MAX), Replicate;
        /// claims scored, each good or bad
        claims: usize = 300, Kind::int(1, 10_000_000);
        /// chance a claim is good
        good_share: f64 = 0.5, Kind::float(0.0, 1.0);
        /// honest human actors, each its own root
        honest: usize = 60, Kind::int(1, 10_000_000);
        /// share of honest actors with a verified email (the rest unverified)
        verified_share: f64 = 0.5, Kind::float(0.0, 1.0);
        /// honest signals per claim
        evidence: usize = 6, Kind::int(0, 100_000);
        /// chance an honest signal matches the truth
        honest_accuracy: f64 = 0.85, Kind::float(0.0, 1.0);
        /// none, sybil, throwaway, burst, self_promotion, copy_sources or collusion
        attack: Attack = Attack::Sybil, Kind::choice::<Attack>();
        /// share of bad claims the attack targets
        attacker_share: f64 = 0.5, Kind::float(0.0, 1.0);
        /// accounts (or copied sources) per attacked claim
        fleet: usize = 10, Kind::int(1, 100_000);
        /// collusion: independent email-verified attacker roots
        colluders: usize = 1, Kind::int(1, 100_000);
    }
}

/// The generated tables and what the scorer cannot see.
pub struct World {
    pub tables: Tables,
    /// Per claim: truly good?
    pub good: Vec<bool>,
    /// Per claim: attacked?
    pub attacked: Vec<bool>,
    pub signals: usize,
    /// Every id the attack created (actors and sources): the roots and
    /// families an attacker's evidence is grouped under.
    pub attacker_ids: std::collections::HashSet<String>,
}

struct Builder {
    attacker_ids: std::collections::HashSet<String>,
    actors: Vec<Vec<String>>,
    claims: Vec<Vec<String>>,
    signals: Vec<Vec<String>>,
    relations: Vec<Vec<String>>,
}

impl Builder {
    fn attacker(
        &mut self,
        id: &str,
        kind: &str,
        controller: &str,
        verification: &str,
        created: i64,
    ) {
        self.attacker_ids.insert(id.to_string());
        self.actor(id, kind, controller, verification, created);
    }

    fn actor(&mut self, id: &str, kind: &str, controller: &str, verification: &str, created: i64) {
        self.actors.push(
            [id, kind, controller, verification, &created.to_string()]
                .map(String::from)
                .to_vec(),
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn signal(
        &mut self,
        target: &str,
        actor: &str,
        kind: &str,
        outcome: &str,
        real_world: bool,
        refs: bool,
        day: i64,
        active: bool,
    ) {
        let id = format!("s{}", self.signals.len());
        let status = if active { "active" } else { "retracted" };
        self.signals.push(vec![
            id,
            target.into(),
            actor.into(),
            kind.into(),
            outcome.into(),
            real_world.to_string(),
            String::new(),
            refs.to_string(),
            day.to_string(),
            status.into(),
        ]);
    }

    fn table(file: &str, columns: &[&str], rows: Vec<Vec<String>>) -> RawTable {
        RawTable {
            file: file.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
        }
    }
}

pub fn generate(s: &Setup) -> World {
    let mut rng = Stream::keyed(s.seed, &[TAG, s.replicate]);
    let mut b = Builder {
        attacker_ids: Default::default(),
        actors: Vec::new(),
        claims: Vec::new(),
        signals: Vec::new(),
        relations: Vec::new(),
    };
    for h in 0..s.honest {
        let v = if rng.unit() < s.verified_share {
            "email"
        } else {
            "none"
        };
        let created = rng.below(600) as i64;
        b.actor(&format!("h{h}"), "human", "", v, created);
    }
    let good: Vec<bool> = (0..s.claims).map(|_| rng.unit() < s.good_share).collect();
    let attacked: Vec<bool> = good
        .iter()
        .map(|&g| s.attack != Attack::None && !g && rng.unit() < s.attacker_share)
        .collect();
    // The attacker's roots and accounts.
    let fleet: Vec<String> = (0..s.fleet).map(|k| format!("atk-{k}")).collect();
    match s.attack {
        Attack::Sybil | Attack::SelfPromotion => {
            b.attacker("atk", "human", "", "none", 0);
            for f in &fleet {
                b.attacker(f, "ai", "atk", "none", 0);
            }
        }
        Attack::Throwaway => fleet
            .iter()
            .for_each(|f| b.attacker(f, "human", "", "none", 0)),
        Attack::Burst => fleet
            .iter()
            .for_each(|f| b.attacker(f, "human", "", "none", TODAY - 5)),
        Attack::CopySources => b.attacker("atk", "human", "", "none", 0),
        Attack::Collusion => {
            (0..s.colluders).for_each(|k| b.attacker(&format!("atk-{k}"), "human", "", "email", 0))
        }
        Attack::None => {}
    }
    for (i, (&is_good, &hit)) in good.iter().zip(&attacked).enumerate() {
        let claim = format!("c{i}");
        let author = if hit && s.attack == Attack::SelfPromotion {
            "atk".to_string()
        } else {
            format!("h{}", rng.below(s.honest as u64))
        };
        b.claims.push(vec![claim.clone(), author]);
        for _ in 0..s.evidence {
            let actor = format!("h{}", rng.below(s.honest as u64));
            let right = rng.unit() < s.honest_accuracy;
            let positive = is_good == right;
            let day = TODAY - rng.below(365) as i64;
            let active = rng.unit() >= 0.02;
            if rng.unit() < 0.7 {
                let outcome = if positive { "success" } else { "failure" };
                let rw = rng.unit() < 0.5;
                b.signal(&claim, &actor, "usage", outcome, rw, false, day, active);
            } else {
                let outcome = if positive { "true" } else { "false" };
                let refs = rng.unit() < 0.3;
                b.signal(&claim, &actor, "review", outcome, false, refs, day, active);
            }
        }
        if !hit {
            continue;
        }
        match s.attack {
            Attack::Sybil | Attack::Throwaway | Attack::SelfPromotion => {
                for f in &fleet {
                    let day = TODAY - rng.below(30) as i64;
                    b.signal(&claim, f, "usage", "success", true, false, day, true);
                }
                if s.attack == Attack::SelfPromotion {
                    b.signal(&claim, "atk", "usage", "success", true, false, TODAY, true);
                }
            }
            Attack::Burst => {
                for f in &fleet {
                    b.signal(&claim, f, "usage", "success", true, false, TODAY - 2, true);
                }
            }
            Attack::CopySources => {
                let origin = format!("atk-src-{i}");
                b.attacker_ids.insert(origin.clone());
                b.relations.push(
                    [&origin, &claim, "supports", "1.0", "atk", "990"]
                        .map(String::from)
                        .to_vec(),
                );
                for k in 1..s.fleet {
                    let mirror = format!("{origin}-m{k}");
                    b.attacker_ids.insert(mirror.clone());
                    b.relations.push(
                        [&mirror, &origin, "mirrors", "", "atk", "990"]
                            .map(String::from)
                            .to_vec(),
                    );
                    b.relations.push(
                        [&mirror, &claim, "supports", "1.0", "atk", "990"]
                            .map(String::from)
                            .to_vec(),
                    );
                }
            }
            Attack::Collusion => {
                for k in 0..s.colluders {
                    let day = TODAY - rng.below(30) as i64;
                    b.signal(
                        &claim,
                        &format!("atk-{k}"),
                        "usage",
                        "success",
                        true,
                        false,
                        day,
                        true,
                    );
                }
            }
            Attack::None => {}
        }
    }
    let signals = b.signals.len();
    World {
        tables: Tables {
            actors: Builder::table("actors", input::ACTORS, b.actors),
            items: Builder::table("items", input::ITEMS, Vec::new()),
            signals: Builder::table("signals", input::SIGNALS, b.signals),
            relations: Some(Builder::table("relations", input::RELATIONS, b.relations)),
            sources: None,
            ratings: None,
            claims: Some(Builder::table("claims", input::CLAIMS, b.claims)),
        },
        good,
        attacked,
        signals,
        attacker_ids: b.attacker_ids,
    }
}
