//! The trust-sim model (trust.md section 3) behind the runner's `Model`
//! boundary: a generated world of honest reporters and one attack, scored
//! by the same trust-v1 scorer as `witness trust score`, measured against
//! the truth the scorer never sees.

pub mod world;

use crate::model::{col, col_null, ColType, Column, Model, Row, RunOutput, TableSpec, Violation};
use crate::params::{spec, Kind, ParamError, ParamSpec, Resolved, Value};
use crate::trust::evidence::Evidence;
use crate::trust::output::Report;
use crate::trust::score::{Kind as TargetKind, Score};
use crate::trust::status::Status;
use world::{generate, Attack, Setup, World, ATTACKS, TODAY};

pub const VERSION: &str = "trust-v1/sim-1";

const ATTACK_NAMES: &[&str] = &[
    "none",
    "sybil",
    "throwaway",
    "burst",
    "self_promotion",
    "copy_sources",
    "collusion",
];

pub const PARAMS: &[ParamSpec] = &[
    spec!(
        "seed",
        Kind::Int {
            min: 0,
            max: i64::MAX
        },
        Value::Int(1),
        "run seed"
    ),
    spec!(
        "replicate",
        Kind::Int {
            min: 0,
            max: i64::MAX
        },
        Value::Int(0),
        "varies the world's draws (placebo reruns)"
    ),
    spec!(
        "claims",
        Kind::Int {
            min: 1,
            max: 10_000_000
        },
        Value::Int(300),
        "claims scored, each good or bad"
    ),
    spec!(
        "good_share",
        Kind::Float { min: 0.0, max: 1.0 },
        Value::Float(0.5),
        "chance a claim is good"
    ),
    spec!(
        "honest",
        Kind::Int {
            min: 1,
            max: 10_000_000
        },
        Value::Int(60),
        "honest human actors, each its own root"
    ),
    spec!(
        "verified_share",
        Kind::Float { min: 0.0, max: 1.0 },
        Value::Float(0.5),
        "share of honest actors with a verified email (the rest unverified)"
    ),
    spec!(
        "evidence",
        Kind::Int {
            min: 0,
            max: 100_000
        },
        Value::Int(6),
        "honest signals per claim"
    ),
    spec!(
        "honest_accuracy",
        Kind::Float { min: 0.0, max: 1.0 },
        Value::Float(0.85),
        "chance an honest signal matches the truth"
    ),
    spec!(
        "attack",
        Kind::Choice(ATTACK_NAMES),
        Value::Str("sybil".into()),
        "none, sybil, throwaway, burst, self_promotion, copy_sources or collusion"
    ),
    spec!(
        "attacker_share",
        Kind::Float { min: 0.0, max: 1.0 },
        Value::Float(0.5),
        "share of bad claims the attack targets"
    ),
    spec!(
        "fleet",
        Kind::Int {
            min: 1,
            max: 100_000
        },
        Value::Int(10),
        "accounts (or copied sources) per attacked claim"
    ),
    spec!(
        "colluders",
        Kind::Int {
            min: 1,
            max: 100_000
        },
        Value::Int(1),
        "collusion: independent email-verified attacker roots"
    ),
];

use ColType::{Float, Int};

pub const SUMMARY: &[Column] = &[
    col("good_high", Float, "share of good claims at high_confidence"),
    col("bad_high", Float, "share of bad claims at high_confidence"),
    col("bad_supported", Float, "share of bad claims at supported or high_confidence"),
    col_null("precision_high", Float, "good share among high_confidence claims; null if none"),
    col_null("precision_incorrect", Float, "bad share among incorrect claims; null if none"),
    col_null("auc", Float, "chance a good claim has a higher lower bound than a bad one (ties half); null without both"),
    col_null("attack_success", Float, "share of attacked claims at supported or better; null without an attack"),
    col_null("attack_high", Float, "share of attacked claims at high_confidence; null without an attack"),
    col("attacker_groups_max", Int, "most independent groups of attacker roots or families on one claim"),
    col("attacked", Int, "claims attacked"),
    col("signals", Int, "signals generated"),
    col("independent_signals", Int, "signals in an independent group"),
    col("self_signals", Int, "signals of the claim author's root (weightless)"),
    col("unweighted_signals", Int, "signals in a group of weight 0"),
    col("inactive_signals", Int, "retracted signals"),
    col("support_mass", Float, "sum of S over claims"),
    col("opposition_mass", Float, "sum of F over claims"),
];

pub struct TrustSim;

fn setup(p: &Resolved) -> Setup {
    let attack = p.str("attack");
    Setup {
        seed: p.int("seed") as u64,
        replicate: p.int("replicate") as u64,
        claims: p.int("claims") as usize,
        good_share: p.float("good_share"),
        honest: p.int("honest") as usize,
        verified_share: p.float("verified_share"),
        evidence: p.int("evidence") as usize,
        honest_accuracy: p.float("honest_accuracy"),
        attack: ATTACKS
            .iter()
            .find(|(n, _)| *n == attack)
            .map_or(Attack::None, |a| a.1),
        attacker_share: p.float("attacker_share"),
        fleet: p.int("fleet") as usize,
        colluders: p.int("colluders") as usize,
    }
}

/// Share of `hits` among `of`, or null when `of` is 0.
fn share(hits: usize, of: usize) -> Value {
    if of == 0 {
        Value::Null
    } else {
        Value::Float(hits as f64 / of as f64)
    }
}

/// Mann-Whitney AUC of good over bad lower bounds, ties counted half.
fn auc(scores: &[&Score], good: &[bool]) -> Value {
    let mut pairs: Vec<(f64, bool)> = scores
        .iter()
        .zip(good)
        .map(|(s, &g)| (s.lower, g))
        .collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (n_good, n_bad) = (
        good.iter().filter(|&&g| g).count(),
        good.iter().filter(|&&g| !g).count(),
    );
    if n_good == 0 || n_bad == 0 {
        return Value::Null;
    }
    // Sum of mid-ranks of the good claims.
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < pairs.len() {
        let j = (i..pairs.len())
            .find(|&j| pairs[j].0 != pairs[i].0)
            .unwrap_or(pairs.len());
        let mid = (i + j + 1) as f64 / 2.0;
        rank_sum += mid * pairs[i..j].iter().filter(|p| p.1).count() as f64;
        i = j;
    }
    let u = rank_sum - (n_good * (n_good + 1)) as f64 / 2.0;
    Value::Float(u / (n_good * n_bad) as f64)
}

/// Identities: every signal in exactly one bucket; S and F equal the sums
/// over independent groups.
fn check(w: &World, claims: &[&Score]) -> Option<Violation> {
    let buckets: usize = claims
        .iter()
        .map(|s| {
            s.buckets.independent
                + s.buckets.self_reported
                + s.buckets.unweighted
                + s.buckets.inactive
        })
        .sum();
    if buckets != w.signals {
        return Some(Violation {
            identity: "every signal counted once".into(),
            round: None,
            detail: format!("{buckets} counted of {} signals", w.signals),
        });
    }
    for s in claims {
        let ind = s.groups.iter().filter(|g| g.independent());
        let (sup, opp) = ind.fold((0.0, 0.0), |(a, b), g| {
            let p = g.polarity.unwrap_or(0.5);
            (a + g.weight * p, b + g.weight * (1.0 - p))
        });
        if (sup - s.support_mass).abs() > 1e-9 || (opp - s.opposition_mass).abs() > 1e-9 {
            return Some(Violation {
                identity: "masses equal the sums over groups".into(),
                round: None,
                detail: format!(
                    "{}: S {} vs {sup}, F {} vs {opp}",
                    s.target, s.support_mass, s.opposition_mass
                ),
            });
        }
    }
    None
}

impl Model for TrustSim {
    fn name(&self) -> &'static str {
        "trust-sim"
    }
    fn version(&self) -> &'static str {
        VERSION
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn validate(&self, _p: &Resolved) -> Result<(), ParamError> {
        Ok(())
    }
    fn ignored(&self, p: &Resolved) -> Vec<&'static str> {
        match p.str("attack") {
            "none" => vec!["attacker_share", "fleet", "colluders"],
            "collusion" => vec!["fleet"],
            _ => vec!["colluders"],
        }
    }
    fn summary_columns(&self) -> &'static [Column] {
        SUMMARY
    }
    fn tables(&self) -> &'static [TableSpec] {
        &[]
    }
    fn run(&self, p: &Resolved, _want: &[bool]) -> RunOutput {
        let setup = setup(p);
        let mut w = generate(&setup);
        let ev = Evidence::new(&w.tables).expect("generated tables are valid");
        // The raw tables are the larger part of the memory; the scores need
        // only the evidence.
        w.tables = Default::default();
        let report = Report::from_evidence(&ev, TODAY, &Default::default());
        drop(ev);
        let claims: Vec<&Score> = report
            .scores
            .iter()
            .filter(|s| s.kind == TargetKind::Claim)
            .collect();
        let is = |s: &Score, st: &[Status]| st.contains(&s.status);
        let high = [Status::HighConfidence];
        let supported = [Status::HighConfidence, Status::Supported];
        let count = |f: &dyn Fn(usize, &Score) -> bool| {
            claims.iter().enumerate().filter(|(i, s)| f(*i, s)).count()
        };
        let n_good = w.good.iter().filter(|&&g| g).count();
        let n_bad = claims.len() - n_good;
        let n_att = w.attacked.iter().filter(|&&a| a).count();
        let with_attack = |v: Value| {
            if setup.attack == Attack::None {
                Value::Null
            } else {
                v
            }
        };
        // Rates over all good or all bad claims: 0 when there are none.
        let rate = |hits: usize, of: usize| Value::Float(hits as f64 / of.max(1) as f64);
        let attacker_groups = claims
            .iter()
            .map(|s| {
                s.groups
                    .iter()
                    .filter(|g| g.independent() && g.root.contains("atk"))
                    .count()
            })
            .max()
            .unwrap_or(0);
        let sum = |f: &dyn Fn(&Score) -> f64| claims.iter().map(|s| f(s)).sum::<f64>();
        let buckets = |f: &dyn Fn(&Score) -> usize| {
            Value::Int(claims.iter().map(|s| f(s)).sum::<usize>() as i64)
        };
        let summary: Row = vec![
            rate(count(&|i, s| w.good[i] && is(s, &high)), n_good),
            rate(count(&|i, s| !w.good[i] && is(s, &high)), n_bad),
            rate(count(&|i, s| !w.good[i] && is(s, &supported)), n_bad),
            share(
                count(&|i, s| w.good[i] && is(s, &high)),
                count(&|_, s| is(s, &high)),
            ),
            share(
                count(&|i, s| !w.good[i] && s.status == Status::Incorrect),
                count(&|_, s| s.status == Status::Incorrect),
            ),
            auc(&claims, &w.good),
            with_attack(share(
                count(&|i, s| w.attacked[i] && is(s, &supported)),
                n_att,
            )),
            with_attack(share(count(&|i, s| w.attacked[i] && is(s, &high)), n_att)),
            Value::Int(attacker_groups as i64),
            Value::Int(n_att as i64),
            Value::Int(w.signals as i64),
            buckets(&|s| s.buckets.independent),
            buckets(&|s| s.buckets.self_reported),
            buckets(&|s| s.buckets.unweighted),
            buckets(&|s| s.buckets.inactive),
            Value::Float(sum(&|s| s.support_mass)),
            Value::Float(sum(&|s| s.opposition_mass)),
        ];
        RunOutput {
            summary,
            tables: vec![],
            violation: check(&w, &claims),
        }
    }
    fn audit(&self, _p: &Resolved, _table: usize, _rows: &[Row]) -> Option<Violation> {
        None
    }
    fn headline_metrics(&self) -> &'static [&'static str] {
        &["attack_success", "attack_high", "bad_high", "auc"]
    }
}
