//! Typed Parquet tables: schemas built from a model's declared parameters
//! and columns, rows converted to Arrow arrays and back, and writer settings
//! that make the bytes a function of the rows alone (zstd, fixed row-group
//! size, fixed `created_by`, nothing time-dependent).

use std::fs::File;
use std::io::Write;
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
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::model::{ColType, Column, Row};
use crate::params::{Kind, ParamSpec, Value};

/// Rows per row group. The writer holds one row group in memory, so this
/// bounds memory on large grids; 16k rows stay large enough to scan fast.
pub const ROW_GROUP_ROWS: usize = 16 * 1024;

pub fn col_type(ty: ColType) -> DataType {
    match ty {
        ColType::Bool => DataType::Boolean,
        ColType::Int => DataType::Int64,
        ColType::Float => DataType::Float64,
        ColType::Str => DataType::Utf8,
    }
}

pub fn param_field(spec: &ParamSpec) -> Field {
    let (ty, nullable) = match spec.kind {
        Kind::Bool => (DataType::Boolean, false),
        Kind::Int { .. } => (DataType::Int64, false),
        Kind::Float { .. } => (DataType::Float64, false),
        Kind::Choice(_) => (DataType::Utf8, false),
        Kind::IntList { .. } => (
            DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
            false,
        ),
        Kind::IntOrNone { .. } => (DataType::Int64, true),
    };
    Field::new(spec.name, ty, nullable)
}

pub fn column_field(c: &Column) -> Field {
    Field::new(c.name, col_type(c.ty), c.nullable)
}

fn bad(field: &Field, v: &Value) -> ParquetError {
    ParquetError::General(format!("column {} cannot hold {v}", field.name()))
}

fn array(field: &Field, rows: &[Row], k: usize) -> Result<ArrayRef, ParquetError> {
    let cells = rows.iter().map(|r| &r[k]);
    Ok(match field.data_type() {
        DataType::Boolean => Arc::new(
            cells
                .map(|v| match v {
                    Value::Bool(b) => Ok(Some(*b)),
                    Value::Null => Ok(None),
                    v => Err(bad(field, v)),
                })
                .collect::<Result<BooleanArray, _>>()?,
        ),
        DataType::Int64 => Arc::new(
            cells
                .map(|v| match v {
                    Value::Int(i) => Ok(Some(*i)),
                    Value::Null => Ok(None),
                    v => Err(bad(field, v)),
                })
                .collect::<Result<Int64Array, _>>()?,
        ),
        DataType::Float64 => Arc::new(
            cells
                .map(|v| match v {
                    Value::Float(x) => Ok(Some(*x)),
                    Value::Null => Ok(None),
                    v => Err(bad(field, v)),
                })
                .collect::<Result<Float64Array, _>>()?,
        ),
        DataType::Utf8 => Arc::new(
            cells
                .map(|v| match v {
                    Value::Str(s) => Ok(Some(s.as_str())),
                    Value::Null => Ok(None),
                    v => Err(bad(field, v)),
                })
                .collect::<Result<StringArray, _>>()?,
        ),
        DataType::List(_) => {
            let mut b = ListBuilder::new(Int64Builder::new());
            for v in cells {
                match v {
                    Value::List(l) => {
                        b.values().append_slice(l);
                        b.append(true);
                    }
                    v => return Err(bad(field, v)),
                }
            }
            Arc::new(b.finish())
        }
        other => {
            return Err(ParquetError::General(format!(
                "unsupported column type {other}"
            )))
        }
    })
}

pub fn batch(schema: &SchemaRef, rows: &[Row]) -> Result<RecordBatch, ParquetError> {
    let arrays = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(k, f)| array(f, rows, k))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RecordBatch::try_new(schema.clone(), arrays)?)
}

fn cell(a: &dyn Array, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    let any = a.as_any();
    if let Some(x) = any.downcast_ref::<Int64Array>() {
        Value::Int(x.value(i))
    } else if let Some(x) = any.downcast_ref::<Float64Array>() {
        Value::Float(x.value(i))
    } else if let Some(x) = any.downcast_ref::<BooleanArray>() {
        Value::Bool(x.value(i))
    } else if let Some(x) = any.downcast_ref::<StringArray>() {
        Value::Str(x.value(i).to_string())
    } else if let Some(x) = any.downcast_ref::<ListArray>() {
        let inner = x.value(i);
        let ints = inner
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("lists hold Int64");
        Value::List(ints.values().to_vec())
    } else {
        panic!("witness never writes columns of type {}", a.data_type())
    }
}

/// A batch back into rows, for verification.
pub fn rows(b: &RecordBatch) -> Vec<Row> {
    (0..b.num_rows())
        .map(|i| b.columns().iter().map(|c| cell(c.as_ref(), i)).collect())
        .collect()
}

pub fn schema(fields: Vec<Field>) -> SchemaRef {
    Arc::new(Schema::new(fields))
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

/// Writes batches to any writer (a file, or memory for size estimates).
pub fn write_to<W: Write + Send>(
    out: W,
    schema: &SchemaRef,
    batches: impl IntoIterator<Item = Result<RecordBatch, ParquetError>>,
    kv: &[(String, String)],
) -> Result<(), ParquetError> {
    let mut w = ArrowWriter::try_new(out, schema.clone(), Some(properties(kv)))?;
    for b in batches {
        w.write(&b?)?;
    }
    w.close()?;
    Ok(())
}

/// Writes a Parquet file atomically.
pub fn write(
    path: &Path,
    schema: &SchemaRef,
    batches: impl IntoIterator<Item = Result<RecordBatch, ParquetError>>,
    kv: &[(String, String)],
) -> std::io::Result<()> {
    crate::sink::atomic::write_with(path, |f| {
        write_to(f, schema, batches, kv).map_err(std::io::Error::other)
    })
}

pub type Metadata = Vec<(String, String)>;

/// Opens a Parquet file: its key-value metadata and a reader of its batches.
pub fn open(path: &Path) -> Result<(Metadata, ParquetRecordBatchReader), ParquetError> {
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    let kv = b
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    Ok((kv, b.with_batch_size(ROW_GROUP_ROWS).build()?))
}

/// Calls `f` with each row's values of the named columns (in the order
/// asked), reading only those columns, one batch at a time. An unknown name
/// is an error listing the columns there are.
pub fn scan_columns(
    path: &Path,
    names: &[&str],
    mut f: impl FnMut(&[Value]),
) -> Result<(), ParquetError> {
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    let schema = b.schema().clone();
    let mut indices = Vec::new();
    for n in names {
        let i = schema.index_of(n).map_err(|_| {
            let all: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            ParquetError::General(format!("no column `{n}`; columns: {}", all.join(", ")))
        })?;
        let ty = schema.field(i).data_type();
        let readable = matches!(
            ty,
            DataType::Int64 | DataType::Float64 | DataType::Boolean | DataType::Utf8
        ) || matches!(ty, DataType::List(f) if f.data_type() == &DataType::Int64);
        if !readable {
            return Err(ParquetError::General(format!(
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
                row[k] = cell(batch.column(p).as_ref(), i);
            }
            f(&row);
        }
    }
    Ok(())
}

/// Named columns of a file, whole (see `scan_columns`).
pub fn read_columns(path: &Path, names: &[&str]) -> Result<Vec<Vec<Value>>, ParquetError> {
    let mut out: Vec<Vec<Value>> = names.iter().map(|_| Vec::new()).collect();
    scan_columns(path, names, |row| {
        for (col, v) in out.iter_mut().zip(row) {
            col.push(v.clone());
        }
    })?;
    Ok(out)
}

/// The column names of a file, in order.
pub fn column_names(path: &Path) -> Result<Vec<String>, ParquetError> {
    let b = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?;
    Ok(b.schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect())
}

/// One key of a file's metadata, without reading its rows.
pub fn metadata_value(path: &Path, key: &str) -> Result<Option<String>, ParquetError> {
    let (kv, _) = open(path)?;
    Ok(kv.into_iter().find(|(k, _)| k == key).map(|(_, v)| v))
}
