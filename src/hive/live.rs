//! The live standings of one room, kept up to date trace by trace: the
//! engine folds the whole transcript at every turn, and between two turns
//! it grows by at most one message, so each new trace updates the board
//! instead of the board being folded again from the start. The result is
//! always what `Board::fold` gives on the same window (a test holds them
//! equal); whenever the update could differ, it folds in full instead.
//!
//! Why an update is exact: with the window's start unchanged, the fold's
//! sets only grow as traces arrive (evidence givers, refuters, admitted
//! advocacies, objections), and every standing is a mask expression over
//! them (counted = supporters minus refuters minus silenced, and so on).
//! The one thing that is not a union is the evidential walk: a support is
//! admitted if its citation chain reaches evidence, and a chain may lead to
//! a trace that has not arrived yet. When every trace cites only earlier
//! messages (as the member rules do), chains lead only to earlier traces,
//! all present when the support arrives; a trace citing its own or a later
//! message sends the board back to full folds.

use super::board::{Board, Mark, Walk, MAX_TOPICS};
use super::fold::Policy;
use super::markers::Kind;

fn bit(m: u8) -> u8 {
    1 << m
}

/// An objection as the fold reads it: the sequence it targets, its author,
/// and whether it counts yet (in evidential rooms, only once its author has
/// given evidence).
#[derive(Clone, Copy, Debug)]
struct Objection {
    target: u64,
    author: Option<u8>,
    effective: bool,
}

/// A board with what it needs to take the next traces.
#[derive(Debug, Default)]
pub struct Live {
    pub board: Board,
    /// `marks[lo..hi]` is what `board` holds.
    lo: usize,
    hi: usize,
    /// Set when a trace cites its own or a later message in an evidential
    /// room: from then on, full folds.
    refold: bool,
    evidenced: u8,
    refuters: [u8; MAX_TOPICS],
    /// Silenced advocates, refutations not yet taken out.
    silenced: [u8; MAX_TOPICS],
    /// Every admitted advocacy (refuted or not): (sequence, author, topic).
    admitted: Vec<(u64, u8, u8)>,
    objections: Vec<Objection>,
    walk: Walk,
}

impl Live {
    /// Forgets the room: the next `update` folds from the start.
    pub fn clear(&mut self) {
        self.lo = 0;
        self.hi = 0;
        self.refold = false;
        self.evidenced = 0;
        self.refuters = [0; MAX_TOPICS];
        self.silenced = [0; MAX_TOPICS];
        self.admitted.clear();
        self.objections.clear();
        self.board.reset(0);
    }

    /// The board of `marks` at `at`, as `Board::fold` gives it. Between two
    /// calls `marks` may only have grown at its end (after `clear`, any).
    pub fn update(&mut self, marks: &[Mark], at: u64, p: &Policy) {
        let from = at.saturating_sub(p.window);
        let lo = marks.partition_point(|m| m.seq < from);
        let hi = marks.partition_point(|m| m.seq <= at);
        if lo != self.lo || hi < self.hi {
            self.clear();
            self.lo = lo;
            self.hi = lo;
            self.board.reset(lo);
        }
        let fresh = self.hi..hi;
        self.hi = hi;
        if p.require_evidential && !self.refold {
            self.refold = marks[fresh.clone()]
                .iter()
                .any(|m| m.cites.iter().any(|&c| c >= m.seq));
        }
        if self.refold {
            self.board.fold(marks, at, p);
            return;
        }
        for i in fresh {
            self.take(marks, i, p);
        }
        self.board.window = (lo, hi);
        self.settle(marks, p);
    }

    /// Takes `marks[i]` into the sets (not yet into the standings).
    fn take(&mut self, marks: &[Mark], i: usize, p: &Policy) {
        let m = &marks[i];
        let kept = &marks[self.lo..i];
        let grounded_required = p.require_grounded || p.require_evidential;
        match (m.kind, m.author, m.topic) {
            (Kind::Evidence, Some(a), _) if self.evidenced & bit(a) == 0 => {
                self.evidenced |= bit(a);
                for o in self.objections.iter_mut() {
                    if !o.effective && o.author == Some(a) {
                        o.effective = true;
                        silence(&mut self.silenced, &self.admitted, *o);
                    }
                }
            }
            (Kind::Refute, Some(a), Some(t)) if m.grounded() => {
                self.refuters[t as usize] |= bit(a);
                // The refuter's advocacies of `t` no longer count.
                let pos = |i: &usize| &marks[self.lo + *i];
                let b = &mut self.board;
                b.counted_at
                    .retain(|i| !(pos(i).author == Some(a) && pos(i).topic == Some(t)));
                b.supporters[t as usize] &= !bit(a);
            }
            (Kind::Propose | Kind::Support, Some(a), Some(t)) => {
                let admitted = m.kind == Kind::Propose
                    || ((!grounded_required || m.grounded())
                        && (!p.require_evidential || self.walk.reaches_evidence(m, kept)));
                if admitted {
                    self.admitted.push((m.seq, a, t));
                    for o in self.objections.iter().filter(|o| o.effective) {
                        if o.target == m.seq && o.author != Some(a) {
                            self.silenced[t as usize] |= bit(a);
                        }
                    }
                    if self.refuters[t as usize] & bit(a) == 0 {
                        self.board.supporters[t as usize] |= bit(a);
                        self.board.counted_at.push(i - self.lo);
                    }
                }
            }
            (Kind::Object, author, _) => {
                if grounded_required && !m.grounded() {
                    return;
                }
                let Some(target) = m.target else { return };
                let effective =
                    !p.require_evidential || author.is_some_and(|a| self.evidenced & bit(a) != 0);
                let o = Objection {
                    target,
                    author,
                    effective,
                };
                if effective {
                    silence(&mut self.silenced, &self.admitted, o);
                }
                self.objections.push(o);
            }
            _ => {}
        }
    }

    /// The standings from the sets: the first-advocacy order, silenced and
    /// refuting members, and what carries (steps 4 to 7 of the fold).
    fn settle(&mut self, marks: &[Mark], p: &Policy) {
        let b = &mut self.board;
        b.order.clear();
        b.advocated = 0;
        // The counted advocacies are in transcript order: each topic's
        // first is its first advocacy.
        for &i in &b.counted_at {
            let t = marks[self.lo + i].topic.unwrap_or(0);
            if b.advocated & (1 << t) == 0 {
                b.advocated |= 1 << t;
                b.order.push(t);
            }
        }
        b.carried = 0;
        for t in 0..MAX_TOPICS {
            let refuters = self.refuters[t];
            b.silenced[t] = self.silenced[t] & !refuters;
            b.refuted_by[t] = if b.advocated & (1 << t) != 0 {
                refuters
            } else {
                0
            };
        }
        for &t in &b.order {
            let capped = p
                .refutation_cap
                .is_some_and(|c| b.refuted_by[t as usize].count_ones() as usize >= c);
            if !capped && b.backers(t) as usize >= p.threshold {
                b.carried |= 1 << t;
            }
        }
    }
}

/// Objection `o` silences every admitted advocacy at its target by another
/// author.
fn silence(silenced: &mut [u8; MAX_TOPICS], admitted: &[(u64, u8, u8)], o: Objection) {
    for &(seq, a, t) in admitted {
        if seq == o.target && o.author != Some(a) {
            silenced[t as usize] |= bit(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hive::markers::{parse, Author};
    use proptest::prelude::*;

    const TOPICS: [&str; 3] = ["a", "b", "c"];

    /// Messages of members 0..4 or the operator (5); citations and targets
    /// anywhere, earlier or later, so the fallback to full folds is tried.
    fn messages() -> impl Strategy<Value = Vec<(u8, String)>> {
        let line = (
            0usize..7,
            0usize..3,
            0u64..16,
            prop::collection::vec(0u64..16, 0..3),
        )
            .prop_map(|(k, t, target, cites)| {
                let cites: String = cites.iter().map(|c| format!(" ^{c}")).collect();
                format!("!{} #{} >{target}{cites}", Kind::ALL[k].name(), TOPICS[t])
            });
        let message = (prop::collection::vec(line, 0..3), 0u8..6)
            .prop_map(|(lines, m)| (m, lines.join("\n")));
        prop::collection::vec(message, 0..14)
    }

    fn fields(b: &Board) -> impl PartialEq + std::fmt::Debug {
        (
            b.order.clone(),
            b.advocated,
            b.supporters,
            b.silenced,
            b.refuted_by,
            b.carried,
            b.counted_at.clone(),
            b.window,
        )
    }

    proptest! {
        #[test]
        fn updates_equal_the_full_fold_at_every_turn(
            msgs in messages(),
            backward in any::<bool>(),
            threshold in 1usize..4,
            window in 1u64..12,
            grounded in any::<bool>(),
            ev in any::<bool>(),
            cap in prop::option::of(1usize..3),
            pauses in prop::collection::vec(0u64..3, 14),
        ) {
            let p = Policy { threshold, window, require_grounded: grounded, require_evidential: ev, refutation_cap: cap };
            let mut marks: Vec<Mark> = Vec::new();
            let mut live = Live::default();
            live.clear();
            let mut full = Board::default();
            let mut at = 1;
            for (i, (m, text)) in msgs.iter().enumerate() {
                // The turn's fold sees every message so far, then the next
                // message arrives (some turns later: the window moves).
                at += pauses[i];
                live.update(&marks, at, &p);
                full.fold(&marks, at, &p);
                prop_assert_eq!(fields(&live.board), fields(&full));
                for t in &live.board.order {
                    prop_assert_eq!(live.board.support(&marks, *t), full.support(&marks, *t));
                }
                at += 1;
                let author = if *m == 5 { Author::Other } else { Author::Member(*m) };
                for t in parse(at, author, text) {
                    let mut mark = Mark::from_trace(&t, |n| TOPICS.iter().position(|x| *x == n).map(|i| i as u8));
                    if backward {
                        // As the member rules write: citations of earlier messages.
                        let cites: Vec<u64> = mark.cites.iter().map(|c| c % at).collect();
                        mark.cites = crate::hive::board::Cites::new(&cites);
                    }
                    marks.push(mark);
                }
            }
            live.update(&marks, at, &p);
            full.fold(&marks, at, &p);
            prop_assert_eq!(fields(&live.board), fields(&full));
        }
    }
}
