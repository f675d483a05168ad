//! Row groups encoded in parallel. A Parquet column chunk depends on its
//! own column's values in its own row group only (dictionaries,
//! statistics and pages start afresh in each), so every column of every
//! group can be encoded on a thread of its own, and the chunks written in
//! order. Fed the same slices in the same order, each chunk's bytes are
//! exactly what Arrow's single-threaded writer produces, so the file's
//! are too (a test below compares them).
//!
//! Why: assembling a grid's final tables was one thread compressing the
//! largest table while the other core waited.
//!
//! `Appender` writes the same file group by group as its rows arrive,
//! for a table whose rows come in over a long time.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, SchemaRef};
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::errors::Result;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use rayon::prelude::*;

/// Writes `batches` as a Parquet file of row groups of at most the rows
/// `props` sets, cut where Arrow's writer would cut them, encoding up to
/// a window of groups at a time on the current rayon pool.
pub fn write<W: Write + Send, E: From<parquet::errors::ParquetError>>(
    out: W,
    schema: SchemaRef,
    props: WriterProperties,
    batches: impl IntoIterator<Item = std::result::Result<RecordBatch, E>>,
) -> std::result::Result<(), E> {
    // Arrow's writer cuts nothing without a row limit (witness sets one).
    let group_rows = props.max_row_group_row_count().unwrap_or(usize::MAX);
    let (mut file, factory) =
        ArrowWriter::try_new(out, schema.clone(), Some(props))?.into_serialized_writer()?;
    // Enough groups to keep every thread busy between the serial appends,
    // few enough to bound memory (each group is 16k rows, encoded).
    let window = (4 * rayon::current_num_threads()).clamp(8, 64);
    let mut groups: Vec<Vec<RecordBatch>> = Vec::with_capacity(window);
    let mut current: Vec<RecordBatch> = Vec::new();
    let mut current_rows = 0;
    let mut written = 0;
    for batch in batches {
        let mut rest = batch?;
        while rest.num_rows() > 0 {
            let take = (group_rows - current_rows).min(rest.num_rows());
            current.push(rest.slice(0, take));
            rest = rest.slice(take, rest.num_rows() - take);
            current_rows += take;
            if current_rows == group_rows {
                groups.push(std::mem::take(&mut current));
                current_rows = 0;
            }
        }
        if groups.len() >= window {
            written += flush(&mut file, &factory, &schema, written, &mut groups)?;
        }
    }
    if current_rows > 0 {
        groups.push(current);
    }
    flush(&mut file, &factory, &schema, written, &mut groups)?;
    file.close()?;
    Ok(())
}

/// Encodes `groups` (numbered from `first`) in parallel, one task per
/// column of each group, appends them to the file in order and empties
/// the list; returns how many there were.
fn flush<W: Write + Send>(
    file: &mut SerializedFileWriter<W>,
    factory: &ArrowRowGroupWriterFactory,
    schema: &SchemaRef,
    first: usize,
    groups: &mut Vec<Vec<RecordBatch>>,
) -> Result<usize> {
    // A field's writers (one per leaf column, in order) with its group
    // and place: a column chunk depends on that column's values alone.
    let mut tasks = Vec::with_capacity(groups.len() * schema.fields().len());
    for g in 0..groups.len() {
        let mut writers = factory.create_column_writers(first + g)?.into_iter();
        for (f, field) in schema.fields().iter().enumerate() {
            let mine: Vec<ArrowColumnWriter> =
                writers.by_ref().take(leaves(field.data_type())).collect();
            tasks.push((g, f, mine));
        }
        assert!(writers.next().is_none(), "a writer per leaf column");
    }
    let encoded: Vec<Result<Vec<ArrowColumnChunk>>> = tasks
        .into_par_iter()
        .map(|(g, f, writers)| encode(&schema.fields()[f], f, &groups[g], writers))
        .collect();
    let n = groups.len();
    groups.clear();
    let mut fields = encoded.into_iter();
    for _ in 0..n {
        let mut group = file.next_row_group()?;
        for chunks in fields.by_ref().take(schema.fields().len()) {
            for chunk in chunks? {
                chunk.append_to_row_group(&mut group)?;
            }
        }
        group.close()?;
    }
    Ok(n)
}

/// How many leaf columns Parquet stores a field of this type in.
fn leaves(t: &DataType) -> usize {
    match t {
        DataType::Struct(fields) => fields.iter().map(|f| leaves(f.data_type())).sum(),
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
            leaves(f.data_type())
        }
        DataType::Map(f, _) => leaves(f.data_type()),
        _ => 1,
    }
}

/// One field's column chunks in one row group: its writers fed the
/// group's slices in order, as Arrow's writer feeds them.
fn encode(
    field: &Field,
    index: usize,
    slices: &[RecordBatch],
    mut writers: Vec<ArrowColumnWriter>,
) -> Result<Vec<ArrowColumnChunk>> {
    for slice in slices {
        feed(field, index, slice, &mut writers)?;
    }
    writers.into_iter().map(|w| w.close()).collect()
}

/// Feeds one slice of a field to its writers (one per leaf column).
fn feed(
    field: &Field,
    index: usize,
    slice: &RecordBatch,
    writers: &mut [ArrowColumnWriter],
) -> Result<()> {
    let mut leaves = writers.iter_mut();
    for leaf in compute_leaves(field, slice.column(index))? {
        leaves
            .next()
            .expect("one writer per leaf column")
            .write(&leaf)?;
    }
    Ok(())
}

/// A file written as its batches arrive, for a table whose rows come in
/// over a long time (a grid's chunks, in order): the current row group's
/// column writers are fed each batch as it comes and closed when the
/// group is full, so the encoding is spread over the arrivals instead of
/// waiting for the last one. The groups are cut, and their writers fed,
/// exactly as `write` does, so the bytes are the same (a test compares).
pub struct Appender<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    group_rows: usize,
    /// The current group: its index, its rows so far and, once it has
    /// rows, its writers, grouped by field.
    group: usize,
    rows: usize,
    writers: Vec<Vec<ArrowColumnWriter>>,
}

impl<W: Write + Send> Appender<W> {
    pub fn new(out: W, schema: SchemaRef, props: WriterProperties) -> Result<Self> {
        let group_rows = props.max_row_group_row_count().unwrap_or(usize::MAX);
        let (file, factory) =
            ArrowWriter::try_new(out, schema.clone(), Some(props))?.into_serialized_writer()?;
        Ok(Appender {
            file,
            factory,
            schema,
            group_rows,
            group: 0,
            rows: 0,
            writers: Vec::new(),
        })
    }

    /// Encodes a batch into the current row group (closing each group it
    /// fills); `parallel` feeds the fields as tasks on the rayon pool.
    /// Call it with `parallel` off from a thread that holds a lock, since
    /// a pool thread waiting for tasks may take up work that wants the lock.
    pub fn push(&mut self, batch: &RecordBatch, parallel: bool) -> Result<()> {
        let mut rest = batch.clone();
        while rest.num_rows() > 0 {
            let take = (self.group_rows - self.rows).min(rest.num_rows());
            let slice = rest.slice(0, take);
            rest = rest.slice(take, rest.num_rows() - take);
            if self.writers.is_empty() {
                let mut all = self.factory.create_column_writers(self.group)?.into_iter();
                for field in self.schema.fields() {
                    let n = leaves(field.data_type());
                    self.writers.push(all.by_ref().take(n).collect());
                }
            }
            let schema = &self.schema;
            let one = |(f, writers): (usize, &mut Vec<ArrowColumnWriter>)| {
                feed(&schema.fields()[f], f, &slice, writers)
            };
            if parallel {
                self.writers.par_iter_mut().enumerate().try_for_each(one)?;
            } else {
                self.writers.iter_mut().enumerate().try_for_each(one)?;
            }
            self.rows += take;
            if self.rows == self.group_rows {
                self.close_group(parallel)?;
            }
        }
        Ok(())
    }

    /// Closes the current group's writers and appends its column chunks.
    fn close_group(&mut self, parallel: bool) -> Result<()> {
        let writers = std::mem::take(&mut self.writers);
        let close = |ws: Vec<ArrowColumnWriter>| -> Result<Vec<ArrowColumnChunk>> {
            ws.into_iter().map(|w| w.close()).collect()
        };
        let chunks: Vec<Vec<ArrowColumnChunk>> = if parallel {
            writers.into_par_iter().map(close).collect::<Result<_>>()?
        } else {
            writers.into_iter().map(close).collect::<Result<_>>()?
        };
        let mut group = self.file.next_row_group()?;
        for chunk in chunks.into_iter().flatten() {
            chunk.append_to_row_group(&mut group)?;
        }
        group.close()?;
        self.group += 1;
        self.rows = 0;
        Ok(())
    }

    /// Closes the last group (if it has rows) and the file.
    pub fn finish(mut self, parallel: bool) -> Result<()> {
        if self.rows > 0 {
            self.close_group(parallel)?;
        }
        self.file.close()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::builder::{Int64Builder, ListBuilder};
    use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
    use arrow_schema::Schema;
    use parquet::basic::{Compression, ZstdLevel};
    use std::sync::Arc;

    fn batch(schema: &SchemaRef, from: i64, rows: usize) -> RecordBatch {
        let ids: Vec<i64> = (from..from + rows as i64).collect();
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(
                ids.iter().map(|i| i % 7).collect::<Vec<_>>(),
            )),
            Arc::new(Float64Array::from(
                ids.iter().map(|&i| (i as f64).sqrt()).collect::<Vec<_>>(),
            )),
            Arc::new(StringArray::from(
                ids.iter()
                    .map(|i| format!("k{}", i % 13))
                    .collect::<Vec<_>>(),
            )),
            Arc::new({
                // A list column (as `corrections` is), some lists empty.
                let mut b = ListBuilder::new(Int64Builder::new());
                for i in &ids {
                    b.values().append_slice(&(0..i % 3).collect::<Vec<_>>());
                    b.append(true);
                }
                b.finish()
            }),
        ];
        RecordBatch::try_new(schema.clone(), cols).unwrap()
    }

    /// Same slices in, same bytes out as Arrow's own writer, whatever the
    /// batch sizes and however many groups a window holds.
    #[test]
    fn bytes_match_arrows_writer() {
        let schema: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("b", DataType::Float64, false),
            Field::new("c", DataType::Utf8, false),
            Field::new(
                "d",
                DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
                false,
            ),
        ]));
        let props = || {
            WriterProperties::builder()
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).unwrap()))
                .set_max_row_group_row_count(Some(100))
                .build()
        };
        for sizes in [
            vec![0],
            vec![100],
            vec![1, 99, 100, 250, 0, 37],
            vec![333; 9],
        ] {
            let mut from = 0;
            let batches: Vec<RecordBatch> = sizes
                .iter()
                .map(|&n| {
                    from += n as i64;
                    batch(&schema, from - n as i64, n)
                })
                .collect();
            let mut theirs = Vec::new();
            let mut w = ArrowWriter::try_new(&mut theirs, schema.clone(), Some(props())).unwrap();
            for b in &batches {
                w.write(b).unwrap();
            }
            w.close().unwrap();
            let mut ours = Vec::new();
            write::<_, parquet::errors::ParquetError>(
                &mut ours,
                schema.clone(),
                props(),
                batches.iter().cloned().map(Ok),
            )
            .unwrap();
            assert_eq!(ours, theirs, "batch sizes {sizes:?}");
            // Appended batch by batch, the fields fed serially or in
            // parallel by turns: the same bytes again.
            let mut appended = Vec::new();
            let mut a = Appender::new(&mut appended, schema.clone(), props()).unwrap();
            for (i, b) in batches.iter().enumerate() {
                a.push(b, i % 2 == 0).unwrap();
            }
            a.finish(true).unwrap();
            assert_eq!(appended, theirs, "appended, batch sizes {sizes:?}");
        }
    }
}
