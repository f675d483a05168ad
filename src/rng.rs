//! The draw protocol of witness-engine/1 section 2: stream keys and the only
//! two draws a model may take. Models get randomness from nowhere else, so a
//! run is a pure function of its parameters on any thread count.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 finalizer.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `key(seed, parts...)`: folds each part into the mixed seed, in order.
pub fn key(seed: u64, parts: &[u64]) -> u64 {
    parts.iter().fold(mix(seed), |h, &x| extend(h, x))
}

/// One more part of a key: `key(seed, a, b) == extend(key(seed, a), b)`, so
/// callers can hoist a prefix shared by many streams (a round's agents).
#[inline]
pub fn extend(h: u64, part: u64) -> u64 {
    mix(h ^ part.wrapping_add(GOLDEN_GAMMA))
}

/// One named random stream. Deliberately exposes only `unit` and `below`:
/// `rand`'s own sampling algorithms change between versions.
pub struct Stream(Xoshiro256PlusPlus);

impl Stream {
    pub fn new(key: u64) -> Self {
        Stream(Xoshiro256PlusPlus::seed_from_u64(key))
    }

    /// The stream for `key(seed, parts...)`.
    pub fn keyed(seed: u64, parts: &[u64]) -> Self {
        Self::new(key(seed, parts))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A float in [0, 1) from the top 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An integer in [0, n) by widening multiply (Lemire without rejection).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Stream tags of section 2.
pub mod tag {
    pub const GRAPH: u64 = 1;
    pub const EXPOSURE: u64 = 2;
    pub const AGENT_ROUND: u64 = 3;
    pub const CORRECTION: u64 = 4;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_and_key_of_zero_are_zero() {
        assert_eq!(mix(0), 0);
        assert_eq!(key(0, &[]), 0);
    }

    #[test]
    fn extending_a_key_equals_keying_with_the_longer_list() {
        assert_eq!(extend(key(42, &[3, 0, 1]), 7), key(42, &[3, 0, 1, 7]));
    }

    #[test]
    fn unit_stays_below_one_and_below_stays_below_n() {
        let mut s = Stream::keyed(9, &[1, 2]);
        for n in 1..200u64 {
            assert!(s.below(n) < n);
            let u = s.unit();
            assert!((0.0..1.0).contains(&u));
        }
    }
}
