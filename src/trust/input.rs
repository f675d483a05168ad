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

/// A table's header checked against the columns wanted, with each wanted
/// column's position worked out once (not once per cell).
pub struct Layout<'a> {
    table: &'a RawTable,
    wanted: &'static [&'static str],
    /// Column of `wanted[j]` in the table.
    cols: Vec<usize>,
}

impl<'a> Layout<'a> {
    /// The table's rows as cells.
    pub fn rows(&self) -> impl Iterator<Item = Cells<'_>> + '_ {
        (0..self.table.rows.len()).map(move |row| Cells { layout: self, row })
    }

    pub fn len(&self) -> usize {
        self.table.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.rows.is_empty()
    }

    /// The column of a wanted field (fields are the wanted list's own
    /// names, so the search is over a few short static strings).
    fn col(&self, field: &str) -> usize {
        let j = self
            .wanted
            .iter()
            .position(|w| w.len() == field.len() && *w == field)
            .expect("a wanted field");
        self.cols[j]
    }
}

/// One row of a raw table, with typed accessors that produce the errors.
pub struct Cells<'a> {
    layout: &'a Layout<'a>,
    row: usize,
}

/// `s.trim()`, without its Unicode scan when both ends are visible ASCII
/// (the common case: such a byte is never whitespace).
fn trim(s: &str) -> &str {
    let visible = |b: u8| b > b' ' && b < 0x7f;
    match s.as_bytes() {
        [] => s,
        [first, .., last] if visible(*first) && visible(*last) => s,
        [only] if visible(*only) => s,
        _ => s.trim(),
    }
}

impl<'a> Cells<'a> {
    pub fn fail(&self, field: &str, problem: impl Into<String>) -> InputError {
        let value = self.text(field);
        InputError {
            file: self.layout.table.file.clone(),
            place: format!("row {}, field `{field}` = {value:?}: ", self.row + 1),
            problem: problem.into(),
        }
    }

    pub fn text(&self, field: &str) -> &'a str {
        let t = self.layout.table;
        t.rows[self.row]
            .get(self.layout.col(field))
            .map_or("", |s| trim(s))
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
    /// Refuses a header that names a column twice, which would otherwise
    /// be read from its first copy and the second ignored.
    pub fn unique_columns(&self) -> Result<(), InputError> {
        for (k, c) in self.columns.iter().enumerate() {
            if let Some(j) = self.columns[..k].iter().position(|x| x == c) {
                return Err(InputError {
                    file: self.file.clone(),
                    place: String::new(),
                    problem: format!(
                        "column `{c}` appears twice in the header (columns {} and {}); keep one",
                        j + 1,
                        k + 1
                    ),
                });
            }
        }
        Ok(())
    }

    /// The table's layout, after checking the header has exactly `wanted`
    /// (in any order).
    pub fn layout(&self, wanted: &'static [&'static str]) -> Result<Layout<'_>, InputError> {
        let whole = |problem: String| InputError {
            file: self.file.clone(),
            place: String::new(),
            problem,
        };
        self.unique_columns()?;
        for c in &self.columns {
            if !wanted.contains(&c.as_str()) {
                return Err(whole(format!(
                    "unknown column `{c}`; the columns are {}",
                    wanted.join(", ")
                )));
            }
        }
        let mut cols = Vec::with_capacity(wanted.len());
        for w in wanted {
            match self.columns.iter().position(|c| c == w) {
                Some(k) => cols.push(k),
                None => {
                    return Err(whole(format!(
                        "missing column `{w}`; the columns are {}",
                        wanted.join(", ")
                    )))
                }
            }
        }
        Ok(Layout {
            table: self,
            wanted,
            cols,
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn the_quick_trim_is_trim(s in "[ \\t\\u{a0}\\u{2003}a-z0-9é=;.-]{0,8}") {
            proptest::prop_assert_eq!(trim(&s), s.trim());
        }
    }

    #[test]
    fn cells_are_found_by_name_in_any_column_order() {
        let t = RawTable {
            file: "f.csv".into(),
            columns: vec!["author".into(), "id".into()],
            rows: vec![vec![" a ".into(), "c1".into()], vec!["b".into()]],
        };
        let layout = t.layout(CLAIMS).unwrap();
        let rows: Vec<Cells> = layout.rows().collect();
        assert_eq!((rows[0].text("id"), rows[0].text("author")), ("c1", "a"));
        assert_eq!((rows[1].text("id"), rows[1].text("author")), ("", "b"));
        let e = rows[1].required("id").unwrap_err();
        assert_eq!(e.place, "row 2, field `id` = \"\": ");
        let missing = RawTable {
            columns: vec!["id".into()],
            ..t.clone()
        };
        assert!(missing
            .layout(CLAIMS)
            .is_err_and(|e| e.problem.starts_with("missing column `author`")));
    }

    #[test]
    fn a_column_named_twice_is_refused_not_read_from_its_first() {
        let t = RawTable {
            file: "claims.csv".into(),
            columns: vec!["id".into(), "author".into(), "id".into()],
            rows: vec![vec!["c1".into(), "a".into(), "c2".into()]],
        };
        let e = t.layout(CLAIMS).err().expect("a header with `id` twice");
        assert_eq!(
            e.to_string(),
            "claims.csv: column `id` appears twice in the header (columns 1 and 3); keep one"
        );
    }
}
