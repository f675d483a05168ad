//! The trust-v1 scorer (docs/models/trust.md §4 and §5, as trust-v1 decides
//! them): for every revision, item and claim, the groups of its evidence by
//! root controller (and by source family for claims), the Beta posterior
//! with revision carry-over, the bounds, the counters, the status and the
//! explanation. A pure function of the evidence, `today` and the
//! reputations used for weights.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

use super::beta::bounds;
use super::evidence::{Evidence, RelationKind, Signal, Target};
use super::group::{family_groups, group_signals, Grouped, Scratch};
pub use super::group::{Group, Labels, Party};
use super::status::{base_status, Facts, Status};
use super::{weight, BASE_REVIEW, BASE_USAGE, DEFAULT_REVIEW_CONFIDENCE};
use crate::math;

pub const MODEL_VERSION: &str = "trust-v1";
pub const HALF_LIFE_DAYS: f64 = 730.0;
pub const CARRY_OVER: f64 = 0.5;

crate::words! {
    /// What a score is of.
    pub enum Kind {
        Revision = "revision",
        Item = "item",
        Claim = "claim",
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Score {
    pub target: String,
    pub kind: Kind,
    pub alpha0: f64,
    pub beta0: f64,
    pub inherited_from: Option<String>,
    pub alpha: f64,
    pub beta: f64,
    pub value: f64,
    pub lower: f64,
    pub upper: f64,
    pub status: Status,
    pub independent_count: usize,
    pub contradiction_count: usize,
    pub real_world_count: usize,
    pub evidence_count: usize,
    pub support_mass: f64,
    pub opposition_mass: f64,
    /// Sorted by root (as the explanation names them).
    pub groups: Vec<Group>,
    /// The groups' members (signal or relation indexes), group by group;
    /// one buffer per score rather than one list per group.
    pub members: Vec<u32>,
    /// The author's own signals: a range of `members`.
    pub self_reported: Range<u32>,
    /// The ids behind the indexes, shared by every score of the run.
    pub labels: Arc<Labels>,
    pub flags: Vec<String>,
    pub superseded_by: Vec<String>,
    /// Day of the latest active non-self usage success or `true` review.
    pub last_positive: Option<i64>,
    /// Active signals by bucket: in an independent group, self-reported,
    /// in a group of weight 0; and signals not counted at all.
    pub buckets: Buckets,
}

/// Where each signal of a target went; the four add up to its signals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Buckets {
    pub independent: usize,
    pub self_reported: usize,
    pub unweighted: usize,
    /// Retracted, hidden or dated after today.
    pub inactive: usize,
}

pub fn decay(age_days: i64) -> f64 {
    math::powf(0.5, age_days as f64 / HALF_LIFE_DAYS)
}

/// A signal's weight before grouping (docs/models/trust.md §4.2), burst halving aside.
pub fn signal_weight(s: &Signal, reputation: f64, today: i64) -> f64 {
    let usage = s.outcome.is_usage();
    let base = if usage {
        BASE_USAGE
    } else if s.references_usage {
        1.0
    } else {
        BASE_REVIEW
    };
    let confidence = if usage {
        1.0
    } else {
        s.confidence.unwrap_or(DEFAULT_REVIEW_CONFIDENCE)
    };
    // real_world multiplies usage only.
    let real_world = usage && s.real_world;
    weight(
        base,
        real_world,
        confidence,
        reputation,
        decay(today - s.day),
    )
}

/// Everything the scorer reads besides the evidence.
pub struct Context<'a> {
    pub today: i64,
    /// Reputation of each actor (by index) used in signal weights.
    pub reputation: &'a [f64],
}

fn assemble(
    target: &str,
    kind: Kind,
    prior: (f64, f64, Option<String>),
    mut post: Grouped,
    labels: &Arc<Labels>,
) -> Score {
    // Root groups arrive sorted by root id; only family groups, appended
    // after them, can be out of place.
    if post.groups.iter().any(Group::family) {
        post.groups
            .sort_by(|a, b| labels.cmp_root(a.party, b.party));
    }
    let independent = || post.groups.iter().filter(|g| g.independent());
    let p = |g: &Group| g.polarity.unwrap_or(0.5);
    // Folded from +0.0: an empty float sum is -0.0, which prints as "-0".
    let support = independent().fold(0.0, |a, g| a + g.weight * p(g));
    let opposition = independent().fold(0.0, |a, g| a + g.weight * (1.0 - p(g)));
    let (alpha, beta) = (prior.0 + support, prior.1 + opposition);
    let (lower, upper) = bounds(alpha, beta);
    let facts = Facts {
        value: alpha / (alpha + beta),
        lower,
        upper,
        independent: independent().count(),
        contradictions: independent().filter(|g| p(g) < 0.5).count(),
        supporting: independent().filter(|g| p(g) > 0.5).count(),
        real_world: independent()
            .filter(|g| g.real_world && !g.family())
            .count(),
        outdated_roots: post.outdated_roots,
    };
    Score {
        target: target.to_string(),
        kind,
        alpha0: prior.0,
        beta0: prior.1,
        inherited_from: prior.2,
        alpha,
        beta,
        value: facts.value,
        lower,
        upper,
        status: base_status(&facts),
        independent_count: facts.independent,
        contradiction_count: facts.contradictions,
        real_world_count: facts.real_world,
        evidence_count: post.evidence_count,
        support_mass: support,
        opposition_mass: opposition,
        groups: post.groups,
        members: post.members,
        self_reported: post.self_reported,
        labels: labels.clone(),
        flags: post.flags,
        superseded_by: Vec::new(),
        last_positive: post.last_positive,
        buckets: post.buckets,
    }
}

impl Score {
    /// A group's party: its root actor's id, or its family's origin source.
    pub fn party(&self, g: &Group) -> &str {
        self.labels.party(g.party)
    }

    /// A group's name as the explanation shows it: a root actor's id, or
    /// `family:` and the family's origin.
    pub fn root(&self, g: &Group) -> String {
        let (prefix, name) = self.labels.root(g.party);
        format!("{prefix}{name}")
    }

    /// A group's signal ids (a family's: its stances' sources), in order.
    pub fn signals<'a>(&'a self, g: &'a Group) -> impl Iterator<Item = &'a str> + 'a {
        self.members[g.members.start as usize..g.members.end as usize]
            .iter()
            .map(move |&m| self.labels.member(g.party, m))
    }

    /// The ids of the author's own signals, kept and weightless.
    pub fn self_reported(&self) -> Vec<&str> {
        let r = &self.self_reported;
        self.members[r.start as usize..r.end as usize]
            .iter()
            .map(|&k| self.labels.signals.get(k))
            .collect()
    }
}

/// Lists per target, as one buffer: target t's entries are
/// `items[starts[t]..starts[t + 1]]`, in the order pushed.
struct PerTarget {
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl PerTarget {
    /// `of` gives each entry's target, or none to leave it out.
    fn new(targets: usize, entries: usize, of: impl Fn(usize) -> Option<usize>) -> PerTarget {
        let mut starts = vec![0u32; targets + 1];
        for e in 0..entries {
            if let Some(t) = of(e) {
                starts[t + 1] += 1;
            }
        }
        for t in 0..targets {
            starts[t + 1] += starts[t];
        }
        let mut next = starts.clone();
        let mut items = vec![0u32; starts[targets] as usize];
        for e in 0..entries {
            if let Some(t) = of(e) {
                items[next[t] as usize] = e as u32;
                next[t] += 1;
            }
        }
        PerTarget { starts, items }
    }

    fn of(&self, t: usize) -> &[u32] {
        &self.items[self.starts[t] as usize..self.starts[t + 1] as usize]
    }
}

/// Each actor's place in the order of actor ids (ids are unique).
fn id_ranks(ev: &Evidence) -> Vec<u32> {
    let mut by_id: Vec<u32> = (0..ev.actors.len() as u32).collect();
    by_id.sort_unstable_by(|&a, &b| ev.actors[a as usize].id.cmp(&ev.actors[b as usize].id));
    let mut rank = vec![0u32; ev.actors.len()];
    for (place, &a) in by_id.iter().enumerate() {
        rank[a as usize] = place as u32;
    }
    rank
}

/// Scores every revision (in file order), then every item (its current
/// revision's score), then every claim.
pub fn score(ev: &Evidence, cx: &Context) -> Vec<Score> {
    let labels = Arc::new(Labels::new(ev));
    let rank = id_ranks(ev);
    let n = ev.signals.len();
    let on_revision = PerTarget::new(ev.revisions.len(), n, |k| match ev.signals[k].target {
        Target::Revision(r) => Some(r),
        Target::Claim(_) => None,
    });
    let on_claim = PerTarget::new(ev.claims.len(), n, |k| match ev.signals[k].target {
        Target::Claim(c) => Some(c),
        Target::Revision(_) => None,
    });
    let stances = PerTarget::new(ev.claims.len(), ev.relations.len(), |k| {
        let r = &ev.relations[k];
        match r.kind {
            RelationKind::Supports | RelationKind::Contradicts => {
                ev.claim_index.get(&r.to).copied()
            }
            _ => None,
        }
    });
    // Targets are scored independently, so both cores share them; each
    // worker keeps its own buffers, and the scores come back in order.
    let per_item: Vec<Vec<Score>> = ev
        .items
        .par_iter()
        .map_init(Scratch::default, |sc, (_, revs)| {
            let mut prior = (1.0, 1.0, None);
            let mut scores = Vec::with_capacity(revs.len());
            for &r in revs {
                let rev = &ev.revisions[r];
                let author = Some(ev.actors[rev.author].root);
                let post = group_signals(ev, cx, &rank, on_revision.of(r), author, sc);
                let s = assemble(&rev.id, Kind::Revision, prior.clone(), post, &labels);
                prior = (
                    1.0 + CARRY_OVER * (s.alpha - 1.0),
                    1.0 + CARRY_OVER * (s.beta - 1.0),
                    Some(rev.id.clone()),
                );
                scores.push(s);
            }
            scores
        })
        .collect();
    let mut revisions: Vec<Option<Score>> = vec![None; ev.revisions.len()];
    for ((_, revs), scores) in ev.items.iter().zip(per_item) {
        for (&r, s) in revs.iter().zip(scores) {
            revisions[r] = Some(s);
        }
    }
    let mut out: Vec<Score> =
        Vec::with_capacity(ev.revisions.len() + ev.items.len() + ev.claims.len());
    out.extend(revisions.into_iter().map(|s| s.expect("every revision")));
    for (i, (item, _)) in ev.items.iter().enumerate() {
        let mut s = out[ev.current(i)].clone();
        s.target = item.clone();
        s.kind = Kind::Item;
        out.push(s);
    }
    let claims: Vec<Score> = ev
        .claims
        .par_iter()
        .enumerate()
        .map_init(Scratch::default, |sc, (c, claim)| {
            let author = claim.author.map(|a| ev.actors[a].root);
            let mut post = group_signals(ev, cx, &rank, on_claim.of(c), author, sc);
            family_groups(ev, cx, &labels, stances.of(c), &mut post, sc);
            assemble(&claim.id, Kind::Claim, (1.0, 1.0, None), post, &labels)
        })
        .collect();
    out.extend(claims);
    apply_supersedes(ev, cx, &mut out);
    out
}
/// Rule 1: an active `supersedes` relation at a target, made by its
/// author's root or coming from a target that the later rules make
/// high_confidence.
fn apply_supersedes(ev: &Evidence, cx: &Context, scores: &mut [Score]) {
    // Without a supersedes relation nothing below changes a score.
    if !ev
        .relations
        .iter()
        .any(|r| r.kind == RelationKind::Supersedes && r.day <= cx.today)
    {
        return;
    }
    let index: BTreeMap<(String, bool), usize> = scores
        .iter()
        .enumerate()
        .map(|(i, s)| ((s.target.clone(), s.kind == Kind::Item), i))
        .collect();
    // A relation names a revision, an item, or a claim; an item stands for
    // its current revision (and its own row follows).
    let find = |id: &str| -> Option<usize> {
        let key = |item| (id.to_string(), item);
        index
            .get(&key(false))
            .or_else(|| index.get(&key(true)))
            .copied()
    };
    let mut hits: Vec<(usize, String)> = Vec::new();
    for r in ev
        .relations
        .iter()
        .filter(|r| r.kind == RelationKind::Supersedes && r.day <= cx.today)
    {
        let Some(to) = find(&r.to) else { continue };
        let by_author = r
            .actor
            .is_some_and(|a| ev.author_root(&r.to) == Some(ev.actors[a].root));
        let from_high = find(&r.from).is_some_and(|f| scores[f].status == Status::HighConfidence);
        if by_author || from_high {
            hits.push((to, r.from.clone()));
            if scores[to].kind == Kind::Item {
                let current = &ev.revisions[ev.current(ev.item_index[&r.to])].id;
                hits.push((index[&(current.clone(), false)], r.from.clone()));
            }
        }
    }
    for (at, from) in hits {
        let s = &mut scores[at];
        s.status = Status::Superseded;
        if !s.superseded_by.contains(&from) {
            s.superseded_by.push(from);
        }
    }
    // An item carries its current revision's status.
    for (i, (item, _)) in ev.items.iter().enumerate() {
        let cur = &ev.revisions[ev.current(i)].id;
        let (Some(&r), Some(&it)) = (
            index.get(&(cur.clone(), false)),
            index.get(&(item.clone(), true)),
        ) else {
            continue;
        };
        if scores[r].status == Status::Superseded {
            scores[it].status = Status::Superseded;
            scores[it].superseded_by = scores[r].superseded_by.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a signal costs the scorer besides its id (a few bytes in one
    /// buffer) and its row of text: its evidence record, its group (at most
    /// one per signal) and two u32 indexes (its target's list, its group's
    /// members). Sizes, so deterministic; a growth here is a memory change.
    #[test]
    fn per_signal_records_stay_small() {
        assert!(std::mem::size_of::<Signal>() <= 56);
        assert!(std::mem::size_of::<Group>() <= 48);
    }
}
