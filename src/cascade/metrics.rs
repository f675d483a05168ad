//! Per-snapshot metrics, the run summary (docs/models/cascade.md §10) and
//! the accounting identities (§11). Float sums run in agent order 0..N on one thread,
//! so they do not depend on how a round was computed.

use super::engine::NOT_PENDING;
use super::ledger::{Ledger, CAPACITY, PROBE, REPORT};
use super::round::Own;
use crate::model::Judge;
use crate::model::{Position, Violation};

/// Cumulative counters of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub requested: u64,
    pub completed: u64,
    pub canceled: u64,
    pub messages: u64,
    pub effort: u64,
}

impl std::ops::Add for Counters {
    type Output = Counters;
    fn add(self, o: Counters) -> Counters {
        Counters {
            requested: self.requested + o.requested,
            completed: self.completed + o.completed,
            canceled: self.canceled + o.canceled,
            messages: self.messages + o.messages,
            effort: self.effort + o.effort,
        }
    }
}

crate::record! {
    /// One snapshot of a run: a row of `trajectories.parquet`.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Snapshot {
        /// snapshot round, 0..=R
        round: u32,
        /// agents with p >= 0.65
        support: u64,
        /// agents with p <= 0.35
        refute: u64,
        /// other agents
        uncertain: u64,
        /// support if truth else refute
        correct: u64,
        /// refute if truth else support
        mistaken: u64,
        /// mean of (p - truth)^2
        brier: f64 [0.0, 1.0],
        /// mean of p
        mean_belief: f64 [0.0, 1.0],
        /// agents whose ledger holds probe:0
        probe_reach: u64,
        /// agents whose ledger holds report:0
        report_reach: u64,
        /// agents with a direct check
        checked: u64,
        /// cumulative checks requested
        requested: u64,
        /// cumulative checks completed
        completed: u64,
        /// cumulative checks canceled
        canceled: u64,
        /// cumulative messages read
        messages: u64,
        /// cumulative effort units
        effort: u64,
        /// checks pending now
        pending: u64,
    }
}

impl Snapshot {
    /// The run's cumulative counters at this snapshot.
    pub fn counters(&self) -> Counters {
        Counters {
            requested: self.requested,
            completed: self.completed,
            canceled: self.canceled,
            messages: self.messages,
            effort: self.effort,
        }
    }
}

/// Which side a belief is on: 1 supports the claim (p >= 0.65), -1 refutes
/// it (p <= 0.35), 0 uncertain. The one place these thresholds live.
#[inline]
pub fn side(p: f64) -> i8 {
    if p >= 0.65 {
        1
    } else if p <= 0.35 {
        -1
    } else {
        0
    }
}

/// The integer metrics of a snapshot, counted agent by agent as the round
/// writes them, so both cores share the work. Tallies of disjoint ranges of
/// agents add up in any order; the first agent out of bounds is the lowest
/// index any of them saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Tally {
    agents: u64,
    support: u64,
    refute: u64,
    probe_reach: u64,
    report_reach: u64,
    checked: u64,
    pending: u64,
    out_of_bounds: Option<usize>,
}

impl Tally {
    /// Counts agent `i` as it ends the round. Counts are added as 0 or 1
    /// rather than branched on (sides change often while a claim spreads);
    /// an agent on neither side is uncertain, `side`'s third case.
    #[inline]
    pub fn add(&mut self, i: usize, p: f64, ledger: &Ledger, checked: bool, pending: u32) {
        if self.out_of_bounds.is_none() && (!(0.01..=0.99).contains(&p) || ledger.len() > CAPACITY)
        {
            self.out_of_bounds = Some(i);
        }
        self.agents += 1;
        self.support += u64::from(side(p) == 1);
        self.refute += u64::from(side(p) == -1);
        self.probe_reach += u64::from(ledger.contains(PROBE));
        self.report_reach += u64::from(ledger.contains(REPORT));
        self.checked += u64::from(checked);
        self.pending += u64::from(pending != NOT_PENDING);
    }

    fn uncertain(&self) -> u64 {
        self.agents - self.support - self.refute
    }
}

impl std::ops::Add for Tally {
    type Output = Tally;
    fn add(self, o: Tally) -> Tally {
        Tally {
            agents: self.agents + o.agents,
            support: self.support + o.support,
            refute: self.refute + o.refute,
            probe_reach: self.probe_reach + o.probe_reach,
            report_reach: self.report_reach + o.report_reach,
            checked: self.checked + o.checked,
            pending: self.pending + o.pending,
            out_of_bounds: match (self.out_of_bounds, o.out_of_bounds) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }
}

/// The tally of a whole snapshot, in one pass (round 0, asked rounds).
pub(super) fn tally(p: &[f64], ledger: &[Ledger], own: &[Own]) -> Tally {
    let mut t = Tally::default();
    for (i, ((&p, l), o)) in p.iter().zip(ledger).zip(own).enumerate() {
        t.add(i, p, l, o.checked, o.pending);
    }
    t
}

/// The two float sums of a snapshot (squared error, belief), taken in
/// agent order 0..N on one thread so their bits do not depend on how the
/// round was split. The engine takes them while the next round runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Sums {
    squared_error: f64,
    belief: f64,
}

pub(super) fn sums(p: &[f64], truth: bool) -> Sums {
    let target = if truth { 1.0 } else { 0.0 };
    let mut s = Sums::default();
    for &p in p {
        s.squared_error += (p - target) * (p - target);
        s.belief += p;
    }
    s
}

/// The metrics of one snapshot of `n` agents from its tally and sums, and
/// the first agent (if any) whose belief or ledger is out of bounds.
pub(super) fn snapshot(
    round: u32,
    truth: bool,
    sums: Sums,
    t: &Tally,
    counters: &Counters,
) -> (Snapshot, Option<usize>) {
    let (correct, mistaken) = if truth {
        (t.support, t.refute)
    } else {
        (t.refute, t.support)
    };
    let n = t.agents as f64;
    let s = Snapshot {
        round,
        support: t.support,
        refute: t.refute,
        uncertain: t.uncertain(),
        correct,
        mistaken,
        brier: sums.squared_error / n,
        mean_belief: sums.belief / n,
        probe_reach: t.probe_reach,
        report_reach: t.report_reach,
        checked: t.checked,
        requested: counters.requested,
        completed: counters.completed,
        canceled: counters.canceled,
        messages: counters.messages,
        effort: counters.effort,
        pending: t.pending,
    };
    (s, t.out_of_bounds)
}

/// The identities every snapshot must satisfy, derived from its metrics
/// alone, so `verify` can re-check them from stored trajectories.
pub fn check_counts(s: &Snapshot, n: u64) -> Option<Violation> {
    let c = &s.counters();
    let r = s.round as u64;
    let fail = |identity: &str, detail: String| {
        Some(Violation {
            identity: identity.to_string(),
            at: Some(Position::Round(r)),
            detail,
        })
    };
    if c.effort != 4 * n * r || c.effort != c.messages + 4 * c.requested {
        return fail(
            "effort = 4 N r = messages + 4 requested",
            format!(
                "effort {}, 4 N r {}, messages {}, requested {}",
                c.effort,
                4 * n * r,
                c.messages,
                c.requested
            ),
        );
    }
    if c.requested != c.completed + s.pending + c.canceled {
        return fail(
            "requested = completed + pending + canceled",
            format!(
                "requested {}, completed {}, pending {}, canceled {}",
                c.requested, c.completed, s.pending, c.canceled
            ),
        );
    }
    if s.support + s.refute + s.uncertain != n || s.correct + s.mistaken > n {
        return fail(
            "support + refute + uncertain = N, correct + mistaken <= N",
            format!(
                "support {}, refute {}, uncertain {}, correct {}, mistaken {}, N {n}",
                s.support, s.refute, s.uncertain, s.correct, s.mistaken
            ),
        );
    }
    None
}

/// The count identities plus the per-agent ones, given the first agent
/// `snapshot` found out of bounds.
pub(super) fn check_identities(
    s: &Snapshot,
    n: u64,
    p: &[f64],
    ledger: &[Ledger],
    out_of_bounds: Option<usize>,
) -> Option<Violation> {
    if let Some(v) = check_counts(s, n) {
        return Some(v);
    }
    let bad = out_of_bounds?;
    Some(Violation {
        identity: "0.01 <= p <= 0.99 and ledger size <= 12".into(),
        at: Some(Position::Round(s.round as u64)),
        detail: format!(
            "agent {bad}: p {:?}, ledger size {}",
            p[bad],
            ledger[bad].len()
        ),
    })
}

/// The smallest effect of interest on a share of agents: five points.
const SESOI: f64 = 0.05;

crate::record! {
    /// A run's summary (docs/models/cascade.md §10.2): its columns of `runs.parquet`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Summary {
        /// max over snapshots of mistaken / N
        peak_mistaken: f64 [0.0, 1.0] => Judge::lower().sesoi(SESOI),
        /// mean over snapshots 0..=R of mistaken / N
        mean_mistaken: f64 [0.0, 1.0] => Judge::lower().sesoi(SESOI),
        /// mistaken / N at round R
        final_mistaken: f64 [0.0, 1.0] => Judge::lower().sesoi(SESOI),
        /// max of uncertain / N
        peak_uncertain: f64 [0.0, 1.0],
        /// mean of uncertain / N
        mean_uncertain: f64 [0.0, 1.0],
        /// uncertain / N at round R
        final_uncertain: f64 [0.0, 1.0],
        /// max of the Brier score
        peak_brier: f64 [0.0, 1.0] => Judge::lower(),
        /// mean of the Brier score
        mean_brier: f64 [0.0, 1.0] => Judge::lower(),
        /// Brier score at round R
        final_brier: f64 [0.0, 1.0] => Judge::lower(),
        /// correct / N at round R
        final_correct: f64 [0.0, 1.0] => Judge::higher().sesoi(SESOI),
        /// agents holding probe:0 / N at round R
        final_probe_reach: f64 [0.0, 1.0],
        /// checked agents / N at round R
        final_checked: f64 [0.0, 1.0],
        /// checks still pending at round R
        final_pending: u64,
        /// first round from which mistaken stays 0; null if mistaken(R) > 0
        first_clear_round: Option<u32> => Judge::lower().null_worst(),
        /// checks requested in the run
        requested: u64,
        /// checks completed
        completed: u64,
        /// pending checks canceled by a correction
        canceled: u64,
        /// messages read
        messages: u64,
        /// effort units spent (4 per agent-round)
        effort: u64,
    }
}

impl Summary {
    /// The run's final counters.
    pub fn counters(&self) -> Counters {
        Counters {
            requested: self.requested,
            completed: self.completed,
            canceled: self.canceled,
            messages: self.messages,
            effort: self.effort,
        }
    }
}

pub fn summarize(trajectory: &[Snapshot], n: usize) -> Summary {
    let n = n as f64;
    let last = trajectory.last().expect("a trajectory has round 0");
    let peak =
        |f: &dyn Fn(&Snapshot) -> f64| trajectory.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
    let mean = |f: &dyn Fn(&Snapshot) -> f64| {
        trajectory.iter().map(f).sum::<f64>() / trajectory.len() as f64
    };
    let mistaken = |s: &Snapshot| s.mistaken as f64 / n;
    let uncertain = |s: &Snapshot| s.uncertain as f64 / n;
    let brier = |s: &Snapshot| s.brier;
    let first_clear_round = if last.mistaken > 0 {
        None
    } else {
        let dirty = trajectory.iter().rposition(|s| s.mistaken > 0);
        Some(dirty.map_or(0, |k| trajectory[k].round + 1))
    };
    Summary {
        peak_mistaken: peak(&mistaken),
        mean_mistaken: mean(&mistaken),
        final_mistaken: mistaken(last),
        peak_uncertain: peak(&uncertain),
        mean_uncertain: mean(&uncertain),
        final_uncertain: uncertain(last),
        peak_brier: peak(&brier),
        mean_brier: mean(&brier),
        final_brier: last.brier,
        final_correct: last.correct as f64 / n,
        final_probe_reach: last.probe_reach as f64 / n,
        final_checked: last.checked as f64 / n,
        final_pending: last.pending,
        first_clear_round,
        requested: last.requested,
        completed: last.completed,
        canceled: last.canceled,
        messages: last.messages,
        effort: last.effort,
    }
}
