//! Trajectory charts without the drawing: the mean and a ±1 sd band of each
//! curve column per (scenario, arm variant, x), accumulated row by row
//! while a detail table streams past, so memory follows the number of
//! curves, not the number of runs.

use std::collections::BTreeMap;

use super::design::Design;
use super::figures::{Panel, Series, TrajectoryFigure};
use crate::grid::Plan;
use crate::params::Value;

/// The largest x a curve may reach; a larger one is corrupt data, not a run.
pub const MAX_X: u64 = 10_000_000;

/// Per curve column, per x: (n, sum, sum of squares).
type Moments = Vec<Vec<(f64, f64, f64)>>;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CurveError {
    #[error(
        "a row of run {0}, which the manifest does not have; run `witness verify` on the folder"
    )]
    UnknownRun(i64),
    #[error("run {run}: {x_name} = {x} is not a position 0 ..= {MAX_X}; run `witness verify` on the folder")]
    BadX { run: i64, x_name: String, x: String },
}

pub struct Trajectories<'a> {
    design: &'a Design,
    chosen: &'a [usize],
    /// Per run: what its curve values are divided by.
    scale: Vec<f64>,
    columns: &'static [&'static str],
    x_name: &'static str,
    acc: BTreeMap<(usize, usize), Moments>,
    seeds: BTreeMap<(usize, usize), usize>,
}

impl<'a> Trajectories<'a> {
    pub fn new(plan: &Plan, design: &'a Design, chosen: &'a [usize]) -> Option<Trajectories<'a>> {
        let model = plan.model();
        let (_, x_name, columns, _) = model.curves()?;
        let scale = (0..plan.total)
            .map(|id| model.curve_scale(&plan.run(id).params))
            .collect();
        Some(Trajectories {
            design,
            chosen,
            scale,
            columns,
            x_name,
            acc: BTreeMap::new(),
            seeds: BTreeMap::new(),
        })
    }

    /// The mean curves of the `chosen` scenarios, streamed from the
    /// folder's curve table (which the caller has checked is there).
    pub fn read(
        results: &crate::results::ResultsDir,
        design: &'a Design,
        chosen: &'a [usize],
    ) -> crate::Result<Trajectories<'a>> {
        let plan = &results.plan;
        let (table, ..) = plan.model().curves().expect("a model with curves");
        let mut acc = Trajectories::new(plan, design, chosen).expect("a model with curves");
        let mut problem = None;
        results.scan(table, &acc.names(), |row| {
            if problem.is_none() {
                problem = acc.add(row).err();
            }
        })?;
        match problem {
            Some(e) => Err(e.into()),
            None => Ok(acc),
        }
    }

    /// The columns `add` takes, in order: run_id, x, then the curves.
    pub fn names(&self) -> Vec<&'static str> {
        let mut names = vec!["run_id", self.x_name];
        names.extend_from_slice(self.columns);
        names
    }

    pub fn add(&mut self, row: &[Value]) -> Result<(), CurveError> {
        let id = row[0].as_i64().unwrap_or(-1);
        let place = usize::try_from(id)
            .ok()
            .and_then(|i| self.design.places.get(i))
            .ok_or(CurveError::UnknownRun(id))?;
        let Some(place) = place else {
            return Ok(());
        };
        if !self.chosen.contains(&place.scenario) {
            return Ok(());
        }
        let x = row[1]
            .as_i64()
            .and_then(|x| u64::try_from(x).ok())
            .filter(|&x| x <= MAX_X)
            .ok_or_else(|| CurveError::BadX {
                run: id,
                x_name: self.x_name.into(),
                x: row[1].to_string(),
            })? as usize;
        let key = (place.scenario, place.variant);
        let slot = self
            .acc
            .entry(key)
            .or_insert_with(|| vec![Vec::new(); self.columns.len()]);
        if x == 0 {
            *self.seeds.entry(key).or_default() += 1;
        }
        for (k, v) in row[2..].iter().enumerate() {
            if slot[k].len() <= x {
                slot[k].resize(x + 1, (0.0, 0.0, 0.0));
            }
            let f = v.as_f64().unwrap_or(f64::NAN) / self.scale[id as usize];
            let c = &mut slot[k][x];
            *c = (c.0 + 1.0, c.1 + f, c.2 + f * f);
        }
        Ok(())
    }

    /// One figure per chosen scenario, a panel per curve column.
    pub fn figures(&self, plan: &Plan) -> Vec<(usize, TrajectoryFigure)> {
        let (_, x, _, y_label) = plan.model().curves().expect("Trajectories::new checked");
        let d = self.design;
        let mut figures = Vec::new();
        for &s in self.chosen {
            let panels = self
                .columns
                .iter()
                .enumerate()
                .map(|(k, column)| Panel {
                    title: column.to_string(),
                    series: self
                        .acc
                        .iter()
                        .filter(|((sc, _), _)| *sc == s)
                        .map(|((_, v), cols)| {
                            let stats = |&(n, sum, sq): &(f64, f64, f64)| {
                                let m = sum / n;
                                let sd =
                                    ((sq / n - m * m).max(0.0) * n / (n - 1.0).max(1.0)).sqrt();
                                (m, (m - sd).max(0.0), (m + sd).min(1.0))
                            };
                            let points: Vec<(f64, f64, f64)> = cols[k].iter().map(stats).collect();
                            Series {
                                label: d.variants[*v].label.clone(),
                                mean: points.iter().map(|p| p.0).collect(),
                                low: points.iter().map(|p| p.1).collect(),
                                high: points.iter().map(|p| p.2).collect(),
                            }
                        })
                        .collect(),
                })
                .collect();
            let n = self
                .seeds
                .iter()
                .filter(|((sc, _), _)| *sc == s)
                .map(|(_, n)| *n)
                .max()
                .unwrap_or(0);
            figures.push((
                s,
                TrajectoryFigure {
                    title: format!(
                        "{}: {} (mean of {n} seeds per arm, band ±1 sd)",
                        plan.manifest.name,
                        d.scenarios[s].label()
                    ),
                    x_label: x.to_string(),
                    y_label: y_label.to_string(),
                    panels,
                },
            ));
        }
        figures
    }
}
