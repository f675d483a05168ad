//! Round 0 and the round loop of witness-engine/1 (docs/models/cascade.md §4 and §5).
//!
//! What neighbours read (beliefs and ledgers) is double-buffered: each
//! round reads the previous snapshot and writes the other buffer, so no
//! agent sees another's round-r state. What only the agent itself reads
//! (its pending check, its count of requests, whether it is checked) is
//! updated in place, so no round copies whole agents. Every agent-round
//! draws from its own stream and writes only its own slots, which is why
//! the agents of a round may be computed in parallel with a bit-identical
//! result: the only shared outputs are integer counters, whose sums do not
//! depend on order.

use rayon::prelude::*;

use super::belief::CheckRule;
use super::belief::LedgerBeliefs;
pub use super::belief::{belief_from_ledger, clip, trust_belief};
use super::config::{Config, Policy};
use super::external::{self, Decide};
use super::graph::Graph;
use super::ledger::{Ledger, PROBE, REPORT};
use super::metrics::{self, Counters, Snapshot, Tally};
use super::quorum::{self, Ballot};
use super::round::{current, memory_chunks, Own, Round, Shared};
use crate::model::{PolicyFailure, Violation};
use crate::rng::{key, tag, Stream};

pub const NOT_PENDING: u32 = u32::MAX;
pub(super) const SLOTS: usize = 4;
/// Below this population a round is not worth splitting across threads.
const PARALLEL_FROM: usize = 32_768;
pub(super) const CHUNK: usize = 4_096;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agent {
    pub p: f64,
    /// Round at which a requested check arrives, or `NOT_PENDING`.
    pub pending: u32,
    /// Checks this agent requested over the run.
    pub requested: u32,
    pub ledger: Ledger,
    pub checked: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parallelism {
    /// Parallel rounds for large populations only.
    Auto,
    Sequential,
    Parallel,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Intervention {
    pub round: u32,
    pub agents: Vec<u32>,
}

pub struct Run {
    pub config: Config,
    pub graph: Graph,
    pub agents: Vec<Agent>,
    pub trajectory: Vec<Snapshot>,
    pub interventions: Vec<Intervention>,
    pub violation: Option<Violation>,
}

pub fn simulate(cfg: &Config, parallelism: Parallelism) -> Run {
    simulate_full(cfg, parallelism, None)
}

/// A run whose agents' moves (under `policy = "external"`) are asked of
/// `decide`. When it fails, the run stops at that round: the rounds before
/// are in the trajectory, and the caller knows the failure.
pub fn simulate_deciding(cfg: &Config, decide: &mut Decide) -> Run {
    simulate_full(cfg, Parallelism::Sequential, Some(decide))
}

fn simulate_full(cfg: &Config, parallelism: Parallelism, mut decide: Option<&mut Decide>) -> Run {
    let n = cfg.population;
    let graph = Graph::build(cfg.seed, cfg.graph, n, &cfg.graph_params);
    let start = round_zero(cfg);
    let mut own: Vec<Own> = start.iter().map(Own::of).collect();
    let mut prev = Shared::of(&start);
    drop(start);
    let mut next = prev.clone();
    // Only the quorum policy remembers; for the others the memory is
    // empty, which keeps one code path for all policies.
    let mut memory = quorum::memory(cfg, &graph);
    let mut totals = Counters::default();
    let mut trajectory = Vec::with_capacity(cfg.rounds as usize + 1);
    let mut interventions = Vec::new();
    let mut violation = None;
    let truth = cfg.truth;
    // The snapshot in `prev` waits for its record until its float sums
    // are taken, which happens while the next round runs: that round only
    // reads `prev`, so on two cores the serial sums cost no time.
    let mut held = Held {
        round: 0,
        tally: metrics::tally(&prev.p, &prev.ledger, &own),
        totals,
    };
    let mut record = |held: &Held, sums, snap: &Shared| {
        let (s, out_of_bounds) =
            metrics::snapshot(held.round, truth, sums, &held.tally, &held.totals);
        if violation.is_none() {
            violation =
                metrics::check_identities(&s, n as u64, &snap.p, &snap.ledger, out_of_bounds);
        }
        trajectory.push(s);
    };
    let parallel = match parallelism {
        Parallelism::Auto => n >= PARALLEL_FROM,
        Parallelism::Sequential => false,
        Parallelism::Parallel => true,
    };
    let beliefs = LedgerBeliefs::new(cfg.policy, cfg.truth);
    let ballot = Ballot::of(cfg);
    let mut events = cfg.corrections.iter().enumerate().peekable();
    for r in 1..=cfg.rounds {
        while let Some((e, _)) = events.next_if(|(_, &round)| round == r) {
            let ids = correction_recipients(cfg.seed, e as u64, n);
            for &i in &ids {
                let i = i as usize;
                let mut a = current(i, &prev, &next, &own[i]);
                if a.pending != NOT_PENDING {
                    a.pending = NOT_PENDING;
                    totals.canceled += 1;
                }
                ground(&mut a, cfg.truth);
                (next.p[i], next.ledger[i]) = (a.p, a.ledger);
                own[i].store(&a);
                own[i].corrected = true;
            }
            interventions.push(Intervention {
                round: r,
                agents: ids,
            });
        }
        let round_key = key(cfg.seed, &[tag::AGENT_ROUND, cfg.replicate, r as u64]);
        if cfg.policy == Policy::External {
            record(&held, metrics::sums(&prev.p, truth), &prev);
            // Asked rounds are slow (a process answers); they work on whole
            // agents, as the decision point describes them.
            let before: Vec<Agent> = (0..n)
                .map(|i| own[i].agent(prev.p[i], prev.ledger[i]))
                .collect();
            let mut work: Vec<Agent> = (0..n).map(|i| current(i, &prev, &next, &own[i])).collect();
            let mut d = Counters::default();
            let asked = match decide.as_deref_mut() {
                Some(decide) => external::round(
                    cfg, &graph, &before, &mut work, r, round_key, &mut d, decide,
                ),
                None => Err(PolicyFailure {
                    key: format!("r{r}"),
                    message: "no external policy to ask".into(),
                }),
            };
            if asked.is_err() {
                // The trajectory ends at the last whole round, recorded above.
                return finish(
                    cfg,
                    graph,
                    &own,
                    &prev,
                    trajectory,
                    interventions,
                    violation,
                );
            }
            for (i, a) in work.iter().enumerate() {
                (next.p[i], next.ledger[i]) = (a.p, a.ledger);
                own[i].store(a);
                own[i].corrected = false;
            }
            totals = totals + d;
            std::mem::swap(&mut prev, &mut next);
            held = Held {
                round: r,
                tally: metrics::tally(&prev.p, &prev.ledger, &own),
                totals,
            };
            continue;
        }
        let round = Round {
            r,
            key: round_key,
            cfg,
            check: CheckRule::of(cfg),
            graph: &graph,
            p: &prev.p,
            ledger: &prev.ledger,
            beliefs: &beliefs,
            ballot: &ballot,
        };
        let step = |(c, chunk)| round.chunk(c, chunk);
        let add = |(d1, t1): (Counters, _), (d2, t2): (Counters, _)| (d1 + d2, t1 + t2);
        let (sums, (delta, tally)) = if parallel {
            rayon::join(
                || metrics::sums(&prev.p, truth),
                || {
                    next.p
                        .par_chunks_mut(CHUNK)
                        .zip(next.ledger.par_chunks_mut(CHUNK))
                        .zip(own.par_chunks_mut(CHUNK))
                        .zip(memory_chunks(&mut memory, &graph, n).collect::<Vec<_>>())
                        .enumerate()
                        .map(step)
                        .reduce(Default::default, add)
                },
            )
        } else {
            let round = next
                .p
                .chunks_mut(CHUNK)
                .zip(next.ledger.chunks_mut(CHUNK))
                .zip(own.chunks_mut(CHUNK))
                .zip(memory_chunks(&mut memory, &graph, n))
                .enumerate()
                .map(step)
                .fold(Default::default(), add);
            (metrics::sums(&prev.p, truth), round)
        };
        record(&held, sums, &prev);
        totals = totals + delta;
        std::mem::swap(&mut prev, &mut next);
        held = Held {
            round: r,
            tally,
            totals,
        };
    }
    record(&held, metrics::sums(&prev.p, truth), &prev);
    finish(
        cfg,
        graph,
        &own,
        &prev,
        trajectory,
        interventions,
        violation,
    )
}

/// A snapshot whose record waits for its float sums.
struct Held {
    round: u32,
    tally: Tally,
    totals: Counters,
}

fn finish(
    cfg: &Config,
    graph: Graph,
    own: &[Own],
    last: &Shared,
    trajectory: Vec<Snapshot>,
    interventions: Vec<Intervention>,
    violation: Option<Violation>,
) -> Run {
    let agents = own
        .iter()
        .enumerate()
        .map(|(i, o)| o.agent(last.p[i], last.ledger[i]))
        .collect();
    Run {
        config: cfg.clone(),
        graph,
        agents,
        trajectory,
        interventions,
        violation,
    }
}

pub fn round_zero(cfg: &Config) -> Vec<Agent> {
    let mut s = Stream::keyed(cfg.seed, &[tag::EXPOSURE]);
    (0..cfg.population)
        .map(|_| {
            let a = s.unit();
            let b = s.unit();
            let (reported, probed) = (a < cfg.report_fraction, b < cfg.probe_fraction);
            let mut agent = Agent {
                p: 0.5,
                pending: NOT_PENDING,
                requested: 0,
                ledger: Ledger::default(),
                checked: false,
            };
            if probed {
                ground(&mut agent, cfg.truth);
            } else if reported {
                agent.p = 0.82;
            }
            if reported {
                agent.ledger.insert(REPORT);
            }
            agent
        })
        .collect()
}

/// k = max(1, ceil(N / 100)) distinct agents by a partial Fisher-Yates shuffle.
pub fn correction_recipients(seed: u64, event: u64, n: usize) -> Vec<u32> {
    let mut s = Stream::keyed(seed, &[tag::CORRECTION, event]);
    let k = n.div_ceil(100).max(1);
    let mut ids: Vec<u32> = (0..n as u32).collect();
    for t in 0..k {
        let j = t + s.below((n - t) as u64) as usize;
        ids.swap(t, j);
    }
    ids.truncate(k);
    ids
}

pub(super) fn ground(a: &mut Agent, truth: bool) {
    a.p = if truth { 0.99 } else { 0.01 };
    a.checked = true;
    a.ledger.insert(PROBE);
}

/// Agent `a` asks for a check in round `r`: it costs the four slots the
/// round would have read, and lands now or after the configured delay.
pub(super) fn request_check(cfg: &Config, a: &mut Agent, r: u32, d: &mut Counters) {
    d.requested += 1;
    d.effort += SLOTS as u64;
    a.requested += 1;
    if cfg.check_delay == 0 {
        ground(a, cfg.truth);
        d.completed += 1;
    } else {
        a.pending = r + cfg.check_delay;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correction_recipients_are_distinct_and_one_percent_rounded_up() {
        for n in [3usize, 99, 100, 101, 1000] {
            let ids = correction_recipients(5, 0, n);
            assert_eq!(ids.len(), n.div_ceil(100).max(1));
            let mut s = ids.clone();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), ids.len());
        }
    }
}
