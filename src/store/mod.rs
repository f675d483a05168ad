//! Storage: crash-safe file replacement, typed Parquet tables, the
//! metadata every results file carries, one writer for the tables verbs
//! print and save (CSV, JSON), and charts. This layer owns every file
//! format; the runner decides what to write and when.

pub mod atomic;
pub mod charts;
pub mod commit;
pub mod digest;
mod groups;
pub mod html;
pub mod input;
pub mod meta;
pub mod parquet;
pub mod seal;
pub mod table;

pub use meta::FileMeta;
pub use table::{Format, TableData};

/// A file could not be written or read as a table.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Parquet(#[from] ::parquet::errors::ParquetError),
    #[error("{0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// Content that is not what witness writes.
    #[error("{0}")]
    Format(String),
    #[error(transparent)]
    Meta(#[from] meta::MetaError),
}
