//! Typed Parquet tables. Schemas come from declared columns, rows become
//! Arrow arrays and come back as `Value`s by column name, and the writer
//! settings make the bytes a function of the rows alone (zstd, a fixed
//! row-group size, a fixed `created_by`, nothing time-dependent). Arrow
//! stays inside this module: the rest of witness sees columns and rows.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, RecordBatch, StringArray,
};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use super::StoreError;
use crate::model::{Cells, ColType, Column, ColumnValues, Columns, Row};
use crate::params::Value;

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

/// Rows per row group. The writer holds one row group in memory, so this
/// bounds memory on large grids; 16k rows stay large enough to scan fast.
pub const ROW_GROUP_ROWS: usize = 16 * 1024;

/// Key-value metadata of a file, in the order written.
pub type Metadata = Vec<(String, String)>;

fn data_type(ty: ColType) -> DataType {
    match ty {
        ColType::Bool => DataType::Boolean,
        ColType::Int => DataType::Int64,
        ColType::Float => DataType::Float64,
        ColType::Str => DataType::Utf8,
        ColType::IntList => DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
    }
}

fn arrow_schema(columns: &[Column]) -> SchemaRef {
    Arc::new(Schema::new(
        columns
            .iter()
            .map(|c| Field::new(c.name, data_type(c.ty), c.nullable))
            .collect::<Vec<_>>(),
    ))
}

/// Rows converted for writing: one Arrow batch, private to this module.
/// A clone shares the arrays (it is a count, not a copy).
#[derive(Clone)]
pub struct Batch(RecordBatch);

/// One column as an Arrow array: numbers and flags move into Arrow's
/// buffers as they are, with no copy per cell.
fn array(values: ColumnValues) -> ArrayRef {
    let nulls = values.valid.map(NullBuffer::from);
    match values.cells {
        Cells::Bool(v) => Arc::new(BooleanArray::new(BooleanBuffer::from(v), nulls)),
        Cells::Int(v) => Arc::new(Int64Array::new(v.into(), nulls)),
        Cells::Float(v) => Arc::new(Float64Array::new(v.into(), nulls)),
        Cells::Str(v) => {
            let bytes = v.iter().map(String::len).sum();
            let mut b = StringBuilder::with_capacity(v.len(), bytes);
            for (i, s) in v.iter().enumerate() {
                if nulls.as_ref().is_some_and(|n| n.is_null(i)) {
                    b.append_null();
                } else {
                    b.append_value(s);
                }
            }
            Arc::new(b.finish())
        }
        Cells::IntList(v) => {
            let mut b = ListBuilder::new(Int64Builder::new());
            for (i, l) in v.iter().enumerate() {
                b.values().append_slice(l);
                b.append(!nulls.as_ref().is_some_and(|n| n.is_null(i)));
            }
            Arc::new(b.finish())
        }
    }
}

/// A table built column by column (in `columns` order) as a batch to write.
pub fn columns_batch(columns: &[Column], rows: Columns) -> Result<Batch, StoreError> {
    let arrays = rows.columns.into_iter().map(array).collect();
    Ok(Batch(RecordBatch::try_new(arrow_schema(columns), arrays)?))
}

/// Rows (each in `columns` order) as a batch to write.
pub fn batch(columns: &[Column], rows: &[Row]) -> Result<Batch, StoreError> {
    let mut t = Columns::new(columns);
    for r in rows {
        t.push_values(r, columns).map_err(StoreError::Format)?;
    }
    columns_batch(columns, t)
}

fn cell(a: &dyn Array, i: usize) -> Result<Value, StoreError> {
    if a.is_null(i) {
        return Ok(Value::Null);
    }
    let any = a.as_any();
    Ok(if let Some(x) = any.downcast_ref::<Int64Array>() {
        Value::Int(x.value(i))
    } else if let Some(x) = any.downcast_ref::<Float64Array>() {
        Value::Float(x.value(i))
    } else if let Some(x) = any.downcast_ref::<BooleanArray>() {
        Value::Bool(x.value(i))
    } else if let Some(x) = any.downcast_ref::<StringArray>() {
        Value::Str(x.value(i).to_string())
    } else if let Some(x) = any.downcast_ref::<ListArray>() {
        let inner = x.value(i);
        let ints = inner.as_any().downcast_ref::<Int64Array>().ok_or_else(|| {
            StoreError::Format(format!("a list column holds {}", inner.data_type()))
        })?;
        Value::List(ints.values().to_vec())
    } else if let Some(v) = other_cell(a, i) {
        v?
    } else {
        return Err(StoreError::Format(format!(
            "a column of type {}; witness reads integers, floats, bools, strings (also large, \
             view and dictionary-encoded) and lists of int64",
            a.data_type()
        )));
    })
}

/// Cells of the types other programs write (pandas, pyarrow, polars):
/// narrower integers and floats, large, view and dictionary strings.
fn other_cell(a: &dyn Array, i: usize) -> Option<Result<Value, StoreError>> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{
        Float32Type, Int16Type, Int32Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
    };
    let int = |v: i64| Some(Ok(Value::Int(v)));
    match a.data_type() {
        DataType::Int32 => int(i64::from(a.as_primitive::<Int32Type>().value(i))),
        DataType::Int16 => int(i64::from(a.as_primitive::<Int16Type>().value(i))),
        DataType::Int8 => int(i64::from(a.as_primitive::<Int8Type>().value(i))),
        DataType::UInt32 => int(i64::from(a.as_primitive::<UInt32Type>().value(i))),
        DataType::UInt16 => int(i64::from(a.as_primitive::<UInt16Type>().value(i))),
        DataType::UInt8 => int(i64::from(a.as_primitive::<UInt8Type>().value(i))),
        DataType::UInt64 => Some(
            i64::try_from(a.as_primitive::<UInt64Type>().value(i))
                .map(Value::Int)
                .map_err(|_| StoreError::Format("a uint64 value past int64".into())),
        ),
        DataType::Float32 => Some(Ok(Value::Float(f64::from(
            a.as_primitive::<Float32Type>().value(i),
        )))),
        DataType::LargeUtf8 => Some(Ok(Value::Str(a.as_string::<i64>().value(i).to_string()))),
        DataType::Utf8View => Some(Ok(Value::Str(a.as_string_view().value(i).to_string()))),
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            let key = d.normalized_keys()[i];
            Some(cell(d.values().as_ref(), key))
        }
        _ => None,
    }
}

/// Whether `cell` reads a column of this type.
fn readable(t: &DataType) -> bool {
    match t {
        DataType::List(f) => f.data_type() == &DataType::Int64,
        DataType::Dictionary(_, v) => readable(v),
        t => matches!(
            t,
            DataType::Int64
                | DataType::Float64
                | DataType::Boolean
                | DataType::Utf8
                | DataType::Int32
                | DataType::Int16
                | DataType::Int8
                | DataType::UInt64
                | DataType::UInt32
                | DataType::UInt16
                | DataType::UInt8
                | DataType::Float32
                | DataType::LargeUtf8
                | DataType::Utf8View
        ),
    }
}

impl Batch {
    pub fn num_rows(&self) -> usize {
        self.0.num_rows()
    }

    /// The bytes its arrays hold.
    pub fn memory(&self) -> usize {
        self.0.get_array_memory_size()
    }

    /// The batch in the pieces `open` returns for a file written from it:
    /// one per row group (`ROW_GROUP_ROWS` rows), shared, not copied. Fed
    /// these, a writer sees exactly what it would see from the file.
    pub fn as_read_back(&self) -> impl Iterator<Item = Batch> + '_ {
        let n = self.0.num_rows();
        (0..n)
            .step_by(ROW_GROUP_ROWS)
            .map(move |at| Batch(self.0.slice(at, ROW_GROUP_ROWS.min(n - at))))
    }

    /// The rows, with the values of the named columns in the order asked.
    pub fn rows(&self, names: &[&str]) -> Result<Vec<Row>, StoreError> {
        let schema = self.0.schema();
        let columns = names
            .iter()
            .map(|n| {
                schema
                    .index_of(n)
                    .map(|i| self.0.column(i).as_ref())
                    .map_err(|_| StoreError::Format(format!("no column `{n}`")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        (0..self.0.num_rows())
            .map(|i| columns.iter().map(|c| cell(*c, i)).collect())
            .collect()
    }

    /// The integers of a named int64 column, with no nulls.
    pub fn ints(&self, name: &str) -> Result<Vec<i64>, StoreError> {
        let c = self
            .0
            .column_by_name(name)
            .ok_or_else(|| StoreError::Format(format!("no column `{name}`")))?;
        let ints = c
            .as_any()
            .downcast_ref::<Int64Array>()
            .filter(|a| a.null_count() == 0)
            .ok_or_else(|| {
                StoreError::Format(format!("column `{name}` is not int64 without nulls"))
            })?;
        Ok(ints.values().to_vec())
    }
}

/// How a file is compressed. Results use zstd: small, and read many times.
/// A chunk's parts live only until assembly reads them once, so they use
/// Snappy, which sets up nothing per page, and no dictionaries: creating
/// zstd's contexts for every page of every part (and again to read them)
/// was a tenth of a grid of small runs. Every reader of the results reads
/// both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Results,
    Part,
}

fn properties(columns: &[Column], kv: &[(String, String)], codec: Codec) -> WriterProperties {
    let compression = match codec {
        Codec::Results => Compression::ZSTD(ZstdLevel::try_new(3).expect("valid level")),
        Codec::Part => Compression::SNAPPY,
    };
    let mut b = WriterProperties::builder();
    // Measured values (beliefs, Brier scores, rates) rarely repeat: a
    // dictionary of them is as large as the values, and interning every
    // one was the largest cost of writing the results of small runs.
    for c in columns.iter().filter(|c| c.ty == ColType::Float) {
        b = b.set_column_dictionary_enabled(ColumnPath::from(c.name), false);
    }
    b.set_compression(compression)
        // A part is read once: plain pages cost less to write than
        // dictionaries (whose interning was the writer's largest cost).
        .set_dictionary_enabled(codec == Codec::Results)
        // Nor statistics: nothing filters a part's pages.
        .set_statistics_enabled(match codec {
            Codec::Results => EnabledStatistics::Page,
            Codec::Part => EnabledStatistics::None,
        })
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_created_by(format!("witness {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(
            kv.iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                .collect(),
        ))
        .build()
}

/// Writes batches into a results file atomically: either the whole file
/// appears, or the old one (if any) stays.
pub fn write(
    path: &Path,
    columns: &[Column],
    batches: impl IntoIterator<Item = Result<Batch, StoreError>>,
    kv: &[(String, String)],
) -> Result<(), StoreError> {
    write_as(path, columns, batches, kv, Codec::Results)
}

/// `write` with the given compression.
pub fn write_as(
    path: &Path,
    columns: &[Column],
    batches: impl IntoIterator<Item = Result<Batch, StoreError>>,
    kv: &[(String, String)],
    codec: Codec,
) -> Result<(), StoreError> {
    stage_as(path, columns, batches, kv, codec)?.commit()?;
    Ok(super::atomic::sync_dir(path)?)
}

/// Encodes a file into its temporary sibling, to be put in place by
/// `Staged::commit` (now or on another thread).
pub fn stage_as(
    path: &Path,
    columns: &[Column],
    batches: impl IntoIterator<Item = Result<Batch, StoreError>>,
    kv: &[(String, String)],
    codec: Codec,
) -> Result<super::atomic::Staged, StoreError> {
    let schema = arrow_schema(columns);
    let mut failed = None;
    let result = super::atomic::stage(path, |f| {
        super::groups::write(
            f,
            schema.clone(),
            properties(columns, kv, codec),
            batches.into_iter().map(|b| b.map(|b| b.0)),
        )
        .map_err(|e: StoreError| {
            let io = std::io::Error::other(e.to_string());
            failed = Some(e);
            io
        })
    });
    match (result, failed) {
        (Ok(staged), _) => Ok(staged),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(StoreError::Io(e)),
    }
}

/// A results file written as its batches arrive, over a long time, into
/// its temporary sibling (see `groups::Appender`): its bytes are what
/// `write` makes of the same batches, and `finish` puts it in place as
/// `write` does. Dropped unfinished, the temporary goes.
pub struct Streamed {
    appender: super::groups::Appender<File>,
    staged: super::atomic::Staged,
}

impl Streamed {
    pub fn create(
        path: &Path,
        columns: &[Column],
        kv: &[(String, String)],
    ) -> Result<Streamed, StoreError> {
        let staged = super::atomic::stage(path, |_| Ok(()))?;
        let appender = super::groups::Appender::new(
            staged.handle()?,
            arrow_schema(columns),
            properties(columns, kv, Codec::Results),
        )?;
        Ok(Streamed { appender, staged })
    }

    /// Encodes a batch; `parallel` as `groups::Appender::push` says.
    pub fn push(&mut self, batch: &Batch, parallel: bool) -> Result<(), StoreError> {
        Ok(self.appender.push(&batch.0, parallel)?)
    }

    /// Encodes the rest of the batches (the fields as parallel tasks),
    /// then closes the file and puts it in place; on an error the
    /// temporary goes and nothing is replaced.
    pub fn extend(
        mut self,
        batches: impl IntoIterator<Item = Result<Batch, StoreError>>,
    ) -> Result<(), StoreError> {
        for b in batches {
            self.push(&b?, true)?;
        }
        self.finish()
    }

    /// Closes the file and puts it in place (synced, as `write` does).
    pub fn finish(self) -> Result<(), StoreError> {
        let path = self.staged.path().to_path_buf();
        self.appender.finish(true)?;
        self.staged.commit()?;
        Ok(super::atomic::sync_dir(&path)?)
    }
}

/// A table as the bytes of a Parquet file, for writing with others.
pub fn to_bytes(
    columns: &[Column],
    rows: &[Row],
    kv: &[(String, String)],
) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(
        &mut out,
        arrow_schema(columns),
        Some(properties(columns, kv, Codec::Results)),
    )?;
    w.write(&batch(columns, rows)?.0)?;
    w.close()?;
    Ok(out)
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
