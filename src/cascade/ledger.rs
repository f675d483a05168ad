//! An agent's source ledger (docs/models/cascade.md §4.2): the distinct
//! roots it has heard, in the order it heard them.
//!
//! witness-engine/1 has two roots, so a ledger is one of five states:
//! empty, one root, or both in either order. The order is kept because it is
//! observable (an external policy's observation lists the roots as heard,
//! and the trust policy sums its groups in that order). One byte and a
//! lookup table make a merge, the engine's commonest step, a single load.
//! The capacity rule (at most 12 roots, a verified root displacing the
//! newest unverified one) can never apply to two roots; a version with more
//! roots needs a general ledger again (decision 132).

/// The most roots a ledger may hold; the identities check it.
pub const CAPACITY: usize = 12;

/// A root id. witness-engine/1 has two roots; the tables below are the only
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

/// The five states. An enum, not a byte, so the compiler knows every
/// table index below is in range.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
enum State {
    #[default]
    Empty,
    R,
    P,
    RP,
    PR,
}
use State::*;

const STATES: [State; 5] = [Empty, R, P, RP, PR];

/// Each state's roots, in the order heard.
const ROOTS: [&[Root]; 5] = [&[], &[REPORT], &[PROBE], &[REPORT, PROBE], &[PROBE, REPORT]];

/// `INSERT[state][root]`: the state after hearing `root` (report, probe).
const INSERT: [[State; 2]; 5] = [[R, P], [R, RP], [PR, P], [RP, RP], [PR, PR]];

/// `MERGE[mine][theirs]`: my state after hearing a message's roots in its
/// order, as inserting them one by one would leave it.
const MERGE: [[State; 5]; 5] = {
    let mut m = [[Empty; 5]; 5];
    let mut mine = 0;
    while mine < 5 {
        let mut theirs = 0;
        while theirs < 5 {
            let mut s = STATES[mine];
            let roots = ROOTS[theirs];
            let mut k = 0;
            while k < roots.len() {
                s = INSERT[s as usize][roots[k] as usize];
                k += 1;
            }
            m[mine][theirs] = s;
            theirs += 1;
        }
        mine += 1;
    }
    m
};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ledger(State);

impl Ledger {
    /// Every state a ledger can be in, in `index` order.
    pub const ALL: [Ledger; 5] = [Ledger(Empty), Ledger(R), Ledger(P), Ledger(RP), Ledger(PR)];

    /// The state's position in `ALL`, for tables indexed by ledger.
    #[inline]
    pub fn index(&self) -> usize {
        self.0 as usize
    }

    #[inline]
    pub fn roots(&self) -> &'static [Root] {
        ROOTS[self.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.roots().len()
    }

    pub fn is_empty(&self) -> bool {
        self.0 == Empty
    }

    #[inline]
    pub fn contains(&self, root: Root) -> bool {
        match root {
            REPORT => matches!(self.0, R | RP | PR),
            PROBE => matches!(self.0, P | RP | PR),
            _ => false,
        }
    }

    #[inline]
    pub fn insert(&mut self, root: Root) {
        self.0 = INSERT[self.0 as usize][(root == PROBE) as usize];
    }

    #[inline]
    pub fn merge(&mut self, other: &Ledger) {
        self.0 = MERGE[self.0 as usize][other.0 as usize];
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
        let states: Vec<Ledger> = STATES.iter().map(|&s| Ledger(s)).collect();
        for mine in &states {
            for theirs in &states {
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
        let mut seen: Vec<Vec<Root>> = STATES.iter().map(|&s| Ledger(s).roots().to_vec()).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 5);
        assert!(seen.iter().all(|s| s.len() <= CAPACITY));
    }
}
