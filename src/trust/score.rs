//! The trust-v1 scorer (docs/models/trust.md §4 and §5, as trust-v1 decides
//! them): for every revision, item and claim, the groups of its evidence by
//! root controller (and by source family for claims), the Beta posterior
//! with revision carry-over, the bounds, the counters, the status and the
//! explanation. A pure function of the evidence, `today` and the
//! reputations used for weights.

use std::collections::BTreeMap;

use super::beta::bounds;
use super::evidence::{Evidence, Outcome, RelationKind, Signal, Target};
use super::status::{base_status, Facts, Status};
use super::{weight, BASE_REVIEW, BASE_USAGE, DEFAULT_REVIEW_CONFIDENCE, GROUP_CAP};

pub const MODEL_VERSION: &str = "trust-v1";
pub const HALF_LIFE_DAYS: f64 = 730.0;
pub const CARRY_OVER: f64 = 0.5;
const BURST_SIGNALS: usize = 5;
const YOUNG_DAYS: i64 = 7;
const OUTDATED_DAYS: i64 = 365;

crate::words! {
    /// What a score is of.
    pub enum Kind {
        Revision = "revision",
        Item = "item",
        Claim = "claim",
    }
}

/// One root's (or one source family's) group on a target.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// As the explanation shows it: a root actor's id, or `family:` and
    /// the family's origin.
    pub root: String,
    /// The root actor's id, or the family's origin source.
    pub party: String,
    pub weight: f64,
    /// None when no signal of the group carries a polarity.
    pub polarity: Option<f64>,
    pub signals: Vec<String>,
    pub real_world: bool,
    pub family: bool,
}

impl Group {
    pub fn independent(&self) -> bool {
        self.weight > 0.0
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
    /// Sorted by root.
    pub groups: Vec<Group>,
    pub self_reported: Vec<String>,
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
    0.5f64.powf(age_days as f64 / HALF_LIFE_DAYS)
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

struct Posterior {
    groups: Vec<Group>,
    self_reported: Vec<String>,
    flags: Vec<String>,
    evidence_count: usize,
    last_positive: Option<i64>,
    outdated_roots: usize,
    buckets: Buckets,
}

/// Groups the signals on one target by root; `author_root` marks self groups.
fn group_signals(
    ev: &Evidence,
    cx: &Context,
    signals: &[&Signal],
    author_root: Option<usize>,
) -> Posterior {
    let counted: Vec<&Signal> = signals
        .iter()
        .copied()
        .filter(|s| s.active && s.day <= cx.today)
        .collect();
    let root_of = |s: &Signal| ev.actors[s.actor].root;
    let young = |s: &Signal| s.day - ev.actors[root_of(s)].created < YOUNG_DAYS;
    let mut per_day: BTreeMap<i64, usize> = BTreeMap::new();
    for s in counted.iter().filter(|s| young(s)) {
        *per_day.entry(s.day).or_default() += 1;
    }
    let burst_day = |s: &Signal| young(s) && per_day[&s.day] >= BURST_SIGNALS;
    let mut flags = Vec::new();
    if counted.iter().any(|s| burst_day(s)) {
        flags.push("burst".to_string());
    }
    let mut by_root: BTreeMap<&str, (usize, Vec<&Signal>)> = BTreeMap::new();
    for &s in &counted {
        let r = root_of(s);
        by_root
            .entry(&ev.actors[r].id)
            .or_insert((r, Vec::new()))
            .1
            .push(s);
    }
    let mut out = Posterior {
        groups: Vec::new(),
        self_reported: Vec::new(),
        flags,
        evidence_count: counted.len(),
        last_positive: None,
        outdated_roots: 0,
        buckets: Buckets {
            inactive: signals.len() - counted.len(),
            ..Buckets::default()
        },
    };
    let mut outdated: Vec<(usize, i64)> = Vec::new();
    for (root_id, (root, list)) in by_root {
        if Some(root) == author_root {
            out.self_reported.extend(list.iter().map(|s| s.id.clone()));
            out.buckets.self_reported += list.len();
            continue;
        }
        let (mut total, mut positive) = (0.0, 0.0);
        for s in &list {
            if let Some(p) = s.outcome.polarity() {
                let halve = if burst_day(s) { 0.5 } else { 1.0 };
                let w = signal_weight(s, cx.reputation[s.actor], cx.today) * halve;
                total += w;
                positive += w * p;
            }
            if matches!(s.outcome, Outcome::Success | Outcome::True) {
                out.last_positive = out.last_positive.max(Some(s.day));
            }
            if s.outcome == Outcome::Outdated {
                outdated.push((root, s.day));
            }
        }
        let group = Group {
            root: root_id.to_string(),
            party: root_id.to_string(),
            weight: total.min(GROUP_CAP),
            polarity: (total > 0.0).then(|| positive / total),
            signals: list.iter().map(|s| s.id.clone()).collect(),
            real_world: list
                .iter()
                .any(|s| s.real_world && matches!(s.outcome, Outcome::Success | Outcome::Failure)),
            family: false,
        };
        if group.independent() {
            out.buckets.independent += list.len();
        } else {
            out.buckets.unweighted += list.len();
        }
        out.groups.push(group);
    }
    // Outdated reviews within a year and after the last positive signal.
    outdated.retain(|&(_, day)| {
        cx.today - day <= OUTDATED_DAYS && out.last_positive.is_none_or(|p| day > p)
    });
    let mut roots: Vec<usize> = outdated.iter().map(|&(r, _)| r).collect();
    roots.sort_unstable();
    roots.dedup();
    out.outdated_roots = roots.len();
    out
}

/// One group per source family standing on a claim (trust-v1: W = 0.5 x
/// the family's largest strength, p = the strength-weighted polarity).
fn family_groups(ev: &Evidence, cx: &Context, claim: &str) -> Vec<Group> {
    let mut by_family: BTreeMap<String, Vec<(f64, f64, &str)>> = BTreeMap::new();
    for r in &ev.relations {
        let polarity = match r.kind {
            RelationKind::Supports => 1.0,
            RelationKind::Contradicts => 0.0,
            _ => continue,
        };
        if r.to == claim && r.day <= cx.today {
            by_family
                .entry(ev.family(&r.from))
                .or_default()
                .push((r.strength, polarity, &r.from));
        }
    }
    by_family
        .into_iter()
        .map(|(family, stances)| {
            let total: f64 = stances.iter().map(|s| s.0).sum();
            let strongest = stances.iter().map(|s| s.0).fold(0.0, f64::max);
            Group {
                root: format!("family:{family}"),
                party: family.to_string(),
                weight: 0.5 * strongest,
                polarity: (total > 0.0)
                    .then(|| stances.iter().map(|s| s.0 * s.1).sum::<f64>() / total),
                signals: stances.iter().map(|s| s.2.to_string()).collect(),
                real_world: false,
                family: true,
            }
        })
        .collect()
}

fn assemble(
    target: &str,
    kind: Kind,
    prior: (f64, f64, Option<String>),
    mut post: Posterior,
) -> Score {
    post.groups.sort_by(|a, b| a.root.cmp(&b.root));
    let independent: Vec<&Group> = post.groups.iter().filter(|g| g.independent()).collect();
    let p = |g: &Group| g.polarity.unwrap_or(0.5);
    // Folded from +0.0: an empty float sum is -0.0, which prints as "-0".
    let support = independent.iter().fold(0.0, |a, g| a + g.weight * p(g));
    let opposition = independent
        .iter()
        .fold(0.0, |a, g| a + g.weight * (1.0 - p(g)));
    let (alpha, beta) = (prior.0 + support, prior.1 + opposition);
    let (lower, upper) = bounds(alpha, beta);
    let facts = Facts {
        value: alpha / (alpha + beta),
        lower,
        upper,
        independent: independent.len(),
        contradictions: independent.iter().filter(|g| p(g) < 0.5).count(),
        supporting: independent.iter().filter(|g| p(g) > 0.5).count(),
        real_world: independent
            .iter()
            .filter(|g| g.real_world && !g.family)
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
        self_reported: post.self_reported,
        flags: post.flags,
        superseded_by: Vec::new(),
        last_positive: post.last_positive,
        buckets: post.buckets,
    }
}

/// Scores every revision (in file order), then every item (its current
/// revision's score), then every claim.
pub fn score(ev: &Evidence, cx: &Context) -> Vec<Score> {
    let mut on_revision: Vec<Vec<&Signal>> = vec![Vec::new(); ev.revisions.len()];
    let mut on_claim: Vec<Vec<&Signal>> = vec![Vec::new(); ev.claims.len()];
    for s in &ev.signals {
        match s.target {
            Target::Revision(r) => on_revision[r].push(s),
            Target::Claim(c) => on_claim[c].push(s),
        }
    }
    let mut revisions: Vec<Option<Score>> = vec![None; ev.revisions.len()];
    for (_, revs) in &ev.items {
        let mut prior = (1.0, 1.0, None);
        for &r in revs {
            let rev = &ev.revisions[r];
            let author = Some(ev.actors[rev.author].root);
            let post = group_signals(ev, cx, &on_revision[r], author);
            let s = assemble(&rev.id, Kind::Revision, prior.clone(), post);
            prior = (
                1.0 + CARRY_OVER * (s.alpha - 1.0),
                1.0 + CARRY_OVER * (s.beta - 1.0),
                Some(rev.id.clone()),
            );
            revisions[r] = Some(s);
        }
    }
    let mut out: Vec<Score> = revisions
        .into_iter()
        .map(|s| s.expect("every revision"))
        .collect();
    for (i, (item, _)) in ev.items.iter().enumerate() {
        let mut s = out[ev.current(i)].clone();
        s.target = item.clone();
        s.kind = Kind::Item;
        out.push(s);
    }
    for (c, claim) in ev.claims.iter().enumerate() {
        let author = claim.author.map(|a| ev.actors[a].root);
        let mut post = group_signals(ev, cx, &on_claim[c], author);
        post.groups.extend(family_groups(ev, cx, &claim.id));
        out.push(assemble(&claim.id, Kind::Claim, (1.0, 1.0, None), post));
    }
    apply_supersedes(ev, cx, &mut out);
    out
}

/// Rule 1: an active `supersedes` relation at a target, made by its
/// author's root or coming from a target that the later rules make
/// high_confidence.
fn apply_supersedes(ev: &Evidence, cx: &Context, scores: &mut [Score]) {
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
