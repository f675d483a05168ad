//! A heatmap without the drawing: the mean of a summary metric over seeds
//! and every other axis, per cell. With two grid axes, one panel per arm
//! variant and the axes as x and y; with one axis, the arms as rows; with
//! none, one row of arms.

use super::design::{is_descriptive, Design};
use super::figures::Heatmap;
use crate::grid::Plan;
use crate::manifest::Axis;
use crate::params::Value;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AxisError {
    #[error("--x/--y {0}: not a grid axis of this experiment; axes: {1}")]
    Unknown(String, String),
    #[error("--x and --y are both {0}; give two different axes, or only --x for the arms by {0}")]
    Same(String),
}

/// What the heatmap's panels, rows and columns are.
pub enum Layout<'p> {
    /// A panel per arm variant, `x` and `y` as columns and rows.
    Axes(&'p Axis, &'p Axis),
    /// One panel, the arm variants as rows, `x` as columns.
    ArmsBy(&'p Axis),
    /// One panel, one row, the arm variants as columns.
    Arms,
}

/// The heatmap's layout: the axes asked for, else the first two common
/// axes with several values (seed and replicate aside), else fewer.
pub fn layout<'p>(
    plan: &'p Plan,
    x: Option<&str>,
    y: Option<&str>,
) -> Result<Layout<'p>, AxisError> {
    let m = &plan.manifest;
    let specs = plan.model().params();
    let all: Vec<&Axis> = m
        .common
        .iter()
        .chain(m.arms.iter().flat_map(|a| &a.axes))
        .collect();
    let find = |name: &str| {
        all.iter().copied().find(|a| a.name == name).ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|a| a.name).collect();
            AxisError::Unknown(name.into(), names.join(", "))
        })
    };
    if let (Some(x), Some(y)) = (x, y) {
        if x == y {
            return Err(AxisError::Same(x.into()));
        }
    }
    let mut defaults = m
        .common
        .iter()
        .filter(|a| a.values.len() > 1 && is_descriptive(specs, a));
    let x = match x {
        Some(name) => Some(find(name)?),
        None => defaults.next(),
    };
    let y = match y {
        Some(name) => Some(find(name)?),
        None if x.is_some() => defaults.find(|a| Some(a.id) != x.map(|x| x.id)),
        None => None,
    };
    Ok(match (x, y) {
        (Some(x), Some(y)) => Layout::Axes(x, y),
        (Some(x), None) | (None, Some(x)) => Layout::ArmsBy(x),
        (None, None) => Layout::Arms,
    })
}

/// The heatmap of `metric` (its value in each run, by run id).
pub fn heatmap(
    plan: &Plan,
    d: &Design,
    metric: &str,
    values: &[Value],
    layout: &Layout,
) -> Heatmap {
    let labels = |axis: &Axis| axis.values.iter().map(Value::plain).collect::<Vec<_>>();
    let arms: Vec<String> = d.variants.iter().map(|v| v.label.clone()).collect();
    let (x_axis, x_values, y_axis, y_values, panels): (
        String,
        Vec<String>,
        String,
        Vec<String>,
        Vec<String>,
    ) = match layout {
        Layout::Axes(x, y) => (
            x.name.into(),
            labels(x),
            y.name.into(),
            labels(y),
            arms.clone(),
        ),
        Layout::ArmsBy(x) => (
            x.name.into(),
            labels(x),
            "arm".into(),
            arms.clone(),
            vec!["all arms".into()],
        ),
        Layout::Arms => (
            "arm".into(),
            arms.clone(),
            String::new(),
            vec!["all runs".into()],
            vec!["all arms".into()],
        ),
    };
    let index = |axis: &Axis, v: &Value| axis.values.iter().position(|x| x == v);
    let mut cells: Vec<Vec<Vec<(f64, f64)>>> =
        vec![vec![vec![(0.0, 0.0); x_values.len()]; y_values.len()]; panels.len()];
    for id in 0..plan.total {
        let Some(place) = d.place(id) else { continue };
        let run = plan.run(id);
        let variant = place.variant;
        let at = match layout {
            Layout::Axes(x, y) => index(x, run.params.get(x.id))
                .zip(index(y, run.params.get(y.id)))
                .map(|(xi, yi)| (variant, yi, xi)),
            Layout::ArmsBy(x) => index(x, run.params.get(x.id)).map(|xi| (0, variant, xi)),
            Layout::Arms => Some((0, 0, variant)),
        };
        let value = values[id as usize].as_f64().unwrap_or(f64::NAN);
        if let (Some((p, yi, xi)), false) = (at, value.is_nan()) {
            let c = &mut cells[p][yi][xi];
            *c = (c.0 + 1.0, c.1 + value);
        }
    }
    let mut y_values = y_values;
    let mut means: Vec<Vec<Vec<Option<f64>>>> = cells
        .into_iter()
        .map(|grid| {
            grid.into_iter()
                .map(|row| {
                    row.into_iter()
                        .map(|(n, sum)| (n > 0.0).then(|| sum / n))
                        .collect()
                })
                .collect()
        })
        .collect();
    // Charts draw the first row at the bottom; arms read top down.
    if matches!(layout, Layout::ArmsBy(_)) {
        y_values.reverse();
        means.iter_mut().for_each(|m| m.reverse());
    }
    let by = match layout {
        Layout::Axes(x, y) => format!(" by {} and {}", x.name, y.name),
        Layout::ArmsBy(x) => format!(" by arm and {}", x.name),
        Layout::Arms => " by arm".into(),
    };
    Heatmap {
        title: format!(
            "{}: mean {metric}{by}, over seeds and other axes",
            plan.manifest.name
        ),
        x_axis,
        x_values,
        y_axis,
        y_values,
        panels: panels.into_iter().zip(means).collect(),
    }
}
