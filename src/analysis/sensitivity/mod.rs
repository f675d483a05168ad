//! `witness sensitivity`: which factors of a sampled design drive a metric.
//! Per scenario (the chosen common axes) and arm, the metric's mean over
//! seeds (and any axes left out of the scenario) at each design point is
//! the output the indices are computed from: Sobol' indices for a
//! `kind = "sobol"` design, Morris's statistics for `kind = "morris"`.
//! Reading the design from the manifest (not from stored columns) is what
//! lets a row's role in Saltelli's scheme follow from its point index.

pub mod indices;

use std::collections::HashMap;

use crate::analysis::design::{is_descriptive, Design as Places};
use crate::analysis::summary::check_metrics;
use crate::design::Method;
use crate::grid::Plan;
use crate::params::Value;
use crate::results::ResultsDir;
use crate::store::TableData;

/// Bootstrap resamples behind every interval.
pub const RESAMPLES: usize = 1000;
/// The fewest resamples whose 95 % percentile interval leaves out a
/// resample at each end (1/40 = 2.5 %); fewer give the whole range.
pub const MIN_RESAMPLES: usize = 40;
/// Far past where an interval's ends stop moving (their Monte Carlo error
/// shrinks as one over the square root of the count), and below where
/// every index's resamples, held at once, would take gigabytes.
pub const MAX_RESAMPLES: usize = 100_000;

/// Intervals wider than this (Sobol': on an index; Morris: relative to the
/// largest mu*) get a warning with the design size that would narrow them.
const WIDE: f64 = 0.1;
const WIDE_MORRIS: f64 = 0.2;

crate::record! {
    /// One index of one factor, in one scenario and arm: a row of sensitivity.csv.
    #[derive(Clone, Debug, PartialEq)]
    pub struct SensitivityRow {
        /// the scenario: the chosen common-axis values (empty: all runs)
        scenario: String,
        /// the arm variant
        arm: String,
        /// the summary column analysed (its mean over seeds per design point)
        metric: String,
        /// S1, ST, S2 (Sobol') or mu, mu_star, sigma (Morris)
        index: String,
        /// the factor
        factor: String,
        /// the second factor of an S2 row
        with: Option<String>,
        /// the index's estimate
        estimate: f64,
        /// 95 % percentile bootstrap interval, low end (null for mu and sigma)
        ci_low: Option<f64>,
        /// 95 % percentile bootstrap interval, high end
        ci_high: Option<f64>,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Sobol,
    Morris,
}

pub struct Request<'a> {
    pub metric: &'static str,
    pub method: Option<Kind>,
    /// Common axes that make a scenario; `None`: every descriptive one.
    pub by: Option<Vec<String>>,
    pub resamples: usize,
    pub dir: &'a str,
}

pub struct Report {
    pub kind: Kind,
    pub rows: Vec<SensitivityRow>,
    pub warnings: Vec<String>,
}

/// A scenario label, a variant, and per design point the metric's sum and
/// count.
type Group = (String, usize, Vec<(f64, u64)>);

fn usage(msg: String) -> crate::Error {
    crate::Error::Usage(msg)
}

/// The common axes a scenario is made of.
fn scenario_axes(plan: &Plan, by: &Option<Vec<String>>, dir: &str) -> crate::Result<Vec<usize>> {
    let m = &plan.manifest;
    let specs = plan.model().params();
    let descriptive: Vec<usize> = (0..m.common.len())
        .filter(|&i| is_descriptive(specs, &m.common[i]))
        .collect();
    let Some(names) = by else {
        return Ok(descriptive);
    };
    names
        .iter()
        .filter(|n| !n.is_empty())
        .map(|n| {
            descriptive
                .iter()
                .copied()
                .find(|&i| m.common[i].name == n.as_str())
                .ok_or_else(|| {
                    let have: Vec<&str> = descriptive.iter().map(|&i| m.common[i].name).collect();
                    // Seeds and replicates are what an index is averaged
                    // over, never a scenario: say so rather than deny the axis.
                    let why = if m.common.iter().any(|a| a.name == n.as_str()) {
                        "seeds and replicates are averaged over, not a scenario's axis"
                    } else {
                        "not a common grid axis of this experiment"
                    };
                    usage(format!(
                        "{dir}: --by {n}: {why}; allowed: {}",
                        if have.is_empty() {
                            "none (the scenario is every run)".into()
                        } else {
                            have.join(", ")
                        }
                    ))
                })
        })
        .collect()
}

pub fn run(results: &ResultsDir, req: &Request) -> crate::Result<Report> {
    let plan = &results.plan;
    let dir = req.dir;
    let design = plan.manifest.design.as_ref().ok_or_else(|| {
        usage(format!(
            "{dir}: its manifest has no [design]; sensitivity indices need a sampled design: \
             add [design] kind = \"sobol\" (or \"morris\") with [design.factors]"
        ))
    })?;
    let kind = match (&design.method, req.method) {
        (Method::Sobol { .. }, None | Some(Kind::Sobol)) => Kind::Sobol,
        (Method::Morris { .. }, None | Some(Kind::Morris)) => Kind::Morris,
        (m, asked) => {
            let asked = match asked {
                Some(Kind::Sobol) => "--method sobol needs a [design] of that kind, and",
                Some(Kind::Morris) => "--method morris needs a [design] of that kind, and",
                None => "sensitivity indices need a sampled design made for them, and",
            };
            return Err(usage(format!(
                "{dir}: {asked} this one is kind = {:?}; \
                 Sobol' indices need kind = \"sobol\", Morris's need kind = \"morris\"",
                m.name()
            )));
        }
    };
    check_metrics(plan, &[req.metric])?;
    let axes = scenario_axes(plan, &req.by, dir)?;
    let places = Places::of(plan)?;
    let values = results.runs_columns(&[req.metric])?.remove(0);
    let m = &plan.manifest;
    // (scenario label, variant) -> per design point: sum and count.
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<(String, usize), usize> = HashMap::new();
    for id in 0..plan.total {
        let Some(place) = places.place(id) else {
            continue;
        };
        if places.is_placebo(plan, place.variant) {
            continue;
        }
        let run = plan.run(id);
        let label: Vec<String> = axes
            .iter()
            .map(|&i| {
                format!(
                    "{}={}",
                    m.common[i].name,
                    run.params.get(m.common[i].id).plain()
                )
            })
            .collect();
        let label = label.join(", ");
        let x = match &values[id as usize] {
            Value::Float(x) => *x,
            Value::Int(i) => *i as f64,
            Value::Bool(b) => f64::from(u8::from(*b)),
            other => {
                return Err(usage(format!(
                    "{dir}: run {id} has {} = {other}; the indices need a number in every run (a metric that can be null, \
                     such as a round that may never come, or a failed run, has none): choose another --metric",
                    req.metric
                )))
            }
        };
        let next = groups.len();
        let g = *index
            .entry((label.clone(), place.variant))
            .or_insert_with(|| {
                groups.push((label, place.variant, vec![(0.0, 0); design.len()]));
                next
            });
        let slot = &mut groups[g].2[run.design_point.unwrap_or(0) as usize];
        slot.0 += x;
        slot.1 += 1;
    }
    let names: Vec<&str> = design.params.iter().map(|(_, n)| *n).collect();
    let d = names.len();
    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    for (scenario, variant, sums) in &groups {
        let y: Vec<f64> = sums.iter().map(|&(s, n)| s / n as f64).collect();
        let arm = places.variants[*variant].label.clone();
        let row =
            |index: &str, j: usize, with: Option<usize>, estimate: f64, ci: Option<(f64, f64)>| {
                SensitivityRow {
                    scenario: scenario.clone(),
                    arm: arm.clone(),
                    metric: req.metric.to_string(),
                    index: index.to_string(),
                    factor: names[j].to_string(),
                    with: with.map(|k| names[k].to_string()),
                    estimate,
                    ci_low: ci.map(|c| c.0),
                    ci_high: ci.map(|c| c.1),
                }
            };
        // Keyed by the scenario's and arm's names, so an interval does not
        // move when other scenarios or arms are added.
        let key = [
            xxhash_rust::xxh3::xxh3_64(scenario.as_bytes()),
            xxhash_rust::xxh3::xxh3_64(arm.as_bytes()),
        ];
        match (kind, &design.method) {
            (Kind::Sobol, &Method::Sobol { base, second_order }) => {
                let r = indices::sobol_report(&y, d, second_order, req.resamples, &key);
                for j in 0..d {
                    rows.push(row("S1", j, None, r.estimate.s1[j], Some(r.s1[j])));
                    rows.push(row("ST", j, None, r.estimate.st[j], Some(r.st[j])));
                }
                if let (Some(s2), Some(ci)) = (&r.estimate.s2, &r.s2) {
                    for j in 0..d {
                        for k in j + 1..d {
                            rows.push(row("S2", j, Some(k), s2[j][k], Some(ci[j][k])));
                        }
                    }
                }
                let place = if scenario.is_empty() {
                    "all runs"
                } else {
                    scenario
                };
                if r.estimate.flat {
                    warnings.push(format!(
                        "{arm} ({place}): {} takes one value over the design's A and B samples, so every index is 0 by convention, not measured; ask for a larger base (now {base}), or choose a metric that varies",
                        req.metric
                    ));
                }
                let widest =
                    r.s1.iter()
                        .chain(&r.st)
                        .map(|c| c.1 - c.0)
                        .fold(0.0, f64::max);
                if widest > WIDE {
                    let want = (base as f64 * (widest / WIDE).powi(2)).ceil() as u64;
                    warnings.push(format!(
                        "{arm} ({place}): intervals up to {widest:.2} wide; for intervals near {WIDE} ask for base = {} (now {base})",
                        want.next_power_of_two()
                    ));
                }
            }
            (
                Kind::Morris,
                &Method::Morris {
                    trajectories,
                    levels,
                    ..
                },
            ) => {
                let r = indices::morris(&design.unit, &y, d, levels, req.resamples, &key);
                for j in 0..d {
                    rows.push(row("mu", j, None, r.mu[j], None));
                    rows.push(row(
                        "mu_star",
                        j,
                        None,
                        r.mu_star[j],
                        Some(r.mu_star_interval[j]),
                    ));
                    rows.push(row("sigma", j, None, r.sigma[j], None));
                }
                let top = r.mu_star.iter().copied().fold(0.0, f64::max);
                let widest = r
                    .mu_star_interval
                    .iter()
                    .map(|c| c.1 - c.0)
                    .fold(0.0, f64::max);
                if top > 0.0 && widest / top > WIDE_MORRIS {
                    let want = (trajectories as f64 * (widest / top / WIDE_MORRIS).powi(2)).ceil();
                    warnings.push(format!(
                        "{arm} ({}): mu* intervals up to {:.0} % of the largest mu*; for about {:.0} % ask for trajectories = {want} (now {trajectories})",
                        if scenario.is_empty() { "all runs" } else { scenario },
                        100.0 * widest / top,
                        100.0 * WIDE_MORRIS
                    ));
                }
            }
            _ => unreachable!("the kind follows the design"),
        }
    }
    Ok(Report {
        kind,
        rows,
        warnings,
    })
}

impl Report {
    pub fn table(&self) -> TableData {
        TableData::of_records(&self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;
    use crate::model::Registry;

    #[test]
    fn a_scenario_axis_is_named_and_seed_is_told_apart_from_a_typo() {
        let text = "[experiment]\nname = \"s\"\nmodel = \"witness\"\n[fixed]\npopulation = 20\nrounds = 5\n\
                    [grid]\nseed = [1, 2]\ntruth = [false, true]\n\
                    [design]\nkind = \"sobol\"\nbase = 8\n[design.factors]\ngain = { from = 1.0, to = 9.0 }\n\
                    [[arm]]\nname = \"e\"\npolicy = \"endorsement\"\n";
        let plan =
            Plan::new(Manifest::parse("s.toml", text, &Registry::builtin()).unwrap()).unwrap();
        let by = |n: &str| scenario_axes(&plan, &Some(vec![n.to_string()]), "DIR");
        assert_eq!(by("truth").unwrap().len(), 1);
        let seed = by("seed").unwrap_err().to_string();
        assert!(
            seed.contains("--by seed: seeds and replicates are averaged over")
                && seed.ends_with("allowed: truth"),
            "{seed}"
        );
        let typo = by("truht").unwrap_err().to_string();
        assert!(
            typo.contains("--by truht: not a common grid axis"),
            "{typo}"
        );
    }
}
