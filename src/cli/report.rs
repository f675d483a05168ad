//! `witness report`: one self-contained HTML page of a results folder
//! (provenance, design, headline metrics, verdicts, trajectories, heatmap,
//! ranking, race and runs), written atomically to `DIR/report.html`.

use std::path::PathBuf;

use crate::analysis::report::{build, Request};
use crate::error::{Error, Result};
use crate::model::Registry;
use crate::results::ResultsDir;

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// A results folder.
    pub dir: PathBuf,
    /// Where to write the page [default: DIR/report.html].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Add `compare`'s verdicts against this arm (its placebo must have
    /// run), e.g. `endorsement`.
    #[arg(long)]
    pub baseline: Option<String>,
}

pub fn report(a: &ReportArgs, registry: &Registry) -> Result<u8> {
    let results = ResultsDir::open(&a.dir, registry)?;
    let doc = build(
        &results,
        &Request {
            baseline: a.baseline.as_deref(),
        },
    )?;
    let page = crate::store::html::page(&results.plan.manifest.name, &doc);
    let out = a.out.clone().unwrap_or_else(|| results.file("report.html"));
    crate::store::atomic::write(&out, page.as_bytes())
        .map_err(|e| Error::Usage(format!("{}: cannot write the report: {e}", out.display())))?;
    for n in doc["notes"].as_array().into_iter().flatten() {
        eprintln!("note: {}", n.as_str().unwrap_or_default());
    }
    outln!("wrote {} ({} KB)", out.display(), page.len().div_ceil(1024))?;
    Ok(0)
}
