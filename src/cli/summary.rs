//! `witness summary`: the table of means, spreads and intervals per group,
//! in the terminal and as `summary.csv` (a file of its own for the runs
//! of a `--where`).

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::model::Registry;
use crate::params::Value;
use crate::results::ResultsDir;
use crate::store::Format;

/// Notes printed about cells with missing values; the rest are counted.
const MAX_NOTES: usize = 8;

#[derive(clap::Args, Debug)]
pub struct SummaryArgs {
    /// A results folder.
    pub dir: PathBuf,
    /// Grouping: `arm` and/or parameter names, comma-separated
    /// [default: arm and every common grid axis but seed and replicate].
    #[arg(long, value_delimiter = ',')]
    pub by: Vec<String>,
    /// Summary columns, comma-separated [default: the model's headline metrics].
    #[arg(long, value_delimiter = ',')]
    pub metrics: Vec<String>,
    /// Only these runs, e.g. "graph=hub,truth=false".
    #[arg(long = "where", value_name = "KEY=VALUE,...")]
    pub filter: Option<String>,
}

/// The entries of a comma-separated list, trimmed, each once (a repeated
/// name would give two columns of the same name). A flag given with
/// nothing in it (`--by ''`) is refused: read as absent, it would quietly
/// give the default.
fn trimmed(flag: &str, list: &[String], default: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for s in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    if out.is_empty() && !list.is_empty() {
        return Err(Error::Usage(format!(
            "{flag} {:?}: names nothing; give names separated by commas, or leave {flag} out for {default}",
            list.join(",")
        )));
    }
    Ok(out)
}

pub fn summary(a: &SummaryArgs, registry: &Registry) -> Result<u8> {
    let results = ResultsDir::open(&a.dir, registry)?;
    let summary = crate::analysis::summary::run(
        &results,
        &trimmed("--by", &a.by, "arm and every common grid axis")?,
        &trimmed("--metrics", &a.metrics, "the model's headline metrics")?,
        a.filter.as_deref(),
    )?;
    for note in summary.missing.iter().take(MAX_NOTES) {
        eprintln!("note: {note}");
    }
    if summary.missing.len() > MAX_NOTES {
        eprintln!(
            "note: and {} more cells with runs that have no value",
            summary.missing.len() - MAX_NOTES
        );
    }
    let table = summary.table;
    let header: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
    outln!("{}", header.join("\t"))?;
    for row in &table.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|v| match v {
                Value::Float(x) => format!("{x:.4}"),
                other => other.plain(),
            })
            .collect();
        outln!("{}", cells.join("\t"))?;
    }
    let path = results.file(&crate::analysis::filter::output_name(
        "summary",
        a.filter.as_deref(),
    ));
    table
        .write(&path, Format::Csv, &[])
        .map_err(|e| Error::store(&path, e))?;
    outln!("wrote {}", path.display())?;
    Ok(0)
}
