//! An agent's source ledger (docs/models/cascade.md §4.2): the distinct
//! roots it has heard, in the order it heard them.
//!
//! witness-engine/1 has two roots, so a ledger is one of five states:
//! empty, one root, or both in either order. The order is kept because it is
//! observable (an external policy's observation lists the roots as heard,
//! and the trust policy sums its groups in that order). A state is three
//! bits: one per root held, and whether the probe came first. Hearing a
//! message keeps my order when I hold a root and takes the message's when I
//! hold none, so a merge, the engine's commonest step, is an `or` behind a
//! select rather than a load. The capacity rule (at most 12 roots, a
//! verified root displacing the newest unverified one) can never apply to
//! two roots; a version with more roots needs a general ledger again
//! (decision 132).

/// The most roots a ledger may hold; the identities check it.
pub const CAPACITY: usize = 12;

/// A root id. witness-engine/1 has two roots; the bits below are the only
/// place that knows them.
pub type Root = u8;
pub const REPORT: Root = 0;
pub const PROBE: Root = 1;

pub fn name(root: Root) -> &'static str {
    ["report:0", "probe:0"][root as usize]
}

pub fn verified(root: Root) -> bool {
    root == PROBE
}

/// +1 for the success report; the probe agrees with the truth.
pub fn polarity(root: Root, truth: bool) -> i32 {
    if root == REPORT || truth {
        1
    } else {
        -1
    }
}

const HAS_REPORT: u8 = 1;
const HAS_PROBE: u8 = 2;
const ROOTS_HELD: u8 = HAS_REPORT | HAS_PROBE;
/// Set when the first root heard was the probe.
const PROBE_FIRST: u8 = 4;

/// The ledger holding only `root`.
const fn single(root: Root) -> u8 {
    if root == PROBE {
        HAS_PROBE | PROBE_FIRST
    } else {
        HAS_REPORT
    }
}

/// The roots of each state, in the order heard, indexed by its bits.
/// (Bits 4 and 5 never occur: the probe-first bit comes with the probe.)
const ROOTS: [&[Root]; 8] = [
    &[],
    &[REPORT],
    &[],
    &[REPORT, PROBE],
    &[],
    &[],
    &[PROBE],
    &[PROBE, REPORT],
];

/// Only `single` and `merge` make a state, so the bits are always one of
/// the five states.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ledger(u8);

impl Ledger {
    /// Every state a ledger can be in, in `index` order.
    pub const ALL: [Ledger; 5] = [
        Ledger(0),
        Ledger(HAS_REPORT),
        Ledger(HAS_PROBE | PROBE_FIRST),
        Ledger(ROOTS_HELD),
        Ledger(ROOTS_HELD | PROBE_FIRST),
    ];

    /// The state's bits, below 8: an index for tables of one entry per
    /// bit pattern (see `ALL` for the patterns that occur).
    #[inline]
    pub fn bits(&self) -> usize {
        usize::from(self.0 & 7)
    }

    #[inline]
    pub fn roots(&self) -> &'static [Root] {
        ROOTS[self.bits()]
    }

    #[inline]
    pub fn len(&self) -> usize {
        (self.0 & ROOTS_HELD).count_ones() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    #[inline]
    pub fn contains(&self, root: Root) -> bool {
        match root {
            REPORT => self.0 & HAS_REPORT != 0,
            PROBE => self.0 & HAS_PROBE != 0,
            _ => false,
        }
    }

    #[inline]
    pub fn insert(&mut self, root: Root) {
        self.merge(&Ledger(single(root)));
    }

    /// Hears a message's roots in its order: my roots keep their order and
    /// new ones follow; with none of my own, I take the message's order.
    #[inline]
    pub fn merge(&mut self, other: &Ledger) {
        self.0 = if self.0 == 0 {
            other.0
        } else {
            self.0 | (other.0 & ROOTS_HELD)
        };
    }

    /// Root names sorted, as exports list them.
    pub fn sorted_names(&self) -> Vec<&'static str> {
        let mut v: Vec<&str> = self.roots().iter().map(|&r| name(r)).collect();
        v.sort_unstable();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general rule the tables stand for: distinct roots in the order
    /// heard, inserting a message's roots one by one.
    fn by_rule(mut mine: Vec<Root>, theirs: &[Root]) -> Vec<Root> {
        for &r in theirs {
            if !mine.contains(&r) {
                mine.push(r);
            }
        }
        mine
    }

    #[test]
    fn duplicates_are_ignored_and_order_is_insertion_order() {
        let mut l = Ledger::default();
        l.insert(PROBE);
        l.insert(REPORT);
        l.insert(PROBE);
        assert_eq!(l.roots(), &[PROBE, REPORT]);
        assert_eq!(l.sorted_names(), vec!["probe:0", "report:0"]);
    }

    #[test]
    fn every_merge_equals_inserting_the_roots_in_order() {
        for mine in &Ledger::ALL {
            for theirs in &Ledger::ALL {
                let mut m = *mine;
                m.merge(theirs);
                assert_eq!(
                    m.roots(),
                    by_rule(mine.roots().to_vec(), theirs.roots()).as_slice(),
                    "{mine:?} + {theirs:?}"
                );
                let mut one_by_one = *mine;
                for &r in theirs.roots() {
                    one_by_one.insert(r);
                }
                assert_eq!(m, one_by_one);
            }
        }
    }

    #[test]
    fn every_state_is_reachable_and_distinct() {
        let mut seen: Vec<Vec<Root>> = Ledger::ALL.iter().map(|l| l.roots().to_vec()).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 5);
        assert!(seen.iter().all(|s| s.len() <= CAPACITY));
        // Every state is closed under insert and merge: no other bits occur.
        for l in Ledger::ALL {
            for m in Ledger::ALL {
                let mut x = l;
                x.merge(&m);
                assert!(Ledger::ALL.contains(&x), "{l:?} + {m:?} = {x:?}");
                assert_eq!(x.len(), x.roots().len());
            }
            for r in [REPORT, PROBE] {
                let mut x = l;
                x.insert(r);
                assert!(Ledger::ALL.contains(&x));
            }
        }
    }
}
