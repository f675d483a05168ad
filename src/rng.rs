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
#[inline]
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
        unit_of(self.next_u64())
    }

    /// An integer in [0, n) by widening multiply (Lemire without rejection).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        below_of(self.next_u64(), n)
    }
}

/// `unit`'s float of one output; `Drawn` shares it, so a draw is the same
/// number whichever way its output was computed.
#[inline]
fn unit_of(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[inline]
fn below_of(x: u64, n: u64) -> u64 {
    ((x as u128 * n as u128) >> 64) as u64
}

/// How many consecutive streams `Batch::fill` seeds at once.
pub const LANES: usize = 16;
/// How many outputs of each stream a batch holds: enough for every
/// agent-round of the built-in policies (a check draw and four reads).
pub const FIRST: usize = 5;

/// The first `FIRST` outputs of the streams `extend(prefix, first + l)`
/// for the `LANES` lanes l, stored output by output. Seeding many streams
/// side by side lets the compiler run them in vector registers, which the
/// one-stream-at-a-time path cannot; the integers are the same either way.
pub struct Batch([[u64; LANES]; FIRST]);

impl Batch {
    pub fn new() -> Batch {
        Batch([[0; LANES]; FIRST])
    }

    pub fn fill(&mut self, prefix: u64, first: u64) {
        self.fill_checked(Kernel::best(), prefix, first);
    }

    /// `fill` on a chosen kernel; public so the `engine` bench can time every
    /// kernel the CPU has. A kernel the CPU lacks runs as `Portable`.
    #[doc(hidden)]
    pub fn fill_on(&mut self, kernel: Kernel, prefix: u64, first: u64) {
        let kernel = if kernel.available() {
            kernel
        } else {
            Kernel::Portable
        };
        self.fill_checked(kernel, prefix, first);
    }

    /// `kernel` must be available on this CPU.
    #[inline]
    fn fill_checked(&mut self, kernel: Kernel, prefix: u64, first: u64) {
        match kernel {
            // SAFETY: callers pass only kernels whose features the CPU has.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => unsafe { fill_avx512(&mut self.0, prefix, first) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { fill_avx2(&mut self.0, prefix, first) },
            _ => fill_lanes(&mut self.0, prefix, first),
        }
    }

    /// Lane `l`'s stream, to be drawn from in order.
    #[inline]
    pub fn lane(&self, l: usize) -> Drawn {
        Drawn {
            out: std::array::from_fn(|k| self.0[k][l]),
            at: 0,
        }
    }
}

impl Default for Batch {
    fn default() -> Batch {
        Batch::new()
    }
}

/// The compiled versions of the batch loop; each gives the same integers.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Eight lanes per register and 64-bit vector multiplies (AVX-512DQ).
    Avx512,
    /// Four lanes per register; each 64-bit multiply is built from three
    /// 32-bit ones, which still beats one lane at a time.
    Avx2,
    /// Whatever the compiler makes of the loop for the baseline CPU.
    Portable,
}

impl Kernel {
    pub const ALL: [Kernel; 3] = [Kernel::Avx512, Kernel::Avx2, Kernel::Portable];

    /// The fastest kernel this CPU has. The feature checks are cached by the
    /// standard library, so asking once per batch costs a load.
    pub fn best() -> Kernel {
        Kernel::ALL
            .into_iter()
            .find(|p| p.available())
            .unwrap_or(Kernel::Portable)
    }

    pub fn available(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            match self {
                Kernel::Avx512 => has!("avx512f") && has!("avx512dq"),
                Kernel::Avx2 => has!("avx2"),
                Kernel::Portable => true,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Kernel::Portable
        }
    }
}

/// 64-bit vector multiplies arrive with AVX-512DQ.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn fill_avx512(out: &mut [[u64; LANES]; FIRST], prefix: u64, first: u64) {
    fill_lanes(out, prefix, first)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fill_avx2(out: &mut [[u64; LANES]; FIRST], prefix: u64, first: u64) {
    fill_lanes(out, prefix, first)
}

/// `Stream::new(extend(prefix, first + l))` and its first outputs, each
/// step written as a loop over the lanes so it compiles to vector code.
#[inline(always)]
fn fill_lanes(out: &mut [[u64; LANES]; FIRST], prefix: u64, first: u64) {
    let mut key = [0; LANES];
    for (l, k) in key.iter_mut().enumerate() {
        *k = extend(prefix, first.wrapping_add(l as u64));
    }
    let mut s = [[0; LANES]; 4];
    for (w, lanes) in s.iter_mut().enumerate() {
        let step = GOLDEN_GAMMA.wrapping_mul(w as u64 + 1);
        for l in 0..LANES {
            lanes[l] = mix(key[l].wrapping_add(step));
        }
    }
    let [mut s0, mut s1, mut s2, mut s3] = s;
    for row in out.iter_mut() {
        for l in 0..LANES {
            row[l] = s0[l]
                .wrapping_add(s3[l])
                .rotate_left(23)
                .wrapping_add(s0[l]);
            let t = s1[l] << 17;
            s2[l] ^= s0[l];
            s3[l] ^= s1[l];
            s1[l] ^= s2[l];
            s0[l] ^= s3[l];
            s2[l] ^= t;
            s3[l] = s3[l].rotate_left(45);
        }
    }
}

/// One lane of a `Batch`: the stream's first outputs, drawn in order with
/// the same conversions as `Stream`.
pub struct Drawn {
    out: [u64; FIRST],
    at: usize,
}

impl Drawn {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        let x = self.out[self.at];
        self.at += 1;
        x
    }

    #[inline]
    pub fn unit(&mut self) -> f64 {
        unit_of(self.next_u64())
    }

    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        below_of(self.next_u64(), n)
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
    fn a_batch_holds_each_streams_first_outputs() {
        for (prefix, first) in [(0, 0), (key(7, &[3, 0, 1]), 240), (u64::MAX, u64::MAX - 3)] {
            let mut portable = [[0; LANES]; FIRST];
            fill_lanes(&mut portable, prefix, first);
            for path in Kernel::ALL {
                let mut b = Batch::new();
                b.fill_on(path, prefix, first);
                assert_eq!(b.0, portable, "{path:?}");
            }
            let mut vector = Batch::new();
            vector.fill(prefix, first);
            assert_eq!(vector.0, portable);
            for l in 0..LANES {
                let mut s = Stream::new(extend(prefix, first.wrapping_add(l as u64)));
                let mut d = vector.lane(l);
                assert_eq!(d.unit(), s.unit());
                for n in [1, 4, 1000, u64::MAX] {
                    assert_eq!(d.below(n), s.below(n), "lane {l}");
                }
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
