//! `witness report`: one self-contained HTML page of a results folder
//! (provenance, design, headline metrics, verdicts, trajectories, heatmap,
//! ranking, race and runs), written atomically to `DIR/report.html`.

use std::path::{Path, PathBuf};

use crate::analysis::report::{build, Request};
use crate::error::{Error, Result};
use crate::model::Registry;
use crate::results::ResultsDir;

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// A results folder.
    pub dir: PathBuf,
    /// Where to write the page [default: DIR/report.html]; inside DIR,
    /// only an .html name (never over a result file).
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
    refuse_inside_results(&out, &a.dir)?;
    crate::store::atomic::write(&out, page.as_bytes())
        .map_err(|e| Error::Usage(format!("{}: cannot write the report: {e}", out.display())))?;
    for n in doc["notes"].as_array().into_iter().flatten() {
        eprintln!("note: {}", n.as_str().unwrap_or_default());
    }
    outln!("wrote {} ({} KB)", out.display(), page.len().div_ceil(1024))?;
    Ok(0)
}

/// A page written into the results folder must be an `.html` file: the
/// run writes none, so it can never replace a table, the seal or the
/// manifest (the atomic write would swap it in without a word).
fn refuse_inside_results(out: &Path, dir: &Path) -> Result<()> {
    let (Some(lands), Ok(dir)) = (crate::store::atomic::landing(out), dir.canonicalize()) else {
        return Ok(());
    };
    let html = lands
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("html"));
    if lands.starts_with(&dir) && !html {
        return Err(Error::Usage(format!(
            "--out {}: inside the results folder, where it could replace a result file; \
             give the page an .html name, or write it outside the folder",
            out.display()
        )));
    }
    Ok(())
}
