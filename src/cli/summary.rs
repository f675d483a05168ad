//! `witness summary`: the table of means, spreads and intervals per group,
//! in the terminal and as `summary.csv`.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::model::Registry;
use crate::params::Value;
use crate::results::ResultsDir;
use crate::store::Format;

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
/// name would give two columns of the same name).
fn trimmed(list: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}

pub fn summary(a: &SummaryArgs, registry: &Registry) -> Result<u8> {
    let results = ResultsDir::open(&a.dir, registry)?;
    let table = crate::analysis::summary::run(
        &results,
        &trimmed(&a.by),
        &trimmed(&a.metrics),
        a.filter.as_deref(),
    )?;
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
    let path = results.file("summary.csv");
    table
        .write(&path, Format::Csv, &[])
        .map_err(|e| Error::store(&path, e))?;
    outln!("wrote {}", path.display())?;
    Ok(0)
}
