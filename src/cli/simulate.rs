//! `witness simulate` and `witness replay`: one run of any model, its
//! readable summary, its JSON export, and the check that an export
//! reproduces.

use std::path::{Path, PathBuf};

use super::set;
use crate::error::{Error, Result, EXIT_FAILED};
use crate::jsondiff::first_difference;
use crate::model::{DynModel, Registry};
use crate::params::Resolved;
use crate::runner::estimate::human_bytes;

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
    /// Refuse a run that would hold more than this many GB in memory
    /// [default: half the machine's memory].
    #[arg(long, value_name = "GB", value_parser = super::plan::parse_gigabytes)]
    pub max_memory: Option<f64>,
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
    // An external policy answers from a process that only a manifest's
    // arm can name; run without one, the model would decide nothing.
    if model.checked(&p)?.decision.is_some() {
        let setting = a
            .set
            .iter()
            .find(|s| {
                s.split_once('=')
                    .is_some_and(|(_, v)| v.trim().trim_matches('"') == "external")
            })
            .map_or("an external policy".to_string(), |s| format!("--set {s}"));
        return Err(Error::Usage(format!(
            "{setting}: an external policy is a process named by an [[arm]]'s `external = {{ command = [...] }}`, \
             which simulate cannot take; put it in a manifest and use `witness run` (see docs/guide/external-policies.md)"
        )));
    }
    // Checked before the run, which may be long, not after it.
    if let Some(path) = a.export.as_deref().filter(|p| p.is_dir()) {
        return Err(Error::Usage(format!(
            "--export {}: a folder; give a file name, e.g. --export {}",
            path.display(),
            path.join("run.json").display()
        )));
    }
    if let Some(dir) = a.export.as_deref().and_then(Path::parent) {
        if !dir.as_os_str().is_empty() && !dir.is_dir() {
            return Err(Error::Usage(format!(
                "--export {}: there is no folder {}; create it, or export elsewhere",
                a.export.as_deref().unwrap_or(dir).display(),
                dir.display()
            )));
        }
    }
    if let Some(path) = &a.export {
        let lands = crate::store::atomic::landing(path);
        if let Some(dir) = lands.as_deref().and_then(Path::parent) {
            if crate::runner::layout::Layout::new(dir).holds_results() {
                return Err(Error::Usage(format!(
                    "--export {}: inside the results folder {}, whose files are sealed; export elsewhere, e.g. --export run.json",
                    path.display(),
                    dir.display()
                )));
            }
        }
    }
    check_memory(model, &p, a.export.is_some(), a.max_memory)?;
    let sim = model.simulate(&p, a.export.is_some())?;
    out!("{}", sim.text)?;
    if let (Some(path), Some(doc)) = (&a.export, &sim.export) {
        crate::store::table::write_json(path, doc).map_err(|e| Error::store(path, e))?;
        outln!("export     {}", path.display())?;
    }
    Ok(if sim.failed { EXIT_FAILED } else { 0 })
}

pub fn replay(path: &Path, max_memory: Option<f64>, registry: &Registry) -> Result<u8> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let stored: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        Error::Usage(format!(
            "{}: not a JSON export ({e}); give a file written by `witness simulate --export`",
            path.display()
        ))
    })?;
    let Some(engine) = stored["engine"].as_str() else {
        return Err(Error::Usage(format!(
            "{}: JSON, but not an export (it names no engine); give a file written by `witness simulate --export`",
            path.display()
        )));
    };
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
    check_memory(model, &p, true, max_memory)?;
    let fresh = model.simulate(&p, true)?.export.expect("asked for");
    match first_difference(&stored, &fresh, 1e-12, false) {
        None => {
            outln!(
                "replay ok: {} reproduces (discrete values identical, floats within 1e-12)",
                path.display()
            )?;
            Ok(0)
        }
        Some(diff) => {
            outln!("replay FAILED: {} differs at {diff}", path.display())?;
            Ok(EXIT_FAILED)
        }
    }
}

/// Refuses a run (and its export) that would not fit in the memory limit
/// (`--max-memory`, else half the machine's), before anything is allocated.
fn check_memory(
    model: &dyn DynModel,
    p: &Resolved,
    export: bool,
    max_memory: Option<f64>,
) -> Result<()> {
    let fp = model.checked(p)?.footprint;
    let rows: u64 = model
        .tables()
        .iter()
        .zip(fp.rows.iter().chain(std::iter::repeat(&0)))
        .map(|(t, &n)| {
            // A buffered row, and (for an export) its JSON object.
            let per_row = 40 * (t.columns.len() as u64 + 1)
                + if export {
                    300 * (t.columns.len() as u64 + 1)
                } else {
                    0
                };
            n.saturating_mul(per_row)
        })
        .fold(0, u64::saturating_add);
    let need = fp
        .working_bytes
        .saturating_add(if export { rows } else { 0 });
    let (limit, whose) = super::plan::memory_limit(max_memory);
    if need > limit {
        let what = if export {
            "the run and its export"
        } else {
            "the run"
        };
        // Name what the size grows with, as set, so the fix is concrete.
        let sizes: Vec<String> = fp
            .grows_with
            .names(model.params())
            .into_iter()
            .filter_map(|name| Some(format!("{name} = {}", p.named(name)?)))
            .collect();
        let sizes = if sizes.is_empty() {
            "the run's size".to_string()
        } else {
            sizes.join(", ")
        };
        return Err(Error::Usage(format!(
            "{what} would need about {} in memory, over the limit of {} ({whose}); \
             lower {sizes}{}, or pass --max-memory GB",
            human_bytes(need as f64),
            human_bytes(limit as f64),
            if export { ", drop --export" } else { "" }
        )));
    }
    Ok(())
}
