//! The four graph families of witness-engine/1 (docs/models/cascade.md §3), stored as CSR with
//! sorted neighbour lists (a message slot indexes into that order, so the
//! order is part of the model). No family's draws depend on whether an edge
//! already exists, so edges are proposed, placed into per-node lists by
//! counting, and each short list is sorted and deduplicated on its own: the
//! build is linear in the edges, not a sort of all of them.

use super::config::{Family, GraphParams};
use crate::rng::{tag, Stream};

/// Offsets are `u32`: the most edges any family can make (10 M agents,
/// 100 links each, both directions) stay below 2^32, and half the bytes is
/// half the offsets' share of a round's streaming at a million agents.
pub struct Graph {
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
}

impl Graph {
    pub fn build(seed: u64, family: Family, n: usize, gp: &GraphParams) -> Graph {
        let mut s = Stream::keyed(seed, &[tag::GRAPH, family.code()]);
        let mut edges: Vec<(u32, u32)> = Vec::with_capacity(n * 2 + n / 8);
        let mut add = |a: usize, b: usize| edges.push((a as u32, b as u32));
        for i in 0..n {
            add(i, (i + 1) % n);
        }
        match family {
            Family::Ring => {}
            Family::SmallWorld => {
                for i in 0..n {
                    add(i, (i + 2) % n);
                }
                for i in 0..n {
                    if s.unit() < gp.shortcut_prob {
                        let mut j = s.below(n as u64 - 1) as usize;
                        if j >= i {
                            j += 1;
                        }
                        add(i, j);
                    }
                }
            }
            Family::Modular => {
                let m = gp.communities;
                // ceil(c N / M): the first node whose floor(i M / N) is c.
                let start_of = |c: usize| (c * n).div_ceil(m);
                for i in 0..n {
                    let c = i * m / n;
                    let (start, end) = (start_of(c), start_of(c + 1));
                    let size = end - start;
                    for _ in 0..gp.module_links {
                        let j = if s.unit() < gp.within_prob {
                            let mut j = start + s.below(size as u64 - 1) as usize;
                            if j >= i {
                                j += 1;
                            }
                            j
                        } else {
                            let t = s.below((n - size) as u64) as usize;
                            if t < start {
                                t
                            } else {
                                t + size
                            }
                        };
                        add(i, j);
                    }
                }
            }
            Family::Hub => {
                let h = hub_count(gp.hub_fraction, n);
                let hubs: Vec<usize> = (0..h).map(|k| k * n / h).collect();
                let mut is_hub = vec![false; n];
                for &x in &hubs {
                    is_hub[x] = true;
                }
                for i in (0..n).filter(|&i| !is_hub[i]) {
                    for _ in 0..gp.hub_links {
                        add(i, hubs[s.below(h as u64) as usize]);
                    }
                }
            }
        }
        Graph::from_edges(n, &edges)
    }

    /// The simple graph of `edges` (which may repeat): each node's list by
    /// counting, then sorted and deduplicated in place and compacted.
    fn from_edges(n: usize, edges: &[(u32, u32)]) -> Graph {
        let mut offsets = vec![0usize; n + 1];
        for &(a, b) in edges {
            offsets[a as usize + 1] += 1;
            offsets[b as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut neighbours = vec![0u32; offsets[n]];
        for &(a, b) in edges {
            neighbours[fill[a as usize]] = b;
            fill[a as usize] += 1;
            neighbours[fill[b as usize]] = a;
            fill[b as usize] += 1;
        }
        // Sort and deduplicate each list, moving it down over the gaps the
        // duplicates before it left.
        let mut write = 0;
        let mut start = 0;
        for i in 0..n {
            let end = offsets[i + 1];
            neighbours[start..end].sort_unstable();
            offsets[i] = write;
            let mut last = None;
            for k in start..end {
                let v = neighbours[k];
                if last != Some(v) {
                    neighbours[write] = v;
                    write += 1;
                    last = Some(v);
                }
            }
            start = end;
        }
        offsets[n] = write;
        neighbours.truncate(write);
        let offset = |o: usize| u32::try_from(o).expect("fewer than 2^32 edge ends");
        let g = Graph {
            offsets: offsets.into_iter().map(offset).collect(),
            neighbours,
        };
        debug_assert!((0..n).all(|i| g.neighbours(i).windows(2).all(|w| w[0] < w[1])));
        g
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn neighbours(&self, i: usize) -> &[u32] {
        &self.neighbours[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Where node `i`'s list starts among all the lists (node `n` gives
    /// their total length).
    #[inline]
    pub fn offset(&self, i: usize) -> usize {
        self.offsets[i] as usize
    }

    /// Every node's list laid end to end: each edge twice.
    pub fn edge_ends(&self) -> usize {
        self.neighbours.len()
    }

    pub fn degree(&self, i: usize) -> usize {
        (self.offsets[i + 1] - self.offsets[i]) as usize
    }

    pub fn edge_count(&self) -> usize {
        self.neighbours.len() / 2
    }
}

/// The bytes a graph of `n` agents takes at its peak, for a run's memory
/// estimate (decision 150). Its build holds each proposed edge (8 bytes)
/// and both ends' list entries (8); the built graph and the quorum memory
/// hold 4 bytes an edge end each. 24 bytes a proposed edge covers either
/// moment (measured: 100,000 agents of a modular graph of 100 links peak
/// at 166 MB).
pub fn peak_bytes(family: Family, n: usize, gp: &GraphParams) -> u64 {
    proposed_edges(family, n, gp).saturating_mul(24)
}

/// The most edges `Graph::build` proposes for `n` agents (a small world
/// proposes a shortcut per agent at most), before duplicates are dropped:
/// what the build holds at its peak.
pub fn proposed_edges(family: Family, n: usize, gp: &GraphParams) -> u64 {
    let hubs = hub_count(gp.hub_fraction, n) as u64;
    let n = n as u64;
    n + match family {
        Family::Ring => 0,
        Family::SmallWorld if gp.shortcut_prob > 0.0 => 2 * n,
        Family::SmallWorld => n,
        Family::Modular => n * gp.module_links as u64,
        Family::Hub => (n - hubs) * gp.hub_links as u64,
    }
}

/// H = max(1, round(hub_fraction * N)), rounding half away from zero.
pub fn hub_count(hub_fraction: f64, n: usize) -> usize {
    ((hub_fraction * n as f64).round() as usize).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dropping duplicates only removes edges; the dense graphs make
    /// duplicates, and the small world proposes fewer shortcuts than its
    /// bound, so the count is an upper bound, not an equality.
    #[test]
    fn a_built_graph_has_at_most_its_proposed_edges() {
        let dense = GraphParams {
            module_links: 100,
            hub_links: 100,
            communities: 40,
            hub_fraction: 0.01,
            shortcut_prob: 0.5,
            ..GraphParams::default()
        };
        for (gp, sparse) in [(GraphParams::default(), true), (dense, false)] {
            for family in [
                Family::Ring,
                Family::SmallWorld,
                Family::Modular,
                Family::Hub,
            ] {
                let n = 3000;
                let g = Graph::build(11, family, n, &gp);
                let proposed = proposed_edges(family, n, &gp);
                assert!(
                    g.edge_count() as u64 <= proposed,
                    "{family:?}: {} edges built, {proposed} proposed",
                    g.edge_count()
                );
                // Sparse graphs repeat few edges, so the bound is close (a
                // small world of shortcut probability p holds about
                // (2 + p) / 3 of it); dense ones can repeat most.
                if sparse {
                    assert!(g.edge_count() as u64 * 10 >= proposed * 6, "{family:?}");
                }
            }
        }
    }

    #[test]
    fn every_family_is_simple_and_contains_the_ring() {
        let gp = GraphParams::default();
        for family in [
            Family::Ring,
            Family::SmallWorld,
            Family::Modular,
            Family::Hub,
        ] {
            for n in [3usize, 4, 10, 57] {
                let n = if family == Family::Modular {
                    n.max(10)
                } else {
                    n
                };
                let g = Graph::build(7, family, n, &gp);
                for i in 0..n {
                    let nb = g.neighbours(i);
                    assert!(!nb.contains(&(i as u32)), "{family:?} self-loop at {i}");
                    assert!(
                        nb.contains(&(((i + 1) % n) as u32)),
                        "{family:?} ring edge missing"
                    );
                    for &j in nb {
                        assert!(g.neighbours(j as usize).contains(&(i as u32)), "asymmetric");
                    }
                }
            }
        }
    }
}
