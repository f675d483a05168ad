//! Contextual ratings (docs/models/trust.md §5, ratings): "how good is X for Y in context Z",
//! each actor's latest rating per target, context and dimension, grouped
//! by root with the 2.0 cap and shrunk toward the dimension's mean with
//! k = 3. The `''` context pools every context. `compare` answers for the
//! contexts that contain some facets, falling back to all (and saying so).

use std::collections::{BTreeMap, HashMap};

use super::evidence::{Evidence, Rating};
use super::score::decay;
use super::GROUP_CAP;

const SHRINKAGE: f64 = 3.0;
const USAGE_MULTIPLIER: f64 = 1.5;

#[derive(Clone, Debug, PartialEq)]
pub struct RatingGroup {
    pub root: String,
    pub weight: f64,
    /// Weighted mean score, 0..1.
    pub score: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RatingScore {
    pub target: String,
    pub context: String,
    pub dimension: String,
    pub value: f64,
    /// The dimension's global mean m the value is shrunk toward.
    pub mean: f64,
    pub ratings: usize,
    pub groups: Vec<RatingGroup>,
    /// Actors of the author's root: kept, reported, weightless.
    pub self_reported: Vec<String>,
    /// Scores below 40, from 40 to below 70, and 70 or more.
    pub low: usize,
    pub mid: usize,
    pub high: usize,
}

/// Each actor's latest rating per (target, context, dimension), dated on or
/// before today; a later row wins a tie of days.
fn latest(ev: &Evidence, today: i64) -> Vec<&Rating> {
    let mut best: HashMap<(usize, &str, &str, &str), (i64, usize)> = HashMap::new();
    for (i, r) in ev
        .ratings
        .iter()
        .enumerate()
        .filter(|(_, r)| r.day <= today)
    {
        let key = (
            r.actor,
            r.target.as_str(),
            r.context.as_str(),
            r.dimension.as_str(),
        );
        let slot = best.entry(key).or_insert((r.day, i));
        if r.day >= slot.0 {
            *slot = (r.day, i);
        }
    }
    let mut keep: Vec<usize> = best.values().map(|&(_, i)| i).collect();
    keep.sort_unstable();
    keep.into_iter().map(|i| &ev.ratings[i]).collect()
}

fn is_self(ev: &Evidence, r: &Rating) -> bool {
    ev.author_root(&r.target) == Some(ev.actors[r.actor].root)
}

/// Global mean per dimension: unweighted, over non-self latest ratings.
fn means(ev: &Evidence, latest: &[&Rating]) -> HashMap<String, f64> {
    let mut sums: HashMap<String, (f64, usize)> = HashMap::new();
    for r in latest.iter().filter(|r| !is_self(ev, r)) {
        let s = sums.entry(r.dimension.clone()).or_default();
        s.0 += r.score / 100.0;
        s.1 += 1;
    }
    sums.into_iter()
        .map(|(d, (s, n))| (d, s / n as f64))
        .collect()
}

fn aggregate(
    ev: &Evidence,
    today: i64,
    reputation: &[f64],
    key: (&str, &str, &str),
    rows: &[&Rating],
    mean: f64,
) -> RatingScore {
    let mut by_root: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    let mut self_reported = Vec::new();
    for r in rows {
        if is_self(ev, r) {
            self_reported.push(ev.actors[r.actor].id.clone());
            continue;
        }
        let usage = if r.references_usage {
            USAGE_MULTIPLIER
        } else {
            1.0
        };
        let w = usage * r.confidence * reputation[r.actor] * decay(today - r.day);
        let g = by_root
            .entry(&ev.actors[ev.actors[r.actor].root].id)
            .or_default();
        g.0 += w;
        g.1 += w * r.score / 100.0;
    }
    let groups: Vec<RatingGroup> = by_root
        .into_iter()
        .map(|(root, (w, ws))| RatingGroup {
            root: root.to_string(),
            weight: w.min(GROUP_CAP),
            score: if w > 0.0 { ws / w } else { 0.0 },
        })
        .collect();
    let total: f64 = groups.iter().map(|g| g.weight).sum();
    let mass: f64 = groups.iter().map(|g| g.weight * g.score).sum();
    let band = |lo: f64, hi: f64| {
        rows.iter()
            .filter(|r| r.score >= lo && r.score < hi)
            .count()
    };
    RatingScore {
        target: key.0.to_string(),
        context: key.1.to_string(),
        dimension: key.2.to_string(),
        value: (SHRINKAGE * mean + mass) / (SHRINKAGE + total),
        mean,
        ratings: rows.len(),
        groups,
        self_reported,
        low: band(f64::NEG_INFINITY, 40.0),
        mid: band(40.0, 70.0),
        high: band(70.0, f64::INFINITY),
    }
}

/// One row per (target, context, dimension) rated, plus a pooled `''`
/// context row per (target, dimension); sorted by target, dimension, context.
pub fn ratings(ev: &Evidence, today: i64, reputation: &[f64]) -> Vec<RatingScore> {
    let latest = latest(ev, today);
    let means = means(ev, &latest);
    let mut cells: BTreeMap<(&str, &str, &str), Vec<&Rating>> = BTreeMap::new();
    for &r in &latest {
        cells
            .entry((&r.target, &r.dimension, ""))
            .or_default()
            .push(r);
        if !r.context.is_empty() {
            cells
                .entry((&r.target, &r.dimension, &r.context))
                .or_default()
                .push(r);
        }
    }
    cells
        .into_iter()
        .map(|((target, dim, context), rows)| {
            let m = means.get(dim).copied().unwrap_or(0.5);
            aggregate(ev, today, reputation, (target, context, dim), &rows, m)
        })
        .collect()
}

/// `compare`: the target's ratings of `dimension` in contexts holding every
/// facet asked for; when none does, all contexts, and `true` says so.
pub fn compare(
    ev: &Evidence,
    today: i64,
    reputation: &[f64],
    target: &str,
    dimension: &str,
    facets: &str,
) -> (RatingScore, bool) {
    let latest = latest(ev, today);
    let m = means(ev, &latest).get(dimension).copied().unwrap_or(0.5);
    let wanted: Vec<&str> = facets.split(';').filter(|f| !f.is_empty()).collect();
    let of_target: Vec<&Rating> = latest
        .into_iter()
        .filter(|r| r.target == target && r.dimension == dimension)
        .collect();
    let matching: Vec<&Rating> = of_target
        .iter()
        .copied()
        .filter(|r| {
            let have: Vec<&str> = r.context.split(';').collect();
            wanted.iter().all(|f| have.contains(f))
        })
        .collect();
    let fell_back = matching.is_empty();
    let rows = if fell_back { of_target } else { matching };
    let score = aggregate(ev, today, reputation, (target, facets, dimension), &rows, m);
    (score, fell_back)
}
