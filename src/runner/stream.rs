//! Final tables begun while the chunks run. Each table's file is opened
//! when the job starts, and whenever a worker finishes a chunk it feeds
//! the file every kept part that continues it in chunk order, so the
//! encoding of the results is spread over the run instead of waiting for
//! its end; assembly then only adds the chunks the file has not reached
//! and closes it. The file is what assembly would write from the same
//! parts (same pieces, same order, same cuts), so its bytes do not depend
//! on how far the stream got, nor on the thread count.
//!
//! A stream is only a head start: one that fails, or whose footer no
//! longer matches the plan, is dropped (its temporary goes with it) and
//! assembly writes the table from the parts as before.

use std::sync::Mutex;

use super::kept::{Kept, KeptPart};
use super::layout::Layout;
use super::tables::{metadata, Table};
use crate::grid::Plan;
use crate::params::Value;
use crate::store::parquet::{self, Batch, Metadata, Streamed};
use crate::store::StoreError;

/// What assembly checks of a table's rows as they go by: how many there
/// are and, in `runs`, that the run ids continue; the runs whose
/// identities failed are collected on the way.
#[derive(Default)]
pub struct Tally {
    pub rows: u64,
    pub next_id: u64,
    pub failures: Vec<(u64, String)>,
}

impl Tally {
    /// Counts a batch of a table's rows and, in `runs`, checks its ids.
    pub fn add(&mut self, runs: bool, b: &Batch) -> Result<(), String> {
        self.rows += b.num_rows() as u64;
        if runs {
            check_ids(b, &mut self.next_id, &mut self.failures)?;
        }
        Ok(())
    }
}

/// Checks a batch of `runs` rows continues the run ids from `next`, and
/// collects the runs recorded as failed.
pub fn check_ids(
    b: &Batch,
    next: &mut u64,
    failures: &mut Vec<(u64, String)>,
) -> Result<(), String> {
    let ids = b.ints("run_id").map_err(|e| e.to_string())?;
    let status = b.rows(&["failed", "failure"]).map_err(|e| e.to_string())?;
    for (&id, row) in ids.iter().zip(&status) {
        if id < 0 || id as u64 != *next {
            return Err(format!(
                "run {id} found where run {} belongs: a part is duplicated or missing; rerun the shard that wrote it",
                *next
            ));
        }
        if row[0] == Value::Bool(true) {
            let why = row[1].as_str().unwrap_or_default().to_string();
            failures.push((*next, why));
        }
        *next += 1;
    }
    Ok(())
}

/// A table's final file, fed the parts of chunks `0..next`.
pub struct Stream {
    pub file: Streamed,
    /// The footer's metadata it was opened with.
    pub kv: Metadata,
    pub next: u64,
    /// Each part's record (digest, rows), in chunk order, for the seal.
    pub rec: Vec<(String, u64)>,
    pub tally: Tally,
}

impl Stream {
    fn feed(&mut self, runs: bool, part: KeptPart) -> Result<(), StoreError> {
        // The pieces a read-back part comes in, as assembly feeds them.
        for piece in part.batch.as_read_back() {
            self.tally.add(runs, &piece).map_err(StoreError::Format)?;
            // Serial: this thread holds the stream's lock (see `push`).
            self.file.push(&piece, false)?;
        }
        self.rec.push((part.digest, part.rows));
        self.next += 1;
        Ok(())
    }
}

/// A stream per table, in the job's table order; empty when nothing is
/// streamed (shards, raced plans, `merge`).
#[derive(Default)]
pub struct Streams(Vec<Mutex<Option<Stream>>>);

impl Streams {
    /// Opens every table's file in the job's folder. A raced plan grows
    /// as it goes, and with it its files' footers, so it streams nothing.
    pub fn open(plan: &Plan, layout: &Layout, tables: &[Table]) -> Streams {
        if plan.schedule().is_some() {
            return Streams::default();
        }
        let open = |t: &Table| {
            let kv = metadata(plan, t.name).to_kv();
            // A file that cannot be opened now is reported by assembly.
            let file = parquet::Streamed::create(&layout.table(t.name), &t.columns, &kv).ok()?;
            Some(Stream {
                file,
                kv,
                next: 0,
                rec: Vec::new(),
                tally: Tally::default(),
            })
        };
        Streams(tables.iter().map(|t| Mutex::new(open(t))).collect())
    }

    /// Feeds each table's file the kept parts that continue it. A table
    /// whose stream another thread is feeding is skipped: that thread
    /// takes the next part too when it is there by then, and otherwise
    /// the next finished chunk or assembly does.
    pub fn advance(&self, tables: &[Table], kept: &Kept) {
        for (t, slot) in tables.iter().zip(&self.0) {
            let Ok(mut slot) = slot.try_lock() else {
                continue;
            };
            let Some(s) = slot.as_mut() else { continue };
            while let Some(part) = kept.take(t.name, s.next) {
                if s.feed(t.is_runs(), part).is_err() {
                    // Assembly writes this table afresh from its parts
                    // (all on disk by then) and says what is wrong.
                    *slot = None;
                    break;
                }
            }
        }
    }

    /// How many chunks every table's file has taken in so far (0 when
    /// nothing streams): what assembly has left is the rest.
    pub fn reached(&self) -> u64 {
        let next = |slot: &Mutex<Option<Stream>>| {
            let slot = slot.lock().unwrap_or_else(|e| e.into_inner());
            slot.as_ref().map_or(0, |s| s.next)
        };
        self.0.iter().map(next).min().unwrap_or(0)
    }

    /// Hands over table `i`'s stream, if it has one.
    pub fn take(&self, i: usize) -> Option<Stream> {
        let slot = self.0.get(i)?;
        slot.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}
