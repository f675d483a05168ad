//! `witness design`: a manifest's design points as CSV, to look at, to
//! plot, or to evaluate elsewhere (the values are exact: shortest
//! round-trip decimals).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::Registry;

#[derive(clap::Args, Debug)]
pub struct DesignArgs {
    /// The experiment manifest (TOML) with a [design] table.
    pub manifest: PathBuf,
    /// Print the points in the unit cube, before each factor's range,
    /// logarithm and rounding apply (sampled designs only).
    #[arg(long)]
    pub unit: bool,
    /// Write the CSV here instead of to standard output (not over the
    /// manifest).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Refuse manifests with more runs than this, as `plan` and `run` do
    /// (the points are checked before any is written).
    #[arg(long, default_value_t = super::DEFAULT_MAX_RUNS)]
    pub max_runs: u64,
}

pub fn design(a: &DesignArgs, registry: &Registry) -> Result<u8> {
    let m = super::load(&a.manifest, registry)?;
    let file = a.manifest.display();
    if let Some(out) = &a.out {
        refuse_overwriting(out, &a.manifest, &m)?;
    }
    let Some(d) = &m.design else {
        return Err(Error::Usage(format!(
            "{file}: no [design] table (the manifest runs the full grid); add [design] kind = \"lhs\", \"sobol\", \"morris\" or \"list\""
        )));
    };
    if a.unit && d.unit.is_empty() {
        return Err(Error::Usage(format!(
            "{file}: --unit: a listed design has no unit-cube points; drop --unit"
        )));
    }
    // A manifest `plan` and `run` refuse as too large is refused here too,
    // before millions of points are written.
    let plan = crate::grid::Plan::new(m)?;
    plan.check_size(a.max_runs)?;
    let d = plan.manifest.design.as_ref().expect("checked above");
    let mut w = csv::Writer::from_writer(Vec::new());
    let csv_err = |e: csv::Error| Error::Usage(format!("{file}: the design as CSV: {e}"));
    let mut header = vec!["design_point".to_string()];
    header.extend(d.params.iter().map(|(_, n)| n.to_string()));
    w.write_record(&header).map_err(csv_err)?;
    for k in 0..d.len() {
        let mut row = vec![k.to_string()];
        if a.unit {
            row.extend(d.unit_row(k).iter().map(|u| format!("{u:?}")));
        } else {
            row.extend(d.point(k).iter().map(|v| v.plain()));
        }
        w.write_record(&row).map_err(csv_err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::Usage(format!("{file}: the design as CSV: {e}")))?;
    let text = String::from_utf8(bytes).expect("CSV of UTF-8 text");
    match &a.out {
        Some(path) => write(path, &text)?,
        None => out!("{text}")?,
    }
    Ok(0)
}

fn write(path: &Path, text: &str) -> Result<()> {
    crate::store::atomic::write(path, text.as_bytes())
        .map_err(|e| Error::Usage(format!("{}: cannot write: {e}", path.display())))
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// The CSV may not replace what the manifest reads (itself, a points
/// file: `design`'s CSV has a `design_point` column, so it is no points
/// file) nor land in a results folder, whose files are sealed.
fn refuse_overwriting(out: &Path, manifest: &Path, m: &crate::manifest::Manifest) -> Result<()> {
    let folder = manifest.parent().unwrap_or(Path::new(""));
    let read = std::iter::once(manifest.to_path_buf())
        .chain(m.sources.iter().map(|s| folder.join(&s.name)));
    for file in read {
        if same_file(out, &file) {
            return Err(Error::Usage(format!(
                "--out {}: the manifest reads that file ({}), which the CSV would replace; write the points elsewhere, e.g. --out design.csv",
                out.display(),
                file.display()
            )));
        }
    }
    // The folder the write lands in, through a link.
    let Some(parent) =
        crate::store::atomic::landing(out).and_then(|p| p.parent().map(Path::to_path_buf))
    else {
        return Ok(());
    };
    if crate::runner::layout::Layout::new(&parent).holds_results() {
        return Err(Error::Usage(format!(
            "--out {}: inside the results folder {}, whose files are sealed; write the points elsewhere",
            out.display(),
            parent.display()
        )));
    }
    Ok(())
}
