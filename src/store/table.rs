//! One writer for the tables verbs save: a `TableData` (declared columns
//! and rows of values) written as Parquet, CSV or JSON, atomically. Every
//! verb that writes a table goes through here, so cells are formatted one
//! way everywhere: floats in shortest round-trip form, nulls empty in CSV
//! and null in JSON, and text that a spreadsheet would run as a formula
//! written with a leading quote.

use serde_json::{Map, Value as Json};
use std::path::Path;

use super::{atomic, parquet, StoreError};
use crate::model::{Column, Record, Row};
use crate::params::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Parquet,
    Csv,
    Json,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Parquet => "parquet",
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }
}

/// A table to save: its columns, and rows of values in column order.
#[derive(Clone, Debug, PartialEq)]
pub struct TableData {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

impl TableData {
    pub fn of_records<R: Record>(records: &[R]) -> TableData {
        TableData {
            columns: R::COLUMNS.to_vec(),
            rows: records.iter().map(Record::to_row).collect(),
        }
    }

    /// The rows as JSON objects, keys in column order.
    pub fn json_rows(&self) -> Json {
        Json::Array(
            self.rows
                .iter()
                .map(|r| {
                    let m: Map<String, Json> = self
                        .columns
                        .iter()
                        .zip(r)
                        .map(|(c, v)| (c.name.to_string(), json_cell(v)))
                        .collect();
                    Json::Object(m)
                })
                .collect(),
        )
    }

    pub fn csv(&self) -> Result<Vec<u8>, StoreError> {
        let mut w = csv::Writer::from_writer(Vec::new());
        let io = |e: csv::Error| StoreError::Io(std::io::Error::other(e.to_string()));
        w.write_record(self.columns.iter().map(|c| c.name))
            .map_err(io)?;
        for row in &self.rows {
            w.write_record(row.iter().map(csv_cell)).map_err(io)?;
        }
        w.into_inner()
            .map_err(|e| StoreError::Io(std::io::Error::other(e.to_string())))
    }

    /// Writes the table in `format` to `path`, atomically.
    pub fn write(
        &self,
        path: &Path,
        format: Format,
        kv: &[(String, String)],
    ) -> Result<(), StoreError> {
        Ok(atomic::write(path, &self.bytes(format, kv)?)?)
    }

    /// The table's file in `format`, in memory.
    pub fn bytes(&self, format: Format, kv: &[(String, String)]) -> Result<Vec<u8>, StoreError> {
        match format {
            Format::Parquet => parquet::to_bytes(&self.columns, &self.rows, kv),
            Format::Csv => self.csv(),
            Format::Json => serde_json::to_vec_pretty(&self.json_rows())
                .map_err(|e| StoreError::Format(e.to_string())),
        }
    }
}

/// A float as CSV and JSON show it: the shortest text that reads back to
/// the same number, with a decimal point (`1.0`) and an exponent for very
/// large or small magnitudes.
pub fn float_text(x: f64) -> String {
    format!("{x:?}")
}

/// A cell as CSV text. Text starting with `=`, `+`, `-`, `@`, a tab or a
/// carriage return gets a leading `'`, so a spreadsheet shows it instead
/// of running it as a formula; numbers (and text that is a number, such as
/// `-3`) are written as they are.
pub fn csv_cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Float(x) => float_text(*x),
        Value::Str(s)
            if s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.parse::<f64>().is_err() =>
        {
            format!("'{s}")
        }
        other => other.plain(),
    }
}

fn json_cell(v: &Value) -> Json {
    match v {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::Float(x) => serde_json::Number::from_f64(*x).map_or(Json::Null, Json::Number),
        Value::Str(s) => Json::String(s.clone()),
        Value::List(l) => Json::from(l.clone()),
    }
}

/// Writes a JSON document, pretty-printed, atomically.
pub fn write_json(path: &Path, doc: &Json) -> Result<(), StoreError> {
    let text = serde_json::to_string_pretty(doc).map_err(|e| StoreError::Format(e.to_string()))?;
    Ok(atomic::write(path, text.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ColType;

    #[test]
    fn formulas_are_quoted_and_numbers_are_not() {
        assert_eq!(csv_cell(&Value::from("=HYPERLINK(1)")), "'=HYPERLINK(1)");
        assert_eq!(csv_cell(&Value::from("@x")), "'@x");
        assert_eq!(csv_cell(&Value::from("plain")), "plain");
        assert_eq!(csv_cell(&Value::Float(-0.5)), "-0.5");
        assert_eq!(csv_cell(&Value::Int(-3)), "-3");
        assert_eq!(csv_cell(&Value::from("-3.5")), "-3.5");
        assert_eq!(csv_cell(&Value::from("-1+2")), "'-1+2");
        assert_eq!(csv_cell(&Value::Float(1.0)), "1.0");
        assert_eq!(csv_cell(&Value::Null), "");
    }

    #[test]
    fn csv_has_a_header_and_json_keeps_column_order() {
        let t = TableData {
            columns: vec![
                Column::new("b", ColType::Int, false, ""),
                Column::new("a", ColType::Float, true, ""),
            ],
            rows: vec![vec![Value::Int(1), Value::Null]],
        };
        assert_eq!(String::from_utf8(t.csv().unwrap()).unwrap(), "b,a\n1,\n");
        assert_eq!(t.json_rows().to_string(), r#"[{"b":1,"a":null}]"#);
    }
}
