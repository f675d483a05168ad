//! Rows held column by column, each column a typed vector: what a run's
//! detail tables and a chunk's tables are built in. A record's fields go
//! straight into their columns, so a table reaches Arrow (and its digest)
//! without a `Value` per cell; a row of `Value`s is made only where one is
//! read one row at a time (verify's replay, an export).

use super::record::{ColType, Column};
use crate::params::Value;

/// One column's cells. A null cell holds a placeholder (0, false, empty)
/// and is marked in the column's validity.
#[derive(Clone, Debug, PartialEq)]
pub enum Cells {
    Bool(Vec<bool>),
    Int(Vec<i64>),
    Float(Vec<f64>),
    Str(Vec<String>),
    IntList(Vec<Vec<i64>>),
}

/// One column: its cells and, for a nullable column, which are set.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnValues {
    pub cells: Cells,
    /// `None` for a column that is never null.
    pub valid: Option<Vec<bool>>,
}

impl ColumnValues {
    pub fn new(c: &Column) -> ColumnValues {
        ColumnValues::with_capacity(c, 0)
    }

    pub fn with_capacity(c: &Column, rows: usize) -> ColumnValues {
        ColumnValues {
            cells: match c.ty {
                ColType::Bool => Cells::Bool(Vec::with_capacity(rows)),
                ColType::Int => Cells::Int(Vec::with_capacity(rows)),
                ColType::Float => Cells::Float(Vec::with_capacity(rows)),
                ColType::Str => Cells::Str(Vec::with_capacity(rows)),
                ColType::IntList => Cells::IntList(Vec::with_capacity(rows)),
            },
            valid: c.nullable.then(|| Vec::with_capacity(rows)),
        }
    }

    fn set(&mut self) {
        if let Some(v) = &mut self.valid {
            v.push(true);
        }
    }

    /// Appends a cell; a value of another type than the column's is a bug
    /// in the record that declared it.
    #[inline]
    pub fn push_int(&mut self, x: i64) {
        match &mut self.cells {
            Cells::Int(v) => v.push(x),
            c => panic!("an int pushed into a {c:?} column"),
        }
        self.set();
    }

    #[inline]
    pub fn push_float(&mut self, x: f64) {
        match &mut self.cells {
            Cells::Float(v) => v.push(x),
            c => panic!("a float pushed into a {c:?} column"),
        }
        self.set();
    }

    #[inline]
    pub fn push_bool(&mut self, x: bool) {
        match &mut self.cells {
            Cells::Bool(v) => v.push(x),
            c => panic!("a bool pushed into a {c:?} column"),
        }
        self.set();
    }

    pub fn push_str(&mut self, x: String) {
        match &mut self.cells {
            Cells::Str(v) => v.push(x),
            c => panic!("a string pushed into a {c:?} column"),
        }
        self.set();
    }

    pub fn push_null(&mut self) {
        match &mut self.cells {
            Cells::Bool(v) => v.push(false),
            Cells::Int(v) => v.push(0),
            Cells::Float(v) => v.push(0.0),
            Cells::Str(v) => v.push(String::new()),
            Cells::IntList(v) => v.push(Vec::new()),
        }
        self.valid
            .as_mut()
            .expect("a null pushed into a column that is never null")
            .push(false);
    }

    /// Whether `push_value` would take `v`: the same check, with nothing
    /// allocated or pushed.
    pub fn holds(&self, v: &Value) -> bool {
        matches!(
            (&self.cells, v),
            (Cells::Bool(_), Value::Bool(_))
                | (Cells::Int(_), Value::Int(_))
                | (Cells::Float(_), Value::Float(_))
                | (Cells::Str(_), Value::Str(_))
                | (Cells::IntList(_), Value::List(_))
        ) || (matches!(v, Value::Null) && self.valid.is_some())
    }

    /// Appends a `Value`; `Err` names what the column cannot hold.
    pub fn push_value(&mut self, v: &Value) -> Result<(), String> {
        self.push_owned(v.clone())
    }

    /// `push_value` for a value the caller gives up: its text or list
    /// moves in, uncopied.
    pub fn push_owned(&mut self, v: Value) -> Result<(), String> {
        match (&mut self.cells, v) {
            (_, Value::Null) if self.valid.is_some() => {
                self.push_null();
                return Ok(());
            }
            (Cells::Bool(c), Value::Bool(x)) => c.push(x),
            (Cells::Int(c), Value::Int(x)) => c.push(x),
            (Cells::Float(c), Value::Float(x)) => c.push(x),
            (Cells::Str(c), Value::Str(x)) => c.push(x),
            (Cells::IntList(c), Value::List(x)) => c.push(x),
            (_, v) => return Err(format!("cannot hold {v}")),
        }
        self.set();
        Ok(())
    }

    pub fn len(&self) -> usize {
        match &self.cells {
            Cells::Bool(v) => v.len(),
            Cells::Int(v) => v.len(),
            Cells::Float(v) => v.len(),
            Cells::Str(v) => v.len(),
            Cells::IntList(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_null(&self, i: usize) -> bool {
        self.valid.as_ref().is_some_and(|v| !v[i])
    }

    /// Cell `i` as a `Value`.
    pub fn value(&self, i: usize) -> Value {
        if self.is_null(i) {
            return Value::Null;
        }
        match &self.cells {
            Cells::Bool(v) => Value::Bool(v[i]),
            Cells::Int(v) => Value::Int(v[i]),
            Cells::Float(v) => Value::Float(v[i]),
            Cells::Str(v) => Value::Str(v[i].clone()),
            Cells::IntList(v) => Value::List(v[i].clone()),
        }
    }

    /// Room for `rows` more cells without reallocating.
    pub fn reserve(&mut self, rows: usize) {
        match &mut self.cells {
            Cells::Bool(v) => v.reserve(rows),
            Cells::Int(v) => v.reserve(rows),
            Cells::Float(v) => v.reserve(rows),
            Cells::Str(v) => v.reserve(rows),
            Cells::IntList(v) => v.reserve(rows),
        }
        if let Some(v) = &mut self.valid {
            v.reserve(rows);
        }
    }

    /// Moves `other`'s cells (a column of the same declaration) after these.
    fn append(&mut self, other: ColumnValues) {
        match (&mut self.cells, other.cells) {
            (Cells::Bool(a), Cells::Bool(b)) => a.extend(b),
            (Cells::Int(a), Cells::Int(b)) => a.extend(b),
            (Cells::Float(a), Cells::Float(b)) => a.extend(b),
            (Cells::Str(a), Cells::Str(b)) => a.extend(b),
            (Cells::IntList(a), Cells::IntList(b)) => a.extend(b),
            (a, b) => panic!("a {b:?} column appended to a {a:?} one"),
        }
        match (&mut self.valid, other.valid) {
            (Some(a), Some(b)) => a.extend(b),
            (None, None) => {}
            _ => panic!("a nullable column appended to one that is not"),
        }
    }
}

/// A table's rows, column by column, in declaration order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Columns {
    pub columns: Vec<ColumnValues>,
    rows: usize,
}

impl Columns {
    pub fn new(columns: &[Column]) -> Columns {
        Columns::with_capacity(columns, 0)
    }

    /// Room for `rows` rows, so a table whose size is known up front
    /// (a run's rounds) grows without reallocating.
    pub fn with_capacity(columns: &[Column], rows: usize) -> Columns {
        Columns {
            columns: columns
                .iter()
                .map(|c| ColumnValues::with_capacity(c, rows))
                .collect(),
            rows: 0,
        }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Room for `rows` more rows without reallocating.
    pub fn reserve(&mut self, rows: usize) {
        for c in &mut self.columns {
            c.reserve(rows);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Appends one row through `put`, which must fill every column once
    /// (a record's `push_columns` does).
    pub fn push_with(&mut self, put: impl FnOnce(&mut [ColumnValues])) {
        put(&mut self.columns);
        self.rows += 1;
        debug_assert!(self.columns.iter().all(|c| c.len() == self.rows));
    }

    /// Appends a row of `Value`s, one per column; `Err` names the column
    /// and the value it cannot hold, and nothing is appended.
    pub fn push_values(&mut self, row: &[Value], declared: &[Column]) -> Result<(), String> {
        self.check(row, declared)?;
        for (col, v) in self.columns.iter_mut().zip(row) {
            col.push_value(v).expect("checked above");
        }
        self.rows += 1;
        Ok(())
    }

    /// Whether every value of `row` fits its column: checked before
    /// anything is pushed, so a bad row appends nothing.
    fn check(&self, row: &[Value], declared: &[Column]) -> Result<(), String> {
        if row.len() != self.columns.len() {
            return Err(format!(
                "a row of {} values for {} columns",
                row.len(),
                self.columns.len()
            ));
        }
        if let Some(((c, _), v)) = declared
            .iter()
            .zip(&self.columns)
            .zip(row)
            .find(|((_, col), v)| !col.holds(v))
        {
            return Err(format!("column {} cannot hold {v}", c.name));
        }
        Ok(())
    }

    /// `push_values` for a row the caller gives up: its texts move in.
    pub fn push_row(&mut self, row: Vec<Value>, declared: &[Column]) -> Result<(), String> {
        self.check(&row, declared)?;
        for (col, v) in self.columns.iter_mut().zip(row) {
            col.push_owned(v).expect("checked above");
        }
        self.rows += 1;
        Ok(())
    }

    /// Appends `detail`'s rows (a table of the columns after the first),
    /// with `run_id` in the first column.
    pub fn append_run(&mut self, run_id: u64, detail: Columns) {
        let (first, rest) = self.columns.split_first_mut().expect("a run_id column");
        for _ in 0..detail.rows {
            first.push_int(run_id as i64);
        }
        assert_eq!(rest.len(), detail.columns.len(), "a detail table's columns");
        for (a, b) in rest.iter_mut().zip(detail.columns) {
            a.append(b);
        }
        self.rows += detail.rows;
    }

    /// Row `i` as `Value`s.
    pub fn row(&self, i: usize) -> Vec<Value> {
        self.columns.iter().map(|c| c.value(i)).collect()
    }

    /// Every row as `Value`s, for code that reads a row at a time.
    pub fn to_rows(&self) -> Vec<Vec<Value>> {
        (0..self.rows).map(|i| self.row(i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: [Column; 3] = [
        Column::new("a", ColType::Int, false, "an int"),
        Column::new("b", ColType::Float, true, "a maybe-float"),
        Column::new("c", ColType::Str, false, "a label"),
    ];

    #[test]
    fn values_in_equal_values_out_and_bad_rows_append_nothing() {
        let mut t = Columns::new(&COLS);
        let rows = vec![
            vec![Value::Int(1), Value::Float(0.5), Value::Str("x".into())],
            vec![Value::Int(-2), Value::Null, Value::Str(String::new())],
        ];
        for r in &rows {
            t.push_values(r, &COLS).unwrap();
        }
        assert_eq!(t.to_rows(), rows);
        let bad = [
            Value::Int(3),
            Value::Str("no".into()),
            Value::Str("y".into()),
        ];
        assert!(t.push_values(&bad, &COLS).unwrap_err().contains("column b"));
        let null_in_a = [Value::Null, Value::Null, Value::Str("y".into())];
        assert!(t.push_values(&null_in_a, &COLS).is_err());
        assert_eq!(t.rows(), 2);
        assert!(t.columns.iter().all(|c| c.len() == 2));
    }

    #[test]
    fn holds_is_what_push_value_accepts() {
        let values = [
            Value::Null,
            Value::Bool(true),
            Value::Int(1),
            Value::Float(0.5),
            Value::Str("s".into()),
            Value::List(vec![1]),
        ];
        for ty in [
            ColType::Bool,
            ColType::Int,
            ColType::Float,
            ColType::Str,
            ColType::IntList,
        ] {
            for nullable in [false, true] {
                let c = Column::new("c", ty, nullable, "a column");
                for v in &values {
                    let col = ColumnValues::new(&c);
                    let took = col.clone().push_value(v).is_ok();
                    assert_eq!(col.holds(v), took, "{ty:?} nullable={nullable} {v:?}");
                }
            }
        }
    }

    #[test]
    fn a_run_s_detail_rows_follow_with_their_run_id() {
        let mut chunk = Columns::new(&[Column::new("run_id", ColType::Int, false, "id"), COLS[0]]);
        let mut detail = Columns::new(&COLS[..1]);
        detail.push_values(&[Value::Int(7)], &COLS[..1]).unwrap();
        detail.push_values(&[Value::Int(8)], &COLS[..1]).unwrap();
        chunk.append_run(4, detail);
        assert_eq!(
            chunk.to_rows(),
            vec![
                vec![Value::Int(4), Value::Int(7)],
                vec![Value::Int(4), Value::Int(8)]
            ]
        );
    }
}
