//! Reputation (docs/models/trust.md §5, reputation): weights read the
//! reputations of a previous run (or the starting value 0.6 x m_v), and this
//! run's reputation output is computed from this run's scores, never fed
//! back within the run, so scoring is one pass and converges across runs.

use std::collections::HashMap;

use super::evidence::{Evidence, Outcome, Target};
use super::score::Score;

const PRIOR: f64 = 0.5;
const PRIOR_WEIGHT: f64 = 3.0;
pub const FLOOR: f64 = 0.05;

fn m_v(ev: &Evidence, actor: usize) -> f64 {
    ev.actors[ev.actors[actor].root].verification.multiplier()
}

pub fn formula(q: f64, a: f64, m_v: f64) -> f64 {
    ((0.2 + 0.8 * (0.5 * q + 0.5 * a)) * m_v).clamp(FLOOR, 1.0)
}

/// The reputation each actor's signals are weighted with: the previous
/// run's, else the starting value (Q = A = 0.5): 0.48 for a verified email,
/// 0.3 unverified, 0.6 for a verified domain or organization.
pub fn weights(ev: &Evidence, previous: &HashMap<String, f64>) -> Vec<f64> {
    (0..ev.actors.len())
        .map(|i| {
            previous
                .get(&ev.actors[i].id)
                .copied()
                .unwrap_or_else(|| formula(PRIOR, PRIOR, m_v(ev, i)))
        })
        .collect()
}

#[derive(Clone, Debug, PartialEq)]
pub struct Reputation {
    pub actor: String,
    pub root: String,
    pub quality: f64,
    pub accuracy: f64,
    pub multiplier: f64,
    pub reputation: f64,
    /// Revisions with independent_count >= 1 behind `quality`.
    pub revisions: usize,
    /// Reviews of well-evidenced targets behind `accuracy`.
    pub reviews: usize,
}

/// Every actor's reputation from this run's scores (revisions first in
/// `scores`, then items, then claims, as `score::score` returns them).
pub fn reputations(ev: &Evidence, today: i64, scores: &[Score]) -> Vec<Reputation> {
    let n = ev.actors.len();
    let (mut q_sum, mut q_weight, mut q_count) = (vec![0.0; n], vec![0.0; n], vec![0usize; n]);
    for (r, rev) in ev.revisions.iter().enumerate() {
        let s = &scores[r];
        if s.independent_count >= 1 {
            q_sum[rev.author] += s.independent_count as f64 * s.value;
            q_weight[rev.author] += s.independent_count as f64;
            q_count[rev.author] += 1;
        }
    }
    let claims_at = ev.revisions.len() + ev.items.len();
    let (mut a_sum, mut a_count) = (vec![0.0; n], vec![0usize; n]);
    for s in ev.signals.iter().filter(|s| s.active && s.day <= today) {
        let (target, author_root) = match s.target {
            Target::Revision(r) => (&scores[r], Some(ev.actors[ev.revisions[r].author].root)),
            Target::Claim(c) => (
                &scores[claims_at + c],
                ev.claims[c].author.map(|a| ev.actors[a].root),
            ),
        };
        let p = match s.outcome {
            Outcome::True => 1.0,
            Outcome::False => 0.0,
            _ => continue,
        };
        if target.independent_count >= 3 && author_root != Some(ev.actors[s.actor].root) {
            a_sum[s.actor] += 1.0 - (p - target.value).abs();
            a_count[s.actor] += 1;
        }
    }
    (0..n)
        .map(|i| {
            let quality = (PRIOR_WEIGHT * PRIOR + q_sum[i]) / (PRIOR_WEIGHT + q_weight[i]);
            let accuracy = (PRIOR_WEIGHT * PRIOR + a_sum[i]) / (PRIOR_WEIGHT + a_count[i] as f64);
            let multiplier = m_v(ev, i);
            Reputation {
                actor: ev.actors[i].id.clone(),
                root: ev.actors[ev.actors[i].root].id.clone(),
                quality,
                accuracy,
                multiplier,
                reputation: formula(quality, accuracy, multiplier),
                revisions: q_count[i],
                reviews: a_count[i],
            }
        })
        .collect()
}

/// The reputations a previous run wrote (its `reputation` table: any
/// columns, of which `actor` and `reputation` are read).
pub fn previous(
    t: &super::input::RawTable,
) -> Result<HashMap<String, f64>, super::input::InputError> {
    let whole = |problem: String| super::input::InputError {
        file: t.file.clone(),
        place: String::new(),
        problem,
    };
    let col = |name: &str| {
        t.columns.iter().position(|c| c == name).ok_or_else(|| {
            whole(format!(
                "missing column `{name}`; a reputation output has actor and reputation"
            ))
        })
    };
    t.unique_columns()?;
    let (a, r) = (col("actor")?, col("reputation")?);
    let mut out = HashMap::new();
    for (i, row) in t.rows.iter().enumerate() {
        let cell = |k: usize| row.get(k).map_or("", |s| s.trim());
        let value = cell(r)
            .parse::<f64>()
            .ok()
            .filter(|x| (0.05..=1.0).contains(x))
            .ok_or_else(|| super::input::InputError {
                file: t.file.clone(),
                place: format!("row {}, field `reputation` = {:?}: ", i + 1, cell(r)),
                problem: "allowed: a number in 0.05 ..= 1".into(),
            })?;
        out.insert(cell(a).to_string(), value);
    }
    Ok(out)
}
