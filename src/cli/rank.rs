//! `witness rank`: the top runs by the model's ranking key in the
//! terminal, every run in `rank.csv` (a file of its own for the runs of
//! a `--where`).

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::Registry;
use crate::results::ResultsDir;
use crate::store::Format;

pub fn rank(
    dir: &Path,
    top: usize,
    grid_order: bool,
    filter: Option<&str>,
    registry: &Registry,
) -> Result<u8> {
    let results = ResultsDir::open(dir, registry)?;
    let table = crate::analysis::rank::run(&results, grid_order, filter)?;
    let name = crate::analysis::filter::output_name("rank", filter);
    let path = results.file(&name);
    let header: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
    outln!("{}", header.join("\t"))?;
    for row in table.rows.iter().take(top) {
        let cells: Vec<String> = row.iter().map(|v| v.plain()).collect();
        outln!("{}", cells.join("\t"))?;
    }
    if table.rows.len() > top {
        outln!("... {} more in {name}", table.rows.len() - top)?;
    }
    table
        .write(&path, Format::Csv, &[])
        .map_err(|e| Error::store(&path, e))?;
    let (doc, _) = results.model().ranking().expect("ranked");
    outln!("wrote {} (key: {doc})", path.display())?;
    Ok(0)
}
