//! The draw protocol of witness-engine/1 (docs/models/cascade.md §2): stream keys and the only
//! two draws a model may take. Models get randomness from nowhere else, so a
//! run is a pure function of its parameters on any thread count.
//!
//! The generator is Xoshiro256++ seeded through SplitMix64, written out
//! here (a dozen lines) rather than taken from `rand_xoshiro`, so seeding
//! a stream, which every agent-round does, inlines into the engine's loop.
//! A test pins both the seeding and the output to `rand_xoshiro`'s.

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
pub struct Stream([u64; 4]);

impl Stream {
    /// `Xoshiro256PlusPlus::seed_from_u64(key)`: the state is four
    /// SplitMix64 outputs from `key` (never all zero, since the finalizer
    /// is a bijection of four distinct inputs).
    #[inline]
    pub fn new(key: u64) -> Self {
        let at = |i: u64| mix(key.wrapping_add(GOLDEN_GAMMA.wrapping_mul(i)));
        Stream([at(1), at(2), at(3), at(4)])
    }

    /// The stream for `key(seed, parts...)`.
    #[inline]
    pub fn keyed(seed: u64, parts: &[u64]) -> Self {
        Self::new(key(seed, parts))
    }

    /// Xoshiro256++'s next output.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let out = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        out
    }

    /// A float in [0, 1) from the top 53 bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An integer in [0, n) by widening multiply (Lemire without rejection).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Stream tags (docs/models/cascade.md §2.3).
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
    fn streams_equal_rand_xoshiros_seeding_and_output() {
        use rand_core::{Rng, SeedableRng};
        let keys = (0..2000u64).map(|i| mix(i).wrapping_mul(i | 1)).chain([
            0,
            1,
            u64::MAX,
            GOLDEN_GAMMA.wrapping_neg(),
        ]);
        for k in keys {
            let mut theirs = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(k);
            let mut ours = Stream::new(k);
            for _ in 0..40 {
                assert_eq!(ours.next_u64(), theirs.next_u64(), "key {k}");
            }
        }
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
