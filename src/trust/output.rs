//! The scorer's output tables as typed columns and rows (scores, ratings,
//! reputation, ranking), ready for the Parquet and CSV sinks. Every row
//! carries `model_version`.

use serde_json::json;

use super::explain::explanation;
use super::rank::Ranked;
use super::ratings::RatingScore;
use super::reputation::Reputation;
use super::score::{Score, MODEL_VERSION};
use crate::model::{col, ColType, Column, Row};
use crate::params::Value;

use ColType::{Float, Int, Str};

const VERSION_COL: Column = col("model_version", Str, "always trust-v1");

pub const SCORES: &[Column] = &[
    VERSION_COL,
    col("target", Str, "revision, item or claim id"),
    col("kind", Str, "revision, item or claim"),
    col("value", Float, "posterior mean alpha / (alpha + beta)"),
    col("lower_bound", Float, "Beta(alpha, beta) 5th percentile"),
    col("upper_bound", Float, "Beta(alpha, beta) 95th percentile"),
    col(
        "status",
        Str,
        "superseded, outdated, incorrect, disputed, high_confidence, supported or unverified",
    ),
    col("independent_count", Int, "groups with weight > 0"),
    col(
        "contradiction_count",
        Int,
        "independent groups with polarity < 0.5",
    ),
    col(
        "real_world_count",
        Int,
        "independent root groups with an active real-world success or failure",
    ),
    col(
        "evidence_count",
        Int,
        "active signals dated up to today, self-reported included",
    ),
    col("support_mass", Float, "S = sum of W_g p_g"),
    col("opposition_mass", Float, "F = sum of W_g (1 - p_g)"),
    col("alpha", Float, "alpha0 + S"),
    col("beta", Float, "beta0 + F"),
    col(
        "explanation",
        Str,
        "JSON: prior, masses, groups, self_reported, flags, superseded_by",
    ),
];

pub const RATINGS: &[Column] = &[
    VERSION_COL,
    col("target", Str, "the rated target"),
    col(
        "context",
        Str,
        "facets key=value joined by ; (sorted); '' pools every context",
    ),
    col("dimension", Str, "what is rated"),
    col("value", Float, "(k m + sum W_g x_g) / (k + sum W_g), k = 3"),
    col(
        "mean",
        Float,
        "m: the dimension's mean over non-self latest ratings (0.5 if none)",
    ),
    col("ratings", Int, "latest ratings in the cell"),
    col("low", Int, "of which scored below 40"),
    col("mid", Int, "scored 40 to below 70"),
    col("high", Int, "scored 70 or more"),
    col(
        "explanation",
        Str,
        "JSON: groups (root, weight, score) and self_reported actors",
    ),
];

pub const REPUTATION: &[Column] = &[
    VERSION_COL,
    col("actor", Str, "actor id"),
    col("root", Str, "its root controller"),
    col(
        "quality",
        Float,
        "Q: Bayesian mean of its revisions' values",
    ),
    col("accuracy", Float, "A: Bayesian mean review accuracy"),
    col("multiplier", Float, "m_v of the root's verification"),
    col(
        "reputation",
        Float,
        "clamp((0.2 + 0.8 (Q + A) / 2) m_v, 0.05, 1)",
    ),
    col("revisions", Int, "revisions behind Q"),
    col("reviews", Int, "reviews behind A"),
];

pub const RANKING: &[Column] = &[
    VERSION_COL,
    col("position", Int, "1 = first"),
    col("target", Str, "item or claim id"),
    col("kind", Str, "item or claim"),
    col(
        "rank",
        Float,
        "(0.25 + 0.75 lower_bound) x status factor x freshness",
    ),
    col("lower_bound", Float, "the target's lower bound"),
    col("status", Str, "the target's status"),
    col(
        "freshness",
        Float,
        "0.5 ^ (days since last positive signal / 730), floored at 0.5",
    ),
];

fn s(x: &str) -> Value {
    Value::Str(x.to_string())
}

fn int(x: usize) -> Value {
    Value::Int(x as i64)
}

pub fn score_row(sc: &Score) -> Row {
    vec![
        s(MODEL_VERSION),
        s(&sc.target),
        s(sc.kind.name()),
        Value::Float(sc.value),
        Value::Float(sc.lower),
        Value::Float(sc.upper),
        s(sc.status.name()),
        int(sc.independent_count),
        int(sc.contradiction_count),
        int(sc.real_world_count),
        int(sc.evidence_count),
        Value::Float(sc.support_mass),
        Value::Float(sc.opposition_mass),
        Value::Float(sc.alpha),
        Value::Float(sc.beta),
        s(&explanation(sc).to_string()),
    ]
}

pub fn rating_row(r: &RatingScore) -> Row {
    let groups: Vec<_> = r
        .groups
        .iter()
        .map(|g| json!({"root": g.root, "weight": g.weight, "score": g.score}))
        .collect();
    let explanation = json!({"groups": groups, "self_reported": r.self_reported});
    vec![
        s(MODEL_VERSION),
        s(&r.target),
        s(&r.context),
        s(&r.dimension),
        Value::Float(r.value),
        Value::Float(r.mean),
        int(r.ratings),
        int(r.low),
        int(r.mid),
        int(r.high),
        s(&explanation.to_string()),
    ]
}

pub fn reputation_row(r: &Reputation) -> Row {
    vec![
        s(MODEL_VERSION),
        s(&r.actor),
        s(&r.root),
        Value::Float(r.quality),
        Value::Float(r.accuracy),
        Value::Float(r.multiplier),
        Value::Float(r.reputation),
        int(r.revisions),
        int(r.reviews),
    ]
}

pub fn ranking_row(r: &Ranked) -> Row {
    vec![
        s(MODEL_VERSION),
        int(r.position),
        s(&r.target),
        s(r.kind.name()),
        Value::Float(r.rank),
        Value::Float(r.lower),
        s(r.status),
        Value::Float(r.freshness),
    ]
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

    /// (file stem, columns, rows) of each output table.
    pub fn tables(&self) -> Vec<(&'static str, &'static [Column], Vec<Row>)> {
        vec![
            (
                "scores",
                SCORES,
                self.scores.iter().map(score_row).collect(),
            ),
            (
                "ratings",
                RATINGS,
                self.ratings.iter().map(rating_row).collect(),
            ),
            (
                "reputation",
                REPUTATION,
                self.reputation.iter().map(reputation_row).collect(),
            ),
            (
                "ranking",
                RANKING,
                self.ranking.iter().map(ranking_row).collect(),
            ),
        ]
    }
}
