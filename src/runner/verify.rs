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
use std::collections::VecDeque;
use std::path::Path;

use super::layout::Layout;
use super::tables::{run_one, run_row, tables, Table};
use super::RunError;
use crate::grid::{run_key, Plan};
use crate::model::{Column, Registry, Row, Stored};
use crate::params::Value;
use crate::policy::{ChunkLogs, Policies};
use crate::store::digest::{combine, file_sha256, RowDigest};
use crate::store::seal::{block_chunks, Seal};
use crate::store::{parquet, FileMeta, StoreError};

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

/// A stored row: its run id, its row number in the file, and the values
/// of the asked columns (in the order asked).
struct StoredRow {
    id: u64,
    row: u64,
    values: Row,
}

/// One table's rows, run by run.
struct RowStream {
    reader: parquet::Reader,
    columns: Vec<Column>,
    buffer: VecDeque<StoredRow>,
    next_row: u64,
    /// The run id of the last row read, to check they never go back.
    last_id: u64,
    path: String,
    /// Rows whose run id is not a run of this file, or out of order.
    problems: Vec<String>,
}

impl RowStream {
    fn fill(&mut self) -> Result<bool, RunError> {
        let located = |e: StoreError| RunError::Corrupt {
            path: self.path.clone(),
            source: e,
        };
        match self.reader.next() {
            None => Ok(false),
            Some(b) => {
                let b = b.map_err(located)?;
                let mut names = vec!["run_id"];
                names.extend(self.columns.iter().map(|c| c.name));
                for mut values in b.rows(&names).map_err(located)? {
                    let id = values.remove(0);
                    let row = self.next_row;
                    self.next_row += 1;
                    let id = match id {
                        Value::Int(i) if i >= 0 => i as u64,
                        other => {
                            self.problems.push(format!(
                                "{}, row {row}, column run_id: {other} is not a run id",
                                self.path
                            ));
                            continue;
                        }
                    };
                    if id < self.last_id {
                        self.problems.push(format!(
                            "{}, row {row}, column run_id: run {id} after run {}; rows are stored in run order",
                            self.path, self.last_id
                        ));
                    }
                    self.last_id = self.last_id.max(id);
                    self.buffer.push_back(StoredRow { id, row, values });
                }
                Ok(true)
            }
        }
    }

    fn peek_id(&mut self) -> Result<Option<u64>, RunError> {
        while self.buffer.is_empty() {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(self.buffer.front().map(|r| r.id))
    }

    /// Takes rows while their run id is below `end`, in run order.
    fn take_below(&mut self, end: u64) -> Result<Vec<StoredRow>, RunError> {
        let mut out = Vec::new();
        while self.peek_id()?.is_some_and(|id| id < end) {
            out.extend(self.buffer.pop_front());
        }
        // Rows out of order are reported; sorted (stably), the rest of the
        // checks still see each run's rows together.
        if out.windows(2).any(|w| w[0].id > w[1].id) {
            out.sort_by_key(|r| r.id);
        }
        Ok(out)
    }
}

/// Equal under the replay rule: discrete values identical, floats within
/// the tolerance; `exact` compares floats bit for bit.
fn same(a: &Value, b: &Value, exact: bool) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) if exact => x.to_bits() == y.to_bits(),
        (Value::Float(x), Value::Float(y)) => {
            x == y || (x - y).abs() <= FLOAT_TOLERANCE || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    }
}

/// The first cell where stored rows differ from a replay's, with the file
/// row and column. With `exact`, a float within the tolerance of its
/// replay counts too (the caller knows the stored rows were changed).
fn first_difference(
    file: &str,
    columns: &[Column],
    stored: &[&StoredRow],
    fresh: &[Row],
    exact: bool,
) -> Option<String> {
    if stored.len() != fresh.len() {
        let rows = match (stored.first(), stored.last()) {
            (Some(a), Some(b)) => format!(" (rows {}..={}, column run_id)", a.row, b.row),
            _ => String::new(),
        };
        return Some(format!(
            "{file}: {} rows stored for the run{rows}, {} on replay",
            stored.len(),
            fresh.len()
        ));
    }
    for pass_exact in [false, exact] {
        for (s, f) in stored.iter().zip(fresh) {
            for ((a, b), c) in s.values.iter().zip(f).zip(columns) {
                if !same(a, b, pass_exact) {
                    let note = if pass_exact && same(a, b, false) {
                        " (within the replay tolerance, but not the value written)"
                    } else {
                        ""
                    };
                    return Some(format!(
                        "{file}, row {}, column {}: stored {a}, replay gives {b}{note}",
                        s.row, c.name
                    ));
                }
            }
        }
    }
    None
}

/// Every column but `run_id`, the names rows are read by.
fn value_columns(table: &Table) -> Vec<Column> {
    table.columns[1..].to_vec()
}

/// Opens a final table, checking its bytes against the seal, its schema
/// and its metadata.
fn open_table(
    layout: &Layout,
    plan: &Plan,
    table: &Table,
    seal: Option<&Seal>,
    problems: &mut Vec<String>,
) -> Result<RowStream, RunError> {
    let path = layout.table(table.name);
    let file = path.display().to_string();
    if !path.exists() {
        return Err(RunError::Incomplete {
            dir: layout.dir.display().to_string(),
            message: format!("{file} is missing; finish the run (or `witness merge`) first"),
        });
    }
    if let Some(sealed) = seal.and_then(|s| s.table(table.name)) {
        let (sha256, bytes) = file_sha256(&path).map_err(|e| RunError::io(&path, e))?;
        if sha256 != sealed.sha256 || bytes != sealed.bytes {
            problems.push(format!(
                "{file}: its bytes are not the ones written ({bytes} bytes, SHA-256 {}…; the seal says {} bytes, {}…)",
                &sha256[..12],
                sealed.bytes,
                &sealed.sha256[..12.min(sealed.sha256.len())]
            ));
        }
    }
    let reader = parquet::open(&path).map_err(|e| RunError::corrupt(&path, e))?;
    let expected = parquet::column_types(&table.columns);
    if reader.columns != expected {
        let first = expected.iter().zip(&reader.columns).find(|(e, a)| e != a);
        let detail = match first {
            Some((e, a)) => format!("column {} is {}, expected {} {}", a.0, a.1, e.0, e.1),
            None => format!(
                "{} columns, expected {}",
                reader.columns.len(),
                expected.len()
            ),
        };
        return Err(RunError::corrupt(
            &path,
            StoreError::Format(format!(
                "not the schema witness writes ({detail}); was it rewritten by another tool?"
            )),
        ));
    }
    match FileMeta::from_kv(&reader.metadata) {
        Err(e) => problems.push(format!(
            "{file}: {e}; its metadata is not what witness writes (was it rewritten by another tool?)"
        )),
        Ok(meta) => {
            if meta.manifest_sha256 != plan.manifest.hash {
                problems.push(format!(
                    "{file}: manifest hash {} does not match manifest.toml ({})",
                    meta.manifest_sha256, plan.manifest.hash
                ));
            }
            if meta.engine_version != plan.model().version() {
                problems.push(format!(
                    "{file}: written by {}, this build runs {}",
                    meta.engine_version,
                    plan.model().version()
                ));
            }
        }
    }
    Ok(RowStream {
        reader,
        columns: value_columns(table),
        buffer: VecDeque::new(),
        next_row: 0,
        last_id: 0,
        path: file,
        problems: Vec::new(),
    })
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
        match file_sha256(&path) {
            Err(e) => problems.push(format!("{}: {e}; the seal lists it", path.display())),
            Ok((sha256, bytes)) if sha256 != f.sha256 || bytes != f.bytes => problems.push(format!(
                "{}: its bytes are not the ones written ({bytes} bytes, SHA-256 {}…; the seal says {} bytes, {}…)",
                path.display(),
                &sha256[..12],
                f.bytes,
                &f.sha256[..12.min(f.sha256.len())]
            )),
            Ok(_) => {}
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

fn streams_paths(streams: &[RowStream]) -> Vec<String> {
    streams.iter().map(|s| s.path.clone()).collect()
}

/// A run's rows of one table (sorted by run id).
fn rows_of(rows: &[StoredRow], id: u64) -> Vec<&StoredRow> {
    let lo = rows.partition_point(|r| r.id < id);
    rows[lo..].iter().take_while(|r| r.id == id).collect()
}

/// (audited, replayed, problems) of one run.
#[allow(clippy::too_many_arguments)]
fn check_run(
    plan: &Plan,
    tables: &[Table],
    files: &[String],
    rows: &[Vec<StoredRow>],
    id: u64,
    replay: Option<bool>,
    policies: &Policies,
    logs: Option<&mut ChunkLogs>,
) -> (bool, bool, Vec<String>) {
    let model = plan.model();
    let spec = plan.run(id);
    let (details, runs_table) = tables.split_at(tables.len() - 1);
    let runs_table = &runs_table[0];
    let runs_file = &files[details.len()];
    let who = format!("run {id} ({})", plan.arm_name(spec.arm));
    let mut problems = Vec::new();
    let stored = match rows_of(&rows[details.len()], id).as_slice() {
        [one] => *one,
        [] => {
            return (
                false,
                false,
                vec![format!("{who}: missing from {runs_file}")],
            )
        }
        more => {
            let at: Vec<String> = more.iter().map(|r| r.row.to_string()).collect();
            return (
                false,
                false,
                vec![format!(
                    "{who}: stored {} times in {runs_file} (rows {}, column run_id)",
                    more.len(),
                    at.join(", ")
                )],
            );
        }
    };
    // The runs row as stored, by column name.
    let columns = value_columns(runs_table);
    let named = |name: &str| {
        columns
            .iter()
            .position(|c| c.name == name)
            .map(|k| &stored.values[k])
            .expect("a column of runs.parquet")
    };
    let key = run_key(model, &spec.params);
    if *named("run_key") != Value::Str(key.clone()) {
        problems.push(format!(
            "{who}: {runs_file}, row {}, column run_key: stored {}, the manifest gives {key}",
            stored.row,
            named("run_key")
        ));
    }
    if let Some(k) = spec.design_point {
        let want = Value::Int(k as i64);
        if *named("design_point") != want {
            problems.push(format!(
                "{who}: {runs_file}, row {}, column design_point: stored {}, the manifest gives {want}",
                stored.row,
                named("design_point")
            ));
        }
    }
    let shown = |i: usize| plan.manifest.shown.contains(crate::params::ParamId(i));
    for (_, (name, v)) in spec
        .params
        .values
        .iter()
        .enumerate()
        .filter(|(i, _)| shown(*i))
    {
        if !same(named(name), v, false) {
            problems.push(format!(
                "{who}: {runs_file}, row {}, column {name}: stored {}, the manifest gives {v}",
                stored.row,
                named(name)
            ));
        }
    }
    // A decision an external policy could not give is a recorded outcome;
    // a broken identity is not.
    let policy_failed = plan.manifest.has_external() && *named("policy_failure") != Value::Null;
    if *named("failed") == Value::Bool(true) && !policy_failed {
        problems.push(format!(
            "{who}: recorded a broken identity: {}",
            named("failure")
        ));
    }
    let stored_details: Vec<Vec<&StoredRow>> =
        (0..details.len()).map(|t| rows_of(&rows[t], id)).collect();
    let owned: Vec<Vec<Row>> = stored_details
        .iter()
        .map(|rs| rs.iter().map(|r| r.values.clone()).collect())
        .collect();
    let mut by_model_table: Vec<Option<&[Row]>> = vec![None; model.tables().len()];
    for (table, r) in details.iter().zip(&owned) {
        if let Some(k) = table.model_table {
            by_model_table[k] = Some(r);
        }
    }
    // A run its policy failed has no detail rows to audit.
    let audited = details.iter().any(|t| t.model_table.is_some()) && !policy_failed;
    if audited {
        let audit = model.audit(
            &spec.params,
            &Stored {
                specs: model.tables(),
                rows: by_model_table,
            },
        );
        match audit {
            Ok(None) => {}
            Ok(Some(v)) => problems.push(format!("{who}: {v}")),
            Err(e) => problems.push(format!("{who}: {e}")),
        }
    }
    if let Some(exact) = replay {
        let done = run_one(plan, &spec, policies, logs);
        let fresh = run_row(plan, &spec, &done.out, &done.usage)[1..].to_vec();
        if let Some(d) = first_difference(runs_file, &columns, &[stored], &[fresh], exact) {
            problems.push(format!("{who}: {d}"));
        }
        for ((table, stored_rows), file) in details.iter().zip(&stored_details).zip(files) {
            let replayed = match table.model_table {
                Some(k) => &done.out.tables[k].to_rows(),
                None => &done.calls,
            };
            let cols = value_columns(table);
            if let Some(d) = first_difference(file, &cols, stored_rows, replayed, exact) {
                problems.push(format!("{who}: {d}"));
            }
        }
    }
    (audited, replay.is_some(), problems)
}
