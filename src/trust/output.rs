//! The scorer's output tables as typed columns and rows (scores, ratings,
//! reputation, ranking), ready for the Parquet and CSV sinks. Every row
//! carries `model_version`.

use serde_json::json;

use super::explain::explanation;
use super::rank::Ranked;
use super::ratings::RatingScore;
use super::reputation::Reputation;
use super::score::Kind;
use super::score::{Score, MODEL_VERSION};
use super::status::Status;
use crate::store::TableData;

crate::record! {
    /// A scored revision, item or claim: a row of `scores`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ScoreRow {
        /// always trust-v1
        model_version: String,
        /// revision, item or claim id
        target: String,
        /// revision, item or claim
        kind: Kind,
        /// posterior mean alpha / (alpha + beta)
        value: f64 [0.0, 1.0],
        /// Beta(alpha, beta) 5th percentile
        lower_bound: f64 [0.0, 1.0],
        /// Beta(alpha, beta) 95th percentile
        upper_bound: f64 [0.0, 1.0],
        /// superseded, outdated, incorrect, disputed, high_confidence, supported or unverified
        status: Status,
        /// groups with weight > 0
        independent_count: u64,
        /// independent groups with polarity < 0.5
        contradiction_count: u64,
        /// independent root groups with an active real-world success or failure
        real_world_count: u64,
        /// active signals dated up to today, self-reported included
        evidence_count: u64,
        /// S = sum of W_g p_g
        support_mass: f64,
        /// F = sum of W_g (1 - p_g)
        opposition_mass: f64,
        /// alpha0 + S
        alpha: f64,
        /// beta0 + F
        beta: f64,
        /// JSON: prior, masses, groups, self_reported, flags, superseded_by
        explanation: String,
    }
}

crate::record! {
    /// A target's rating of one dimension in one context: a row of `ratings`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct RatingRow {
        /// always trust-v1
        model_version: String,
        /// the rated target
        target: String,
        /// facets key=value joined by ; (sorted); '' pools every context
        context: String,
        /// what is rated
        dimension: String,
        /// (k m + sum W_g x_g) / (k + sum W_g), k = 3
        value: f64,
        /// m: the dimension's mean over non-self latest ratings (0.5 if none)
        mean: f64,
        /// latest ratings in the cell
        ratings: u64,
        /// of which scored below 40
        low: u64,
        /// scored 40 to below 70
        mid: u64,
        /// scored 70 or more
        high: u64,
        /// JSON: groups (root, weight, score) and self_reported actors
        explanation: String,
    }
}

crate::record! {
    /// An actor's reputation: a row of `reputation`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct ReputationRow {
        /// always trust-v1
        model_version: String,
        /// actor id
        actor: String,
        /// its root controller
        root: String,
        /// Q: Bayesian mean of its revisions' values
        quality: f64,
        /// A: Bayesian mean review accuracy
        accuracy: f64,
        /// m_v of the root's verification
        multiplier: f64,
        /// clamp((0.2 + 0.8 (Q + A) / 2) m_v, 0.05, 1)
        reputation: f64 [0.05, 1.0],
        /// revisions behind Q
        revisions: u64,
        /// reviews behind A
        reviews: u64,
    }
}

crate::record! {
    /// A target's place in retrieval ranking: a row of `ranking`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct RankingRow {
        /// always trust-v1
        model_version: String,
        /// 1 = first
        position: u64,
        /// item or claim id
        target: String,
        /// item or claim
        kind: Kind,
        /// (0.25 + 0.75 lower_bound) x status factor x freshness
        rank: f64,
        /// the target's lower bound
        lower_bound: f64 [0.0, 1.0],
        /// the target's status
        status: String,
        /// 0.5 ^ (days since last positive signal / 730), floored at 0.5
        freshness: f64,
    }
}

pub fn score_row(sc: &Score) -> ScoreRow {
    ScoreRow {
        model_version: MODEL_VERSION.into(),
        target: sc.target.clone(),
        kind: sc.kind,
        value: sc.value,
        lower_bound: sc.lower,
        upper_bound: sc.upper,
        status: sc.status,
        independent_count: sc.independent_count as u64,
        contradiction_count: sc.contradiction_count as u64,
        real_world_count: sc.real_world_count as u64,
        evidence_count: sc.evidence_count as u64,
        support_mass: sc.support_mass,
        opposition_mass: sc.opposition_mass,
        alpha: sc.alpha,
        beta: sc.beta,
        explanation: explanation(sc).to_string(),
    }
}

pub fn rating_row(r: &RatingScore) -> RatingRow {
    let groups: Vec<_> = r
        .groups
        .iter()
        .map(|g| json!({"root": g.root, "weight": g.weight, "score": g.score}))
        .collect();
    let explanation = json!({"groups": groups, "self_reported": r.self_reported});
    RatingRow {
        model_version: MODEL_VERSION.into(),
        target: r.target.clone(),
        context: r.context.clone(),
        dimension: r.dimension.clone(),
        value: r.value,
        mean: r.mean,
        ratings: r.ratings as u64,
        low: r.low as u64,
        mid: r.mid as u64,
        high: r.high as u64,
        explanation: explanation.to_string(),
    }
}

pub fn reputation_row(r: &Reputation) -> ReputationRow {
    ReputationRow {
        model_version: MODEL_VERSION.into(),
        actor: r.actor.clone(),
        root: r.root.clone(),
        quality: r.quality,
        accuracy: r.accuracy,
        multiplier: r.multiplier,
        reputation: r.reputation,
        revisions: r.revisions as u64,
        reviews: r.reviews as u64,
    }
}

pub fn ranking_row(r: &Ranked) -> RankingRow {
    RankingRow {
        model_version: MODEL_VERSION.into(),
        position: r.position as u64,
        target: r.target.clone(),
        kind: r.kind,
        rank: r.rank,
        lower_bound: r.lower,
        status: r.status.to_string(),
        freshness: r.freshness,
    }
}

/// Everything `witness trust score` writes, computed from the tables,
/// `today` and the previous run's reputations alone.
pub struct Report {
    pub scores: Vec<Score>,
    pub ratings: Vec<RatingScore>,
    pub reputation: Vec<Reputation>,
    pub ranking: Vec<Ranked>,
}

impl Report {
    pub fn new(
        tables: &super::evidence::Tables,
        today: i64,
        previous: &std::collections::HashMap<String, f64>,
    ) -> Result<Report, super::input::InputError> {
        Ok(Report::from_evidence(
            &super::evidence::Evidence::new(tables)?,
            today,
            previous,
        ))
    }

    /// As `new`, from evidence already validated (the raw tables can then be
    /// dropped first: they are the larger part of the memory).
    pub fn from_evidence(
        ev: &super::evidence::Evidence,
        today: i64,
        previous: &std::collections::HashMap<String, f64>,
    ) -> Report {
        let weights = super::reputation::weights(ev, previous);
        let cx = super::score::Context {
            today,
            reputation: &weights,
        };
        let scores = super::score::score(ev, &cx);
        Report {
            ratings: super::ratings::ratings(ev, today, &weights),
            reputation: super::reputation::reputations(ev, today, &scores),
            ranking: super::rank::rank(&scores, today),
            scores,
        }
    }

    /// How many targets have each status, by status name.
    pub fn status_counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for s in &self.scores {
            *counts.entry(s.status.name()).or_default() += 1;
        }
        counts
    }

    /// (file stem, table) of each output table.
    pub fn tables(&self) -> Vec<(&'static str, TableData)> {
        fn table<T, R: crate::model::Record>(items: &[T], row: fn(&T) -> R) -> TableData {
            TableData::of_records(&items.iter().map(row).collect::<Vec<_>>())
        }
        vec![
            ("scores", table(&self.scores, score_row)),
            ("ratings", table(&self.ratings, rating_row)),
            ("reputation", table(&self.reputation, reputation_row)),
            ("ranking", table(&self.ranking, ranking_row)),
        ]
    }
}
