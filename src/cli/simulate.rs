//! `witness simulate` and `witness replay`: one run of any model, its
//! readable summary, its JSON export, and the check that an export
//! reproduces.

use std::path::{Path, PathBuf};

use super::set;
use crate::error::{Error, Result, EXIT_FAILED};
use crate::jsondiff::first_difference;
use crate::model::Registry;
use crate::params::Resolved;

#[derive(clap::Args, Debug)]
pub struct SimulateArgs {
    /// The model [default: the cascade, `witness`]; see `witness describe`.
    #[arg(long, default_value = "witness")]
    pub model: String,
    /// A parameter in TOML syntax, e.g. `--set truth=true --set graph=hub
    /// --set corrections=[10,20]`. Repeatable; defaults fill the rest.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Write the single-run export (config, summary, detail tables) as JSON.
    #[arg(long, value_name = "FILE")]
    pub export: Option<PathBuf>,
}

pub fn simulate(a: &SimulateArgs, registry: &Registry) -> Result<u8> {
    let model = registry.find(&a.model).ok_or_else(|| {
        Error::Usage(format!(
            "--model {}: unknown model; allowed: one of {}",
            a.model,
            registry.names().join(", ")
        ))
    })?;
    let mut p = Resolved::defaults(model.params());
    set::apply(model.params(), &mut p, &a.set)?;
    let sim = model.simulate(&p)?;
    print!("{}", sim.text);
    if let Some(path) = &a.export {
        crate::store::table::write_json(path, &sim.export).map_err(|e| Error::store(path, e))?;
        println!("export     {}", path.display());
    }
    Ok(if sim.failed { EXIT_FAILED } else { 0 })
}

pub fn replay(path: &Path, registry: &Registry) -> Result<u8> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let stored: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Error::Usage(format!(
            "{}: not a JSON export ({e}); give a file written by `witness simulate --export`",
            path.display()
        ))
    })?;
    let engine = stored["engine"].as_str().unwrap_or("(missing)");
    let model = registry.by_version(engine).ok_or_else(|| {
        let known: Vec<&str> = registry.all().iter().map(|m| m.version()).collect();
        Error::Usage(format!(
            "{}: written by engine {engine}, this build runs {}; replay it with the matching witness version",
            path.display(),
            known.join(", ")
        ))
    })?;
    let p = model
        .params_of_export(&stored)
        .map_err(|e| Error::Usage(format!("{}: config: {e}", path.display())))?;
    let fresh = model.simulate(&p)?.export;
    match first_difference(&stored, &fresh, 1e-12, false) {
        None => {
            println!(
                "replay ok: {} reproduces (discrete values identical, floats within 1e-12)",
                path.display()
            );
            Ok(0)
        }
        Some(diff) => {
            println!("replay FAILED: {} differs at {diff}", path.display());
            Ok(EXIT_FAILED)
        }
    }
}
