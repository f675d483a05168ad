//! One round of the built-in policies (docs/models/cascade.md §5): the two
//! buffers neighbours read, each agent's own state kept in place, and the
//! per-agent step, compiled once per kind of policy.

use super::belief::{clip, CheckRule, LedgerBeliefs};
use super::config::{Config, Policy};
use super::engine::{ground, request_check, Agent, CHUNK, NOT_PENDING, SLOTS};
use super::graph::Graph;
use super::ledger::Ledger;
use super::metrics::{Counters, Tally};
use super::quorum::{self, Ballot, Slot};
use crate::math;
use crate::rng::{Batch, Drawn, LANES};

/// What neighbours read, one buffer per snapshot.
#[derive(Clone)]
pub(super) struct Shared {
    pub p: Vec<f64>,
    pub ledger: Vec<Ledger>,
}

/// An agent's own state, updated in place: no other agent reads it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Own {
    pub pending: u32,
    pub requested: u32,
    pub checked: bool,
    /// A correction grounded the agent this round: its state is already in
    /// the buffer being written, not in the snapshot.
    pub corrected: bool,
}

impl Own {
    pub fn of(a: &Agent) -> Own {
        Own {
            pending: a.pending,
            requested: a.requested,
            checked: a.checked,
            corrected: false,
        }
    }

    pub fn agent(&self, p: f64, ledger: Ledger) -> Agent {
        Agent {
            p,
            pending: self.pending,
            requested: self.requested,
            ledger,
            checked: self.checked,
        }
    }

    pub fn store(&mut self, a: &Agent) {
        self.pending = a.pending;
        self.requested = a.requested;
        self.checked = a.checked;
    }
}

impl Shared {
    pub fn of(agents: &[Agent]) -> Shared {
        Shared {
            p: agents.iter().map(|a| a.p).collect(),
            ledger: agents.iter().map(|a| a.ledger).collect(),
        }
    }
}

/// Agent `i` as round `r` starts: corrected this round, or as the snapshot left it.
pub(super) fn current(i: usize, prev: &Shared, next: &Shared, own: &Own) -> Agent {
    if own.corrected {
        own.agent(next.p[i], next.ledger[i])
    } else {
        own.agent(prev.p[i], prev.ledger[i])
    }
}

/// What every agent of round `r` shares: the snapshot it reads and the
/// prefix `key(seed, 3, replicate, r)` of each agent's stream key.
pub(super) struct Round<'a> {
    pub r: u32,
    pub key: u64,
    pub cfg: &'a Config,
    pub check: CheckRule,
    pub graph: &'a Graph,
    pub p: &'a [f64],
    pub ledger: &'a [Ledger],
    pub beliefs: &'a LedgerBeliefs,
    pub ballot: &'a Ballot,
}

/// The policies the round loop is compiled for, one copy each, so no
/// agent-round asks which policy it runs.
const ENDORSEMENT: u8 = 0;
const LEDGER_ONLY: u8 = 1;
const QUORUM: u8 = 2;

/// The slots of one chunk of agents in the next buffer, with their own
/// state and quorum memory.
pub(super) type Chunk<'b> = (
    ((&'b mut [f64], &'b mut [Ledger]), &'b mut [Own]),
    &'b mut [Slot],
);

/// Each chunk's share of the quorum memory, in chunk order: the slots of
/// its agents' neighbour lists, or nothing when nothing is remembered. An
/// iterator, so a round of a small run allocates nothing for it.
pub(super) fn memory_chunks<'m>(
    memory: &'m mut [Slot],
    graph: &'m Graph,
    n: usize,
) -> impl Iterator<Item = &'m mut [Slot]> + 'm {
    let remembered = !memory.is_empty();
    let mut rest = memory;
    (0..n.div_ceil(CHUNK)).map(move |c| {
        let len = if remembered {
            graph.offset(((c + 1) * CHUNK).min(n)) - graph.offset(c * CHUNK)
        } else {
            0
        };
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(len);
        rest = tail;
        head
    })
}

impl Round<'_> {
    /// Runs chunk `c` of agents: their moves, and the tally of the state
    /// they end the round in.
    pub fn chunk(&self, c: usize, chunk: Chunk) -> (Counters, Tally) {
        match self.cfg.policy {
            Policy::Endorsement => self.chunk_as::<ENDORSEMENT>(c, chunk),
            Policy::SourceAware | Policy::Reserved | Policy::Trust => {
                self.chunk_as::<LEDGER_ONLY>(c, chunk)
            }
            Policy::Quorum => self.chunk_quorum(c, chunk),
            Policy::External => unreachable!("external rounds are asked, not computed"),
        }
    }

    /// The quorum policy's chunk, compiled on its own: inlined beside the
    /// other policies, its larger step changed how the compiler laid out
    /// theirs (2 % more instructions on the sweep, which has no quorum arm).
    #[inline(never)]
    fn chunk_quorum(&self, c: usize, chunk: Chunk) -> (Counters, Tally) {
        self.chunk_as::<QUORUM>(c, chunk)
    }

    fn chunk_as<const K: u8>(&self, c: usize, (((p, l), o), mem): Chunk) -> (Counters, Tally) {
        let mut d = Counters::default();
        let mut t = Tally::default();
        // Agent i's slots start at its offset in the neighbour lists, less
        // the chunk's first.
        let base = if K == QUORUM {
            self.graph.offset(c * CHUNK)
        } else {
            0
        };
        // The agents' streams are seeded a batch at a time (see `Batch`).
        let mut batch = Batch::new();
        for k in 0..p.len() {
            let i = c * CHUNK + k;
            if k % LANES == 0 {
                batch.fill(self.key, i as u64);
            }
            let draws = batch.lane(k % LANES);
            let at = (&mut *mem, base);
            self.act::<K>((i, draws), &mut o[k], &mut p[k], &mut l[k], at, &mut d);
            t.add(i, p[k], &l[k], o[k].checked, o[k].pending);
        }
        // Every agent either requested a check (counted as it did) or read
        // its four slots; counting the reads here keeps two counters out of
        // the loop.
        let reads = p.len() as u64 - d.requested;
        d.messages += SLOTS as u64 * reads;
        d.effort += SLOTS as u64 * reads;
        (d, t)
    }

    /// Agent `i`'s round, drawing from its stream: its state is loaded
    /// (corrected in step 1, or from the snapshot), stepped, and written to
    /// its slots of the next buffer.
    #[inline]
    fn act<const K: u8>(
        &self,
        (i, draws): (usize, Drawn),
        own: &mut Own,
        p: &mut f64,
        ledger: &mut Ledger,
        memory: (&mut [Slot], usize),
        d: &mut Counters,
    ) {
        let mut a = if own.corrected {
            own.corrected = false;
            own.agent(*p, *ledger)
        } else {
            own.agent(self.p[i], self.ledger[i])
        };
        self.step::<K>(i, draws, &mut a, memory, d);
        (*p, *ledger) = (a.p, a.ledger);
        own.store(&a);
    }

    /// Steps 2 and 3 for agent `i`, whose own state is `a`; messages come
    /// from the snapshot.
    #[inline]
    fn step<const K: u8>(
        &self,
        i: usize,
        mut s: Drawn,
        a: &mut Agent,
        (memory, base): (&mut [Slot], usize),
        d: &mut Counters,
    ) {
        let Round { r, cfg, graph, .. } = *self;
        if a.pending == r {
            a.pending = NOT_PENDING;
            ground(a, cfg.truth);
            d.completed += 1;
        }
        if !a.checked && a.pending == NOT_PENDING {
            let u = s.unit();
            if u < self.check.probability(a.p) {
                request_check(cfg, a, r, d);
                return;
            }
        }
        let nb = graph.neighbours(i);
        if K == QUORUM {
            return self.hear_and_count(i, a, &mut s, nb, (memory, base));
        }
        // Who was heard; their beliefs are loaded only if this agent's
        // belief moves (a checked agent only merges ledgers), which at a
        // million agents saves most loads from the largest array.
        let mut heard = [0usize; SLOTS];
        for h in heard.iter_mut() {
            let j = nb[s.below(nb.len() as u64) as usize] as usize;
            *h = j;
            a.ledger.merge(&self.ledger[j]);
        }
        if a.checked {
            return;
        }
        a.p = match K {
            ENDORSEMENT => {
                let [p0, p1, p2, p3] = heard.map(|j| self.p[j]);
                let m = (((p0 + p1) + p2) + p3) / 4.0;
                let social = 1.0 / (1.0 + math::exp(-cfg.gain * (m - 0.5)));
                clip(0.55 * a.p + 0.45 * social)
            }
            LEDGER_ONLY => self.beliefs.of(&a.ledger),
            _ => unreachable!("the quorum policy's step returned above"),
        };
    }

    /// The quorum policy's reads and count: each read is also remembered
    /// in the slot of the neighbour it came from (slot k holds the latest
    /// read of neighbour k), and the belief moves toward the side the live
    /// voices carry.
    #[inline]
    fn hear_and_count(
        &self,
        i: usize,
        a: &mut Agent,
        s: &mut Drawn,
        nb: &[u32],
        (memory, base): (&mut [Slot], usize),
    ) {
        let start = self.graph.offset(i) - base;
        let mine = &mut memory[start..start + nb.len()];
        // A checked agent stays checked and never counts its memory again,
        // so it only merges ledgers.
        let remember = !a.checked;
        for _ in 0..SLOTS {
            let k = s.below(nb.len() as u64) as usize;
            let j = nb[k] as usize;
            a.ledger.merge(&self.ledger[j]);
            if remember {
                mine[k] = Slot::read(self.r, self.ballot.vote(self.p[j], &self.ledger[j]));
            }
        }
        if remember {
            let target = quorum::target(mine, self.r, &self.cfg.quorum);
            a.p = clip(0.55 * a.p + 0.45 * target);
        }
    }
}
