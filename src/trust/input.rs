//! trust-v1's evidence tables, in two stages: raw tables of text cells (as
//! CSV and Parquet readers produce them), then validated evidence with
//! every reference resolved, every actor's root controller computed and
//! every word checked. Errors name the file, the row, the field, the value
//! and what is allowed, so a bad table is fixed in one look.

use super::names::FastMap;

/// A table as read: column names and rows of cells (empty = missing).
#[derive(Clone, Debug, Default)]
pub struct RawTable {
    pub file: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {place}{problem}")]
pub struct InputError {
    pub file: String,
    /// "row 3, field `day` = \"x\": " or "" for whole-table problems.
    pub place: String,
    pub problem: String,
}

/// Day numbers are within this of day 0 (about 2.7 million years), so
/// differences between days never overflow.
pub const MAX_DAY: i64 = 1_000_000_000;

/// Columns of each table; every one must be present (cells may be empty
/// where the column is optional).
pub const ACTORS: &[&str] = &["id", "kind", "controller", "verification", "created"];
pub const ITEMS: &[&str] = &["revision", "item", "number", "author", "current"];
pub const SIGNALS: &[&str] = &[
    "id",
    "target",
    "actor",
    "kind",
    "outcome",
    "real_world",
    "confidence",
    "references_usage",
    "day",
    "status",
];
pub const RELATIONS: &[&str] = &["from", "to", "kind", "strength", "actor", "day"];
pub const SOURCES: &[&str] = &["id", "family"];
pub const RATINGS: &[&str] = &[
    "actor",
    "target",
    "context",
    "dimension",
    "score",
    "confidence",
    "references_usage",
    "day",
];
pub const CLAIMS: &[&str] = &["id", "author"];
pub const REPUTATION: &[&str] = &["actor", "reputation"];

/// One row of a raw table, with typed accessors that produce the errors.
pub struct Cells<'a> {
    table: &'a RawTable,
    row: usize,
}

impl<'a> Cells<'a> {
    pub fn fail(&self, field: &str, problem: impl Into<String>) -> InputError {
        let value = self.text(field);
        InputError {
            file: self.table.file.clone(),
            place: format!("row {}, field `{field}` = {value:?}: ", self.row + 1),
            problem: problem.into(),
        }
    }

    pub fn text(&self, field: &str) -> &'a str {
        let k = self
            .table
            .columns
            .iter()
            .position(|c| c == field)
            .expect("checked columns");
        self.table.rows[self.row].get(k).map_or("", |s| s.trim())
    }

    pub fn required(&self, field: &str) -> Result<&'a str, InputError> {
        match self.text(field) {
            "" => Err(self.fail(field, "missing; this field is required")),
            s => Ok(s),
        }
    }

    pub fn optional(&self, field: &str) -> Option<&'a str> {
        Some(self.text(field)).filter(|s| !s.is_empty())
    }

    pub fn int(&self, field: &str) -> Result<i64, InputError> {
        self.required(field)?
            .parse()
            .map_err(|_| self.fail(field, "not an integer"))
    }

    /// A day number, within `MAX_DAY` of day 0.
    pub fn day(&self, field: &str) -> Result<i64, InputError> {
        let allowed = || format!("allowed: a day number in -{MAX_DAY} ..= {MAX_DAY}");
        let d = self
            .required(field)?
            .parse::<i64>()
            .map_err(|_| self.fail(field, allowed()))?;
        if !(-MAX_DAY..=MAX_DAY).contains(&d) {
            return Err(self.fail(field, allowed()));
        }
        Ok(d)
    }

    pub fn flag(&self, field: &str) -> Result<bool, InputError> {
        match self.text(field) {
            "true" => Ok(true),
            "false" | "" => Ok(false),
            _ => Err(self.fail(field, "allowed: true, false (empty means false)")),
        }
    }

    /// An optional number in lo ..= hi.
    pub fn number(&self, field: &str, lo: f64, hi: f64) -> Result<Option<f64>, InputError> {
        let Some(s) = self.optional(field) else {
            return Ok(None);
        };
        match s.parse::<f64>() {
            Ok(x) if x >= lo && x <= hi => Ok(Some(x)),
            _ => Err(self.fail(field, format!("allowed: a number in {lo} ..= {hi}"))),
        }
    }

    /// One of an enum's words.
    pub fn word<W: crate::words::Words>(&self, field: &str) -> Result<W, InputError> {
        W::from_name(self.text(field))
            .ok_or_else(|| self.fail(field, format!("allowed: {}", W::NAMES.join(", "))))
    }
}

impl RawTable {
    /// The rows as cells, after checking the header has exactly `wanted`
    /// (in any order).
    pub fn cells(&self, wanted: &[&str]) -> Result<Vec<Cells<'_>>, InputError> {
        let whole = |problem: String| InputError {
            file: self.file.clone(),
            place: String::new(),
            problem,
        };
        for c in &self.columns {
            if !wanted.contains(&c.as_str()) {
                return Err(whole(format!(
                    "unknown column `{c}`; the columns are {}",
                    wanted.join(", ")
                )));
            }
        }
        if let Some(w) = wanted
            .iter()
            .find(|w| !self.columns.iter().any(|c| c == *w))
        {
            return Err(whole(format!(
                "missing column `{w}`; the columns are {}",
                wanted.join(", ")
            )));
        }
        Ok((0..self.rows.len())
            .map(|row| Cells { table: self, row })
            .collect())
    }
}

/// Ids must be unique within a table. The ids are borrowed from the table
/// being read, so checking a million of them copies none.
pub struct Ids<'t> {
    seen: FastMap<&'t str, usize>,
    field: &'t str,
}

impl<'t> Ids<'t> {
    pub fn new(field: &'t str) -> Self {
        Ids {
            seen: FastMap::default(),
            field,
        }
    }

    /// As `new`, with room for `n` ids.
    pub fn with_capacity(field: &'t str, n: usize) -> Self {
        let mut ids = Ids::new(field);
        ids.seen.reserve(n);
        ids
    }

    pub fn add(&mut self, c: &Cells, id: &'t str) -> Result<(), InputError> {
        match self.seen.insert(id, c.row) {
            Some(first) => Err(c.fail(
                self.field,
                format!("duplicate id, first used on row {}", first + 1),
            )),
            None => Ok(()),
        }
    }
}
