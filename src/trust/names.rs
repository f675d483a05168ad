//! Compact storage and fast lookup of the scorer's text ids. A million
//! signals each with its own `String` id cost a heap block apiece (and as
//! much again to free); `Names` keeps every id of a table in one buffer
//! addressed by a dense `u32` index, and `FastMap` hashes short ids with
//! xxh3 instead of SipHash (ids come from the user's own tables, so there
//! is no adversary to resist, and lookups happen several times a signal).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Strings appended one after another, read back by their index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    text: String,
    /// End of each name in `text`; name i starts where name i - 1 ends.
    ends: Vec<u32>,
}

impl Names {
    /// Room for `names` names of about `bytes` bytes in all.
    pub fn with_capacity(names: usize, bytes: usize) -> Names {
        Names {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(names),
        }
    }

    /// Appends a name and returns its index.
    pub fn push(&mut self, name: &str) -> u32 {
        self.text.push_str(name);
        self.ends
            .push(u32::try_from(self.text.len()).expect("names under 4 GB in all (a table's ids)"));
        (self.ends.len() - 1) as u32
    }

    pub fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Heap bytes held (for memory accounting).
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity() + 4 * self.ends.capacity()
    }
}

/// A `Hasher` over xxh3: each write folds its bytes into the state as the
/// seed of the next, so a `str` (its bytes, then a terminator) hashes in
/// one short xxh3 call.
#[derive(Default)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0 = xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.0);
    }

    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` keyed by ids, hashed with `FastHasher`. Only lookups use
/// it: nothing iterates one, so its order never reaches a result.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_in_order_including_empty_ones() {
        let mut n = Names::default();
        let words = ["s0", "", "a longer id with spaces", "é", "s0"];
        let at: Vec<u32> = words.iter().map(|w| n.push(w)).collect();
        assert_eq!(at, vec![0, 1, 2, 3, 4]);
        for (i, w) in words.iter().enumerate() {
            assert_eq!(n.get(i as u32), *w);
        }
        assert_eq!(n.len(), 5);
    }

    #[test]
    fn the_fast_map_finds_what_it_holds_and_nothing_else() {
        let mut m: FastMap<&str, usize> = FastMap::default();
        let ids: Vec<String> = (0..5000).map(|i| format!("s{i}")).collect();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(m.insert(id, i), None);
        }
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(m.get(id.as_str()), Some(&i));
        }
        assert_eq!(m.get("s5000"), None);
        assert_eq!(m.get(""), None);
    }

    proptest::proptest! {
        #[test]
        fn any_names_round_trip(words in proptest::collection::vec(".{0,12}", 0..40)) {
            let mut n = Names::default();
            for w in &words {
                n.push(w);
            }
            let back: Vec<&str> = (0..n.len() as u32).map(|i| n.get(i)).collect();
            proptest::prop_assert_eq!(back, words.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }
}
