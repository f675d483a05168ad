//! Typed Parquet tables. Schemas come from declared columns, rows become
//! Arrow arrays and come back as `Value`s by column name, and the writer
//! settings make the bytes a function of the rows alone (zstd, a fixed
//! row-group size, a fixed `created_by`, nothing time-dependent). Arrow
//! stays inside this module: the rest of witness sees columns and rows.

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, RecordBatch, StringArray,
};
use arrow_buffer::{BooleanBuffer, NullBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::digest::{FixedCells, RowDigest};
use super::StoreError;
use crate::model::{Cells, ColType, Column, ColumnValues, Columns, Row};
use crate::params::Value;

mod read;
mod write;

pub use read::{column_names, column_types, metadata, open, read_columns, scan_columns, Reader};
pub use write::{stage_as, to_bytes, write, write_as, Codec, Streamed};

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

/// One Arrow array of a type witness writes as a column of cells.
fn column_values(a: &ArrayRef) -> Result<ColumnValues, StoreError> {
    let valid = a.nulls().map(|n| n.iter().collect::<Vec<bool>>());
    let any = a.as_any();
    let cells = if let Some(x) = any.downcast_ref::<Int64Array>() {
        Cells::Int(x.values().to_vec())
    } else if let Some(x) = any.downcast_ref::<Float64Array>() {
        Cells::Float(x.values().to_vec())
    } else if let Some(x) = any.downcast_ref::<BooleanArray>() {
        Cells::Bool(x.values().iter().collect())
    } else if let Some(x) = any.downcast_ref::<StringArray>() {
        Cells::Str((0..x.len()).map(|i| x.value(i).to_string()).collect())
    } else if let Some(x) = any.downcast_ref::<ListArray>() {
        let lists = (0..x.len()).map(|i| {
            let inner = x.value(i);
            let ints = inner.as_any().downcast_ref::<Int64Array>().ok_or_else(|| {
                StoreError::Format(format!("a list column holds {}", inner.data_type()))
            })?;
            Ok(ints.values().to_vec())
        });
        Cells::IntList(lists.collect::<Result<_, StoreError>>()?)
    } else {
        return Err(StoreError::Format(format!(
            "a column of type {}, which witness does not write",
            a.data_type()
        )));
    };
    Ok(ColumnValues { cells, valid })
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

    /// Adds the rows to a digest as `RowDigest::add_columns` of the rows
    /// it was made from would. Numbers are read where they lie: a batch of
    /// flags, integers and floats without nulls (a part's trajectory rows)
    /// is digested without copying it out.
    pub fn digest_into(&self, d: &mut RowDigest) -> Result<(), StoreError> {
        let arrays = self.0.columns();
        let bools: Vec<Option<Vec<bool>>> = arrays
            .iter()
            .map(|a| {
                let b = a.as_any().downcast_ref::<BooleanArray>()?;
                Some(b.values().iter().collect())
            })
            .collect();
        let fixed: Option<Vec<FixedCells>> = arrays
            .iter()
            .zip(&bools)
            .map(|(a, bools)| {
                if a.null_count() > 0 {
                    return None;
                }
                let any = a.as_any();
                if let Some(b) = bools {
                    Some(FixedCells::Bool(b))
                } else if let Some(x) = any.downcast_ref::<Int64Array>() {
                    Some(FixedCells::Int(x.values()))
                } else {
                    let x = any.downcast_ref::<Float64Array>()?;
                    Some(FixedCells::Float(x.values()))
                }
            })
            .collect();
        match fixed {
            Some(fixed) => d.add_fixed(&fixed, self.num_rows()),
            None => d.add_column_values(&self.column_values()?, self.num_rows()),
        }
        Ok(())
    }

    /// The columns as witness holds rows in memory, copied out of the
    /// arrays (numbers and flags as they are, no `Value` per cell), so
    /// rows read back can be digested as rows written were.
    pub fn column_values(&self) -> Result<Vec<ColumnValues>, StoreError> {
        self.0.columns().iter().map(column_values).collect()
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
