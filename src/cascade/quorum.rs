//! The `quorum` policy's private memory and count (docs/models/cascade.md §7.4): each agent
//! remembers, per sender, the stance and ledger of its latest read, and
//! moves toward a side only when enough live, filtered voices carry it.

use super::config::{Count, QuorumKnobs};
use super::ledger::{self, Ledger};

#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    sender: u32,
    round: u32,
    /// +1 support, -1 refute, 0 none.
    stance: i8,
    ledger: Ledger,
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

fn stance(p: f64) -> i8 {
    super::metrics::side(p)
}

/// Live in round r: written at r - window + 1 or later.
fn live(entry_round: u32, r: u32, window: u32) -> bool {
    entry_round as u64 + window as u64 > r as u64
}

impl Memory {
    /// Records one read of `sender` (its snapshot belief and ledger) in round `r`.
    pub fn write(
        &mut self,
        sender: u32,
        r: u32,
        p: f64,
        l: &Ledger,
        window: u32,
        retention: Retention,
    ) {
        if retention == Retention::Prune {
            self.entries.retain(|e| live(e.round, r, window));
        }
        let entry = Entry {
            sender,
            round: r,
            stance: stance(p),
            ledger: *l,
        };
        match self.entries.iter_mut().find(|e| e.sender == sender) {
            Some(e) => *e = entry,
            None => self.entries.push(entry),
        }
    }

    /// The target belief this agent's live quorum points to in round `r`.
    pub fn target(&self, r: u32, k: &QuorumKnobs, truth: bool) -> f64 {
        let grounded = k.require_grounded || k.require_evidential;
        let (mut senders, mut roots) = ([0usize; 2], [0u64; 2]);
        for e in self
            .entries
            .iter()
            .filter(|e| e.stance != 0 && live(e.round, r, k.window))
        {
            if grounded && e.ledger.is_empty() {
                continue;
            }
            let agrees = |root: u8| ledger::polarity(root, truth) == e.stance as i32;
            if k.require_evidential
                && !e
                    .ledger
                    .roots()
                    .iter()
                    .any(|&root| ledger::verified(root) && agrees(root))
            {
                continue;
            }
            let side = (e.stance < 0) as usize;
            senders[side] += 1;
            for &root in e.ledger.roots().iter().filter(|&&root| agrees(root)) {
                debug_assert!(root < 64, "root ids fit a 64-bit set");
                roots[side] |= 1 << root;
            }
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

    #[test]
    fn senders_carry_at_the_threshold_and_entries_expire_after_the_window() {
        let mut m = Memory::default();
        m.write(1, 1, 0.8, &ledger(&[REPORT]), 3, Retention::Prune);
        assert_eq!(m.target(1, &knobs(2, Count::Senders), false), 0.5);
        m.write(2, 1, 0.9, &ledger(&[REPORT]), 3, Retention::Prune);
        assert_eq!(
            m.target(3, &knobs(2, Count::Senders), false),
            0.9,
            "live through r = 1 + 3 - 1"
        );
        assert_eq!(
            m.target(4, &knobs(2, Count::Senders), false),
            0.5,
            "dead at r = 4"
        );
    }

    #[test]
    fn many_copies_of_one_report_are_one_root() {
        let mut m = Memory::default();
        for sender in 0..5 {
            m.write(sender, 1, 0.82, &ledger(&[REPORT]), 3, Retention::Prune);
        }
        assert_eq!(m.target(1, &knobs(2, Count::Senders), false), 0.9);
        assert_eq!(m.target(1, &knobs(2, Count::Roots), false), 0.5);
    }

    #[test]
    fn a_refutation_cap_blocks_support_and_a_tie_pulls_to_the_middle() {
        let mut m = Memory::default();
        m.write(1, 1, 0.9, &ledger(&[REPORT]), 3, Retention::Prune);
        m.write(2, 1, 0.9, &ledger(&[REPORT]), 3, Retention::Prune);
        m.write(3, 1, 0.01, &ledger(&[PROBE]), 3, Retention::Prune);
        let mut k = knobs(2, Count::Senders);
        assert_eq!(m.target(1, &k, false), 0.9);
        k.refutation_cap = Some(1);
        assert_eq!(m.target(1, &k, false), 0.5);
        m.write(4, 1, 0.01, &ledger(&[PROBE]), 3, Retention::Prune);
        k.refutation_cap = None;
        assert_eq!(m.target(1, &k, false), 0.5, "both sides carry: deadlock");
    }

    #[test]
    fn evidential_voices_need_an_agreeing_verified_root() {
        let mut m = Memory::default();
        m.write(1, 1, 0.9, &ledger(&[REPORT]), 3, Retention::Prune);
        let mut k = knobs(1, Count::Senders);
        assert_eq!(m.target(1, &k, false), 0.9);
        k.require_evidential = true;
        assert_eq!(m.target(1, &k, false), 0.5, "the report is not verified");
        m.write(2, 1, 0.01, &ledger(&[PROBE, REPORT]), 3, Retention::Prune);
        assert_eq!(
            m.target(1, &k, false),
            0.1,
            "the probe refutes a false claim"
        );
    }

    #[test]
    fn a_newer_read_overwrites_even_without_a_stance() {
        let mut m = Memory::default();
        m.write(1, 1, 0.9, &ledger(&[REPORT]), 3, Retention::KeepAll);
        m.write(1, 2, 0.5, &ledger(&[REPORT]), 3, Retention::KeepAll);
        assert_eq!(m.len(), 1);
        assert_eq!(m.target(2, &knobs(1, Count::Senders), false), 0.5);
    }
}
