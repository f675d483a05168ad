//! Where a sharded results folder stands: for each shard of N, how many of
//! its chunks are in, and what to run to finish. N is what the shards
//! recorded (their timing files) unless given; the command to finish uses
//! the manifest a shard was run from, when it still reads the same.

use std::path::{Path, PathBuf};

use super::assemble::parts_present;
use super::layout::Layout;
use super::tables::tables;
use super::{is_complete, RunError};
use crate::model::Registry;

/// One shard's chunks: how many there are and how many are done.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ShardState {
    pub shard: u64,
    pub chunks: u64,
    pub done: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Status {
    pub dir: String,
    /// The results are assembled and sealed: nothing is left to do.
    pub merged: bool,
    pub count: u64,
    /// The shards that own chunks: the first min(count, chunks). A larger
    /// count (a Slurm array bigger than the plan) leaves the rest with
    /// nothing to do, and listing them would only cost memory.
    pub shards: Vec<ShardState>,
    /// The manifest to run the missing shards from.
    pub manifest: String,
    /// The job engine the finished shards ran under, when they all agree.
    pub engine: Option<String>,
}

impl Status {
    /// Shards with chunks still missing.
    pub fn unfinished(&self) -> Vec<u64> {
        self.shards
            .iter()
            .filter(|s| s.done < s.chunks)
            .map(|s| s.shard)
            .collect()
    }
}

/// Reads the folder's state; `count` overrides the shard count recorded.
pub fn status(dir: &Path, count: Option<u64>, registry: &Registry) -> Result<Status, RunError> {
    let layout = Layout::new(dir);
    let plan = layout.read_plan(registry)?;
    let recorded = recorded_counts(dir);
    let tables = tables(&plan.manifest);
    let merged = is_complete(&plan, &layout, &tables)?;
    let count = match (count, recorded.as_slice()) {
        (Some(n), _) if n >= 1 => n,
        (Some(_), _) => return Err(usage("--count must be at least 1")),
        (None, [n]) => *n,
        // Run whole, not in shards: one shard of one.
        (None, []) if merged => 1,
        (None, []) => {
            return Err(usage(&format!(
                "{}: no shard has finished here yet, so the shard count is unknown; pass --count N (1 for a run that was not sharded)",
                dir.display()
            )))
        }
        (None, many) => {
            return Err(usage(&format!(
                "{}: shards were run with different counts ({many:?}); pass --count N",
                dir.display()
            )))
        }
    };
    let chunks = plan.chunk_count();
    let shards = (0..count.min(chunks))
        .map(|k| {
            let mine: Vec<u64> = (k..chunks).step_by(count as usize).collect();
            ShardState {
                shard: k,
                chunks: mine.len() as u64,
                done: if merged {
                    mine.len() as u64
                } else {
                    // Every table's part, not only the runs part that marks a
                    // chunk done: a shard with a part gone is not complete.
                    mine.iter()
                        .filter(|&&c| parts_present(&plan, &layout, &tables, c))
                        .count() as u64
                },
            }
        })
        .collect();
    Ok(Status {
        dir: dir.display().to_string(),
        merged,
        count,
        shards,
        manifest: manifest_for(dir, &layout).display().to_string(),
        engine: engine_of(dir),
    })
}

/// The engine every timing file names, if they name one and agree.
fn engine_of(dir: &Path) -> Option<String> {
    let mut engines: Vec<String> = timing_docs(dir)
        .iter()
        .filter_map(|d| d["engine"].as_str().map(str::to_string))
        .collect();
    engines.sort();
    engines.dedup();
    (engines.len() == 1).then(|| engines.remove(0))
}

fn timing_docs(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("timing-shard-"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect()
}

fn usage(message: &str) -> RunError {
    RunError::Usage {
        message: message.to_string(),
    }
}

/// The shard counts of the timing files `timing-shard-K-of-N.json`.
fn recorded_counts(dir: &Path) -> Vec<u64> {
    let mut counts: Vec<u64> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix("timing-shard-")?.strip_suffix(".json")?;
            rest.split_once("-of-")?.1.parse().ok()
        })
        .collect();
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// The manifest a shard recorded it ran from, if it still holds the same
/// text (relative paths in it, such as a policy's command, then resolve as
/// they did); else the folder's own copy.
fn manifest_for(dir: &Path, layout: &Layout) -> PathBuf {
    let own = std::fs::read_to_string(layout.manifest()).ok();
    let recorded = timing_docs(dir)
        .iter()
        .filter_map(|doc| Some(PathBuf::from(doc["manifest"].as_str()?)))
        .find(|p| std::fs::read_to_string(p).ok() == own);
    recorded.unwrap_or_else(|| layout.manifest())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unfinished_lists_the_shards_with_missing_chunks() {
        let s = Status {
            dir: "d".into(),
            merged: false,
            count: 3,
            shards: vec![
                ShardState {
                    shard: 0,
                    chunks: 2,
                    done: 2,
                },
                ShardState {
                    shard: 1,
                    chunks: 2,
                    done: 1,
                },
                ShardState {
                    shard: 2,
                    chunks: 1,
                    done: 0,
                },
            ],
            manifest: "m".into(),
            engine: None,
        };
        assert_eq!(s.unfinished(), [1, 2]);
    }
}
