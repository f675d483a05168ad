//! What `plot` draws for a results folder: trajectory figures for the
//! chosen scenarios (when the model has curves and the table is there) and
//! a heatmap of a summary metric over two axes, each with a file stem.

use super::curves::Trajectories;
use super::design::Design;
use super::figures::{Heatmap, TrajectoryFigure};
use super::heatmap::{heatmap, layout, Layout};
use crate::results::ResultsDir;
use crate::Result;

/// Scenarios drawn when none is chosen; more would bury the reader.
pub const MAX_SCENARIOS: usize = 12;
/// The most rows, columns or panels a heatmap is drawn with.
pub const MAX_HEATMAP_SIDE: usize = 40;
pub const MAX_HEATMAP_PANELS: usize = 12;

pub struct Request<'a> {
    pub scenario: Option<&'a str>,
    /// The heatmap's metric; the model's first headline metric when `None`.
    pub metric: Option<&'a str>,
    pub x: Option<&'a str>,
    pub y: Option<&'a str>,
    /// `--where`: the runs drawn.
    pub filter: Option<&'a str>,
}

pub struct Figures {
    pub trajectories: Vec<(String, TrajectoryFigure)>,
    pub heatmap: Option<(String, Heatmap)>,
    /// What was left out and why, for the reader.
    pub notes: Vec<String>,
}

/// A file-name-safe form of a label: letters, digits and dots kept, runs of
/// anything else one '-'.
pub fn slug(s: &str) -> String {
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

pub fn figures(results: &ResultsDir, req: &Request) -> Result<Figures> {
    let plan = &results.plan;
    let model = plan.model();
    let d = Design::kept(plan, req.filter)?;
    let mut notes = Vec::new();
    let chosen: Vec<usize> = match req.scenario {
        Some(want) => vec![d.scenario(plan, want)?],
        None => {
            if d.scenarios.len() > MAX_SCENARIOS {
                notes.push(format!(
                    "drawing the first {MAX_SCENARIOS} of {} scenarios; choose one with --scenario",
                    d.scenarios.len()
                ));
            }
            (0..d.scenarios.len().min(MAX_SCENARIOS)).collect()
        }
    };
    let mut trajectories = Vec::new();
    match model.curves() {
        Some((table, ..)) if results.has_table(table) => {
            let acc = Trajectories::read(results, &d, &chosen)?;
            for (s, fig) in acc.figures(plan) {
                trajectories.push((
                    format!("trajectories-{}", slug(&d.scenarios[s].label())),
                    fig,
                ));
            }
        }
        Some((table, ..)) => notes.push(format!(
            "no {table}.parquet (set [output] {table} = true); no trajectory charts"
        )),
        None => {}
    }
    let layout = layout(plan, req.x, req.y)?;
    let metric = super::summary::metric_or_default(model, req.metric, "--metric")?;
    let values = results.runs_columns(&[metric])?.remove(0);
    let stem = match &layout {
        Layout::Axes(x, y) => format!("heatmap-{}-{}-{}", slug(metric), slug(x.name), slug(y.name)),
        Layout::ArmsBy {
            axis,
            arms_on_x: false,
        } => format!("heatmap-{}-{}-arm", slug(metric), slug(axis.name)),
        Layout::ArmsBy {
            axis,
            arms_on_x: true,
        } => format!("heatmap-{}-arm-{}", slug(metric), slug(axis.name)),
        // Arms alone: a row, or with `--y arm` a column (x is "all runs").
        Layout::Arms { on_x: true } => format!("heatmap-{}-arm", slug(metric)),
        Layout::Arms { on_x: false } => format!("heatmap-{}-all-runs-arm", slug(metric)),
    };
    let hm = heatmap(plan, &d, metric, &values, &layout);
    if hm.missing > 0 && hm.missing < hm.runs {
        notes.push(format!(
            "heatmap: {metric} has no value in {} of {} runs; each cell is the mean over its runs with one \
             (`witness summary` names the cells)",
            hm.missing, hm.runs
        ));
    }
    let heatmap = if hm.runs == hm.missing {
        notes.push(format!(
            "no heatmap: {metric} has no value in any of the {} runs drawn; choose another with --metric",
            hm.runs
        ));
        None
    } else if hm.x_values.len().max(hm.y_values.len()) > MAX_HEATMAP_SIDE
        || hm.panels.len() > MAX_HEATMAP_PANELS
    {
        // Over two axes, each arm variant is a panel.
        let fix = match layout {
            Layout::Axes(..) if hm.panels.len() > MAX_HEATMAP_PANELS => {
                "keep fewer arm variants (the panels) with --where"
            }
            _ => "choose axes with --x and --y",
        };
        notes.push(format!(
            "no heatmap: {} x {} cells in {} panel(s) is more than a chart shows (at most {MAX_HEATMAP_SIDE} a side, \
             {MAX_HEATMAP_PANELS} panels); {fix}, or use `witness summary`",
            hm.x_values.len(),
            hm.y_values.len(),
            hm.panels.len()
        ));
        None
    } else {
        Some((stem, hm))
    };
    let mut figures = Figures {
        trajectories,
        heatmap,
        notes,
    };
    if let Some(filter) = req.filter {
        figures.mark_filtered(filter);
    }
    Ok(figures)
}

impl Figures {
    /// Figures of some runs say which, in the title and the file name, so
    /// they neither pass for nor replace the figures of every run.
    fn mark_filtered(&mut self, filter: &str) {
        let slug = super::filter::file_slug(filter);
        let stem = |s: &mut String| *s = format!("{s}-where-{slug}");
        let title = |t: &mut String| *t = format!("{t} [where {filter}]");
        for (s, fig) in &mut self.trajectories {
            stem(s);
            title(&mut fig.title);
        }
        if let Some((s, hm)) = &mut self.heatmap {
            stem(s);
            title(&mut hm.title);
        }
    }
}
