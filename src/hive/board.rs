//! The standings fold as the episode engine runs it: the same seven steps
//! as `fold.rs`, over compact traces (topic and author as small indices,
//! sets as bitmasks) that arrive already in identity order without
//! duplicates, as a room's transcript always is. `fold.rs` stays the
//! readable reference; a property test holds the two equal, so the engine
//! can fold twice per turn without allocating.

use super::fold::Policy;
use super::markers::{Author, Kind, Marker, Trace};

/// Rooms have at most 8 members (one bit each). Topics are the room's
/// option names only (a marker naming anything else counts for no topic),
/// so 8 would do; the bitmasks leave room for 32.
pub const MAX_TOPICS: usize = 32;

/// Citations: members cite at most one sequence, so short lists stay
/// inline (copying a trace then never allocates); longer ones, which any
/// message may carry, go to the heap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cites {
    Inline([u64; 2], u8),
    Heap(Vec<u64>),
}

impl Cites {
    pub fn new(cites: &[u64]) -> Cites {
        match cites.len() {
            0..=2 => {
                let mut a = [0; 2];
                a[..cites.len()].copy_from_slice(cites);
                Cites::Inline(a, cites.len() as u8)
            }
            _ => Cites::Heap(cites.to_vec()),
        }
    }
}

impl std::ops::Deref for Cites {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        match self {
            Cites::Inline(a, n) => &a[..*n as usize],
            Cites::Heap(v) => v,
        }
    }
}

/// A trace with its topic interned: `topic` indexes the room's topic table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub seq: u64,
    pub offset: usize,
    pub author: Option<u8>,
    pub kind: Kind,
    pub topic: Option<u8>,
    pub target: Option<u64>,
    pub cites: Cites,
}

impl Mark {
    /// `topic_of` interns a topic name; it returns `None` past `MAX_TOPICS`.
    pub fn new(
        seq: u64,
        author: Author,
        m: &Marker,
        topic_of: impl FnOnce(&str) -> Option<u8>,
    ) -> Mark {
        Mark {
            seq,
            offset: m.offset,
            author: match author {
                Author::Member(a) => Some(a),
                Author::Other => None,
            },
            kind: m.kind,
            topic: m.topic.and_then(topic_of),
            target: m.target,
            cites: Cites::new(m.cites),
        }
    }

    pub fn from_trace(t: &Trace, topic_of: impl FnOnce(&str) -> Option<u8>) -> Mark {
        let marker = Marker {
            kind: t.kind,
            topic: t.topic.as_deref(),
            target: t.target,
            cites: &t.cites,
            offset: t.offset,
        };
        Mark::new(t.sequence, t.author, &marker, topic_of)
    }

    pub fn grounded(&self) -> bool {
        !self.cites.is_empty()
    }
}

fn bit(m: u8) -> u8 {
    1 << m
}

/// The standings of one fold. Masks are indexed by topic; a topic has a
/// standing when its bit is in `advocated`.
#[derive(Clone, Debug, Default)]
pub struct Board {
    /// Advocated topics in first-advocacy order.
    pub order: Vec<u8>,
    pub advocated: u32,
    pub supporters: [u8; MAX_TOPICS],
    pub silenced: [u8; MAX_TOPICS],
    pub refuted_by: [u8; MAX_TOPICS],
    pub carried: u32,
    /// Positions (in the folded slice) of the traces the support pass counted.
    pub(super) counted_at: Vec<usize>,
    pub(super) window: (usize, usize),
    /// The evidential walk's stack and visited list, kept so that a fold
    /// allocates only while they grow (the walk runs once per support).
    walk: Walk,
}

/// Buffers of `reaches_evidence`, reused from walk to walk.
#[derive(Clone, Debug, Default)]
pub(super) struct Walk {
    stack: Vec<u64>,
    visited: Vec<u64>,
}

impl Board {
    /// Counted supporters: supporters that were not silenced.
    pub fn counted(&self, topic: u8) -> u8 {
        self.supporters[topic as usize] & !self.silenced[topic as usize]
    }

    pub fn backers(&self, topic: u8) -> u32 {
        self.counted(topic).count_ones()
    }

    pub fn counts(&self, topic: u8, member: u8) -> bool {
        self.counted(topic) & bit(member) != 0
    }

    /// The members counted for at least one standing.
    pub fn anyone_counted(&self) -> u8 {
        self.order.iter().fold(0, |acc, &t| acc | self.counted(t))
    }

    /// Summed importance of the counted supporters' traces on `topic`;
    /// `marks` must be the slice this board was folded from.
    pub fn support(&self, marks: &[Mark], topic: u8) -> u64 {
        let counted = self.counted(topic);
        let kept = &marks[self.window.0..self.window.1];
        self.counted_at
            .iter()
            .map(|&i| &kept[i])
            .filter(|m| m.topic == Some(topic) && counted & bit(m.author.unwrap_or(0)) != 0)
            .map(|m| m.kind.importance())
            .sum()
    }

    /// No standings, over an empty window starting at `lo`.
    pub(super) fn reset(&mut self, lo: usize) {
        self.window = (lo, lo);
        self.order.clear();
        self.advocated = 0;
        self.carried = 0;
        self.supporters = [0; MAX_TOPICS];
        self.silenced = [0; MAX_TOPICS];
        self.refuted_by = [0; MAX_TOPICS];
        self.counted_at.clear();
    }

    /// Folds `marks` (identity order, no duplicates) at `at`. The policy
    /// must already be valid (`fold::standings` reports the errors).
    pub fn fold(&mut self, marks: &[Mark], at: u64, p: &Policy) {
        let from = at.saturating_sub(p.window);
        let lo = marks.partition_point(|m| m.seq < from);
        let hi = marks.partition_point(|m| m.seq <= at);
        self.reset(lo);
        self.window = (lo, hi);
        let kept = &marks[lo..hi];
        let grounded_required = p.require_grounded || p.require_evidential;
        let mut evidenced = 0u8;
        let mut refuters = [0u8; MAX_TOPICS];
        for m in kept {
            match (m.kind, m.author, m.topic) {
                (Kind::Evidence, Some(a), _) => evidenced |= bit(a),
                (Kind::Refute, Some(a), Some(t)) if m.grounded() => refuters[t as usize] |= bit(a),
                _ => {}
            }
        }
        for (i, m) in kept.iter().enumerate() {
            let (Some(t), Some(a)) = (m.topic, m.author) else {
                continue;
            };
            let admitted = match m.kind {
                Kind::Propose => true,
                Kind::Support => {
                    (!grounded_required || m.grounded())
                        && (!p.require_evidential || self.walk.reaches_evidence(m, kept))
                }
                _ => false,
            };
            if !admitted || refuters[t as usize] & bit(a) != 0 {
                continue;
            }
            if self.advocated & (1 << t) == 0 {
                self.advocated |= 1 << t;
                self.order.push(t);
            }
            self.supporters[t as usize] |= bit(a);
            self.counted_at.push(i);
        }
        for m in kept.iter().filter(|m| m.kind == Kind::Object) {
            if grounded_required && !m.grounded() {
                continue;
            }
            if p.require_evidential && m.author.is_none_or(|a| evidenced & bit(a) == 0) {
                continue;
            }
            let Some(target) = m.target else { continue };
            let first = kept.partition_point(|k| k.seq < target);
            for &i in &self.counted_at {
                let adv = &kept[i];
                if i < first || adv.seq != target || adv.author == m.author {
                    continue;
                }
                let (a, t) = (adv.author.unwrap_or(0), adv.topic.unwrap_or(0));
                self.silenced[t as usize] |= bit(a);
            }
        }
        for m in kept {
            if let (Kind::Refute, Some(a), Some(t)) = (m.kind, m.author, m.topic) {
                if m.grounded() && self.advocated & (1 << t) != 0 {
                    self.refuted_by[t as usize] |= bit(a);
                }
            }
        }
        for i in 0..self.order.len() {
            let t = self.order[i];
            let capped = p
                .refutation_cap
                .is_some_and(|c| self.refuted_by[t as usize].count_ones() as usize >= c);
            if !capped && self.backers(t) as usize >= p.threshold {
                self.carried |= 1 << t;
            }
        }
    }
}

impl Walk {
    /// Does a citation chain from `m` reach an evidence trace among `kept`?
    /// The visited list makes cycles and self-citations terminate.
    pub(super) fn reaches_evidence(&mut self, m: &Mark, kept: &[Mark]) -> bool {
        let Walk { stack, visited } = self;
        stack.clear();
        visited.clear();
        stack.extend_from_slice(&m.cites);
        while let Some(seq) = stack.pop() {
            if visited.contains(&seq) {
                continue;
            }
            visited.push(seq);
            let lo = kept.partition_point(|k| k.seq < seq);
            for k in kept[lo..].iter().take_while(|k| k.seq == seq) {
                if k.kind == Kind::Evidence {
                    return true;
                }
                stack.extend_from_slice(&k.cites);
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hive::fold::{standings, Consensus};
    use crate::hive::markers::parse;
    use proptest::prelude::*;

    const TOPICS: [&str; 3] = ["a", "b", "c"];

    fn messages() -> impl Strategy<Value = Vec<(u8, String)>> {
        let line = (
            0usize..7,
            0usize..3,
            0u64..14,
            prop::collection::vec(1u64..14, 0..3),
        )
            .prop_map(|(k, t, target, cites)| {
                let kind = [
                    "propose", "support", "object", "refute", "evidence", "question", "commit",
                ][k];
                let cites: String = cites.iter().map(|c| format!(" ^{c}")).collect();
                format!("!{kind} #{} >{target}{cites} note", TOPICS[t])
            });
        // Some messages carry two markers, so sequences repeat.
        let message = (prop::collection::vec(line, 1..3), 0u8..6)
            .prop_map(|(lines, m)| (m, lines.join("\n")));
        prop::collection::vec(message, 0..14)
    }

    proptest! {
        #[test]
        fn the_board_equals_the_reference_fold(
            msgs in messages(),
            threshold in 1usize..4,
            window in 1u64..12,
            grounded in any::<bool>(),
            ev in any::<bool>(),
            cap in prop::option::of(1usize..3),
            at in 1u64..16,
        ) {
            let p = Policy { threshold, window, require_grounded: grounded, require_evidential: ev, refutation_cap: cap };
            let traces: Vec<Trace> = msgs
                .iter()
                .enumerate()
                .flat_map(|(i, (m, text))| {
                    let author = if *m == 5 { Author::Other } else { Author::Member(*m) };
                    parse(i as u64 + 2, author, text)
                })
                .collect();
            let marks: Vec<Mark> = traces
                .iter()
                .map(|t| Mark::from_trace(t, |name| TOPICS.iter().position(|x| *x == name).map(|i| i as u8)))
                .collect();
            let reference = standings(&traces, at, &p).unwrap();
            let mut board = Board::default();
            board.fold(&marks, at, &p);
            let name = |t: u8| TOPICS[t as usize].to_string();
            let order: Vec<String> = board.order.iter().map(|&t| name(t)).collect();
            let expected: Vec<String> = reference.standings.iter().map(|s| s.topic.clone()).collect();
            prop_assert_eq!(order, expected);
            let mask = |v: &[u8]| v.iter().fold(0u8, |acc, &a| acc | bit(a));
            for (s, &t) in reference.standings.iter().zip(&board.order) {
                prop_assert_eq!(board.counted(t), mask(&s.supporters));
                prop_assert_eq!(board.silenced[t as usize], mask(&s.silenced));
                prop_assert_eq!(board.refuted_by[t as usize], mask(&s.refuted_by));
                prop_assert_eq!(board.carried & (1 << t) != 0, s.carried);
                prop_assert_eq!(board.support(&marks, t), s.support);
            }
            let carried: Vec<String> = board.order.iter().filter(|&&t| board.carried & (1 << t) != 0).map(|&t| name(t)).collect();
            let consensus = match carried.len() {
                0 => Consensus::Deliberating,
                1 => Consensus::Quorum(carried[0].clone()),
                _ => Consensus::Deadlocked(carried),
            };
            prop_assert_eq!(consensus, reference.consensus);
        }
    }
}
