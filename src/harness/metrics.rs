//! The harness's metrics: one trajectory row per round (beliefs as the
//! agents state them, by the cascade's thresholds; actions so far), the
//! run summary, and the accounting identities, checked every round in the
//! run and again from stored rows by `verify`.

use super::world::{is_probe, Agent, Counters, REPORT};
use crate::cascade::metrics::side;
use crate::model::Judge;
use crate::model::{Position, Violation};

crate::record! {
    /// One round of a run: a row of `trajectories.parquet`.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Snapshot {
        /// round, 0..=R
        round: u32,
        /// agents whose stated belief is >= 0.65
        support: u64,
        /// agents whose stated belief is <= 0.35
        refute: u64,
        /// other agents
        uncertain: u64,
        /// support if truth else refute
        correct: u64,
        /// refute if truth else support
        mistaken: u64,
        /// mean of (stated belief - truth)^2
        brier: f64 [0.0, 1.0],
        /// mean stated belief
        mean_belief: f64 [0.0, 1.0],
        /// agents holding report:0
        report_reach: u64,
        /// agents holding some probe root (their own or one relayed to them)
        probe_reach: u64,
        /// agents that have probed
        probed: u64,
        /// agents with no budget left
        out_of_budget: u64,
        /// turns taken so far (probes + relays + passes)
        actions: u64,
        /// probes so far
        probes: u64,
        /// relays so far
        relays: u64,
        /// passes so far
        passes: u64,
        /// relays delivered so far
        delivered: u64,
        /// budget spent so far (probes + relays)
        spent: u64,
    }
}

pub fn snapshot(round: u32, truth: bool, agents: &[Agent], c: &Counters) -> Snapshot {
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
        report_reach: 0,
        probe_reach: 0,
        probed: 0,
        out_of_budget: 0,
        actions: c.actions,
        probes: c.probes,
        relays: c.relays,
        passes: c.passes,
        delivered: c.delivered,
        spent: c.spent,
    };
    for a in agents {
        let p = a.belief;
        match side(p) {
            1 => s.support += 1,
            -1 => s.refute += 1,
            _ => s.uncertain += 1,
        }
        s.brier += (p - target) * (p - target);
        s.mean_belief += p;
        s.report_reach += u64::from(a.roots.first() == Some(&REPORT));
        s.probe_reach += u64::from(a.roots.last().is_some_and(|&r| is_probe(r)));
        s.probed += u64::from(a.probes > 0);
        s.out_of_budget += u64::from(a.budget_left == 0);
    }
    (s.correct, s.mistaken) = if truth {
        (s.support, s.refute)
    } else {
        (s.refute, s.support)
    };
    let n = agents.len() as f64;
    s.brier /= n;
    s.mean_belief /= n;
    s
}

/// The identities a round's row must satisfy on its own: every turn is
/// one action, spending is probes and relays within the budget, every
/// relay is delivered once, and the belief classes partition the agents.
pub fn check_counts(s: &Snapshot, n: u64, budget: u64) -> Option<Violation> {
    let fail = |identity: &str, detail: String| {
        Some(Violation {
            identity: identity.to_string(),
            at: Some(Position::Round(u64::from(s.round))),
            detail,
        })
    };
    if s.actions != s.probes + s.relays + s.passes {
        return fail(
            "actions = probes + relays + passes",
            format!(
                "actions {}, probes {}, relays {}, passes {}",
                s.actions, s.probes, s.relays, s.passes
            ),
        );
    }
    if s.spent != s.probes + s.relays || s.spent > budget * n {
        return fail(
            "spent = probes + relays <= budget N",
            format!(
                "spent {}, probes {}, relays {}, budget N {}",
                s.spent,
                s.probes,
                s.relays,
                budget * n
            ),
        );
    }
    if s.delivered != s.relays {
        return fail(
            "every relay is delivered once",
            format!("relays {}, delivered {}", s.relays, s.delivered),
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
    let most = [s.report_reach, s.probe_reach, s.probed, s.out_of_budget]
        .into_iter()
        .max()
        .unwrap_or(0);
    if most > n || s.actions > n * u64::from(s.round) {
        return fail(
            "per-agent counts <= N, actions <= N r",
            format!(
                "largest per-agent count {most}, actions {}, N {n}",
                s.actions
            ),
        );
    }
    None
}

/// The identities between consecutive rounds: counts only grow.
pub fn check_step(prev: &Snapshot, s: &Snapshot) -> Option<Violation> {
    let grew = [
        (prev.actions, s.actions),
        (prev.probes, s.probes),
        (prev.relays, s.relays),
        (prev.passes, s.passes),
        (prev.spent, s.spent),
        (prev.probed, s.probed),
        (prev.out_of_budget, s.out_of_budget),
    ]
    .iter()
    .all(|(a, b)| a <= b);
    (!grew).then(|| Violation {
        identity: "cumulative counts never fall".into(),
        at: Some(Position::Round(u64::from(s.round))),
        detail: format!("round {} after round {}", s.round, prev.round),
    })
}

/// The smallest effect of interest on a share of agents: five points.
const SESOI: f64 = 0.05;

crate::record! {
    /// A run's summary: its columns of `runs.parquet`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Summary {
        /// max over rounds of mistaken / N
        peak_mistaken: f64 [0.0, 1.0] => Judge::lower().sesoi(SESOI),
        /// mean over rounds 0..=R of mistaken / N
        mean_mistaken: f64 [0.0, 1.0] => Judge::lower().sesoi(SESOI),
        /// mistaken / N at round R
        final_mistaken: f64 [0.0, 1.0] => Judge::lower().sesoi(SESOI),
        /// correct / N at round R
        final_correct: f64 [0.0, 1.0] => Judge::higher().sesoi(SESOI),
        /// uncertain / N at round R
        final_uncertain: f64 [0.0, 1.0],
        /// mean of the Brier score over rounds
        mean_brier: f64 [0.0, 1.0] => Judge::lower(),
        /// Brier score at round R
        final_brier: f64 [0.0, 1.0] => Judge::lower(),
        /// agents holding a probe root / N at round R
        final_probe_reach: f64 [0.0, 1.0],
        /// first round from which mistaken stays 0; null if mistaken(R) > 0
        first_clear_round: Option<u32> => Judge::lower().null_worst(),
        /// probes in the run
        probes: u64,
        /// relays in the run
        relays: u64,
        /// passes in the run
        passes: u64,
        /// budget spent (probes + relays)
        spent: u64,
        /// spent / (budget N)
        budget_used: f64 [0.0, 1.0],
    }
}

pub fn summarize(trajectory: &[Snapshot], n: usize, budget: u32) -> Summary {
    let nf = n as f64;
    let last = trajectory.last().expect("a trajectory has round 0");
    let frac = |x: u64| x as f64 / nf;
    let peak_mistaken = trajectory
        .iter()
        .map(|s| frac(s.mistaken))
        .fold(0.0, f64::max);
    let mean = |f: &dyn Fn(&Snapshot) -> f64| {
        trajectory.iter().map(f).sum::<f64>() / trajectory.len() as f64
    };
    let first_clear_round = if last.mistaken > 0 {
        None
    } else {
        let dirty = trajectory.iter().rposition(|s| s.mistaken > 0);
        Some(dirty.map_or(0, |k| trajectory[k].round + 1))
    };
    Summary {
        peak_mistaken,
        mean_mistaken: mean(&|s| frac(s.mistaken)),
        final_mistaken: frac(last.mistaken),
        final_correct: frac(last.correct),
        final_uncertain: frac(last.uncertain),
        mean_brier: mean(&|s| s.brier),
        final_brier: last.brier,
        final_probe_reach: frac(last.probe_reach),
        first_clear_round,
        probes: last.probes,
        relays: last.relays,
        passes: last.passes,
        spent: last.spent,
        budget_used: last.spent as f64 / (f64::from(budget) * nf),
    }
}
