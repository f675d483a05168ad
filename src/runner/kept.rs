//! Parts kept in memory: the batches this process wrote as part files,
//! held (up to a budget) so that assembly encodes them straight into the
//! final tables instead of reading the parts back. The parts are still
//! written first, so a crash loses nothing; the final bytes are the same
//! either way, since a kept batch is fed to the writer in the pieces a
//! read-back part would be.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::store::parquet::Batch;

/// How many bytes of batches a run keeps. The rest are read back from
/// their parts, so memory stays bounded however large the grid; grids of
/// small runs (the case where reading back costs most, relatively) fit.
pub const BUDGET: usize = 64 << 20;

/// A chunk's part of one table, as written.
pub struct KeptPart {
    pub batch: Batch,
    /// The digest and row count its part file records.
    pub digest: String,
    pub rows: u64,
}

/// The parts kept so far, by (table, chunk).
pub struct Kept {
    budget: usize,
    inner: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    bytes: usize,
    parts: HashMap<(&'static str, u64), KeptPart>,
}

impl Kept {
    pub fn new(budget: usize) -> Kept {
        Kept {
            budget,
            inner: Mutex::new(Held::default()),
        }
    }

    /// Keeps a chunk's part if it fits in what is left of the budget
    /// (a part that does not fit is simply read back later).
    pub fn offer(&self, table: &'static str, chunk: u64, part: KeptPart) {
        let size = part.batch.memory();
        let mut held = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if held.bytes + size <= self.budget {
            held.bytes += size;
            held.parts.insert((table, chunk), part);
        }
    }

    /// Forgets a chunk (its parts were removed, to be run again).
    pub fn forget(&self, table: &'static str, chunk: u64) {
        let mut held = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = held.parts.remove(&(table, chunk)) {
            held.bytes -= p.batch.memory();
        }
    }

    /// Hands over the kept part of a table's chunk, if there is one, and
    /// frees its share of the budget.
    pub fn take(&self, table: &'static str, chunk: u64) -> Option<KeptPart> {
        let mut held = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let p = held.parts.remove(&(table, chunk))?;
        held.bytes -= p.batch.memory();
        Some(p)
    }

    /// Runs `f` with the kept part of a table's chunk, if there is one.
    pub fn with<T>(
        &self,
        table: &'static str,
        chunk: u64,
        f: impl FnOnce(&KeptPart) -> T,
    ) -> Option<T> {
        let held = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        held.parts.get(&(table, chunk)).map(f)
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ColType, Column, Columns};
    use crate::params::Value;
    use crate::store::parquet::{self, Codec, ROW_GROUP_ROWS};

    const COLUMNS: [Column; 3] = [
        Column::new("id", ColType::Int, false, ""),
        Column::new("p", ColType::Float, true, ""),
        Column::new("arm", ColType::Str, false, ""),
    ];

    fn batch(rows: usize) -> Batch {
        let mut c = Columns::new(&COLUMNS);
        for i in 0..rows {
            let p = if i % 7 == 0 {
                Value::Null
            } else {
                Value::Float(i as f64 / 3.0)
            };
            let arm = Value::Str(["a", "bb", "ccc"][i % 3].into());
            c.push_values(&[Value::Int(i as i64), p, arm], &COLUMNS)
                .unwrap();
        }
        parquet::columns_batch(&COLUMNS, c).unwrap()
    }

    fn part(rows: usize) -> KeptPart {
        KeptPart {
            batch: batch(rows),
            digest: String::new(),
            rows: rows as u64,
        }
    }

    #[test]
    fn keeps_within_the_budget_and_forgets() {
        let one = batch(100).memory();
        let kept = Kept::new(one * 2);
        kept.offer("runs", 0, part(100));
        kept.offer("runs", 1, part(100));
        kept.offer("runs", 2, part(100));
        assert_eq!(kept.bytes(), one * 2);
        assert_eq!(kept.with("runs", 1, |p| p.rows), Some(100));
        assert!(kept.with("runs", 2, |_| ()).is_none(), "over the budget");
        kept.forget("runs", 0);
        assert_eq!(kept.bytes(), one);
        assert!(kept.with("runs", 0, |_| ()).is_none());
        assert_eq!(kept.take("runs", 1).map(|p| p.rows), Some(100));
        assert_eq!(kept.bytes(), 0);
        assert!(kept.take("runs", 1).is_none());
    }

    /// The promise assembly relies on: a final table written from kept
    /// batches is byte for byte the one written from their part files,
    /// whatever the chunks' sizes against the row groups.
    #[test]
    fn a_table_from_kept_batches_equals_one_from_read_back_parts() {
        let dir = tempfile::tempdir().unwrap();
        let chunks = [1, ROW_GROUP_ROWS + 5, 0, 2 * ROW_GROUP_ROWS, 333];
        let mut kept = Vec::new();
        let mut read = Vec::new();
        for (c, rows) in chunks.into_iter().enumerate() {
            let b = batch(rows);
            let path = dir.path().join(format!("part-{c}.parquet"));
            parquet::write_as(&path, &COLUMNS, [Ok(b.clone())], &[], Codec::Part).unwrap();
            let back: Vec<usize> = parquet::open(&path)
                .unwrap()
                .map(|p| p.unwrap().num_rows())
                .collect();
            let pieces: Vec<usize> = b.as_read_back().map(|p| p.num_rows()).collect();
            assert_eq!(pieces, back, "chunk {c} of {rows} rows");
            kept.extend(b.as_read_back().map(Ok));
            read.extend(parquet::open(&path).unwrap());
        }
        let (a, b) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
        parquet::write(&a, &COLUMNS, kept, &[]).unwrap();
        parquet::write(&b, &COLUMNS, read, &[]).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }
}
