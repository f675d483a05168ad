//! `witness plot`: the figures of a results folder as SVG and PNG under
//! DIR/plots/.

use std::path::PathBuf;

use crate::analysis::plot::{figures, Request};
use crate::error::{Error, Result};
use crate::model::Registry;
use crate::results::ResultsDir;
use crate::store::charts::{with_suffix, write_heatmap, write_trajectories};

#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// A results folder.
    pub dir: PathBuf,
    /// Draw only this scenario, e.g. "truth=false, graph=hub" (values as
    /// values, in any order).
    #[arg(long)]
    pub scenario: Option<String>,
    /// The summary metric of the heatmap [default: the model's first
    /// headline metric].
    #[arg(long)]
    pub metric: Option<String>,
    /// Heatmap x axis, or arm for the arm variants [default: the first
    /// grid axis with several values].
    #[arg(long)]
    pub x: Option<String>,
    /// Heatmap y axis, or arm [default: the second such axis; with only
    /// one, the arms].
    #[arg(long)]
    pub y: Option<String>,
    /// Only these runs, e.g. "graph=hub,truth=false".
    #[arg(long = "where", value_name = "KEY=VALUE,...")]
    pub filter: Option<String>,
}

pub fn plot(a: &PlotArgs, registry: &Registry) -> Result<u8> {
    let results = ResultsDir::open(&a.dir, registry)?;
    let figs = figures(
        &results,
        &Request {
            scenario: a.scenario.as_deref(),
            metric: a.metric.as_deref(),
            x: a.x.as_deref(),
            y: a.y.as_deref(),
            filter: a.filter.as_deref(),
        },
    )?;
    for n in &figs.notes {
        eprintln!("note: {n}");
    }
    let out = results.file("plots");
    std::fs::create_dir_all(&out).map_err(|e| Error::io(&out, e))?;
    let mut written = Vec::new();
    for (name, fig) in &figs.trajectories {
        let stem = out.join(name);
        write_trajectories(&stem, fig).map_err(|e| Error::io(&stem, e))?;
        written.push(stem);
    }
    if let Some((name, hm)) = &figs.heatmap {
        let stem = out.join(name);
        write_heatmap(&stem, hm).map_err(|e| Error::io(&stem, e))?;
        written.push(stem);
    }
    for stem in &written {
        outln!("wrote {} and .png", with_suffix(stem, "svg").display())?;
    }
    Ok(0)
}
