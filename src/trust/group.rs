//! Independence groups on one target (docs/models/trust.md §4.3 as trust-v1
//! decides them): a target's signals grouped by root controller, and a
//! claim's source stances grouped by source family. A group names its party
//! and its members by index (`Party`, a range of `Score::members`); the
//! run's `Labels` turn indexes back into ids only when a score is shown.

use std::ops::Range;
use std::sync::Arc;

use super::evidence::{Evidence, Outcome, RelationKind};
use super::names::Names;
use super::score::{signal_weight, Buckets, Context};
use super::GROUP_CAP;

const BURST_SIGNALS: usize = 5;
const YOUNG_DAYS: i64 = 7;
const OUTDATED_DAYS: i64 = 365;

/// Who a group stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Party {
    /// A root actor, by actor index.
    Root(u32),
    /// A source family, by the index of a relation whose source is in it.
    Family(u32),
}

/// One root's (or one source family's) group on a target.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub party: Party,
    pub weight: f64,
    /// None when no signal of the group carries a polarity.
    pub polarity: Option<f64>,
    /// Its signals (a family: its stances' relations), as a range of
    /// `Score::members`.
    pub members: Range<u32>,
    pub real_world: bool,
}

impl Group {
    pub fn independent(&self) -> bool {
        self.weight > 0.0
    }

    pub fn family(&self) -> bool {
        matches!(self.party, Party::Family(_))
    }
}

/// The ids behind a run's indexes, shared by all its scores.
#[derive(Clone, Default, PartialEq)]
pub struct Labels {
    /// Actor ids by actor index.
    pub actors: Names,
    /// Signal ids by signal index.
    pub signals: Arc<Names>,
    /// Each relation's source (`from`) by relation index.
    pub sources: Names,
    /// Each relation's source family by relation index.
    pub families: Names,
}

impl std::fmt::Debug for Labels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Labels({} actors, {} signals, {} relations)",
            self.actors.len(),
            self.signals.len(),
            self.sources.len()
        )
    }
}

impl Labels {
    pub fn new(ev: &Evidence) -> Labels {
        let mut l = Labels {
            signals: ev.signal_ids.clone(),
            ..Labels::default()
        };
        for a in &ev.actors {
            l.actors.push(&a.id);
        }
        for r in &ev.relations {
            l.sources.push(&r.from);
            l.families.push(ev.family_of(&r.from));
        }
        l
    }

    /// The root actor's id, or the family's origin source.
    pub fn party(&self, p: Party) -> &str {
        match p {
            Party::Root(a) => self.actors.get(a),
            Party::Family(r) => self.families.get(r),
        }
    }

    /// The group's name as the explanation shows it: (prefix, name), the
    /// prefix `family:` for a family and empty for a root.
    pub fn root(&self, p: Party) -> (&'static str, &str) {
        match p {
            Party::Root(_) => ("", self.party(p)),
            Party::Family(_) => ("family:", self.party(p)),
        }
    }

    /// A member's id: a signal's, or a family stance's source.
    pub fn member(&self, p: Party, m: u32) -> &str {
        match p {
            Party::Root(_) => self.signals.get(m),
            Party::Family(_) => self.sources.get(m),
        }
    }

    /// Orders groups as their shown names (prefix then name) order.
    pub fn cmp_root(&self, a: Party, b: Party) -> std::cmp::Ordering {
        let (pa, na) = self.root(a);
        let (pb, nb) = self.root(b);
        if pa == pb {
            return na.cmp(nb);
        }
        pa.bytes()
            .chain(na.bytes())
            .cmp(pb.bytes().chain(nb.bytes()))
    }
}

/// One target's groups before the posterior.
pub struct Grouped {
    pub groups: Vec<Group>,
    pub members: Vec<u32>,
    pub self_reported: Range<u32>,
    pub flags: Vec<String>,
    pub evidence_count: usize,
    pub last_positive: Option<i64>,
    pub outdated_roots: usize,
    pub buckets: Buckets,
}

/// Buffers reused from target to target, so grouping allocates only what
/// a score keeps.
#[derive(Default)]
pub struct Scratch {
    /// Counted signals as (rank of the root's id, signal index).
    counted: Vec<(u32, u32)>,
    young_days: Vec<i64>,
    outdated: Vec<(u32, i64)>,
    roots: Vec<u32>,
    stances: Vec<u32>,
}

/// Groups the signals (indexes, in file order) on one target by root;
/// `author_root` marks the self group. `rank` orders actors as their ids
/// do, so groups come out sorted by root id.
pub fn group_signals(
    ev: &Evidence,
    cx: &Context,
    rank: &[u32],
    signals: &[u32],
    author_root: Option<usize>,
    sc: &mut Scratch,
) -> Grouped {
    let root_of = |k: u32| ev.actors[ev.signals[k as usize].actor].root;
    let young = |k: u32| ev.signals[k as usize].day - ev.actors[root_of(k)].created < YOUNG_DAYS;
    sc.counted.clear();
    sc.young_days.clear();
    for &k in signals {
        let s = &ev.signals[k as usize];
        if s.active && s.day <= cx.today {
            sc.counted.push((rank[root_of(k)], k));
            if young(k) {
                sc.young_days.push(s.day);
            }
        }
    }
    sc.young_days.sort_unstable();
    let days = &sc.young_days;
    let burst_day = |k: u32| {
        days.len() >= BURST_SIGNALS && young(k) && {
            let d = ev.signals[k as usize].day;
            days.partition_point(|&x| x <= d) - days.partition_point(|&x| x < d) >= BURST_SIGNALS
        }
    };
    let mut flags = Vec::new();
    if sc.counted.iter().any(|&(_, k)| burst_day(k)) {
        flags.push("burst".to_string());
    }
    // By root id, then file order within a root.
    sc.counted.sort_unstable();
    let mut out = Grouped {
        groups: Vec::new(),
        members: Vec::with_capacity(sc.counted.len()),
        self_reported: 0..0,
        flags,
        evidence_count: sc.counted.len(),
        last_positive: None,
        outdated_roots: 0,
        buckets: Buckets {
            inactive: signals.len() - sc.counted.len(),
            ..Buckets::default()
        },
    };
    sc.outdated.clear();
    for run in sc.counted.chunk_by(|a, b| a.0 == b.0) {
        let root = root_of(run[0].1);
        let start = out.members.len() as u32;
        out.members.extend(run.iter().map(|&(_, k)| k));
        let members = start..out.members.len() as u32;
        if Some(root) == author_root {
            out.self_reported = members;
            out.buckets.self_reported += run.len();
            continue;
        }
        let (mut total, mut positive) = (0.0, 0.0);
        let mut real_world = false;
        for &(_, k) in run {
            let s = &ev.signals[k as usize];
            if let Some(p) = s.outcome.polarity() {
                let halve = if burst_day(k) { 0.5 } else { 1.0 };
                let w = signal_weight(s, cx.reputation[s.actor], cx.today) * halve;
                total += w;
                positive += w * p;
            }
            if matches!(s.outcome, Outcome::Success | Outcome::True) {
                out.last_positive = out.last_positive.max(Some(s.day));
            }
            if s.outcome == Outcome::Outdated {
                sc.outdated.push((root as u32, s.day));
            }
            real_world |= s.real_world && matches!(s.outcome, Outcome::Success | Outcome::Failure);
        }
        let group = Group {
            party: Party::Root(root as u32),
            weight: total.min(GROUP_CAP),
            polarity: (total > 0.0).then(|| positive / total),
            members,
            real_world,
        };
        if group.independent() {
            out.buckets.independent += run.len();
        } else {
            out.buckets.unweighted += run.len();
        }
        out.groups.push(group);
    }
    // Outdated reviews within a year and after the last positive signal.
    let last = out.last_positive;
    sc.roots.clear();
    sc.roots.extend(
        sc.outdated
            .iter()
            .filter(|&&(_, day)| cx.today - day <= OUTDATED_DAYS && last.is_none_or(|p| day > p))
            .map(|&(r, _)| r),
    );
    sc.roots.sort_unstable();
    sc.roots.dedup();
    out.outdated_roots = sc.roots.len();
    out
}

/// Adds one group per source family standing on a claim (trust-v1: W =
/// 0.5 x the family's largest strength, p = the strength-weighted
/// polarity), in family order; `stances` are the claim's supports and
/// contradicts relations, in file order.
pub fn family_groups(
    ev: &Evidence,
    cx: &Context,
    labels: &Labels,
    stances: &[u32],
    out: &mut Grouped,
    sc: &mut Scratch,
) {
    sc.stances.clear();
    sc.stances.extend(
        stances
            .iter()
            .copied()
            .filter(|&r| ev.relations[r as usize].day <= cx.today),
    );
    // By family, then file order (the sort is stable).
    sc.stances
        .sort_by(|&a, &b| labels.families.get(a).cmp(labels.families.get(b)));
    for run in sc
        .stances
        .chunk_by(|&a, &b| labels.families.get(a) == labels.families.get(b))
    {
        let polarity = |r: u32| match ev.relations[r as usize].kind {
            RelationKind::Supports => 1.0,
            _ => 0.0,
        };
        let strength = |r: u32| ev.relations[r as usize].strength;
        let total: f64 = run.iter().map(|&r| strength(r)).sum();
        let strongest = run.iter().map(|&r| strength(r)).fold(0.0, f64::max);
        let start = out.members.len() as u32;
        out.members.extend_from_slice(run);
        out.groups.push(Group {
            party: Party::Family(run[0]),
            weight: 0.5 * strongest,
            polarity: (total > 0.0)
                .then(|| run.iter().map(|&r| strength(r) * polarity(r)).sum::<f64>() / total),
            members: start..out.members.len() as u32,
            real_world: false,
        });
    }
}
