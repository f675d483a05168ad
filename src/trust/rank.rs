//! Retrieval ranking (docs/models/trust.md §5, ranking): items and claims ordered by
//! relevance x (0.25 + 0.75 x lower bound) x status factor x freshness,
//! with relevance 1 (a query-independent prior) and ties broken by id.
//! Nothing is hidden: disputed or incorrect targets rank lower, labelled.

use super::score::{Kind, Score, HALF_LIFE_DAYS};
use crate::math;

#[derive(Clone, Debug, PartialEq)]
pub struct Ranked {
    pub position: usize,
    pub target: String,
    pub kind: Kind,
    pub rank: f64,
    pub lower: f64,
    pub status: &'static str,
    pub freshness: f64,
}

/// 0.5 ^ (days since the last positive signal / half-life), floored at 0.5;
/// 0.5 when there is none.
pub fn freshness(last_positive: Option<i64>, today: i64) -> f64 {
    last_positive.map_or(0.5, |d| {
        math::powf(0.5, (today - d) as f64 / HALF_LIFE_DAYS).max(0.5)
    })
}

pub fn rank(scores: &[Score], today: i64) -> Vec<Ranked> {
    let mut rows: Vec<Ranked> = scores
        .iter()
        .filter(|s| matches!(s.kind, Kind::Item | Kind::Claim))
        .map(|s| {
            let fresh = freshness(s.last_positive, today);
            Ranked {
                position: 0,
                target: s.target.clone(),
                kind: s.kind,
                rank: (0.25 + 0.75 * s.lower) * s.status.factor() * fresh,
                lower: s.lower,
                status: s.status.name(),
                freshness: fresh,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.rank
            .total_cmp(&a.rank)
            .then_with(|| a.target.cmp(&b.target))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.position = i + 1;
    }
    rows
}
