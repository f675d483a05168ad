//! `search` without the I/O: what a race decided, read from its plan (the
//! schedule is rebuilt from the stored runs, so nothing else is needed):
//! every candidate with its outcome, the rungs, and the runs spent against
//! the full grid.

use crate::grid::Plan;
use crate::search::{Exit, Schedule};

crate::record! {
    /// One candidate of a race: a row of search.csv.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CandidateRow {
        /// 1 for the best survivor; survivors first (best mean first), then
        /// the removed, latest rung first
        place: u64,
        /// the arm and the values of its own axes
        candidate: String,
        /// its runs in the race
        runs: u64,
        /// the resource values it was run on
        values: u64,
        /// the mean of its scores (null if one was not a number)
        mean: Option<f64>,
        /// survivor, tested (a paired test against the best rejected), halved, or not finite
        outcome: String,
        /// the rung that removed it, from 0 (null for survivors)
        left_at: Option<u64>,
        /// the candidate it was tested against, or ranked behind
        against: Option<String>,
        /// one-sided paired t-test p-value against the best
        p_value: Option<f64>,
        /// the p-value Holm-adjusted over the candidates tested in the rung
        p_adjusted: Option<f64>,
    }
}

/// A rung as `search` reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct RungRow {
    pub rung: usize,
    /// Resource values run in this rung (positions, from 0).
    pub values: std::ops::Range<usize>,
    pub candidates: usize,
    pub runs: u64,
    pub removed: usize,
}

pub struct Outcome {
    pub candidates: Vec<CandidateRow>,
    pub rungs: Vec<RungRow>,
    pub runs: u64,
    pub grid_runs: u64,
    pub survivors: usize,
}

/// A candidate's name: `arm` or `arm[axis=value, ...]`.
pub fn label(plan: &Plan, s: &Schedule, candidate: usize) -> String {
    let run = plan.grid_run(s.candidate_start(candidate));
    let arm = &plan.manifest.arms[run.arm];
    if arm.axes.is_empty() {
        return arm.name.clone();
    }
    let set: Vec<String> = arm
        .axes
        .iter()
        .map(|a| format!("{}={}", a.name, run.params.get(a.id).plain()))
        .collect();
    format!("{}[{}]", arm.name, set.join(", "))
}

pub fn outcome(plan: &Plan) -> Option<Outcome> {
    let s = plan.schedule()?;
    let better = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if s.search.maximize => b.total_cmp(&a),
        (Some(a), Some(b)) => a.total_cmp(&b),
        (a, b) => b.is_some().cmp(&a.is_some()),
    };
    let mut rows: Vec<(usize, Option<usize>, CandidateRow)> = Vec::new();
    let survivors = s.survivors().to_vec();
    for (k, d) in s.decisions.iter().enumerate() {
        for e in &d.removed {
            let (outcome, against, p, q) = match &e.exit {
                Exit::Tested {
                    best,
                    p,
                    p_adjusted,
                } => ("tested", Some(*best), Some(*p), Some(*p_adjusted)),
                Exit::Halved { .. } => ("halved", Some(d.best), None, None),
                Exit::NotFinite => ("not finite", None, None, None),
            };
            rows.push((
                e.candidate,
                Some(k),
                row(plan, s, e.candidate, outcome, k, against, p, q),
            ));
        }
    }
    for &c in &survivors {
        let mut r = row(plan, s, c, "survivor", 0, None, None, None);
        r.left_at = None;
        rows.push((c, None, r));
    }
    rows.sort_by(|a, b| {
        let rung = |x: &Option<usize>| x.map_or(usize::MAX, |k| k);
        rung(&b.1)
            .cmp(&rung(&a.1))
            .then(better(a.2.mean, b.2.mean))
            .then(a.0.cmp(&b.0))
    });
    let candidates: Vec<CandidateRow> = rows
        .into_iter()
        .enumerate()
        .map(|(i, (_, _, mut r))| {
            r.place = i as u64 + 1;
            r
        })
        .collect();
    let rungs = s
        .rungs
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let runs = s.rung_runs(k);
            RungRow {
                rung: k,
                values: r.values.clone(),
                candidates: r.candidates.len(),
                runs: runs.end - runs.start,
                removed: s.decisions.get(k).map_or(0, |d| d.removed.len()),
            }
        })
        .collect();
    Some(Outcome {
        candidates,
        rungs,
        runs: plan.total,
        grid_runs: plan.grid_total(),
        survivors: survivors.len(),
    })
}

#[allow(clippy::too_many_arguments)]
fn row(
    plan: &Plan,
    s: &Schedule,
    c: usize,
    outcome: &str,
    rung: usize,
    against: Option<usize>,
    p: Option<f64>,
    q: Option<f64>,
) -> CandidateRow {
    let scores = &s.scores[c];
    let mean = scores.iter().sum::<f64>() / scores.len().max(1) as f64;
    let values = scores.len() as u64;
    CandidateRow {
        place: 0,
        candidate: label(plan, s, c),
        runs: values * s.runs_per_value(),
        values,
        mean: mean.is_finite().then_some(mean),
        outcome: outcome.into(),
        left_at: Some(rung as u64),
        against: against.map(|b| label(plan, s, b)),
        p_value: p,
        p_adjusted: q,
    }
}
