//! Typed Parquet tables. Schemas come from declared columns, rows become
//! Arrow arrays and come back as `Value`s by column name, and the writer
//! settings make the bytes a function of the rows alone (zstd, a fixed
//! row-group size, a fixed `created_by`, nothing time-dependent). Arrow
//! stays inside this module: the rest of witness sees columns and rows.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, RecordBatch, StringArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::StoreError;
use crate::model::{ColType, Column, Row};
use crate::params::Value;

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
pub struct Batch(RecordBatch);

fn bad(c: &Column, v: &Value) -> StoreError {
    StoreError::Format(format!("column {} cannot hold {v}", c.name))
}

fn array(c: &Column, rows: &[Row], k: usize) -> Result<ArrayRef, StoreError> {
    let cells = rows.iter().map(|r| &r[k]);
    Ok(match c.ty {
        ColType::Bool => Arc::new(
            cells
                .map(|v| match v {
                    Value::Bool(b) => Ok(Some(*b)),
                    Value::Null => Ok(None),
                    v => Err(bad(c, v)),
                })
                .collect::<Result<BooleanArray, _>>()?,
        ),
        ColType::Int => Arc::new(
            cells
                .map(|v| match v {
                    Value::Int(i) => Ok(Some(*i)),
                    Value::Null => Ok(None),
                    v => Err(bad(c, v)),
                })
                .collect::<Result<Int64Array, _>>()?,
        ),
        ColType::Float => Arc::new(
            cells
                .map(|v| match v {
                    Value::Float(x) => Ok(Some(*x)),
                    Value::Null => Ok(None),
                    v => Err(bad(c, v)),
                })
                .collect::<Result<Float64Array, _>>()?,
        ),
        ColType::Str => Arc::new(
            cells
                .map(|v| match v {
                    Value::Str(s) => Ok(Some(s.as_str())),
                    Value::Null => Ok(None),
                    v => Err(bad(c, v)),
                })
                .collect::<Result<StringArray, _>>()?,
        ),
        ColType::IntList => {
            let mut b = ListBuilder::new(Int64Builder::new());
            for v in cells {
                match v {
                    Value::List(l) => {
                        b.values().append_slice(l);
                        b.append(true);
                    }
                    v => return Err(bad(c, v)),
                }
            }
            Arc::new(b.finish())
        }
    })
}

/// Rows (each in `columns` order) as a batch to write.
pub fn batch(columns: &[Column], rows: &[Row]) -> Result<Batch, StoreError> {
    let arrays = columns
        .iter()
        .enumerate()
        .map(|(k, c)| array(c, rows, k))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Batch(RecordBatch::try_new(arrow_schema(columns), arrays)?))
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
    } else {
        return Err(StoreError::Format(format!(
            "a column of type {}; witness writes and reads int64, double, bool, string and list<int64>",
            a.data_type()
        )));
    })
}

impl Batch {
    pub fn num_rows(&self) -> usize {
        self.0.num_rows()
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

fn properties(kv: &[(String, String)]) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(3).expect("valid level"),
        ))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_created_by(format!("witness {}", env!("CARGO_PKG_VERSION")))
        .set_key_value_metadata(Some(
            kv.iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone()))
                .collect(),
        ))
        .build()
}

/// Writes batches into a Parquet file atomically: either the whole file
/// appears, or the old one (if any) stays.
pub fn write(
    path: &Path,
    columns: &[Column],
    batches: impl IntoIterator<Item = Result<Batch, StoreError>>,
    kv: &[(String, String)],
) -> Result<(), StoreError> {
    let schema = arrow_schema(columns);
    let mut failed = None;
    let result = super::atomic::write_with(path, |f| {
        let run = || -> Result<(), StoreError> {
            let mut w = ArrowWriter::try_new(f, schema.clone(), Some(properties(kv)))?;
            for b in batches {
                w.write(&b?.0)?;
            }
            w.close()?;
            Ok(())
        };
        run().map_err(|e| {
            let io = std::io::Error::other(e.to_string());
            failed = Some(e);
            io
        })
    });
    match (result, failed) {
        (Ok(()), _) => Ok(()),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(StoreError::Io(e)),
    }
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
        self.batches
            .next()
            .map(|b| b.map(Batch).map_err(StoreError::from))
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
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    let metadata = metadata_of(&b);
    let columns = b
        .schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().to_string()))
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
        .map(|c| (c.name.to_string(), data_type(c.ty).to_string()))
        .collect()
}

/// Calls `f` with each row's values of the named columns (in the order
/// asked), reading only those columns, one batch at a time. An unknown name
/// is an error listing the columns there are.
pub fn scan_columns(
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
        let readable = matches!(
            ty,
            DataType::Int64 | DataType::Float64 | DataType::Boolean | DataType::Utf8
        ) || matches!(ty, DataType::List(f) if f.data_type() == &DataType::Int64);
        if !readable {
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
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    Ok(b.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect())
}

/// A file's metadata, without reading its rows.
pub fn metadata(path: &Path) -> Result<Metadata, StoreError> {
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    Ok(metadata_of(&b))
}
