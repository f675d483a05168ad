//! Whether a folder's results are complete: its seal read back and
//! checked against the plan and against every sealed file's size and
//! SHA-256. A seal that no longer matches is removed, so that `run`
//! redoes the results rather than trusting a changed byte.

use super::layout::Layout;
use super::tables::Table;
use super::RunError;
use crate::grid::Plan;
use crate::store::seal::{self, Seal};

/// What a folder's seal says of this plan's results.
#[derive(Debug, PartialEq)]
pub enum Sealed {
    /// Complete: a seal for this manifest listing exactly these tables,
    /// and every sealed file present with its sealed bytes.
    Whole,
    /// No seal: the results are not finished.
    Absent,
    /// A seal that no longer matches the folder, and why. It has been
    /// removed, so the run redoes the results instead of calling them
    /// complete.
    Stale(String),
}

/// Reads and checks the seal. A file's size is compared first (cheap),
/// then its SHA-256, so a changed byte is caught before anything trusts
/// the folder.
pub fn seal_state(plan: &Plan, layout: &Layout, tables: &[Table]) -> Result<Sealed, RunError> {
    let stale = match Seal::read(&layout.dir) {
        Ok(None) => return Ok(Sealed::Absent),
        Err(e) => e.to_string(),
        Ok(Some(seal)) => match stale_because(plan, layout, tables, &seal)? {
            None => return Ok(Sealed::Whole),
            Some(why) => why,
        },
    };
    match std::fs::remove_file(layout.seal()) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RunError::io(&layout.seal(), e)),
        _ => Ok(Sealed::Stale(stale)),
    }
}

/// Whether the folder holds this plan's complete results (see `Sealed`).
pub fn is_complete(plan: &Plan, layout: &Layout, tables: &[Table]) -> Result<bool, RunError> {
    Ok(seal_state(plan, layout, tables)? == Sealed::Whole)
}

fn stale_because(
    plan: &Plan,
    layout: &Layout,
    tables: &[Table],
    seal: &Seal,
) -> Result<Option<String>, RunError> {
    let seal_path = layout.seal();
    if seal.manifest_sha256 != plan.manifest.hash || seal.runs != plan.total {
        return Ok(Some(format!(
            "{}: sealed for another manifest",
            seal_path.display()
        )));
    }
    let mut files = Vec::new();
    for t in tables {
        let Some(s) = seal.table(t.name) else {
            return Ok(Some(format!(
                "{}: does not list the {} table",
                seal_path.display(),
                t.name
            )));
        };
        files.push((layout.table(t.name), s.bytes, s.sha256.as_str()));
    }
    if seal.tables.len() != tables.len() {
        return Ok(Some(format!(
            "{}: lists tables this manifest does not write",
            seal_path.display()
        )));
    }
    files.extend(
        seal.files
            .iter()
            .map(|f| (layout.dir.join(&f.file), f.bytes, f.sha256.as_str())),
    );
    for (path, bytes, _) in &files {
        match std::fs::metadata(path) {
            Ok(m) if m.len() == *bytes => {}
            Ok(m) => {
                return Ok(Some(format!(
                    "{}: {} bytes, where the seal says {bytes}",
                    path.display(),
                    m.len()
                )))
            }
            Err(e) => return Ok(Some(format!("{}: {e}", path.display()))),
        }
    }
    for (path, bytes, sha256) in &files {
        match seal::differs(path, *bytes, sha256) {
            Ok(None) => {}
            Ok(Some(why)) => return Ok(Some(format!("{}: {why}", path.display()))),
            Err(e) => return Ok(Some(format!("{}: {e}", path.display()))),
        }
    }
    Ok(None)
}
