//! The seal of a finished results folder, `complete.json`: written after
//! every final table and before the parts are removed, it is what says
//! "complete". It records, for each table, its file's size and SHA-256, its
//! row count and a content digest per block of chunks, so `verify` can tell
//! a changed byte, a changed value and where the value is.

use serde::{Deserialize, Serialize};
use std::path::Path;

use super::{atomic, StoreError};

pub const FILE: &str = "complete.json";

/// At most this many digests per table, so the seal stays small on grids
/// of millions of runs.
pub const MAX_BLOCKS: u64 = 4096;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seal {
    /// The crate version that wrote it.
    pub witness: String,
    pub manifest_sha256: String,
    pub runs: u64,
    pub chunk_runs: u64,
    /// Chunks per digest block.
    pub block_chunks: u64,
    pub tables: Vec<SealedTable>,
    /// Other files that are part of the results (external arms' record
    /// logs), by path within the folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SealedFile>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealedFile {
    pub file: String,
    pub bytes: u64,
    pub sha256: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealedTable {
    pub name: String,
    pub file: String,
    pub bytes: u64,
    pub sha256: String,
    pub rows: u64,
    /// The content digest of each block's rows, in block order.
    pub blocks: Vec<String>,
}

/// Chunks per block for `chunks` chunks.
pub fn block_chunks(chunks: u64) -> u64 {
    chunks.div_ceil(MAX_BLOCKS).max(1)
}

/// How the file at `path` differs from what the seal recorded for it (its
/// size and SHA-256), if it does; the caller names the file.
pub fn differs(path: &Path, bytes: u64, sha256: &str) -> std::io::Result<Option<String>> {
    let (got, size) = super::digest::file_sha256(path)?;
    Ok((got != sha256 || size != bytes).then(|| {
        format!(
            "its bytes are not the ones written ({size} bytes, SHA-256 {}…; the seal says {bytes} bytes, {}…)",
            &got[..12],
            &sha256[..12.min(sha256.len())]
        )
    }))
}

impl Seal {
    pub fn table(&self, name: &str) -> Option<&SealedTable> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// The seal in `dir`, if there is one.
    pub fn read(dir: &Path) -> Result<Option<Seal>, StoreError> {
        let path = dir.join(FILE);
        match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.into()),
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                StoreError::Format(format!("{}: not a seal witness wrote: {e}", path.display()))
            }),
        }
    }

    pub fn write(&self, dir: &Path) -> Result<(), StoreError> {
        let text =
            serde_json::to_string_pretty(self).map_err(|e| StoreError::Format(e.to_string()))?;
        Ok(atomic::write(&dir.join(FILE), text.as_bytes())?)
    }
}
