//! One room of the benchmark (hive-rooms/1 "A room"): its options, its true
//! option, the members with their private evaluations and favourites, and
//! each member's prose stream. Everything here is drawn from the room's
//! seed, so every arm and grid policy replays the same rooms.

use super::rng::{mix, Stream};

pub const OPTIONS: [&str; 8] = [
    "stage", "ship", "revert", "shadow", "canary", "freeze", "split", "pilot",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Proposer,
    Critic,
    Archivist,
}

pub const MEMBERS: [(&str, Role); 8] = [
    ("planner", Role::Proposer),
    ("critic", Role::Critic),
    ("archivist", Role::Archivist),
    ("scout", Role::Proposer),
    ("auditor", Role::Critic),
    ("historian", Role::Archivist),
    ("builder", Role::Proposer),
    ("reviewer", Role::Critic),
];

pub const MAX_MEMBERS: usize = 8;

/// Salt of the true option's draw ("ruth").
const TRUTH: u64 = 0x7275_7468;
/// Salt of the prose streams.
const PROSE: u64 = 0xA11CE;
/// Salt of the ladder's pick ("rout").
const LADDER: u64 = 0x726F_7574;

#[derive(Clone, Debug)]
pub struct Room {
    pub seed: u64,
    pub topics: usize,
    pub members: usize,
    pub truth: u8,
    /// evaluation[member][option].
    pub evaluation: [[i64; 8]; MAX_MEMBERS],
    pub favourite: [u8; MAX_MEMBERS],
}

impl Room {
    /// Room `episode` of a run seeded `seed`.
    pub fn new(seed: u64, episode: u64, members: usize, topics: usize, noise: u64) -> Room {
        let s = mix(seed, episode);
        let truth = (mix(s, TRUTH) % topics as u64) as u8;
        let mut evaluation = [[0; 8]; MAX_MEMBERS];
        let mut favourite = [0; MAX_MEMBERS];
        for k in 0..members {
            let mut draws = Stream::new(mix(s, k as u64));
            for (t, e) in evaluation[k][..topics].iter_mut().enumerate() {
                let base = if t == truth as usize { 100 } else { 40 };
                *e = base + draws.centered(noise);
            }
            // The last of equal maxima.
            favourite[k] = (0..topics)
                .max_by_key(|&t| evaluation[k][t])
                .map_or(0, |t| t as u8);
        }
        Room {
            seed: s,
            topics,
            members,
            truth,
            evaluation,
            favourite,
        }
    }

    /// A fresh copy of member k's prose stream.
    pub fn prose(&self, k: usize) -> Stream {
        Stream::new(mix(self.seed, PROSE ^ k as u64))
    }

    pub fn role(&self, k: usize) -> Role {
        MEMBERS[k].1
    }

    /// The ladder: one member, picked by a fresh stream, answers its favourite.
    pub fn ladder(&self) -> u8 {
        let k = Stream::new(mix(self.seed, LADDER)).below(self.members as u64);
        self.favourite[k as usize]
    }

    /// The vote: turn t votes the favourite of member t mod n; plurality,
    /// and among tied options the one that first appeared latest.
    pub fn vote(&self, budget: u64) -> u8 {
        let mut seen: Vec<(u8, u64)> = Vec::with_capacity(self.topics);
        for t in 0..budget {
            let f = self.favourite[(t % self.members as u64) as usize];
            match seen.iter_mut().find(|(o, _)| *o == f) {
                Some((_, n)) => *n += 1,
                None => seen.push((f, 1)),
            }
        }
        // max_by_key keeps the last maximum: the latest first appearance.
        seen.iter().max_by_key(|(_, n)| *n).map_or(0, |(o, _)| *o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_0_of_seed_1_matches_hive_md() {
        let r = Room::new(1, 0, 5, 4, 90);
        assert_eq!(OPTIONS[r.truth as usize], "revert");
        assert_eq!(r.evaluation[0][..4], [-3, -19, 71, 81]);
        assert_eq!(r.evaluation[4][..4], [2, -6, 71, 70]);
        assert_eq!(
            r.favourite[..5],
            [3, 2, 2, 2, 2],
            "planner shadow, others revert"
        );
        let first: Vec<u64> = (0..5).map(|k| r.prose(k).below(1000)).collect();
        assert_eq!(first, vec![552, 674, 543, 237, 514]);
        assert_eq!(r.ladder(), 2, "the auditor answers revert");
    }

    #[test]
    fn favourites_take_the_last_maximum_and_votes_the_latest_tie() {
        let mut r = Room::new(1, 0, 2, 4, 0);
        assert_eq!(r.favourite[0], r.truth, "no noise: the true option");
        r.favourite[0] = 1;
        r.favourite[1] = 3;
        assert_eq!(r.vote(4), 3, "2 votes each: 3 first appeared later");
        assert_eq!(r.vote(3), 1, "2 against 1");
    }
}
