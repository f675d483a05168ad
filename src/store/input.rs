//! Tables other programs wrote, read as text: a CSV file with a header, or
//! a Parquet file, every cell as the text a CSV would hold. The trust
//! scorer validates the text itself, so both formats give the same rows.

use std::path::Path;

use super::{parquet, StoreError};
use crate::params::Value;

/// A table's column names and its rows of text cells (empty = missing).
pub struct TextTable {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Float(x) => format!("{x}"),
        other => other.plain(),
    }
}

fn csv_error(e: csv::Error) -> StoreError {
    StoreError::Format(e.to_string())
}

/// Reads `path` by its extension (`.csv` or `.parquet`).
pub fn read_text_table(path: &Path) -> Result<TextTable, StoreError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "csv" => {
            let mut r = csv::Reader::from_path(path).map_err(csv_error)?;
            let columns = r
                .headers()
                .map_err(csv_error)?
                .iter()
                .map(|h| h.trim().to_string())
                .collect();
            let mut rows = Vec::new();
            for (i, rec) in r.records().enumerate() {
                let rec = rec.map_err(|e| StoreError::Format(format!("row {}: {e}", i + 1)))?;
                rows.push(rec.iter().map(str::to_string).collect());
            }
            Ok(TextTable { columns, rows })
        }
        "parquet" => {
            let columns = parquet::column_names(path)?;
            let names: Vec<&str> = columns.iter().map(String::as_str).collect();
            let cols = parquet::read_columns(path, &names)?;
            let n = cols.first().map_or(0, Vec::len);
            let rows = (0..n)
                .map(|i| cols.iter().map(|c| text(&c[i])).collect())
                .collect();
            Ok(TextTable { columns, rows })
        }
        _ => Err(StoreError::Format(format!(
            "unknown table format `.{ext}`; use .csv or .parquet"
        ))),
    }
}
