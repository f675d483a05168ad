//! Per-snapshot metrics, the run summary (section 6) and the accounting
//! identities (section 7). Float sums run in agent order 0..N on one thread,
//! so they do not depend on how a round was computed.

use super::engine::{Agent, NOT_PENDING};
use super::ledger::{CAPACITY, PROBE, REPORT};
use crate::model::Violation;

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

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Snapshot {
    pub round: u32,
    pub support: u64,
    pub refute: u64,
    pub uncertain: u64,
    pub correct: u64,
    pub mistaken: u64,
    pub brier: f64,
    pub mean_belief: f64,
    pub probe_reach: u64,
    pub report_reach: u64,
    pub checked: u64,
    pub counters: Counters,
    pub pending: u64,
}

/// The metrics of one snapshot, and the first agent (if any) whose belief or
/// ledger is out of bounds, found in the same pass.
pub fn snapshot(
    round: u32,
    truth: bool,
    agents: &[Agent],
    counters: &Counters,
) -> (Snapshot, Option<usize>) {
    let target = if truth { 1.0 } else { 0.0 };
    let mut s = Snapshot {
        round,
        support: 0,
        refute: 0,
        uncertain: 0,
        correct: 0,
        mistaken: 0,
        brier: 0.0,
        mean_belief: 0.0,
        probe_reach: 0,
        report_reach: 0,
        checked: 0,
        counters: *counters,
        pending: 0,
    };
    let mut out_of_bounds = None;
    for (i, a) in agents.iter().enumerate() {
        if out_of_bounds.is_none() && (!(0.01..=0.99).contains(&a.p) || a.ledger.len() > CAPACITY) {
            out_of_bounds = Some(i);
        }
        if a.p >= 0.65 {
            s.support += 1;
        } else if a.p <= 0.35 {
            s.refute += 1;
        } else {
            s.uncertain += 1;
        }
        s.brier += (a.p - target) * (a.p - target);
        s.mean_belief += a.p;
        s.probe_reach += a.ledger.contains(PROBE) as u64;
        s.report_reach += a.ledger.contains(REPORT) as u64;
        s.checked += a.checked as u64;
        s.pending += (a.pending != NOT_PENDING) as u64;
    }
    (s.correct, s.mistaken) = if truth {
        (s.support, s.refute)
    } else {
        (s.refute, s.support)
    };
    let n = agents.len() as f64;
    s.brier /= n;
    s.mean_belief /= n;
    (s, out_of_bounds)
}

/// The identities every snapshot must satisfy, derived from its metrics
/// alone, so `verify` can re-check them from stored trajectories.
pub fn check_counts(s: &Snapshot, n: u64) -> Option<Violation> {
    let c = &s.counters;
    let r = s.round as u64;
    let fail = |identity: &str, detail: String| {
        Some(Violation {
            identity: identity.to_string(),
            round: Some(r),
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
pub fn check_identities(
    s: &Snapshot,
    n: u64,
    agents: &[Agent],
    out_of_bounds: Option<usize>,
) -> Option<Violation> {
    if let Some(v) = check_counts(s, n) {
        return Some(v);
    }
    let bad = out_of_bounds?;
    Some(Violation {
        identity: "0.01 <= p <= 0.99 and ledger size <= 12".into(),
        round: Some(s.round as u64),
        detail: format!(
            "agent {bad}: p {:?}, ledger size {}",
            agents[bad].p,
            agents[bad].ledger.len()
        ),
    })
}

#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub peak_mistaken: f64,
    pub mean_mistaken: f64,
    pub final_mistaken: f64,
    pub peak_uncertain: f64,
    pub mean_uncertain: f64,
    pub final_uncertain: f64,
    pub peak_brier: f64,
    pub mean_brier: f64,
    pub final_brier: f64,
    pub final_correct: f64,
    pub final_probe_reach: f64,
    pub final_checked: f64,
    pub final_pending: u64,
    pub first_clear_round: Option<u32>,
    pub counters: Counters,
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
        counters: last.counters,
    }
}
