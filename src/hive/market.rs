//! The attention market (docs/models/hive.md, the episode engine): who speaks
//! next, from the salience of the live traces, each member's share of the
//! grounded ones, dissent among tied standings and who has been addressed.
//! Salience comes from a table, since the market sums it over every trace
//! on every turn.

use super::board::{Board, Mark};
use super::episode::decay;
use super::markers::Kind;
use super::policy::RoomPolicy;
use super::room::{Room, MAX_MEMBERS};

const fn salience_of(kind: Kind, age: u64) -> u64 {
    (5 * decay(age) + 30 * kind.importance() + 20 * 500) / 10
}

/// Ages with a precomputed salience; rooms rarely run this many turns.
const AGES: usize = 64;

/// Salience by kind and age: the market sums one per trace on every turn,
/// and a lookup costs less than the divisions of `decay`.
static SALIENCE: [[u64; AGES]; Kind::ALL.len()] = {
    let mut t = [[0; AGES]; Kind::ALL.len()];
    let mut k = 0;
    while k < Kind::ALL.len() {
        let mut age = 0;
        while age < AGES {
            t[k][age] = salience_of(Kind::ALL[k], age as u64);
            age += 1;
        }
        k += 1;
    }
    t
};

fn salience(at: u64, m: &Mark) -> u64 {
    let age = at - m.seq;
    match SALIENCE[m.kind as usize].get(age as usize) {
        Some(&s) => s,
        None => salience_of(m.kind, age),
    }
}

/// The attention market: the member with the highest bid speaks, the
/// earlier one on ties; `None` when nobody bids.
pub fn market(
    room: &Room,
    p: &RoomPolicy,
    marks: &[Mark],
    at: u64,
    live: &Board,
    threshold: &[i64; MAX_MEMBERS],
    addressed: u8,
) -> Option<usize> {
    let n = room.members;
    // Topics whose supports add no salience, worked out once per turn.
    let full = live
        .order
        .iter()
        .filter(|&&t| live.backers(t) >= p.repetition)
        .fold(0u32, |acc, &t| acc | 1 << t);
    let saturated =
        |m: &Mark| m.kind == Kind::Support && m.topic.is_some_and(|t| full & (1 << t) != 0);
    let base: i64 = marks
        .iter()
        .filter(|m| !saturated(m))
        .map(|m| salience(at, m) as i64)
        .sum();
    let from = at.saturating_sub(p.fold.window);
    let counted = live.anyone_counted();
    let mut share = [0u64; MAX_MEMBERS];
    for m in marks.iter().filter(|m| m.grounded() && m.seq >= from) {
        if let Some(a) = m.author {
            if counted & (1 << a) != 0 {
                share[a as usize] += 1;
            }
        }
    }
    let total: u64 = share[..n].iter().sum();
    let dominant = |s: u64| total > 0 && s * 100 > total * p.dominance;
    let any_dominant = share[..n].iter().any(|&s| dominant(s));
    let quietest = (0..n).min_by_key(|&k| share[k]).unwrap_or(0);
    // Dissent: the top counted-supporter count, tied by two or more standings.
    let top = live
        .order
        .iter()
        .map(|&t| live.backers(t))
        .max()
        .unwrap_or(0);
    let tied = live.order.iter().filter(|&&t| live.backers(t) == top);
    let dissent = live.order.len() >= 2 && top >= 1 && tied.clone().count() >= 2;
    let tied_backers = tied.fold(0u8, |acc, &t| acc | live.counted(t));
    let mut best: Option<(usize, i64)> = None;
    for k in 0..n {
        let bonus = if addressed & (1 << k) != 0 {
            2000
        } else if dissent && tied_backers & (1 << k) == 0 {
            1500
        } else if k == quietest && any_dominant {
            1000
        } else {
            0
        };
        let mut urge = base + bonus;
        if dominant(share[k]) {
            urge -= 3000;
        }
        if urge >= threshold[k] {
            let bid = urge - threshold[k];
            if best.is_none_or(|(_, b)| bid > b) {
                best = Some((k, bid));
            }
        }
    }
    best.map(|(k, _)| k)
}

/// Members addressed by the traces from `first_new` on: by another author's
/// target or citation of a sequence where they have a trace, in either
/// direction (a new trace may also be the one an earlier trace pointed at).
pub fn newly_addressed(marks: &[Mark], first_new: usize) -> u8 {
    let points_at = |m: &Mark, seq: u64| m.target == Some(seq) || m.cites.contains(&seq);
    let mut out = 0u8;
    for new in &marks[first_new..] {
        for other in marks.iter().filter(|o| o.author != new.author) {
            if let Some(a) = other.author {
                if points_at(new, other.seq) {
                    out |= 1 << a;
                }
            }
            if let Some(a) = new.author {
                if points_at(other, new.seq) {
                    out |= 1 << a;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hive::markers::{Author, Marker};

    #[test]
    fn the_salience_table_is_the_formula() {
        for k in Kind::ALL {
            assert_eq!(k as usize, Kind::ALL.iter().position(|&x| x == k).unwrap());
            for at in [0, 1, 5, 63, 64, 65, 200, 5000] {
                for seq in [0, 1, at / 2, at] {
                    let m = Mark::new(seq, Author::Other, &scan_one(k), |_| None);
                    assert_eq!(salience(at, &m), salience_of(k, at - seq));
                    let d = at - seq;
                    assert_eq!(
                        salience_of(k, d),
                        (5 * decay(d) + 30 * k.importance() + 20 * 500) / 10
                    );
                }
            }
        }
    }

    fn scan_one(kind: Kind) -> Marker<'static> {
        Marker {
            kind,
            topic: None,
            target: None,
            cites: &[],
            offset: 0,
        }
    }
}
