//! The `quorum` policy's private memory and count (docs/models/cascade.md §7.4): each agent
//! remembers, per sender, what its latest read counts for, and moves toward
//! a side only when enough live, filtered voices carry it.

use super::config::{Count, QuorumKnobs};
use super::ledger::{self, Ledger};

/// What one remembered read counts for under a run's knobs and truth: a
/// voice on one side or none, and the roots it carries that agree with its
/// side. The knobs and the truth do not change within a run, so this is
/// worked out when a read is remembered, from a table of the 3 stances by
/// the 8 ledger bit patterns, and the count only adds votes up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vote(u8);

const SUPPORT: u8 = 1;
const REFUTE: u8 = 2;
/// Agreeing root `k` is bit `ROOTS_AT + k`.
const ROOTS_AT: u32 = 2;

impl Vote {
    /// The vote of a read of stance `stance` and ledger `l`
    /// (docs/models/cascade.md §7.4): none without a stance; none without
    /// a root when grounding is required, or without an agreeing verified
    /// root when evidence is.
    fn of(stance: i8, l: &Ledger, k: &QuorumKnobs, truth: bool) -> Vote {
        let agrees = |root: u8| ledger::polarity(root, truth) == i32::from(stance);
        let grounded = k.require_grounded || k.require_evidential;
        let evidential = l
            .roots()
            .iter()
            .any(|&root| ledger::verified(root) && agrees(root));
        if stance == 0 || (grounded && l.is_empty()) || (k.require_evidential && !evidential) {
            return Vote(0);
        }
        let side = if stance > 0 { SUPPORT } else { REFUTE };
        let roots = l.roots().iter().filter(|&&root| agrees(root));
        Vote(roots.fold(side, |v, &root| {
            debug_assert!(
                u32::from(root) + ROOTS_AT < 8,
                "root ids fit the vote's bits"
            );
            v | 1 << (ROOTS_AT + u32::from(root))
        }))
    }
}

/// The votes of every stance and ledger for one run's knobs and truth.
#[derive(Clone, Copy, Debug)]
pub struct Ballot([Vote; 24]);

impl Ballot {
    pub fn new(k: &QuorumKnobs, truth: bool) -> Ballot {
        let mut table = [Vote(0); 24];
        for stance in [-1i8, 0, 1] {
            for l in Ledger::ALL {
                table[Ballot::at(stance, &l)] = Vote::of(stance, &l, k, truth);
            }
        }
        Ballot(table)
    }

    fn at(stance: i8, l: &Ledger) -> usize {
        (stance + 1) as usize * 8 + l.bits()
    }

    /// The vote of a read of a sender whose snapshot belief is `p` and
    /// ledger `l`.
    #[inline]
    pub fn vote(&self, p: f64, l: &Ledger) -> Vote {
        self.0[Ballot::at(super::metrics::side(p), l)]
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    sender: u32,
    round: u32,
    vote: Vote,
}

/// How long entries are kept. An entry older than the window can never be
/// live again (rounds only grow) and a newer read of its sender replaces it
/// anyway, so dropping it changes nothing; `KeepAll` is the literal
/// "never reset" table, kept to prove that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retention {
    Prune,
    KeepAll,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Memory {
    entries: Vec<Entry>,
}

/// Live in round r: written at r - window + 1 or later.
fn live(entry_round: u32, r: u32, window: u32) -> bool {
    entry_round as u64 + window as u64 > r as u64
}

impl Memory {
    /// Drops the entries that can no longer be live in round `r` or later:
    /// once per round, before its reads are written.
    pub fn expire(&mut self, r: u32, window: u32) {
        self.entries.retain(|e| live(e.round, r, window));
    }

    /// Records one read of `sender` in round `r`; it replaces the
    /// sender's earlier read, whatever either counts for.
    pub fn write(&mut self, sender: u32, r: u32, vote: Vote) {
        let entry = Entry {
            sender,
            round: r,
            vote,
        };
        match self.entries.iter_mut().find(|e| e.sender == sender) {
            Some(e) => *e = entry,
            None => self.entries.push(entry),
        }
    }

    /// The target belief this agent's live quorum points to in round `r`.
    pub fn target(&self, r: u32, k: &QuorumKnobs) -> f64 {
        let (mut senders, mut roots) = ([0usize; 2], [0u8; 2]);
        for e in self.entries.iter().filter(|e| live(e.round, r, k.window)) {
            let v = e.vote.0;
            if v & (SUPPORT | REFUTE) == 0 {
                continue;
            }
            let side = usize::from(v & REFUTE != 0);
            senders[side] += 1;
            roots[side] |= v >> ROOTS_AT;
        }
        let (s, f) = match k.count {
            Count::Senders => (senders[0], senders[1]),
            Count::Roots => (
                roots[0].count_ones() as usize,
                roots[1].count_ones() as usize,
            ),
        };
        let support = s >= k.threshold && k.refutation_cap.is_none_or(|c| f < c);
        let refute = f >= k.threshold;
        match (support, refute) {
            (true, false) => 0.9,
            (false, true) => 0.1,
            _ => 0.5,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cascade::ledger::{PROBE, REPORT};

    fn knobs(threshold: usize, count: Count) -> QuorumKnobs {
        QuorumKnobs {
            threshold,
            window: 3,
            require_grounded: true,
            require_evidential: false,
            refutation_cap: None,
            count,
        }
    }

    fn ledger(roots: &[u8]) -> Ledger {
        let mut l = Ledger::default();
        for &r in roots {
            l.insert(r);
        }
        l
    }

    /// A read of belief `p` and ledger `roots` as the knobs `k` count it
    /// when the claim is false.
    fn vote(k: &QuorumKnobs, p: f64, roots: &[u8]) -> Vote {
        Ballot::new(k, false).vote(p, &ledger(roots))
    }

    #[test]
    fn senders_carry_at_the_threshold_and_entries_expire_after_the_window() {
        let k = knobs(2, Count::Senders);
        let mut m = Memory::default();
        m.write(1, 1, vote(&k, 0.8, &[REPORT]));
        assert_eq!(m.target(1, &k), 0.5);
        m.write(2, 1, vote(&k, 0.9, &[REPORT]));
        assert_eq!(m.target(3, &k), 0.9, "live through r = 1 + 3 - 1");
        assert_eq!(m.target(4, &k), 0.5, "dead at r = 4");
        m.expire(3, 3);
        assert_eq!(m.len(), 2, "kept while live");
        m.expire(4, 3);
        assert!(m.is_empty(), "dropped once dead");
    }

    #[test]
    fn many_copies_of_one_report_are_one_root() {
        let (senders, roots) = (knobs(2, Count::Senders), knobs(2, Count::Roots));
        let mut m = Memory::default();
        for sender in 0..5 {
            m.write(sender, 1, vote(&senders, 0.82, &[REPORT]));
        }
        assert_eq!(m.target(1, &senders), 0.9);
        assert_eq!(m.target(1, &roots), 0.5);
    }

    #[test]
    fn a_refutation_cap_blocks_support_and_a_tie_pulls_to_the_middle() {
        let mut k = knobs(2, Count::Senders);
        let mut m = Memory::default();
        m.write(1, 1, vote(&k, 0.9, &[REPORT]));
        m.write(2, 1, vote(&k, 0.9, &[REPORT]));
        m.write(3, 1, vote(&k, 0.01, &[PROBE]));
        assert_eq!(m.target(1, &k), 0.9);
        k.refutation_cap = Some(1);
        assert_eq!(m.target(1, &k), 0.5);
        m.write(4, 1, vote(&k, 0.01, &[PROBE]));
        k.refutation_cap = None;
        assert_eq!(m.target(1, &k), 0.5, "both sides carry: deadlock");
    }

    #[test]
    fn evidential_voices_need_an_agreeing_verified_root() {
        let mut k = knobs(1, Count::Senders);
        let mut m = Memory::default();
        m.write(1, 1, vote(&k, 0.9, &[REPORT]));
        assert_eq!(m.target(1, &k), 0.9);
        k.require_evidential = true;
        let mut m = Memory::default();
        m.write(1, 1, vote(&k, 0.9, &[REPORT]));
        assert_eq!(m.target(1, &k), 0.5, "the report is not verified");
        m.write(2, 1, vote(&k, 0.01, &[PROBE, REPORT]));
        assert_eq!(m.target(1, &k), 0.1, "the probe refutes a false claim");
    }

    #[test]
    fn a_newer_read_overwrites_even_without_a_stance() {
        let k = knobs(1, Count::Senders);
        let mut m = Memory::default();
        m.write(1, 1, vote(&k, 0.9, &[REPORT]));
        m.write(1, 2, vote(&k, 0.5, &[REPORT]));
        assert_eq!(m.len(), 1);
        assert_eq!(m.target(2, &k), 0.5);
    }
}
