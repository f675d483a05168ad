//! `witness verify`: prints what was checked, or the problems found.

use std::path::Path;

use crate::error::{Result, EXIT_FAILED};
use crate::model::Registry;
use crate::runner::verify::{verify as check, Replay};

pub fn verify(dir: &Path, replay: u64, all: bool, registry: &Registry) -> Result<u8> {
    let mode = if all {
        Replay::All
    } else {
        Replay::Sample(replay)
    };
    let r = check(dir, mode, registry)?;
    if r.problems.is_empty() {
        let identities = if r.details {
            format!(
                "identities re-derived from the stored rows of {} runs",
                r.audited
            )
        } else {
            "no detail tables stored (each run checked its identities as it ran, and replays check them again)"
                .to_string()
        };
        outln!(
            "verify ok: {}: {} runs; every file as sealed; {} values read and within their columns; {identities}; {} runs replayed identically",
            dir.display(),
            r.runs,
            r.values,
            r.replayed
        )?;
        return Ok(0);
    }
    outln!(
        "verify FAILED: {}: {} problem(s)",
        dir.display(),
        r.problems.len()
    )?;
    super::print_problems(&r.problems)?;
    Ok(EXIT_FAILED)
}
