//! Everything that writes files: atomic replacement, Parquet tables and the
//! result folder's layout. The only I/O in the library besides the CLI.

pub mod atomic;
pub mod charts;
pub mod parquet;
