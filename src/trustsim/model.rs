//! trust-sim behind the runner's `Model` boundary: a run generates one
//! world, scores it with the same trust-v1 scorer as `witness trust score`,
//! and measures the scores against the truth the scorer never sees.

use super::world::{generate, Attack, Setup, World, TODAY};
use super::VERSION;
use crate::model::Judge;
use crate::model::{Footprint, Model, Ran, Registered, RunContext, Violation};
use crate::params::{ParamError, ParamSet};
use crate::trust::evidence::Evidence;
use crate::trust::output::Report;
use crate::trust::score::{Kind as TargetKind, Score};
use crate::trust::status::Status;

crate::record! {
    /// A run's summary: its columns of `runs.parquet`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct TrustSimSummary {
        /// share of good claims at high_confidence
        good_high: f64 [0.0, 1.0] => Judge::higher(),
        /// share of bad claims at high_confidence
        bad_high: f64 [0.0, 1.0] => Judge::lower(),
        /// share of bad claims at supported or high_confidence
        bad_supported: f64 [0.0, 1.0] => Judge::lower(),
        /// good share among high_confidence claims; null if none
        precision_high: Option<f64> [0.0, 1.0] => Judge::higher(),
        /// bad share among incorrect claims; null if none
        precision_incorrect: Option<f64> [0.0, 1.0],
        /// chance a good claim has a higher lower bound than a bad one (ties half); null without both
        auc: Option<f64> [0.0, 1.0] => Judge::higher(),
        /// share of attacked claims at supported or better; null without an attack
        attack_success: Option<f64> [0.0, 1.0] => Judge::lower(),
        /// share of attacked claims at high_confidence; null without an attack
        attack_high: Option<f64> [0.0, 1.0] => Judge::lower(),
        /// most independent groups of attacker roots or families on one claim
        attacker_groups_max: u64,
        /// claims attacked
        attacked: u64,
        /// signals generated
        signals: u64,
        /// signals in an independent group
        independent_signals: u64,
        /// signals of the claim author's root (weightless)
        self_signals: u64,
        /// signals in a group of weight 0
        unweighted_signals: u64,
        /// retracted signals
        inactive_signals: u64,
        /// sum of S over claims
        support_mass: f64,
        /// sum of F over claims
        opposition_mass: f64,
    }
}

pub struct TrustSim;

/// Share of `hits` among `of`, or null when `of` is 0.
fn share(hits: usize, of: usize) -> Option<f64> {
    (of > 0).then(|| hits as f64 / of as f64)
}

/// Mann-Whitney AUC of good over bad lower bounds, ties counted half.
fn auc(scores: &[&Score], good: &[bool]) -> Option<f64> {
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
        return None;
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
    Some(u / (n_good * n_bad) as f64)
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
            at: None,
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
                at: None,
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
    const NAME: &'static str = "trust-sim";
    const VERSION: &'static str = VERSION;
    const DOC: &'static str =
        "trust-v1/sim-1: honest reporters and one attack on bad claims, scored by trust-v1";
    type Params = Setup;
    type Config = Setup;
    type Summary = TrustSimSummary;

    fn configure(p: Setup) -> Result<Setup, ParamError> {
        Ok(p)
    }

    fn ignored(s: &Setup) -> ParamSet {
        match s.attack {
            Attack::None => ParamSet::of(&[Setup::attacker_share, Setup::fleet, Setup::colluders]),
            Attack::Collusion => ParamSet::of(&[Setup::fleet]),
            _ => ParamSet::of(&[Setup::colluders]),
        }
    }

    fn footprint(s: &Setup) -> Footprint {
        // About 720 bytes a signal at peak (718 MB at a million signals:
        // /usr/bin/time -v witness run benches/manifests/trust-sim-100000.toml),
        // some 570 of them the text tables the world is written as.
        let attack = if s.attack == Attack::None {
            0
        } else {
            s.fleet.max(s.colluders)
        };
        let signals = s.claims as u64 * (s.evidence + attack) as u64 + s.honest as u64;
        type P = Setup;
        Footprint {
            rows: Vec::new(),
            working_bytes: 1000 * signals,
            grows_with: ParamSet::of(&[P::claims, P::evidence, P::honest]),
        }
    }

    fn run(setup: &Setup, _cx: &mut RunContext) -> Ran<TrustSimSummary> {
        let mut w = generate(setup);
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
        let with_attack = |v: Option<f64>| v.filter(|_| setup.attack != Attack::None);
        // Rates over all good or all bad claims: 0 when there are none.
        let rate = |hits: usize, of: usize| hits as f64 / of.max(1) as f64;
        let attacker_groups = claims
            .iter()
            .map(|s| {
                s.groups
                    .iter()
                    .filter(|g| g.independent() && w.attacker_ids.contains(s.party(g)))
                    .count()
            })
            .max()
            .unwrap_or(0);
        let sum = |f: &dyn Fn(&Score) -> f64| claims.iter().map(|s| f(s)).sum::<f64>();
        let buckets =
            |f: &dyn Fn(&Score) -> usize| claims.iter().map(|s| f(s)).sum::<usize>() as u64;
        let summary = TrustSimSummary {
            good_high: rate(count(&|i, s| w.good[i] && is(s, &high)), n_good),
            bad_high: rate(count(&|i, s| !w.good[i] && is(s, &high)), n_bad),
            bad_supported: rate(count(&|i, s| !w.good[i] && is(s, &supported)), n_bad),
            precision_high: share(
                count(&|i, s| w.good[i] && is(s, &high)),
                count(&|_, s| is(s, &high)),
            ),
            precision_incorrect: share(
                count(&|i, s| !w.good[i] && s.status == Status::Incorrect),
                count(&|_, s| s.status == Status::Incorrect),
            ),
            auc: auc(&claims, &w.good),
            attack_success: with_attack(share(
                count(&|i, s| w.attacked[i] && is(s, &supported)),
                n_att,
            )),
            attack_high: with_attack(share(count(&|i, s| w.attacked[i] && is(s, &high)), n_att)),
            attacker_groups_max: attacker_groups as u64,
            attacked: n_att as u64,
            signals: w.signals as u64,
            independent_signals: buckets(&|s| s.buckets.independent),
            self_signals: buckets(&|s| s.buckets.self_reported),
            unweighted_signals: buckets(&|s| s.buckets.unweighted),
            inactive_signals: buckets(&|s| s.buckets.inactive),
            support_mass: sum(&|s| s.support_mass),
            opposition_mass: sum(&|s| s.opposition_mass),
        };
        Ran {
            summary,
            violation: check(&w, &claims),
        }
    }
}

/// trust-sim as registered: its headline metrics.
pub static MODEL: Registered<TrustSim> =
    Registered::new().headline(&["attack_success", "attack_high", "bad_high", "auc"]);
