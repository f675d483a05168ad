//! `verify`: does a results folder still say what its manifest and this
//! build say it should? Every file's bytes against the seal; every value
//! read back (every page decoded) and checked against its column's type,
//! nullability and bounds; the content digest of every block of runs
//! against the seal, and every run of a block that differs replayed to
//! name the row and column; every run's id, key and parameters; the
//! model's identities re-derived from the stored detail rows; and a sample
//! of runs (or all) replayed, requiring identical discrete values and
//! floats within 1e-12. Streams the tables block by block, so memory does
//! not grow with the folder. Stored rows are read by column name.

use rayon::prelude::*;
use std::path::Path;

use super::layout::Layout;
use super::tables::tables;
use super::RunError;
use crate::model::Registry;
use crate::params::Value;
use crate::store::digest::{combine, RowDigest};
use crate::store::seal::{self, block_chunks, Seal};

mod run;
mod stored;

use run::check_run;
use stored::{open_table, streams_paths, value_columns, StoredRow};

/// Runs checked together (in parallel), at least one block.
const WINDOW: u64 = 2048;
pub const FLOAT_TOLERANCE: f64 = 1e-12;
/// Bounds problems listed per table before the rest are only counted.
const MAX_LISTED: usize = 20;

pub enum Replay {
    Sample(u64),
    All,
}

#[derive(Debug, Default)]
pub struct VerifyReport {
    pub runs: u64,
    /// Values read back and checked against their columns.
    pub values: u64,
    /// Runs whose stored detail rows were re-checked by the model's audit.
    pub audited: u64,
    pub replayed: u64,
    /// Whether the folder's tables carry detail rows at all.
    pub details: bool,
    pub problems: Vec<String>,
}

pub fn verify(dir: &Path, replay: Replay, registry: &Registry) -> Result<VerifyReport, RunError> {
    let layout = Layout::new(dir);
    let plan = layout.read_plan(registry)?;
    let tables = tables(&plan.manifest);
    let mut report = VerifyReport {
        details: tables.len() > 1,
        ..VerifyReport::default()
    };
    let seal = Seal::read(dir).map_err(|e| RunError::corrupt(&layout.seal(), e))?;
    let policies = super::policies(&plan, dir, &crate::policy::Source::Verify);
    match &seal {
        None if layout.parts().exists() => {
            return Err(RunError::Incomplete {
                dir: dir.display().to_string(),
                message: "the run is not finished (parts are waiting to be assembled); rerun `witness run`, \
                          or `witness merge` the shards"
                    .into(),
            })
        }
        None => report.problems.push(format!(
            "{}: missing, so nothing records what was written; run the manifest again into this folder \
             (`witness run`) to rebuild the results and their seal",
            layout.seal().display()
        )),
        Some(s) if s.manifest_sha256 != plan.manifest.hash || s.runs != plan.total => {
            report.problems.push(format!(
                "{}: sealed for manifest {}… with {} runs, but manifest.toml is {}… with {}",
                layout.seal().display(),
                &s.manifest_sha256[..12.min(s.manifest_sha256.len())],
                s.runs,
                &plan.manifest.hash[..12],
                plan.total
            ))
        }
        Some(_) => {}
    }
    if let Some(s) = &seal {
        check_sealed_files(dir, s, &mut report.problems);
    }
    let mut streams = Vec::new();
    for table in &tables {
        streams.push(open_table(
            &layout,
            &plan,
            table,
            seal.as_ref(),
            &mut report.problems,
        )?);
    }
    let chunks = plan.chunk_count();
    let per_block = block_chunks(chunks);
    let blocks = chunks.div_ceil(per_block);
    // Whole blocks at a time, about WINDOW runs.
    let window = (WINDOW / (per_block * plan.manifest.chunk_runs as u64)).max(1);
    let runs_of = |cs: &std::ops::Range<u64>| {
        plan.chunk_runs(cs.start).start..plan.chunk_runs(cs.end - 1).end
    };
    let sampled = |id: u64| match replay {
        Replay::All => true,
        Replay::Sample(0) => false,
        Replay::Sample(n) => {
            let (n, total, id) = (
                u128::from(n.min(plan.total)),
                u128::from(plan.total),
                u128::from(id),
            );
            // Evenly spread: run ids floor(i * total / n) for i in 0..n.
            let i = (id * n).div_ceil(total);
            i < n && i * total / n == id
        }
    };
    let mut listed = vec![0usize; tables.len()];
    let mut b0 = 0;
    while b0 < blocks {
        let b1 = (b0 + window).min(blocks);
        let span = b0 * per_block..(b1 * per_block).min(chunks);
        let std::ops::Range { start, end } = runs_of(&span);
        let rows: Vec<Vec<StoredRow>> = streams
            .iter_mut()
            .map(|s| s.take_below(end))
            .collect::<Result<_, _>>()?;
        // Values against their columns.
        for (t, (table, rows)) in tables.iter().zip(&rows).enumerate() {
            let columns = value_columns(table);
            for r in rows {
                report.values += r.values.len() as u64;
                for (v, c) in r.values.iter().zip(&columns) {
                    if let Some(why) = c.refuses(v) {
                        listed[t] += 1;
                        if listed[t] <= MAX_LISTED {
                            report.problems.push(format!(
                                "{}, row {}, column {} (run {}): {why}",
                                streams[t].path, r.row, c.name, r.id
                            ));
                        }
                    }
                }
            }
        }
        // Block digests against the seal; the runs of a block that differs
        // are all replayed, to find the row.
        let mut suspect = vec![false; (end - start) as usize];
        if let Some(seal) = &seal {
            for (t, (table, rows)) in tables.iter().zip(&rows).enumerate() {
                let Some(sealed) = seal.table(table.name) else {
                    continue;
                };
                let mut digests: Vec<RowDigest> = span.clone().map(|_| RowDigest::new()).collect();
                for r in rows.iter().filter(|r| r.id >= start) {
                    digests[(plan.chunk_of(r.id) - span.start) as usize]
                        .add_row_after(&Value::Int(r.id as i64), &r.values);
                }
                let digests: Vec<String> = digests.into_iter().map(RowDigest::finish).collect();
                for (k, block) in digests.chunks(per_block as usize).enumerate() {
                    let b = b0 + k as u64;
                    let cs = b * per_block..((b + 1) * per_block).min(chunks);
                    let runs = runs_of(&cs);
                    let got = combine(block.iter().map(String::as_str));
                    if sealed.blocks.get(b as usize) != Some(&got) {
                        report.problems.push(format!(
                            "{}: the rows of runs {}..{} are not the ones written (their digest differs from the seal)",
                            streams[t].path, runs.start, runs.end
                        ));
                        for id in runs {
                            suspect[(id - start) as usize] = true;
                        }
                    }
                }
            }
        }
        let paths = streams_paths(&streams);
        // Chunk by chunk, so an external arm's record log is read once per
        // chunk and only a few chunks' logs are held at a time.
        let checked: Vec<(bool, bool, Vec<String>)> = span
            .clone()
            .into_par_iter()
            .flat_map_iter(|c| {
                let runs = plan.chunk_runs(c);
                let replays = |id: u64| {
                    let suspect = suspect[(id - start) as usize];
                    (sampled(id) || suspect).then_some(suspect)
                };
                let mut logs = match runs.clone().any(|id| replays(id).is_some()) {
                    true => Some(policies.chunk(c)),
                    false => None,
                };
                runs.map(|id| {
                    let logs = match logs.as_mut() {
                        Some(Err(e)) => {
                            return (false, false, vec![format!("run {id}: cannot replay: {e}")])
                        }
                        Some(Ok(l)) => Some(l),
                        None => None,
                    };
                    check_run(
                        &plan,
                        &tables,
                        &paths,
                        &rows,
                        id,
                        replays(id),
                        &policies,
                        logs,
                    )
                })
                .collect::<Vec<_>>()
            })
            .collect();
        for (audited, replayed, p) in checked {
            report.audited += u64::from(audited);
            report.replayed += u64::from(replayed);
            report.problems.extend(p);
        }
        report.runs += rows[tables.len() - 1].len() as u64;
        for s in &mut streams {
            report.problems.append(&mut s.problems);
        }
        b0 = b1;
    }
    for (t, n) in listed.iter().enumerate().filter(|(_, n)| **n > MAX_LISTED) {
        report.problems.push(format!(
            "{}: {} more values outside their columns' declarations",
            streams[t].path,
            n - MAX_LISTED
        ));
    }
    for s in &mut streams {
        if s.peek_id()?.is_some() {
            let r = s.buffer.front().expect("peeked");
            report.problems.push(format!(
                "{}, row {}, column run_id: run {}, beyond the manifest's {} runs",
                s.path, r.row, r.id, plan.total
            ));
        }
        report.problems.append(&mut s.problems);
    }
    Ok(report)
}

/// The files besides the tables (record logs) against the seal: every
/// sealed one present with its bytes, and none unsealed.
fn check_sealed_files(dir: &Path, seal: &Seal, problems: &mut Vec<String>) {
    for f in &seal.files {
        let path = dir.join(&f.file);
        match seal::differs(&path, f.bytes, &f.sha256) {
            Err(e) => problems.push(format!("{}: {e}; the seal lists it", path.display())),
            Ok(why) => problems.extend(why.map(|why| format!("{}: {why}", path.display()))),
        }
    }
    match crate::policy::log::log_files(dir) {
        Err(e) => problems.push(e.to_string()),
        Ok(files) => {
            for path in files {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                if !seal.files.iter().any(|f| f.file == rel) {
                    problems.push(format!(
                        "{}: a record log the seal does not list (added after the results were complete?)",
                        path.display()
                    ));
                }
            }
        }
    }
}
