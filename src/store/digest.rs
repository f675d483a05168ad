//! Content digests of stored rows. A digest is XXH3 (64 bits) over a
//! canonical encoding of each value (a type tag, then the value's bytes:
//! integers and float bits little-endian, text with its length), so rows
//! give the same digest whether they are hashed as produced or as read back
//! from Parquet. It detects damage, not forgery: a fast hash keeps digests
//! off the critical path of a run. Parts record the digest of their rows;
//! the seal records one per block of chunks; `verify` recomputes both from
//! what it reads. Whole files are hashed with SHA-256, which `sha256sum`
//! checks too.

use sha2::{Digest as _, Sha256};
use std::io::Read;
use std::path::Path;
use xxhash_rust::xxh3::Xxh3;

use crate::model::{Cells, ColumnValues, Columns};
use crate::params::Value;
use crate::store::StoreError;

/// Bytes gathered before they are hashed: hashing is fast on long inputs
/// and slow on many tiny ones.
const BUFFER: usize = 1 << 16;

#[derive(Clone, Default)]
pub struct RowDigest {
    hasher: Xxh3,
    buffer: Vec<u8>,
    rows: u64,
}

impl RowDigest {
    pub fn new() -> RowDigest {
        RowDigest::default()
    }

    pub fn add_row(&mut self, row: &[Value]) {
        self.rows += 1;
        self.buffer.extend((row.len() as u64).to_le_bytes());
        for v in row {
            self.add(v);
        }
        self.spill();
    }

    /// `add_row` of `head` followed by `rest`, without building the row.
    pub fn add_row_after(&mut self, head: &Value, rest: &[Value]) {
        self.rows += 1;
        self.buffer.extend((rest.len() as u64 + 1).to_le_bytes());
        self.add(head);
        for v in rest {
            self.add(v);
        }
        self.spill();
    }

    /// `add_row` of every row of `t`, read column by column: the same
    /// bytes, so the same digest, without a `Value` per cell.
    pub fn add_columns(&mut self, t: &Columns) {
        self.add_column_values(&t.columns, t.rows());
    }

    /// `add_columns` of the first `rows` rows of these columns.
    pub fn add_column_values(&mut self, t: &[ColumnValues], rows: usize) {
        match fixed_cells(t) {
            Some(fixed) => self.add_fixed(&fixed, rows),
            None => self.add_cells(t, rows),
        }
    }

    /// `add_columns` of the rows of a batch read back from a file: the
    /// digest of what a part holds, to compare with the one it recorded.
    pub fn add_batch(&mut self, b: &crate::store::parquet::Batch) -> Result<(), StoreError> {
        b.digest_into(self)
    }

    /// `add_columns` of a table whose every row encodes to the same
    /// length: each column is written down its own stride of a block of
    /// rows, one tight loop per column instead of a branch per cell. (A
    /// chunk's trajectory rows are of this kind; their digest was a
    /// fortieth of a grid of small runs.)
    pub fn add_fixed(&mut self, t: &[FixedCells], rows: usize) {
        let widths: Vec<usize> = t.iter().map(FixedCells::width).collect();
        let row = 8 + widths.iter().sum::<usize>();
        let block = (BUFFER / row).max(1);
        let width = (t.len() as u64).to_le_bytes();
        let mut start = 0;
        while start < rows {
            let n = block.min(rows - start);
            let base = self.buffer.len();
            self.buffer.resize(base + n * row, 0);
            let out = &mut self.buffer[base..];
            for r in out.chunks_exact_mut(row) {
                r[..8].copy_from_slice(&width);
            }
            let mut at = 8;
            for (c, &w) in t.iter().zip(&widths) {
                let rows = out.chunks_exact_mut(row).map(|r| &mut r[at..at + w]);
                match *c {
                    FixedCells::Bool(v) => {
                        for (cell, x) in rows.zip(&v[start..start + n]) {
                            cell.copy_from_slice(&[1, u8::from(*x)]);
                        }
                    }
                    FixedCells::Int(v) => {
                        for (cell, x) in rows.zip(&v[start..start + n]) {
                            cell[0] = 2;
                            cell[1..].copy_from_slice(&x.to_le_bytes());
                        }
                    }
                    FixedCells::Float(v) => {
                        for (cell, x) in rows.zip(&v[start..start + n]) {
                            cell[0] = 3;
                            cell[1..].copy_from_slice(&x.to_bits().to_le_bytes());
                        }
                    }
                }
                at += w;
            }
            self.rows += n as u64;
            start += n;
            self.spill();
        }
    }

    /// `add_columns` cell by cell, for any table.
    fn add_cells(&mut self, t: &[ColumnValues], rows: usize) {
        let width = (t.len() as u64).to_le_bytes();
        for i in 0..rows {
            self.rows += 1;
            self.buffer.extend(width);
            for c in t {
                let h = &mut self.buffer;
                if c.is_null(i) {
                    h.push(0);
                    continue;
                }
                match &c.cells {
                    Cells::Bool(v) => h.extend([1, u8::from(v[i])]),
                    Cells::Int(v) => {
                        h.push(2);
                        h.extend(v[i].to_le_bytes());
                    }
                    Cells::Float(v) => {
                        h.push(3);
                        h.extend(v[i].to_bits().to_le_bytes());
                    }
                    Cells::Str(v) => {
                        h.push(4);
                        h.extend((v[i].len() as u64).to_le_bytes());
                        h.extend(v[i].as_bytes());
                    }
                    Cells::IntList(v) => {
                        h.push(5);
                        h.extend((v[i].len() as u64).to_le_bytes());
                        for x in &v[i] {
                            h.extend(x.to_le_bytes());
                        }
                    }
                }
            }
            self.spill();
        }
    }

    /// Hashing is split-blind (XXH3 of the pieces equals XXH3 of the
    /// whole), so where the buffer is cut never changes a digest.
    fn spill(&mut self) {
        if self.buffer.len() >= BUFFER {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
    }

    fn add(&mut self, v: &Value) {
        let h = &mut self.buffer;
        match v {
            Value::Null => h.push(0),
            Value::Bool(b) => h.extend([1, u8::from(*b)]),
            Value::Int(i) => {
                h.push(2);
                h.extend(i.to_le_bytes());
            }
            Value::Float(x) => {
                h.push(3);
                h.extend(x.to_bits().to_le_bytes());
            }
            Value::Str(s) => {
                h.push(4);
                h.extend((s.len() as u64).to_le_bytes());
                h.extend(s.as_bytes());
            }
            Value::List(l) => {
                h.push(5);
                h.extend((l.len() as u64).to_le_bytes());
                for i in l {
                    h.extend(i.to_le_bytes());
                }
            }
        }
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn finish(mut self) -> String {
        self.hasher.update(&self.buffer);
        format!("{:016x}", self.hasher.digest())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A column whose every cell encodes to the same length (flags, integers
/// or floats, none null), borrowed from wherever it is held: a table in
/// memory, or the arrays of a batch read back.
#[derive(Clone, Copy)]
pub enum FixedCells<'a> {
    Bool(&'a [bool]),
    Int(&'a [i64]),
    Float(&'a [f64]),
}

impl FixedCells<'_> {
    /// The bytes each cell encodes to: a tag and the value.
    fn width(&self) -> usize {
        match self {
            FixedCells::Bool(_) => 2,
            FixedCells::Int(_) | FixedCells::Float(_) => 9,
        }
    }
}

/// The columns of `t` as fixed-width cells, when every row encodes to the
/// same length: no null cell, no text, no lists.
fn fixed_cells(t: &[ColumnValues]) -> Option<Vec<FixedCells<'_>>> {
    t.iter()
        .map(|c| {
            if c.valid.as_ref().is_some_and(|v| v.contains(&false)) {
                return None;
            }
            match &c.cells {
                Cells::Bool(v) => Some(FixedCells::Bool(v)),
                Cells::Int(v) => Some(FixedCells::Int(v)),
                Cells::Float(v) => Some(FixedCells::Float(v)),
                Cells::Str(_) | Cells::IntList(_) => None,
            }
        })
        .collect()
}

/// The digest of a block: its chunks' digests, in order.
pub fn combine<'a>(chunks: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Xxh3::new();
    for c in chunks {
        h.update(c.as_bytes());
        h.update(b"\n");
    }
    format!("{:016x}", h.digest())
}

/// SHA-256 of a file's bytes (full hex) and its size.
pub fn file_sha256(path: &Path) -> std::io::Result<(String, u64)> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
    }
    Ok((hex(&h.finalize()), size))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digest(rows: &[Vec<Value>]) -> String {
        let mut d = RowDigest::new();
        rows.iter().for_each(|r| d.add_row(r));
        d.finish()
    }

    #[test]
    fn any_change_of_value_type_or_boundary_changes_the_digest() {
        let base = vec![vec![Value::Int(1), Value::Float(0.5), Value::from("ab")]];
        let d = digest(&base);
        assert_eq!(d, digest(&base.clone()));
        let variants = [
            vec![vec![Value::Int(2), Value::Float(0.5), Value::from("ab")]],
            vec![vec![
                Value::Float(1.0),
                Value::Float(0.5),
                Value::from("ab"),
            ]],
            vec![vec![Value::Int(1), Value::Float(-0.5), Value::from("ab")]],
            vec![vec![
                Value::Int(1),
                Value::Float(f64::NAN),
                Value::from("ab"),
            ]],
            vec![vec![Value::Int(1), Value::Null, Value::from("ab")]],
            vec![vec![Value::Int(1), Value::Float(0.5), Value::from("a")]],
            vec![
                vec![Value::Int(1)],
                vec![Value::Float(0.5), Value::from("ab")],
            ],
        ];
        for v in variants {
            assert_ne!(digest(&v), d, "{v:?}");
        }
        assert_ne!(combine(["a", "b"]), combine(["ab"]));
        let mut a = RowDigest::new();
        a.add_row(&base[0]);
        let mut b = RowDigest::new();
        b.add_row_after(&base[0][0], &base[0][1..]);
        assert_eq!(a.finish(), b.finish());
    }

    use crate::model::{ColType, Column};
    use proptest::prelude::*;

    const COLS: [Column; 5] = [
        Column::new("b", ColType::Bool, false, ""),
        Column::new("i", ColType::Int, true, ""),
        Column::new("f", ColType::Float, true, ""),
        Column::new("s", ColType::Str, true, ""),
        Column::new("l", ColType::IntList, false, ""),
    ];

    fn row() -> impl Strategy<Value = Vec<Value>> {
        (
            any::<bool>(),
            prop::option::of(any::<i64>()),
            prop::option::of(any::<f64>()),
            prop::option::of(".{0,5}"),
            prop::collection::vec(any::<i64>(), 0..3),
        )
            .prop_map(|(b, i, f, s, l)| {
                vec![
                    Value::Bool(b),
                    i.map_or(Value::Null, Value::Int),
                    f.map_or(Value::Null, Value::Float),
                    s.map_or(Value::Null, Value::Str),
                    Value::List(l),
                ]
            })
    }

    const FIXED: [Column; 4] = [
        Column::new("b", ColType::Bool, false, ""),
        Column::new("i", ColType::Int, false, ""),
        Column::new("f", ColType::Float, true, ""),
        Column::new("j", ColType::Int, false, ""),
    ];

    fn fixed_row() -> impl Strategy<Value = Vec<Value>> {
        (any::<bool>(), any::<i64>(), any::<f64>(), any::<i64>()).prop_map(|(b, i, f, j)| {
            vec![
                Value::Bool(b),
                Value::Int(i),
                Value::Float(f),
                Value::Int(j),
            ]
        })
    }

    proptest! {
        // Enough rows to cross the buffer's blocks; with a null somewhere
        // the table takes the cell-by-cell path, which must agree too.
        #[test]
        fn fixed_width_columns_digest_as_their_rows_do(
            mut rows in prop::collection::vec(fixed_row(), 0..4000),
            null_at in prop::option::of(any::<prop::sample::Index>()),
        ) {
            if let (Some(k), false) = (null_at, rows.is_empty()) {
                let k = k.index(rows.len());
                rows[k][2] = Value::Null;
            }
            let mut t = Columns::new(&FIXED);
            for r in &rows {
                t.push_values(r, &FIXED).unwrap();
            }
            assert_eq!(fixed_cells(&t.columns).is_some(), null_at.is_none() || rows.is_empty());
            let mut by_columns = RowDigest::new();
            by_columns.add_columns(&t);
            prop_assert_eq!(by_columns.rows(), rows.len() as u64);
            prop_assert_eq!(by_columns.finish(), digest(&rows));
        }

        #[test]
        fn columns_digest_as_their_rows_do(rows in prop::collection::vec(row(), 0..40)) {
            let mut t = Columns::new(&COLS);
            for r in &rows {
                t.push_values(r, &COLS).unwrap();
            }
            let mut by_columns = RowDigest::new();
            by_columns.add_columns(&t);
            prop_assert_eq!(by_columns.rows(), rows.len() as u64);
            prop_assert_eq!(by_columns.finish(), digest(&rows));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        // What assembly relies on to check a part: its rows read back
        // from the file digest as they did when they were written, on
        // both paths (text, lists and nulls; fixed widths across blocks).
        #[test]
        fn rows_read_back_digest_as_written(
            rows in prop::collection::vec(row(), 0..40),
            fixed in prop::collection::vec(fixed_row(), 0..3000),
        ) {
            use crate::store::parquet;
            let dir = tempfile::tempdir().unwrap();
            for (cols, rows) in [(&COLS[..], rows), (&FIXED[..], fixed)] {
                let mut t = Columns::new(cols);
                for r in &rows {
                    t.push_values(r, cols).unwrap();
                }
                let path = dir.path().join("part.parquet");
                let b = parquet::columns_batch(cols, t).unwrap();
                parquet::write_as(&path, cols, [Ok(b)], &[], parquet::Codec::Part).unwrap();
                let mut back = RowDigest::new();
                for b in parquet::open(&path).unwrap() {
                    back.add_batch(&b.unwrap()).unwrap();
                }
                prop_assert_eq!(back.rows(), rows.len() as u64);
                prop_assert_eq!(back.finish(), digest(&rows));
            }
        }
    }
}
