//! `witness plot`: trajectory charts per scenario and a heatmap of a summary
//! metric over two axes, as SVG and PNG under DIR/plots/. Trajectories are
//! aggregated while streaming the table, so memory follows the number of
//! curves, not the number of runs.

use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

use super::InputError;
use crate::analysis::groups::{design, Design, NOT_SCENARIO_AXES};
use crate::grid::Plan;
use crate::params::Value;
use crate::runner::layout::Layout;
use crate::sink::charts::{
    write_heatmap, write_trajectories, Heatmap, Panel, Series, TrajectoryFigure,
};
use crate::sink::parquet::{read_columns, scan_columns};

/// Scenarios drawn when none is chosen; more would bury the reader.
const MAX_SCENARIOS: usize = 12;

pub struct PlotArgs<'a> {
    pub scenario: Option<&'a str>,
    pub metric: &'a str,
    pub x: Option<&'a str>,
    pub y: Option<&'a str>,
}

fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

fn number(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(x) => *x,
        _ => f64::NAN,
    }
}

pub fn plot(dir: &Path, a: &PlotArgs) -> Result<u8> {
    let layout = Layout::new(dir);
    let manifest = layout.read_manifest()?;
    let plan = Plan::new(&manifest);
    let d = design(&plan).map_err(InputError)?;
    let out = dir.join("plots");
    std::fs::create_dir_all(&out).with_context(|| out.display().to_string())?;
    let mut written = Vec::new();
    let chosen: Vec<usize> = match a.scenario {
        Some(want) => {
            let norm = |s: &str| s.replace(' ', "");
            let i = d
                .scenarios
                .iter()
                .position(|s| norm(s) == norm(want))
                .ok_or_else(|| {
                    InputError(format!(
                        "--scenario {want:?}: no such scenario; scenarios: {}",
                        d.scenarios.join(" | ")
                    ))
                })?;
            vec![i]
        }
        None => {
            if d.scenarios.len() > MAX_SCENARIOS {
                eprintln!(
                    "note: drawing the first {MAX_SCENARIOS} of {} scenarios; choose one with --scenario",
                    d.scenarios.len()
                );
            }
            (0..d.scenarios.len().min(MAX_SCENARIOS)).collect()
        }
    };
    match plan.model().curves() {
        Some(spec) if layout.table(spec.table).exists() => {
            for (s, fig) in trajectories(&layout, &plan, &d, &chosen, &manifest.name)? {
                let stem = out.join(format!("trajectories-{}", slug(&d.scenarios[s])));
                write_trajectories(&stem, &fig).with_context(|| stem.display().to_string())?;
                written.push(stem);
            }
        }
        Some(spec) => eprintln!(
            "note: no {}.parquet (set [output] {} = true); no trajectory charts",
            spec.table, spec.table
        ),
        None => {}
    }
    match heatmap(&layout, &plan, &d, a)? {
        Some((stem_name, hm)) => {
            let stem = out.join(stem_name);
            write_heatmap(&stem, &hm).with_context(|| stem.display().to_string())?;
            written.push(stem);
        }
        None => eprintln!("note: fewer than two grid axes with several values; no heatmap (name them with --x and --y)"),
    }
    for stem in &written {
        println!("wrote {}.svg and .png", stem.display());
    }
    Ok(0)
}

/// Per curve column, per x: (n, sum, sum of squares).
type Moments = Vec<Vec<(f64, f64, f64)>>;

/// Mean and ±1 sd band per (scenario, arm variant, round) for each curve.
fn trajectories(
    layout: &Layout,
    plan: &Plan,
    d: &Design,
    chosen: &[usize],
    name: &str,
) -> Result<Vec<(usize, TrajectoryFigure)>> {
    let spec = plan.model().curves().expect("checked by the caller");
    let path = layout.table(spec.table);
    let divisor: Vec<f64> = (0..plan.total)
        .map(|id| number(plan.run(id).params.get(spec.divide_by)))
        .collect();
    let mut names = vec!["run_id", spec.x];
    names.extend_from_slice(spec.columns);
    let mut acc: BTreeMap<(usize, usize), Moments> = BTreeMap::new();
    let mut seeds: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    scan_columns(&path, &names, |row| {
        let id = number(&row[0]) as usize;
        let place = d.places[id];
        if !chosen.contains(&place.scenario) {
            return;
        }
        let x = number(&row[1]) as usize;
        let slot = acc
            .entry((place.scenario, place.variant))
            .or_insert_with(|| vec![Vec::new(); spec.columns.len()]);
        if x == 0 {
            *seeds.entry((place.scenario, place.variant)).or_default() += 1;
        }
        for (k, v) in row[2..].iter().enumerate() {
            if slot[k].len() <= x {
                slot[k].resize(x + 1, (0.0, 0.0, 0.0));
            }
            let f = number(v) / divisor[id];
            let c = &mut slot[k][x];
            *c = (c.0 + 1.0, c.1 + f, c.2 + f * f);
        }
    })
    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut figures = Vec::new();
    for &s in chosen {
        let panels = spec
            .columns
            .iter()
            .enumerate()
            .map(|(k, column)| Panel {
                title: column.to_string(),
                series: acc
                    .iter()
                    .filter(|((sc, _), _)| *sc == s)
                    .map(|((_, v), cols)| {
                        let stats = |&(n, sum, sq): &(f64, f64, f64)| {
                            let m = sum / n;
                            let sd = ((sq / n - m * m).max(0.0) * n / (n - 1.0).max(1.0)).sqrt();
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
        let n = seeds
            .iter()
            .filter(|((sc, _), _)| *sc == s)
            .map(|(_, n)| *n)
            .max()
            .unwrap_or(0);
        figures.push((
            s,
            TrajectoryFigure {
                title: format!(
                    "{name}: {} (mean of {n} seeds per arm, band ±1 sd)",
                    d.scenarios[s]
                ),
                x_label: spec.x.to_string(),
                y_label: spec.y_label.to_string(),
                panels,
            },
        ));
    }
    Ok(figures)
}

/// Mean of a summary metric per (arm variant, x value, y value), averaged
/// over seeds and every other axis.
fn heatmap(
    layout: &Layout,
    plan: &Plan,
    d: &Design,
    a: &PlotArgs,
) -> Result<Option<(String, Heatmap)>> {
    let m = plan.manifest;
    let axes: Vec<&crate::manifest::Axis> = m
        .common
        .iter()
        .filter(|ax| ax.values.len() > 1 && !NOT_SCENARIO_AXES.contains(&ax.name))
        .collect();
    let pick = |asked: Option<&str>,
                default: Option<&&crate::manifest::Axis>|
     -> Result<Option<(String, Vec<String>)>> {
        match asked {
            Some(name) => {
                let ax = m
                    .common
                    .iter()
                    .chain(m.arms.iter().flat_map(|arm| &arm.axes))
                    .find(|ax| ax.name == name);
                let ax = ax.ok_or_else(|| {
                    InputError(format!(
                        "--x/--y {name}: not a grid axis of this experiment"
                    ))
                })?;
                Ok(Some((
                    ax.name.to_string(),
                    ax.values.iter().map(Value::plain).collect(),
                )))
            }
            None => Ok(default.map(|ax| {
                (
                    ax.name.to_string(),
                    ax.values.iter().map(Value::plain).collect(),
                )
            })),
        }
    };
    let (Some((x_axis, x_values)), Some((y_axis, y_values))) =
        (pick(a.x, axes.first())?, pick(a.y, axes.get(1))?)
    else {
        return Ok(None);
    };
    let path = layout.table("runs");
    let metric = read_columns(&path, &[a.metric])
        .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    let mut cells: Vec<Vec<Vec<(f64, f64)>>> =
        vec![vec![vec![(0.0, 0.0); x_values.len()]; y_values.len()]; d.variants.len()];
    for id in 0..plan.total {
        let run = plan.run(id);
        let xi = x_values
            .iter()
            .position(|v| *v == run.params.get(&x_axis).plain());
        let yi = y_values
            .iter()
            .position(|v| *v == run.params.get(&y_axis).plain());
        let value = number(&metric[0][id as usize]);
        if let (Some(xi), Some(yi), false) = (xi, yi, value.is_nan()) {
            let c = &mut cells[d.places[id as usize].variant][yi][xi];
            *c = (c.0 + 1.0, c.1 + value);
        }
    }
    let panels = d
        .variants
        .iter()
        .zip(cells)
        .map(|(v, grid)| {
            let means = grid
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .map(|(n, sum)| (n > 0.0).then(|| sum / n))
                        .collect()
                })
                .collect();
            (v.label.clone(), means)
        })
        .collect();
    let stem = format!(
        "heatmap-{}-{}-{}",
        slug(a.metric),
        slug(&x_axis),
        slug(&y_axis)
    );
    Ok(Some((
        stem,
        Heatmap {
            title: format!(
                "{}: mean {} by {x_axis} and {y_axis}, over seeds and other axes",
                m.name, a.metric
            ),
            x_axis,
            x_values,
            y_axis,
            y_values,
            panels,
        },
    )))
}
