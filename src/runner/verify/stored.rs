//! A results folder's tables read back for `verify`: each final table
//! opened and checked against the seal, its schema and its metadata, then
//! streamed run by run.

use std::collections::VecDeque;

use super::super::layout::Layout;
use super::super::tables::Table;
use super::super::RunError;
use crate::grid::Plan;
use crate::model::{Column, Row};
use crate::params::Value;
use crate::store::seal::{self, Seal};
use crate::store::{parquet, FileMeta, StoreError};

/// A stored row: its run id, its row number in the file, and the values
/// of the asked columns (in the order asked).
pub(super) struct StoredRow {
    pub(super) id: u64,
    pub(super) row: u64,
    pub(super) values: Row,
}

/// One table's rows, run by run.
pub(super) struct RowStream {
    pub(super) reader: parquet::Reader,
    pub(super) columns: Vec<Column>,
    pub(super) buffer: VecDeque<StoredRow>,
    pub(super) next_row: u64,
    /// The run id of the last row read, to check they never go back.
    pub(super) last_id: u64,
    pub(super) path: String,
    /// Rows whose run id is not a run of this file, or out of order.
    pub(super) problems: Vec<String>,
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

    pub(super) fn peek_id(&mut self) -> Result<Option<u64>, RunError> {
        while self.buffer.is_empty() {
            if !self.fill()? {
                return Ok(None);
            }
        }
        Ok(self.buffer.front().map(|r| r.id))
    }

    /// Takes rows while their run id is below `end`, in run order.
    pub(super) fn take_below(&mut self, end: u64) -> Result<Vec<StoredRow>, RunError> {
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

/// Every column but `run_id`, the names rows are read by.
pub(super) fn value_columns(table: &Table) -> Vec<Column> {
    table.columns[1..].to_vec()
}

/// Opens a final table, checking its bytes against the seal, its schema
/// and its metadata.
pub(super) fn open_table(
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
    let mut damaged = None;
    if let Some(sealed) = seal.and_then(|s| s.table(table.name)) {
        damaged = seal::differs(&path, sealed.bytes, &sealed.sha256)
            .map_err(|e| RunError::io(&path, e))?;
        problems.extend(damaged.iter().map(|why| format!("{file}: {why}")));
    }
    let reader = parquet::open(&path).map_err(|e| match &damaged {
        // Say why it cannot be read, not only the Parquet reader's words.
        Some(why) => RunError::corrupt(
            &path,
            StoreError::Format(format!(
                "{why}, and it cannot be read ({e}); run its manifest into this folder again (`witness run`) to rebuild the results"
            )),
        ),
        None => RunError::corrupt(&path, e),
    })?;
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

pub(super) fn streams_paths(streams: &[RowStream]) -> Vec<String> {
    streams.iter().map(|s| s.path.clone()).collect()
}

/// A run's rows of one table (sorted by run id).
pub(super) fn rows_of(rows: &[StoredRow], id: u64) -> Vec<&StoredRow> {
    let lo = rows.partition_point(|r| r.id < id);
    rows[lo..].iter().take_while(|r| r.id == id).collect()
}
