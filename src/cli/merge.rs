//! `witness merge`: the final tables of a sharded run, from its parts.

use std::path::Path;

use crate::error::Result;
use crate::model::Registry;

pub fn merge(dir: &Path, quiet: bool, registry: &Registry) -> Result<u8> {
    let failures = crate::runner::merge(dir, registry)?;
    if !quiet {
        eprintln!("merged {} -> runs.parquet and its tables", dir.display());
    }
    Ok(super::run::report_failures(&failures))
}
