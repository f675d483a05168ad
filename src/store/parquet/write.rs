//! Writing tables: the settings that make a file's bytes a function of
//! its rows, whole files written atomically, and files written as their
//! rows arrive.

use std::fs::File;
use std::path::Path;

use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use super::{batch, Batch, ROW_GROUP_ROWS};
use crate::model::{ColType, Column, Row};
use crate::store::StoreError;

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
    Ok(crate::store::atomic::sync_dir(path)?)
}

/// Encodes a file into its temporary sibling, to be put in place by
/// `Staged::commit` (now or on another thread).
pub fn stage_as(
    path: &Path,
    columns: &[Column],
    batches: impl IntoIterator<Item = Result<Batch, StoreError>>,
    kv: &[(String, String)],
    codec: Codec,
) -> Result<crate::store::atomic::Staged, StoreError> {
    let schema = super::arrow_schema(columns);
    let mut failed = None;
    let result = crate::store::atomic::stage(path, |f| {
        crate::store::groups::write(
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
    appender: crate::store::groups::Appender<File>,
    staged: crate::store::atomic::Staged,
}

impl Streamed {
    pub fn create(
        path: &Path,
        columns: &[Column],
        kv: &[(String, String)],
    ) -> Result<Streamed, StoreError> {
        let staged = crate::store::atomic::stage(path, |_| Ok(()))?;
        let appender = crate::store::groups::Appender::new(
            staged.handle()?,
            super::arrow_schema(columns),
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
        Ok(crate::store::atomic::sync_dir(&path)?)
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
        super::arrow_schema(columns),
        Some(properties(columns, kv, Codec::Results)),
    )?;
    w.write(&batch(columns, rows)?.0)?;
    w.close()?;
    Ok(out)
}
