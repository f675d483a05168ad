//! Whether a folder's results are complete: its seal read back and
//! checked against the plan and against every sealed file's size and
//! SHA-256. A seal that no longer matches is removed, so that `run`
//! redoes the results rather than trusting a changed byte.

use super::layout::Layout;
use super::tables::Table;
use super::{assemble::failures_in, race, Report, RunError, Shard};
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
        Ok(Some(seal)) => match stale_because(plan, layout, tables, &seal) {
            None => return Ok(Sealed::Whole),
            Some(why) => why,
        },
    };
    match std::fs::remove_file(layout.seal()) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RunError::io(&layout.seal(), e)),
        _ => Ok(Sealed::Stale(stale)),
    }
}

/// Whether the folder is sealed whole for `plan`, changing nothing: a
/// shard must not remove a seal other processes may be reading.
pub fn is_whole(plan: &Plan, layout: &Layout, tables: &[Table]) -> bool {
    matches!(Seal::read(&layout.dir), Ok(Some(seal)) if stale_because(plan, layout, tables, &seal).is_none())
}

/// Fills in what a run reports of a folder it finds complete.
pub(super) fn report_complete(
    plan: &Plan,
    layout: &Layout,
    shard: Shard,
    report: &mut Report,
) -> Result<(), RunError> {
    report.already_complete = true;
    report.chunks = plan.chunk_count();
    report.chunks_done = report.chunks;
    report.runs_in_shard = (0..plan.chunk_count())
        .filter(|&c| shard.owns(c))
        .map(|c| plan.chunk_runs(c).count() as u64)
        .sum();
    report.failures = failures_in(&layout.table("runs"))?;
    Ok(())
}

/// The report of a run into a folder already complete for `plan` with
/// nothing to tidy, found by reading alone, before any lock is taken or
/// anything written: so finished results can be run again where they
/// cannot be written (a read-only copy, an archive). `None` sends the run
/// the usual way (which repairs, tidies or resumes under its lock).
pub(super) fn settled(
    plan: &Plan,
    layout: &Layout,
    tables: &[Table],
    shard: Shard,
) -> Result<Option<(Plan, Report)>, RunError> {
    if !layout.dir.is_dir() || !layout.settled_for(&plan.manifest) {
        return Ok(None);
    }
    let mut plan = plan.clone();
    if race::grow(&mut plan, layout).is_err() || !is_whole(&plan, layout, tables) {
        return Ok(None);
    }
    let mut report = Report::default();
    report_complete(&plan, layout, shard, &mut report)?;
    Ok(Some((plan, report)))
}

/// Whether the folder holds this plan's complete results (see `Sealed`).
pub fn is_complete(plan: &Plan, layout: &Layout, tables: &[Table]) -> Result<bool, RunError> {
    Ok(seal_state(plan, layout, tables)? == Sealed::Whole)
}

/// Why `seal` does not describe the folder's results for `plan`, if it
/// does not.
fn stale_because(plan: &Plan, layout: &Layout, tables: &[Table], seal: &Seal) -> Option<String> {
    let at = layout.seal().display().to_string();
    if seal.manifest_sha256 != plan.manifest.hash || seal.runs != plan.total {
        return Some(format!("{at}: sealed for another manifest"));
    }
    let mut files = Vec::new();
    for t in tables {
        let Some(s) = seal.table(t.name) else {
            return Some(format!("{at}: does not list the {} table", t.name));
        };
        files.push((layout.table(t.name), s.bytes, s.sha256.as_str()));
    }
    if seal.tables.len() != tables.len() {
        return Some(format!("{at}: lists tables this manifest does not write"));
    }
    files.extend(
        seal.files
            .iter()
            .map(|f| (layout.dir.join(&f.file), f.bytes, f.sha256.as_str())),
    );
    // Sizes first: a truncated file is found without reading any.
    for (path, bytes, _) in &files {
        match std::fs::metadata(path) {
            Ok(m) if m.len() == *bytes => {}
            Ok(m) => {
                return Some(format!(
                    "{}: {} bytes, where the seal says {bytes}",
                    path.display(),
                    m.len()
                ))
            }
            Err(e) => return Some(format!("{}: {e}", path.display())),
        }
    }
    files.iter().find_map(|(path, bytes, sha256)| {
        match seal::differs(path, *bytes, sha256) {
            Ok(why) => why,
            Err(e) => Some(e.to_string()),
        }
        .map(|why| format!("{}: {why}", path.display()))
    })
}
