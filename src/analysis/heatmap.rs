//! A heatmap without the drawing: the mean of a summary metric over seeds
//! and every other axis, per cell. With two axes, one panel per arm
//! variant and the axes as x and y; with one axis, the arms as rows (or
//! columns); with none, one row of arms. An arm's own axis, plotted, is
//! taken out of its variants' labels, so the arm spreads over it; an arm
//! that does not read a plotted axis fills every cell along it.

use super::design::{is_descriptive, label, Design};
use super::figures::Heatmap;
use crate::grid::Plan;
use crate::manifest::Axis;
use crate::params::{ParamSet, Value};

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AxisError {
    #[error(
        "--x/--y {0}: not a grid axis of this experiment; axes: {1}, or arm for the arm variants"
    )]
    Unknown(String, String),
    #[error("--x and --y are both {0}; give two different axes (arm counts as one), or only --x")]
    Same(String),
}

/// The name `--x` and `--y` take for the arm variants.
pub const ARM: &str = "arm";

/// What the heatmap's panels, rows and columns are.
pub enum Layout<'p> {
    /// A panel per arm variant, `x` and `y` as columns and rows.
    Axes(&'p Axis, &'p Axis),
    /// One panel: the arm variants by `axis`, the arms as rows, or as
    /// columns with `arms_on_x`.
    ArmsBy { axis: &'p Axis, arms_on_x: bool },
    /// One panel of one row of the arm variants, or with `on_x` false one
    /// column of them.
    Arms { on_x: bool },
}

/// The heatmap's layout: the axes asked for (`arm` for the arm variants),
/// else the first two common axes with several values (seed and replicate
/// aside), else fewer.
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
            let names = if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            };
            AxisError::Unknown(name.into(), names)
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
    match (x, y) {
        (Some(ARM), None) => return Ok(Layout::Arms { on_x: true }),
        (Some(ARM), Some(y)) => {
            return Ok(Layout::ArmsBy {
                axis: find(y)?,
                arms_on_x: true,
            })
        }
        (x, Some(ARM)) => {
            let axis = match x {
                Some(name) => Some(find(name)?),
                None => defaults.next(),
            };
            return Ok(
                axis.map_or(Layout::Arms { on_x: false }, |axis| Layout::ArmsBy {
                    axis,
                    arms_on_x: false,
                }),
            );
        }
        _ => {}
    }
    // A default x skips the axis asked for as y.
    let y = y.map(find).transpose()?;
    let x = match x {
        Some(name) => Some(find(name)?),
        None => defaults.find(|a| Some(a.id) != y.map(|y| y.id)),
    };
    let y = match y {
        Some(y) => Some(y),
        None if x.is_some() => defaults.find(|a| Some(a.id) != x.map(|x| x.id)),
        None => None,
    };
    Ok(match (x, y) {
        (Some(x), Some(y)) => Layout::Axes(x, y),
        (Some(axis), None) => Layout::ArmsBy {
            axis,
            arms_on_x: false,
        },
        (None, Some(axis)) => Layout::ArmsBy {
            axis,
            arms_on_x: true,
        },
        (None, None) => Layout::Arms { on_x: true },
    })
}

/// The rows or panels the arm variants fall in: each variant's label less
/// the settings of the plotted axes, so that an arm's own axis on x or y
/// spreads the arm over that axis, where each variant would fill one cell
/// of a row (or panel) of its own. Returns the labels and each variant's.
fn groups(plan: &Plan, d: &Design, plotted: &[&str]) -> (Vec<String>, Vec<usize>) {
    let mut labels: Vec<String> = Vec::new();
    let mut of = Vec::with_capacity(d.variants.len());
    for v in &d.variants {
        let rest: Vec<_> = v
            .settings
            .iter()
            .filter(|(k, _)| !plotted.contains(k))
            .cloned()
            .collect();
        let name = plan.arm_name(v.arm);
        let l = if rest.is_empty() {
            name.to_string()
        } else {
            format!("{name}[{}]", label(&rest))
        };
        of.push(labels.iter().position(|x| *x == l).unwrap_or_else(|| {
            labels.push(l);
            labels.len() - 1
        }));
    }
    (labels, of)
}

/// The positions on `axis` a run's value takes: its own, or every one
/// when its arm does not read the axis (its result is the same at each).
fn positions(axis: &Axis, value: &Value, ignored: ParamSet) -> Vec<usize> {
    if ignored.contains(axis.id) {
        (0..axis.values.len()).collect()
    } else {
        axis.values
            .iter()
            .position(|x| x == value)
            .into_iter()
            .collect()
    }
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
    let (x_axis, x_values, y_axis, y_values, (panels, group)) = match *layout {
        Layout::Axes(x, y) => (
            x.name.to_string(),
            labels(x),
            y.name.to_string(),
            labels(y),
            groups(plan, d, &[x.name, y.name]),
        ),
        Layout::ArmsBy { axis, arms_on_x } => {
            let (arms, group) = groups(plan, d, &[axis.name]);
            let one = (vec!["all arms".to_string()], group);
            if arms_on_x {
                (ARM.into(), arms, axis.name.into(), labels(axis), one)
            } else {
                (axis.name.into(), labels(axis), ARM.into(), arms, one)
            }
        }
        Layout::Arms { on_x } => {
            let (arms, group) = groups(plan, d, &[]);
            let one = (vec!["all arms".to_string()], group);
            let all = vec!["all runs".to_string()];
            if on_x {
                (ARM.into(), arms, String::new(), all, one)
            } else {
                (String::new(), all, ARM.into(), arms, one)
            }
        }
    };
    let mut cells: Vec<Vec<Vec<(f64, f64)>>> =
        vec![vec![vec![(0.0, 0.0); x_values.len()]; y_values.len()]; panels.len()];
    let (mut runs, mut missing) = (0, 0);
    for id in 0..plan.total {
        let Some(place) = d.place(id) else { continue };
        let run = plan.run(id);
        let g = group[place.variant];
        let ignored = d.ignored[&(place.variant, place.scenario)];
        let on = |axis: &Axis| positions(axis, run.params.get(axis.id), ignored);
        // (panel, rows, columns) of the cells this run falls in.
        let (p, rows, cols) = match *layout {
            Layout::Axes(x, y) => (g, on(y), on(x)),
            Layout::ArmsBy {
                axis,
                arms_on_x: false,
            } => (0, vec![g], on(axis)),
            Layout::ArmsBy {
                axis,
                arms_on_x: true,
            } => (0, on(axis), vec![g]),
            Layout::Arms { on_x: true } => (0, vec![0], vec![g]),
            Layout::Arms { on_x: false } => (0, vec![g], vec![0]),
        };
        if rows.is_empty() || cols.is_empty() {
            continue;
        }
        runs += 1;
        let Some(value) = values[id as usize].as_f64().filter(|v| !v.is_nan()) else {
            missing += 1;
            continue;
        };
        for &yi in &rows {
            for &xi in &cols {
                let c = &mut cells[p][yi][xi];
                *c = (c.0 + 1.0, c.1 + value);
            }
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
    if matches!(
        layout,
        Layout::ArmsBy {
            arms_on_x: false,
            ..
        } | Layout::Arms { on_x: false }
    ) {
        y_values.reverse();
        means.iter_mut().for_each(|m| m.reverse());
    }
    let by = match layout {
        Layout::Axes(x, y) => format!(" by {} and {}", x.name, y.name),
        Layout::ArmsBy {
            axis,
            arms_on_x: false,
        } => format!(" by {} and arm", axis.name),
        Layout::ArmsBy {
            axis,
            arms_on_x: true,
        } => format!(" by arm and {}", axis.name),
        Layout::Arms { .. } => " by arm".into(),
    };
    let over = if x_axis == "seed" || y_axis == "seed" {
        "the other axes"
    } else {
        "seeds and other axes"
    };
    Heatmap {
        title: format!("{}: mean {metric}{by}, over {over}", plan.manifest.name),
        x_axis,
        x_values,
        y_axis,
        y_values,
        panels: panels.into_iter().zip(means).collect(),
        runs,
        missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;
    use crate::model::Registry;

    /// Endorsement with its own gain axis, and source_aware, which does not
    /// read gain, over two communication values and two seeds.
    fn plan() -> Plan {
        let text = "[experiment]\nname = \"h\"\nmodel = \"witness\"\n[fixed]\npopulation = 20\nrounds = 5\n\
                    [grid]\nseed = [1, 2]\ncommunication = [0.5, 0.8]\n\
                    [[arm]]\nname = \"e\"\npolicy = \"endorsement\"\ngrid = { gain = [3.0, 9.0] }\n\
                    [[arm]]\nname = \"s\"\npolicy = \"source_aware\"\n";
        Plan::new(Manifest::parse("h.toml", text, &Registry::builtin()).unwrap()).unwrap()
    }

    /// A metric that is the run's gain, plus 100 for source_aware, with one
    /// source_aware run (the last) missing.
    fn values(plan: &Plan) -> Vec<Value> {
        (0..plan.total)
            .map(|id| {
                let run = plan.run(id);
                let gain = run.params.named("gain").unwrap().as_f64().unwrap();
                match plan.arm_name(run.arm) {
                    "s" if id + 1 == plan.total => Value::Null,
                    "s" => Value::Float(100.0 + gain),
                    _ => Value::Float(gain),
                }
            })
            .collect()
    }

    fn map(plan: &Plan, x: Option<&str>, y: Option<&str>) -> Heatmap {
        let d = Design::of(plan).unwrap();
        heatmap(plan, &d, "m", &values(plan), &layout(plan, x, y).unwrap())
    }

    #[test]
    fn an_arms_own_axis_spreads_the_arm_and_an_unread_one_fills_the_row() {
        let p = plan();
        let default_gain = p
            .run(p.total - 1)
            .params
            .named("gain")
            .unwrap()
            .as_f64()
            .unwrap();
        let hm = map(&p, Some("gain"), Some("arm"));
        assert_eq!((hm.x_axis.as_str(), hm.y_axis.as_str()), ("gain", "arm"));
        assert_eq!(hm.x_values, ["3.0", "9.0"]);
        // One row per arm (top row first), not one per variant with one cell.
        assert_eq!(hm.y_values, ["s", "e"]);
        let cells = &hm.panels[0].1;
        assert_eq!(cells[1], [Some(3.0), Some(9.0)]);
        // source_aware ignores gain: its mean in every column.
        assert_eq!(cells[0], [Some(100.0 + default_gain); 2]);
        assert_eq!((hm.runs, hm.missing), (12, 1));
        // The same, transposed.
        let t = map(&p, Some("arm"), Some("gain"));
        assert_eq!((t.x_axis.as_str(), t.y_axis.as_str()), ("arm", "gain"));
        assert_eq!(t.x_values, ["e", "s"]);
        assert_eq!(t.panels[0].1[0], [Some(3.0), Some(100.0 + default_gain)]);
        assert_eq!(t.panels[0].1[1], [Some(9.0), Some(100.0 + default_gain)]);
    }

    #[test]
    fn two_axes_give_a_panel_per_arm_less_the_plotted_axes() {
        let p = plan();
        let hm = map(&p, Some("gain"), Some("communication"));
        let panels: Vec<&str> = hm.panels.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(panels, ["e", "s"]);
        assert_eq!(hm.panels[0].1, [[Some(3.0), Some(9.0)]; 2]);
        // Over two common axes, each variant keeps its panel.
        let arms = map(&p, Some("communication"), Some("seed"));
        let panels: Vec<&str> = arms.panels.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(panels, ["e[gain=3.0]", "e[gain=9.0]", "s"]);
    }

    #[test]
    fn arms_alone_go_where_they_are_asked() {
        // Only seeds vary: there is no axis to plot the arms against.
        let text = "[experiment]\nname = \"h\"\nmodel = \"witness\"\n[fixed]\npopulation = 20\nrounds = 5\n\
                    [grid]\nseed = [1, 2]\n\
                    [[arm]]\nname = \"e\"\npolicy = \"endorsement\"\ngrid = { gain = [3.0, 9.0] }\n\
                    [[arm]]\nname = \"s\"\npolicy = \"source_aware\"\n";
        let p = Plan::new(Manifest::parse("h.toml", text, &Registry::builtin()).unwrap()).unwrap();
        let row = map(&p, Some("arm"), None);
        assert_eq!(row.x_axis, "arm");
        assert_eq!(row.x_values, ["e[gain=3.0]", "e[gain=9.0]", "s"]);
        assert_eq!(row.panels[0].1, [[Some(3.0), Some(9.0), Some(100.0 + 6.0)]]);
        assert_eq!(map(&p, None, None).x_values, row.x_values);
        // `--y arm`: one column, the first arm on top (charts draw the
        // first row at the bottom).
        let column = map(&p, None, Some("arm"));
        assert_eq!(
            (column.x_axis.as_str(), column.y_axis.as_str()),
            ("", "arm")
        );
        assert_eq!(column.x_values, ["all runs"]);
        assert_eq!(column.y_values, ["s", "e[gain=9.0]", "e[gain=3.0]"]);
        assert_eq!(
            column.panels[0].1,
            [[Some(100.0 + 6.0)], [Some(9.0)], [Some(3.0)]]
        );
    }

    #[test]
    fn arm_is_an_axis_name() {
        let p = plan();
        assert!(matches!(
            layout(&p, Some("arm"), None),
            Ok(Layout::Arms { on_x: true })
        ));
        assert!(matches!(
            layout(&p, None, Some("arm")),
            Ok(Layout::ArmsBy { axis, arms_on_x: false }) if axis.name == "communication"
        ));
        // A default x is never the axis asked for as y: with no other
        // axis, the arms go on x.
        assert!(matches!(
            layout(&p, None, Some("communication")),
            Ok(Layout::ArmsBy { axis, arms_on_x: true }) if axis.name == "communication"
        ));
        // Titles name x first, then y, as the stems do.
        assert!(map(&p, Some("arm"), Some("gain"))
            .title
            .contains(" by arm and gain,"));
        assert!(map(&p, Some("gain"), Some("arm"))
            .title
            .contains(" by gain and arm,"));
        assert_eq!(
            layout(&p, Some("arm"), Some("arm")).err(),
            Some(AxisError::Same("arm".into()))
        );
        let unknown = layout(&p, Some("nope"), None).err().unwrap().to_string();
        assert!(
            unknown.ends_with("axes: seed, communication, gain, or arm for the arm variants"),
            "{unknown}"
        );
    }
}
