//! hive-rooms/1's random numbers: SplitMix64 with an offset seeding (a
//! stream seeded s starts at state s + G and adds G before each draw), and
//! the few derived draws the benchmark uses. Deliberately separate from the
//! cascade's draw protocol: the published figures depend on this one.

const G: u64 = 0x9E37_79B9_7F4A_7C15;

fn finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone, Debug)]
pub struct Stream {
    state: u64,
}

impl Stream {
    pub fn new(seed: u64) -> Stream {
        Stream {
            state: seed.wrapping_add(G),
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(G);
        finalize(self.state)
    }

    /// next mod n; n = 0 gives 0 and draws nothing.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// Uniform in -s ..= s.
    pub fn centered(&mut self, s: u64) -> i64 {
        self.below(2 * s + 1) as i64 - s as i64
    }

    /// True with probability pm / 1000.
    pub fn chance(&mut self, pm: u64) -> bool {
        self.below(1000) < pm
    }
}

/// The first draw of a stream seeded a xor (b x 0xD6E8FEB86659FD93).
pub fn mix(a: u64, b: u64) -> u64 {
    Stream::new(a ^ b.wrapping_mul(0xD6E8_FEB8_6659_FD93)).next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values_of_hive_md() {
        assert_eq!(Stream::new(0).next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(mix(1, 0), 0xBEEB_8DA1_658E_EC67);
    }

    #[test]
    fn room_0_of_seed_1() {
        let s0 = mix(1, 0);
        assert_eq!(mix(s0, 0x7275_7468) % 4, 2, "the true option is revert");
        let evaluate = |k: u64| -> Vec<i64> {
            let mut st = Stream::new(mix(s0, k));
            (0..4)
                .map(|t| if t == 2 { 100 } else { 40 } + st.centered(90))
                .collect()
        };
        assert_eq!(evaluate(0), vec![-3, -19, 71, 81], "planner");
        assert_eq!(evaluate(1), vec![-11, 111, 171, 85], "critic");
        assert_eq!(evaluate(2), vec![-13, -10, 122, 94], "archivist");
        assert_eq!(evaluate(3), vec![-13, -1, 159, 43], "scout");
        assert_eq!(evaluate(4), vec![2, -6, 71, 70], "auditor");
        let prose: Vec<u64> = (0..5)
            .map(|k| Stream::new(mix(s0, 0xA11CE ^ k)).below(1000))
            .collect();
        assert_eq!(prose, vec![552, 674, 543, 237, 514]);
        assert_eq!(
            Stream::new(mix(s0, 0x726F_7574)).below(5),
            4,
            "the ladder picks the auditor"
        );
        let mut z = Stream::new(7);
        let before = z.clone().next_u64();
        assert_eq!(z.below(0), 0);
        assert_eq!(z.next_u64(), before, "below(0) draws nothing");
    }
}
