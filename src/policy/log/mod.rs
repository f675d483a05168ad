//! The record log: every decision an external arm was given, written and
//! synced before the model applies it, one JSON line per key, in
//! `policy-log/<arm>/part-<chunk>.jsonl` (compressed to `.jsonl.zst` once
//! the results are complete). It is what makes an answer paid for never
//! paid for twice (a resumed chunk answers from it first), and what lets a
//! finished experiment be replayed with no process at all. Each line
//! carries the request it answered, so a replay that asks something else
//! can say which field changed, and a checksum, so an edited line is named.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::protocol::{Identity, Usage};

/// How a logged decision ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A checked answer, applied.
    Answer,
    /// No usable answer after the retries: the safe action was taken.
    Fallback,
    /// No usable answer after the retries: the run failed.
    Failed,
}

/// One logged decision.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub key: String,
    /// SHA-256 of the canonical request item and the policy's identity.
    pub request_sha256: String,
    /// The observation (canonical JSON, kept as text) and the allowed
    /// actions, as sent.
    pub obs: Box<RawValue>,
    pub allowed: Vec<String>,
    pub outcome: Outcome,
    /// The answer as given (action, belief, text, note), for `Answer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Json>,
    /// What went wrong on each failed attempt, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// Usage summed over every attempt that reported some.
    #[serde(default, skip_serializing_if = "Usage::is_empty")]
    pub usage: Usage,
    pub attempts: u32,
    /// Copied from another experiment's log by `run --policy-replay`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
    /// XXH3 of the entry's line without this field.
    #[serde(default)]
    pub check: String,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.line() == other.line()
    }
}

impl Entry {
    /// XXH3 of the entry's line with an empty checksum: a line read back
    /// serializes to the same text, so any edit shows.
    fn checksum(&mut self) -> String {
        let kept = std::mem::take(&mut self.check);
        let line = self.line();
        self.check = kept;
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(line.as_bytes()))
    }

    /// The entry with its checksum filled in.
    pub fn sealed(mut self) -> Entry {
        self.check = self.checksum();
        self
    }

    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("an entry is JSON")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}, line {line}: {message}")]
    Entry {
        path: String,
        line: usize,
        message: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LogError + '_ {
    move |source| LogError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The folder of an arm's log.
pub fn arm_dir(results: &Path, arm: &str) -> PathBuf {
    results.join("policy-log").join(arm)
}

pub fn part(results: &Path, arm: &str, chunk: u64) -> PathBuf {
    arm_dir(results, arm).join(format!("part-{chunk:06}.jsonl"))
}

pub fn compressed(path: &Path) -> PathBuf {
    path.with_extension("jsonl.zst")
}

/// A chunk's log as read back: its entries by key.
#[derive(Debug, Default)]
pub struct ChunkLog {
    pub entries: HashMap<String, Entry>,
}

/// Reads a chunk's log (compressed if the results were completed). A last
/// line cut short by a crash is skipped (its batch was never applied, so it
/// is asked again); reading never changes the file, which may be another
/// folder's or still being written. Any other damage is an error naming
/// the line.
pub fn load(path: &Path) -> Result<ChunkLog, LogError> {
    let zst = compressed(path);
    let (text, from) = if zst.exists() {
        let file = File::open(&zst).map_err(io(&zst))?;
        let mut text = String::new();
        zstd::stream::read::Decoder::new(file)
            .and_then(|mut d| d.read_to_string(&mut text))
            .map_err(io(&zst))?;
        (text, zst)
    } else {
        match std::fs::read(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ChunkLog::default()),
            Err(e) => return Err(io(path)(e)),
            Ok(bytes) => {
                let keep = whole_lines(&bytes);
                let text = String::from_utf8(bytes[..keep].to_vec()).map_err(|e| {
                    let at = e.utf8_error().valid_up_to();
                    LogError::Entry {
                        path: path.display().to_string(),
                        line: 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count(),
                        message: "not UTF-8".into(),
                    }
                })?;
                (text, path.to_path_buf())
            }
        }
    };
    let mut entries = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let bad = |message: String| LogError::Entry {
            path: from.display().to_string(),
            line: i + 1,
            message,
        };
        let mut e: Entry =
            serde_json::from_str(line).map_err(|e| bad(format!("not a record log entry: {e}")))?;
        let sum = e.checksum();
        if e.check != sum {
            return Err(bad(format!(
                "key {}: the entry was changed after it was written (its checksum no longer matches); \
                 restore the log, or run the arm again into a new folder",
                e.key
            )));
        }
        entries.insert(e.key.clone(), e);
    }
    Ok(ChunkLog { entries })
}

/// The length of the whole lines at the start of `bytes`.
fn whole_lines(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// Every chunk's log of an arm, read back into one.
pub fn load_arm(results: &Path, arm: &str) -> Result<ChunkLog, LogError> {
    let dir = arm_dir(results, arm);
    let mut all = ChunkLog::default();
    let Ok(files) = std::fs::read_dir(&dir) else {
        return Ok(all);
    };
    let mut parts: Vec<PathBuf> = files
        .flatten()
        .map(|f| f.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("part-"))
        })
        .map(|p| {
            // Both copies of a part name the same log.
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .replace(".zst", "");
            p.with_file_name(name)
        })
        .collect();
    parts.sort();
    parts.dedup();
    for p in parts {
        all.entries.extend(load(&p)?.entries);
    }
    Ok(all)
}

/// Appends entries to a chunk's log, synced before anything is applied.
pub struct Writer {
    path: PathBuf,
    file: Option<File>,
}

impl Writer {
    pub fn new(path: PathBuf) -> Writer {
        Writer { path, file: None }
    }

    pub fn append(&mut self, entries: &[Entry]) -> Result<(), LogError> {
        if entries.is_empty() {
            return Ok(());
        }
        if self.file.is_none() {
            self.file = Some(self.open().map_err(io(&self.path))?);
        }
        let mut text = String::new();
        for e in entries {
            text += &e.line();
            text.push('\n');
        }
        let f = self.file.as_mut().expect("opened above");
        f.write_all(text.as_bytes())
            .and_then(|_| f.sync_data())
            .map_err(io(&self.path))?;
        crate::crash::point("policy answers logged");
        Ok(())
    }
}

impl Writer {
    /// Opens the log for appending. A torn last line (a crash mid-write;
    /// its batch was never applied) is cut off first, so appends start on
    /// a line of their own. A new file, and any folder made for it, is
    /// synced into its parent: an answer logged must survive a power loss
    /// as surely as the results that rely on it.
    fn open(&self) -> std::io::Result<File> {
        let dir = self.path.parent().expect("a log lives in a folder");
        let mut made = Vec::new();
        let mut d = dir;
        while !d.exists() {
            made.push(d.to_path_buf());
            d = d.parent().expect("a folder below the results");
        }
        std::fs::create_dir_all(dir)?;
        let existed = self.path.exists();
        let f = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&self.path)?;
        if existed {
            let bytes = std::fs::read(&self.path)?;
            let keep = whole_lines(&bytes);
            if keep < bytes.len() {
                f.set_len(keep as u64)?;
                f.sync_data()?;
            }
        } else {
            made.push(self.path.clone());
            for p in made.iter().rev() {
                let parent = p.parent().expect("below the results");
                File::open(parent)?.sync_all()?;
            }
        }
        Ok(f)
    }
}

/// Compresses every finished chunk log of the folder, each written whole
/// before its plain copy goes, so a crash leaves one readable copy.
pub fn compress_all(results: &Path) -> Result<(), LogError> {
    for path in plain_logs(results)? {
        let zst = compressed(&path);
        let text = std::fs::read(&path).map_err(io(&path))?;
        let packed = zstd::bulk::compress(&text, 3).map_err(io(&path))?;
        crate::store::atomic::write(&zst, &packed).map_err(io(&zst))?;
        std::fs::remove_file(&path).map_err(io(&path))?;
        crate::crash::point("policy log compressed");
    }
    Ok(())
}

fn plain_logs(results: &Path) -> Result<Vec<PathBuf>, LogError> {
    let mut out = Vec::new();
    for file in log_files(results)? {
        if file.extension().is_some_and(|e| e == "jsonl") {
            if compressed(&file).exists() {
                // Compressed before a crash, not yet removed.
                std::fs::remove_file(&file).map_err(io(&file))?;
            } else {
                out.push(file);
            }
        }
    }
    Ok(out)
}

/// Every log file of the folder, sorted: what the seal lists.
pub fn log_files(results: &Path) -> Result<Vec<PathBuf>, LogError> {
    let root = results.join("policy-log");
    let mut out = Vec::new();
    let Ok(arms) = std::fs::read_dir(&root) else {
        return Ok(out);
    };
    for arm in arms.flatten().filter(|a| a.path().is_dir()) {
        for f in std::fs::read_dir(arm.path())
            .map_err(io(&arm.path()))?
            .flatten()
        {
            let name = f.file_name().to_string_lossy().into_owned();
            if name.starts_with("part-")
                && (name.ends_with(".jsonl") || name.ends_with(".jsonl.zst"))
                || name == IDENTITY
            {
                out.push(f.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The policy an arm's log was written with.
pub const IDENTITY: &str = "policy.json";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    pub policy: Identity,
    pub decision: String,
}

pub fn read_identity(results: &Path, arm: &str) -> Result<Option<Recorded>, LogError> {
    let path = arm_dir(results, arm).join(IDENTITY);
    match std::fs::read_to_string(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(&path)(e)),
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| LogError::Entry {
                path: path.display().to_string(),
                line: 1,
                message: format!("not a policy identity witness wrote: {e}"),
            }),
    }
}

pub fn write_identity(results: &Path, arm: &str, r: &Recorded) -> Result<(), LogError> {
    let dir = arm_dir(results, arm);
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let path = dir.join(IDENTITY);
    let text = serde_json::to_string_pretty(r).expect("JSON") + "\n";
    crate::store::atomic::write(&path, text.as_bytes()).map_err(io(&path))
}

#[cfg(test)]
mod tests;
