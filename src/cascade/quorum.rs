//! The `quorum` policy's private memory and count (docs/models/cascade.md §7.4): each agent
//! remembers, per sender, what its latest read counts for, and moves toward
//! a side only when enough live, filtered voices carry it.

use super::config::{Config, Count, Policy, QuorumKnobs};
use super::graph::Graph;
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
    /// The run's ballot; a policy other than quorum never votes, so its
    /// table is left empty.
    pub fn of(cfg: &Config) -> Ballot {
        if cfg.policy == Policy::Quorum {
            Ballot::new(&cfg.quorum, cfg.truth)
        } else {
            Ballot([Vote(0); 24])
        }
    }

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

/// What an agent remembers of one neighbour: the round of its latest read
/// and what that read counts for. A neighbour is the only sender an agent
/// can read, and a newer read replaces an older one, so one slot per
/// neighbour is the whole never-reset table, with no search and nothing to
/// drop (a dead slot is skipped when counted). Round 0 comes before any
/// read, and its vote counts nothing. The round sits above the vote's 8
/// bits, so a slot is 4 bytes: memory grows with the edges.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Slot(u32);

/// The most rounds a slot can hold.
pub const MAX_ROUND: u32 = (1 << 24) - 1;

impl Slot {
    /// A read made in round `r` that counts for `vote`.
    #[inline]
    pub fn read(r: u32, vote: Vote) -> Slot {
        debug_assert!(r <= MAX_ROUND, "round {r} fits a slot");
        Slot(r << 8 | u32::from(vote.0))
    }

    fn round(self) -> u32 {
        self.0 >> 8
    }

    fn vote(self) -> u8 {
        self.0 as u8
    }
}

/// The slots of every agent of a run, one per entry of the graph's
/// neighbour lists and in their order; empty unless the policy is quorum.
pub fn memory(cfg: &Config, graph: &Graph) -> Vec<Slot> {
    if cfg.policy == Policy::Quorum {
        vec![Slot::default(); graph.edge_ends()]
    } else {
        Vec::new()
    }
}

/// Live in round r: written at r - window + 1 or later.
fn live(entry_round: u32, r: u32, window: u32) -> bool {
    entry_round as u64 + window as u64 > r as u64
}

/// The target belief that the live quorum in an agent's `slots` points to
/// in round `r`.
pub fn target(slots: &[Slot], r: u32, k: &QuorumKnobs) -> f64 {
    let (mut senders, mut roots) = ([0usize; 2], [0u8; 2]);
    for slot in slots.iter().filter(|e| live(e.round(), r, k.window)) {
        let v = slot.vote();
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

    /// An agent of five neighbours that has heard none of them yet.
    fn memory() -> [Slot; 5] {
        [Slot::default(); 5]
    }

    #[test]
    fn senders_carry_at_the_threshold_and_reads_expire_after_the_window() {
        let k = knobs(2, Count::Senders);
        let mut m = memory();
        m[1] = Slot::read(1, vote(&k, 0.8, &[REPORT]));
        assert_eq!(target(&m, 1, &k), 0.5);
        m[2] = Slot::read(1, vote(&k, 0.9, &[REPORT]));
        assert_eq!(target(&m, 3, &k), 0.9, "live through r = 1 + 3 - 1");
        assert_eq!(target(&m, 4, &k), 0.5, "dead at r = 4");
    }

    #[test]
    fn an_unheard_neighbour_counts_nothing_even_inside_the_window() {
        let mut k = knobs(1, Count::Senders);
        k.window = 1000;
        k.require_grounded = false;
        assert_eq!(target(&memory(), 1, &k), 0.5);
        assert_eq!(Slot::default().vote(), 0);
    }

    #[test]
    fn many_copies_of_one_report_are_one_root() {
        let (senders, roots) = (knobs(2, Count::Senders), knobs(2, Count::Roots));
        let mut m = memory();
        for slot in &mut m {
            *slot = Slot::read(1, vote(&senders, 0.82, &[REPORT]));
        }
        assert_eq!(target(&m, 1, &senders), 0.9);
        assert_eq!(target(&m, 1, &roots), 0.5);
    }

    #[test]
    fn a_refutation_cap_blocks_support_and_a_tie_pulls_to_the_middle() {
        let mut k = knobs(2, Count::Senders);
        let mut m = memory();
        m[0] = Slot::read(1, vote(&k, 0.9, &[REPORT]));
        m[1] = Slot::read(1, vote(&k, 0.9, &[REPORT]));
        m[2] = Slot::read(1, vote(&k, 0.01, &[PROBE]));
        assert_eq!(target(&m, 1, &k), 0.9);
        k.refutation_cap = Some(1);
        assert_eq!(target(&m, 1, &k), 0.5);
        m[3] = Slot::read(1, vote(&k, 0.01, &[PROBE]));
        k.refutation_cap = None;
        assert_eq!(target(&m, 1, &k), 0.5, "both sides carry: deadlock");
    }

    #[test]
    fn evidential_voices_need_an_agreeing_verified_root() {
        let mut k = knobs(1, Count::Senders);
        let mut m = memory();
        m[0] = Slot::read(1, vote(&k, 0.9, &[REPORT]));
        assert_eq!(target(&m, 1, &k), 0.9);
        k.require_evidential = true;
        m[0] = Slot::read(1, vote(&k, 0.9, &[REPORT]));
        assert_eq!(target(&m, 1, &k), 0.5, "the report is not verified");
        m[1] = Slot::read(1, vote(&k, 0.01, &[PROBE, REPORT]));
        assert_eq!(target(&m, 1, &k), 0.1, "the probe refutes a false claim");
    }

    #[test]
    fn every_round_a_run_may_have_fits_a_slot() {
        use crate::cascade::config::PARAMS;
        let rounds = crate::params::lookup(PARAMS, "rounds").unwrap();
        let past = toml::Value::Integer(i64::from(MAX_ROUND) + 1);
        assert!(rounds.spec(PARAMS).accept(&past).is_err());
        let slot = Slot::read(MAX_ROUND, Vote(0xff));
        assert_eq!((slot.round(), slot.vote()), (MAX_ROUND, 0xff));
    }

    #[test]
    fn grounding_and_stance_decide_whether_a_read_is_a_voice() {
        let k = knobs(1, Count::Senders);
        assert_eq!(vote(&k, 0.9, &[]), Vote(0), "no root: not grounded");
        assert_eq!(vote(&k, 0.5, &[REPORT]), Vote(0), "no stance");
        let mut free = k.clone();
        free.require_grounded = false;
        assert_eq!(vote(&free, 0.9, &[]), Vote(SUPPORT));
        assert_eq!(
            vote(&k, 0.9, &[REPORT, PROBE]),
            Vote(SUPPORT | 1 << (ROOTS_AT + u32::from(REPORT))),
            "a false claim's probe disagrees with support"
        );
    }
}
