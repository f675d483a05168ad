//! An agent's source ledger (docs/models/cascade.md §4.2): distinct roots in insertion order,
//! at most 12, where a verified root may displace the newest unverified one.
//! Roots are small ids so a ledger is 13 bytes and copies cheaply between the
//! two round buffers.

pub const CAPACITY: usize = 12;

/// A root id. witness-engine/1 has two roots; the table below is the only
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

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    len: u8,
    roots: [Root; CAPACITY],
}

impl Ledger {
    pub fn roots(&self) -> &[Root] {
        &self.roots[..self.len as usize]
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A plain loop: `<[u8]>::contains` calls out to memchr, which costs more
    /// than scanning a dozen bytes.
    #[inline]
    #[allow(clippy::manual_contains)] // measured: memchr is slower here
    pub fn contains(&self, root: Root) -> bool {
        self.roots().iter().any(|&r| r == root)
    }

    pub fn insert(&mut self, root: Root) {
        if self.contains(root) {
            return;
        }
        let n = self.len as usize;
        if n < CAPACITY {
            self.roots[n] = root;
            self.len += 1;
        } else if verified(root) {
            if let Some(k) = self.roots().iter().rposition(|&r| !verified(r)) {
                self.roots.copy_within(k + 1..n, k);
                self.roots[n - 1] = root;
            }
        }
    }

    /// Most messages carry nothing new (an empty ledger, or the reader's own
    /// roots), so those cases return before scanning.
    #[inline]
    pub fn merge(&mut self, other: &Ledger) {
        if other.len == 0 || other == self {
            return;
        }
        for &r in other.roots() {
            self.insert(r);
        }
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
    fn a_full_ledger_lets_a_verified_root_displace_the_newest_unverified() {
        // Only reachable with more roots than this version has; build it by hand.
        let mut l = Ledger {
            len: CAPACITY as u8,
            roots: [REPORT; CAPACITY],
        };
        l.roots[5] = 7; // a stand-in unverified root, the newest is at 11
        l.insert(PROBE);
        assert_eq!(l.len(), CAPACITY);
        assert_eq!(l.roots()[CAPACITY - 1], PROBE);
        assert_eq!(l.roots()[5], 7);
        let before = l;
        l.insert(9); // unverified into a full ledger is dropped
        assert_eq!(l, before);
    }
}
