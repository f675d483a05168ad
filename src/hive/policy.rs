//! What a room runs under (hive-rooms/1 "Outcomes, arms and the grid"): the
//! mechanism (ladder, vote or a hive), the presets of the `hive` and
//! `hive+` arms for n members, and the knobs a manifest may override.

use super::fold::Policy;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mechanism {
    Ladder,
    Vote,
    Hive,
}

/// The engine's knobs for one room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoomPolicy {
    pub budget: u64,
    pub blind: bool,
    /// A share is dominant above this percentage of all shares.
    pub dominance: u64,
    /// Supports of a topic with this many counted supporters add no salience.
    pub repetition: u32,
    pub fold: Policy,
}

/// The `hive` arm: budget 12, dominance 50, repetition 3, threshold 2.
pub fn hive(_n: usize) -> RoomPolicy {
    RoomPolicy {
        budget: 12,
        blind: true,
        dominance: 50,
        repetition: 3,
        fold: Policy {
            threshold: 2,
            window: 100,
            require_grounded: true,
            require_evidential: false,
            refutation_cap: None,
        },
    }
}

/// The `hive+` arm: budget max(3n, 6), dominance 40, repetition 2,
/// threshold max(min(n/2 + 1, n - 1), 2).
pub fn hive_plus(n: usize) -> RoomPolicy {
    RoomPolicy {
        budget: (3 * n as u64).max(6),
        blind: true,
        dominance: 40,
        repetition: 2,
        fold: Policy {
            threshold: (n / 2 + 1).min(n - 1).max(2),
            window: 100,
            require_grounded: true,
            require_evidential: false,
            refutation_cap: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_for_five_members() {
        let p = hive_plus(5);
        assert_eq!((p.budget, p.fold.threshold), (15, 3));
        assert_eq!(hive_plus(2).fold.threshold, 2, "never below 2");
        assert_eq!(hive_plus(8).fold.threshold, 5);
        assert_eq!(hive_plus(2).budget, 6);
        assert_eq!(hive(5).budget, 12);
    }
}
