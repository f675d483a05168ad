//! Reading tables: files opened as streams of batches, named columns
//! scanned, metadata alone; a decoder panic on a damaged file becomes an
//! error.

use std::fs::File;
use std::path::Path;

use arrow_schema::DataType;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use super::{cell, data_type, readable, Batch, Metadata, ROW_GROUP_ROWS};
use crate::model::Column;
use crate::params::Value;
use crate::store::StoreError;

thread_local! {
    static DECODING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, turning a panic of the Parquet decoder (which some damaged
/// pages provoke) into an error: a damaged file is a finding, not a crash.
fn guarded<T>(f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !DECODING.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    DECODING.with(|d| d.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    DECODING.with(|d| d.set(false));
    result.unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "no message".into());
        Err(StoreError::Format(format!(
            "the file's data cannot be decoded ({why}); it is damaged"
        )))
    })
}

/// A Parquet file opened for reading: its metadata, its columns and a
/// stream of its batches.
pub struct Reader {
    pub metadata: Metadata,
    /// (name, Arrow type) of each column, in file order.
    pub columns: Vec<(String, String)>,
    batches: ParquetRecordBatchReader,
}

impl Iterator for Reader {
    type Item = Result<Batch, StoreError>;
    fn next(&mut self) -> Option<Self::Item> {
        let batches = &mut self.batches;
        match guarded(|| Ok(batches.next())) {
            Ok(b) => b.map(|b| b.map(Batch).map_err(StoreError::from)),
            Err(e) => Some(Err(e)),
        }
    }
}

fn metadata_of(b: &ParquetRecordBatchReaderBuilder<File>) -> Metadata {
    b.metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

pub fn open(path: &Path) -> Result<Reader, StoreError> {
    guarded(|| open_unguarded(path))
}

fn open_unguarded(path: &Path) -> Result<Reader, StoreError> {
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    let metadata = metadata_of(&b);
    let columns = b
        .schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), type_label(f.data_type())))
        .collect();
    Ok(Reader {
        metadata,
        columns,
        batches: b.with_batch_size(ROW_GROUP_ROWS).build()?,
    })
}

/// (name, Arrow type) of declared columns, as `open` reports a file's.
pub fn column_types(columns: &[Column]) -> Vec<(String, String)> {
    columns
        .iter()
        .map(|c| (c.name.to_string(), type_label(&data_type(c.ty))))
        .collect()
}

/// A column type as witness names it: what matters for reading its values
/// (a list's item field may be named `item` or `element`).
fn type_label(t: &DataType) -> String {
    match t {
        DataType::List(f) => format!("list<{}>", type_label(f.data_type())),
        DataType::Int64 => "int64".into(),
        DataType::Float64 => "double".into(),
        DataType::Boolean => "bool".into(),
        DataType::Utf8 => "string".into(),
        other => other.to_string(),
    }
}

/// Calls `f` with each row's values of the named columns (in the order
/// asked), reading only those columns, one batch at a time. An unknown name
/// is an error listing the columns there are.
pub fn scan_columns(
    path: &Path,
    names: &[&str],
    f: impl FnMut(&[Value]),
) -> Result<(), StoreError> {
    guarded(|| scan_unguarded(path, names, f))
}

fn scan_unguarded(
    path: &Path,
    names: &[&str],
    mut f: impl FnMut(&[Value]),
) -> Result<(), StoreError> {
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    let schema = b.schema().clone();
    let mut indices = Vec::new();
    for n in names {
        let i = schema.index_of(n).map_err(|_| {
            let all: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            StoreError::Format(format!("no column `{n}`; columns: {}", all.join(", ")))
        })?;
        let ty = schema.field(i).data_type();
        if !readable(ty) {
            return Err(StoreError::Format(format!(
                "column `{n}` has type {ty}; witness writes and reads int64, double, bool, string and list<int64>"
            )));
        }
        indices.push(i);
    }
    let mask = parquet::arrow::ProjectionMask::roots(b.parquet_schema(), indices.iter().copied());
    let reader = b
        .with_projection(mask)
        .with_batch_size(ROW_GROUP_ROWS)
        .build()?;
    // The projection keeps file order; map each asked name to its position.
    let mut sorted = indices.clone();
    sorted.sort_unstable();
    sorted.dedup();
    let pos: Vec<usize> = indices
        .iter()
        .map(|i| sorted.binary_search(i).expect("asked"))
        .collect();
    let mut row = vec![Value::Null; names.len()];
    for batch in reader {
        let batch = batch?;
        for i in 0..batch.num_rows() {
            for (k, &p) in pos.iter().enumerate() {
                row[k] = cell(batch.column(p).as_ref(), i)?;
            }
            f(&row);
        }
    }
    Ok(())
}

/// Named columns of a file, whole (see `scan_columns`).
pub fn read_columns(path: &Path, names: &[&str]) -> Result<Vec<Vec<Value>>, StoreError> {
    let mut out: Vec<Vec<Value>> = names.iter().map(|_| Vec::new()).collect();
    scan_columns(path, names, |row| {
        for (col, v) in out.iter_mut().zip(row) {
            col.push(v.clone());
        }
    })?;
    Ok(out)
}

/// The column names of a file, in order.
pub fn column_names(path: &Path) -> Result<Vec<String>, StoreError> {
    let b = guarded(|| Ok(ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?))?;
    Ok(b.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect())
}

/// A file's metadata, without reading its rows.
pub fn metadata(path: &Path) -> Result<Metadata, StoreError> {
    guarded(|| {
        Ok(metadata_of(&ParquetRecordBatchReaderBuilder::try_new(
            File::open(path)?,
        )?))
    })
}
