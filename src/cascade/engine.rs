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

use super::config::{Allocation, Config, Policy};
use super::external::{self, Decide};
use super::graph::Graph;
use super::ledger::{self, Ledger, PROBE, REPORT};
use super::metrics::{self, Counters, Snapshot, Tally};
use super::quorum::Memory;
pub use super::quorum::Retention;
use crate::model::{PolicyFailure, Violation};
use crate::rng::{extend, key, tag, Stream};

pub const NOT_PENDING: u32 = u32::MAX;
pub(super) const SLOTS: usize = 4;
/// Below this population a round is not worth splitting across threads.
const PARALLEL_FROM: usize = 32_768;
const CHUNK: usize = 4_096;

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
    corrected: bool,
}

impl Own {
    fn of(a: &Agent) -> Own {
        Own {
            pending: a.pending,
            requested: a.requested,
            checked: a.checked,
            corrected: false,
        }
    }

    fn agent(&self, p: f64, ledger: Ledger) -> Agent {
        Agent {
            p,
            pending: self.pending,
            requested: self.requested,
            ledger,
            checked: self.checked,
        }
    }

    fn store(&mut self, a: &Agent) {
        self.pending = a.pending;
        self.requested = a.requested;
        self.checked = a.checked;
    }
}

impl Shared {
    fn of(agents: &[Agent]) -> Shared {
        Shared {
            p: agents.iter().map(|a| a.p).collect(),
            ledger: agents.iter().map(|a| a.ledger).collect(),
        }
    }
}

/// Agent `i` as round `r` starts: corrected this round, or as the snapshot left it.
fn current(i: usize, prev: &Shared, next: &Shared, own: &Own) -> Agent {
    if own.corrected {
        own.agent(next.p[i], next.ledger[i])
    } else {
        own.agent(prev.p[i], prev.ledger[i])
    }
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
    simulate_with(cfg, parallelism, Retention::Prune)
}

/// `simulate` with a choice of how the quorum memory is kept (the result is
/// the same either way; tests compare them).
pub fn simulate_with(cfg: &Config, parallelism: Parallelism, retention: Retention) -> Run {
    simulate_full(cfg, parallelism, retention, None)
}

/// A run whose agents' moves (under `policy = "external"`) are asked of
/// `decide`. When it fails, the run stops at that round: the rounds before
/// are in the trajectory, and the caller knows the failure.
pub fn simulate_deciding(cfg: &Config, decide: &mut Decide) -> Run {
    simulate_full(cfg, Parallelism::Sequential, Retention::Prune, Some(decide))
}

fn simulate_full(
    cfg: &Config,
    parallelism: Parallelism,
    retention: Retention,
    mut decide: Option<&mut Decide>,
) -> Run {
    let n = cfg.population;
    let graph = Graph::build(cfg.seed, cfg.graph, n, &cfg.graph_params);
    let start = round_zero(cfg);
    let mut own: Vec<Own> = start.iter().map(Own::of).collect();
    let mut prev = Shared::of(&start);
    drop(start);
    let mut next = prev.clone();
    // Only the quorum policy writes here; for the others every table stays
    // empty (no heap), which keeps one code path for all policies.
    let mut memory: Vec<Memory> = vec![Memory::default(); n];
    let mut totals = Counters::default();
    let mut trajectory = Vec::with_capacity(cfg.rounds as usize + 1);
    let mut interventions = Vec::new();
    let mut violation = None;
    let record = |r: u32,
                  snap: &Shared,
                  tally: &Tally,
                  totals: &Counters,
                  violation: &mut Option<Violation>| {
        let (s, out_of_bounds) = metrics::snapshot(r, cfg.truth, &snap.p, tally, totals);
        if violation.is_none() {
            *violation =
                metrics::check_identities(&s, n as u64, &snap.p, &snap.ledger, out_of_bounds);
        }
        s
    };
    let t0 = metrics::tally(&prev.p, &prev.ledger, &own);
    trajectory.push(record(0, &prev, &t0, &totals, &mut violation));
    let parallel = match parallelism {
        Parallelism::Auto => n >= PARALLEL_FROM,
        Parallelism::Sequential => false,
        Parallelism::Parallel => true,
    };
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
                break;
            }
            for (i, a) in work.iter().enumerate() {
                (next.p[i], next.ledger[i]) = (a.p, a.ledger);
                own[i].store(a);
                own[i].corrected = false;
            }
            totals = totals + d;
            std::mem::swap(&mut prev, &mut next);
            let t = metrics::tally(&prev.p, &prev.ledger, &own);
            trajectory.push(record(r, &prev, &t, &totals, &mut violation));
            continue;
        }
        let round = Round {
            r,
            key: round_key,
            cfg,
            graph: &graph,
            p: &prev.p,
            ledger: &prev.ledger,
            retention,
        };
        let step = |(c, (((p, l), o), mem)): (
            usize,
            (((&mut [f64], &mut [Ledger]), &mut [Own]), &mut [Memory]),
        )| {
            let mut d = Counters::default();
            let mut t = Tally::default();
            for k in 0..p.len() {
                let i = c * CHUNK + k;
                round.act(i, &mut o[k], &mut p[k], &mut l[k], &mut mem[k], &mut d);
                t.add(i, p[k], &l[k], o[k].checked, o[k].pending);
            }
            (d, t)
        };
        let add = |(d1, t1): (Counters, Tally), (d2, t2): (Counters, Tally)| (d1 + d2, t1 + t2);
        let (delta, tally) = if parallel {
            next.p
                .par_chunks_mut(CHUNK)
                .zip(next.ledger.par_chunks_mut(CHUNK))
                .zip(own.par_chunks_mut(CHUNK))
                .zip(memory.par_chunks_mut(CHUNK))
                .enumerate()
                .map(step)
                .reduce(Default::default, add)
        } else {
            next.p
                .chunks_mut(CHUNK)
                .zip(next.ledger.chunks_mut(CHUNK))
                .zip(own.chunks_mut(CHUNK))
                .zip(memory.chunks_mut(CHUNK))
                .enumerate()
                .map(step)
                .fold(Default::default(), add)
        };
        totals = totals + delta;
        std::mem::swap(&mut prev, &mut next);
        trajectory.push(record(r, &prev, &tally, &totals, &mut violation));
    }
    let agents = (0..n)
        .map(|i| own[i].agent(prev.p[i], prev.ledger[i]))
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

fn check_probability(cfg: &Config, p: f64) -> f64 {
    let c = cfg.communication;
    match (cfg.policy, cfg.allocation) {
        (Policy::Reserved, _) => (1.0 - c).max(0.15),
        (_, Allocation::Fixed) => 1.0 - c,
        (_, Allocation::Adaptive) => {
            let q = 2.0 * (p - 0.5).abs();
            (1.0 - c) * (1.0 - 0.85 * q)
        }
    }
}

pub fn clip(x: f64) -> f64 {
    x.clamp(0.01, 0.99)
}

/// What every agent of round `r` shares: the snapshot it reads and the
/// prefix `key(seed, 3, replicate, r)` of each agent's stream key.
struct Round<'a> {
    r: u32,
    key: u64,
    cfg: &'a Config,
    graph: &'a Graph,
    p: &'a [f64],
    ledger: &'a [Ledger],
    retention: Retention,
}

impl Round<'_> {
    /// Agent `i`'s round: its state is loaded (corrected in step 1, or from
    /// the snapshot), stepped, and written to its slots of the next buffer.
    #[inline]
    fn act(
        &self,
        i: usize,
        own: &mut Own,
        p: &mut f64,
        ledger: &mut Ledger,
        memory: &mut Memory,
        d: &mut Counters,
    ) {
        let mut a = if own.corrected {
            own.corrected = false;
            own.agent(*p, *ledger)
        } else {
            own.agent(self.p[i], self.ledger[i])
        };
        self.step(i, &mut a, memory, d);
        (*p, *ledger) = (a.p, a.ledger);
        own.store(&a);
    }

    /// Steps 2 and 3 for agent `i`, whose own state is `a`; messages come
    /// from the snapshot.
    #[inline]
    fn step(&self, i: usize, a: &mut Agent, memory: &mut Memory, d: &mut Counters) {
        let Round { r, cfg, graph, .. } = *self;
        if a.pending == r {
            a.pending = NOT_PENDING;
            ground(a, cfg.truth);
            d.completed += 1;
        }
        let mut s = Stream::new(extend(self.key, i as u64));
        if !a.checked && a.pending == NOT_PENDING {
            let u = s.unit();
            if u < check_probability(cfg, a.p) {
                request_check(cfg, a, r, d);
                return;
            }
        }
        let nb = graph.neighbours(i);
        let mut heard = [0.0f64; SLOTS];
        for h in heard.iter_mut() {
            let j = nb[s.below(nb.len() as u64) as usize] as usize;
            *h = self.p[j];
            a.ledger.merge(&self.ledger[j]);
            if cfg.policy == Policy::Quorum {
                memory.write(
                    j as u32,
                    r,
                    self.p[j],
                    &self.ledger[j],
                    cfg.quorum.window,
                    self.retention,
                );
            }
        }
        d.messages += SLOTS as u64;
        d.effort += SLOTS as u64;
        if a.checked {
            return;
        }
        a.p = match cfg.policy {
            Policy::Endorsement => {
                let m = (((heard[0] + heard[1]) + heard[2]) + heard[3]) / 4.0;
                let social = 1.0 / (1.0 + (-cfg.gain * (m - 0.5)).exp());
                clip(0.55 * a.p + 0.45 * social)
            }
            Policy::SourceAware | Policy::Reserved => belief_from_ledger(&a.ledger, cfg.truth),
            Policy::Quorum => clip(0.55 * a.p + 0.45 * memory.target(r, &cfg.quorum, cfg.truth)),
            Policy::Trust => trust_belief(&a.ledger, cfg.truth),
            Policy::External => unreachable!("external rounds are asked, not computed"),
        };
    }
}

/// The trust-v1 value of a ledger (docs/models/cascade.md §7.3): each root is its own
/// independence group; the report is a review (base 0.6, confidence 0.7,
/// reputation 1), the probe a usage signal agreeing with the truth.
pub fn trust_belief(l: &Ledger, truth: bool) -> f64 {
    use crate::trust::{
        weight, Group, Posterior, BASE_REVIEW, BASE_USAGE, DEFAULT_REVIEW_CONFIDENCE,
    };
    let groups: Vec<Group> = l
        .roots()
        .iter()
        .map(|&root| {
            if ledger::verified(root) {
                Group {
                    weight: weight(BASE_USAGE, false, 1.0, 1.0, 1.0),
                    polarity: if ledger::polarity(root, truth) > 0 {
                        1.0
                    } else {
                        0.0
                    },
                }
            } else {
                Group {
                    weight: weight(BASE_REVIEW, false, DEFAULT_REVIEW_CONFIDENCE, 1.0, 1.0),
                    polarity: 1.0,
                }
            }
        })
        .collect();
    clip(Posterior::new(1.0, 1.0, &groups).value())
}

/// ln(0.68 / 0.32): one root's log-odds. Computed once, not per read.
static LOG_ODDS_STEP: std::sync::LazyLock<f64> = std::sync::LazyLock::new(|| (0.68f64 / 0.32).ln());

/// Source tracking: a verified root decides; otherwise one log-odds step per
/// distinct root, so copies of one report never add up.
pub fn belief_from_ledger(l: &Ledger, truth: bool) -> f64 {
    let verified: i32 = l
        .roots()
        .iter()
        .filter(|&&r| ledger::verified(r))
        .map(|&r| ledger::polarity(r, truth))
        .sum();
    if verified > 0 {
        return 0.99;
    }
    if verified < 0 {
        return 0.01;
    }
    let step = *LOG_ODDS_STEP;
    let log_odds = l.roots().iter().fold(0.0, |acc, &r| {
        acc + ledger::polarity(r, truth) as f64 * step
    });
    clip(1.0 / (1.0 + (-log_odds.clamp(-4.6, 4.6)).exp()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_positive_root_gives_the_documented_belief() {
        let mut l = Ledger::default();
        assert_eq!(belief_from_ledger(&l, false), 0.5);
        l.insert(REPORT);
        assert_eq!(belief_from_ledger(&l, false), 0.6799999999999999);
        l.insert(PROBE);
        assert_eq!(belief_from_ledger(&l, false), 0.01);
        assert_eq!(belief_from_ledger(&l, true), 0.99);
    }

    #[test]
    fn trust_beliefs_match_the_check_values_of_trust_md() {
        let mut report = Ledger::default();
        report.insert(REPORT);
        assert!((trust_belief(&report, false) - 0.5868).abs() < 5e-5);
        let mut probe = Ledger::default();
        probe.insert(PROBE);
        assert!((trust_belief(&probe, true) - 2.0 / 3.0).abs() < 1e-15);
        assert!((trust_belief(&probe, false) - 1.0 / 3.0).abs() < 1e-15);
        let mut both = report;
        both.insert(PROBE);
        assert!((trust_belief(&both, true) - 0.7076).abs() < 5e-5);
        assert!((trust_belief(&both, false) - 0.4152).abs() < 5e-5);
        assert_eq!(trust_belief(&Ledger::default(), true), 0.5);
    }

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
