//! `witness trust score` and `witness trust compare`: read evidence tables
//! (CSV or Parquet, by extension), run the pure trust-v1 scorer, and write
//! its tables. Every input is read and validated before anything is
//! written, so bad input leaves the output folder untouched.

use anyhow::{Context, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::InputError;
use crate::params::Value;
use crate::sink::parquet;
use crate::trust::evidence::{normalize_context, Evidence, Tables};
use crate::trust::input::RawTable;
use crate::trust::output::Report;

#[derive(clap::Args, Debug)]
pub struct Inputs {
    /// Actors: id, kind, controller, verification, created.
    #[arg(long, value_name = "FILE")]
    pub actors: PathBuf,
    /// Revisions: revision, item, number, author, current.
    #[arg(long, value_name = "FILE")]
    pub items: PathBuf,
    /// Usage and review signals: id, target, actor, kind, outcome,
    /// real_world, confidence, references_usage, day, status.
    #[arg(long, value_name = "FILE")]
    pub signals: PathBuf,
    /// Relations: from, to, kind, strength, actor, day.
    #[arg(long, value_name = "FILE")]
    pub relations: Option<PathBuf>,
    /// Sources: id, family.
    #[arg(long, value_name = "FILE")]
    pub sources: Option<PathBuf>,
    /// Ratings: actor, target, context, dimension, score, confidence,
    /// references_usage, day.
    #[arg(long, value_name = "FILE")]
    pub ratings: Option<PathBuf>,
    /// Claims: id, author. Without it every non-revision target is an
    /// authorless claim.
    #[arg(long, value_name = "FILE")]
    pub claims: Option<PathBuf>,
    /// A previous run's reputation output (actor, reputation); actors not in
    /// it start at 0.6 x m_v.
    #[arg(long, value_name = "FILE")]
    pub reputation: Option<PathBuf>,
    /// The day scores are computed for (a day number, as in the tables);
    /// never the clock, so scores reproduce.
    #[arg(long)]
    pub today: i64,
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Float(x) => format!("{x}"),
        other => other.plain(),
    }
}

/// A CSV (with a header) or Parquet table, every cell as text.
pub fn read_table(path: &Path) -> Result<RawTable> {
    let file = path.display().to_string();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let (columns, rows) = match ext {
        "csv" => {
            let mut r = csv::Reader::from_path(path).with_context(|| file.clone())?;
            let columns: Vec<String> = r.headers()?.iter().map(|h| h.trim().to_string()).collect();
            let mut rows = Vec::new();
            for (i, rec) in r.records().enumerate() {
                let rec = rec.map_err(|e| InputError(format!("{file}: row {}: {e}", i + 1)))?;
                rows.push(rec.iter().map(str::to_string).collect());
            }
            (columns, rows)
        }
        "parquet" => {
            let columns = parquet::column_names(path).with_context(|| file.clone())?;
            let names: Vec<&str> = columns.iter().map(String::as_str).collect();
            let cols = parquet::read_columns(path, &names)
                .map_err(|e| InputError(format!("{file}: {e}")))?;
            let n = cols.first().map_or(0, Vec::len);
            let rows = (0..n)
                .map(|i| cols.iter().map(|c| cell(&c[i])).collect())
                .collect();
            (columns, rows)
        }
        _ => {
            return Err(InputError(format!(
                "{file}: unknown table format `.{ext}`; use .csv or .parquet"
            ))
            .into())
        }
    };
    Ok(RawTable {
        file,
        columns,
        rows,
    })
}

fn previous_reputation(path: Option<&Path>) -> Result<HashMap<String, f64>> {
    let Some(path) = path else {
        return Ok(HashMap::new());
    };
    let t = read_table(path)?;
    let col = |name: &str| {
        t.columns.iter().position(|c| c == name).ok_or_else(|| {
            InputError(format!(
                "{}: missing column `{name}`; a reputation output has actor and reputation",
                t.file
            ))
        })
    };
    let (a, r) = (col("actor")?, col("reputation")?);
    let mut out = HashMap::new();
    for (i, row) in t.rows.iter().enumerate() {
        let value: f64 = row[r]
            .trim()
            .parse()
            .ok()
            .filter(|x| (0.05..=1.0).contains(x))
            .ok_or_else(|| {
                InputError(format!(
                    "{}: row {}, field `reputation` = {:?}: allowed: a number in 0.05 ..= 1",
                    t.file,
                    i + 1,
                    row[r]
                ))
            })?;
        out.insert(row[a].trim().to_string(), value);
    }
    Ok(out)
}

pub fn load(i: &Inputs) -> Result<(Tables, HashMap<String, f64>)> {
    let opt = |p: &Option<PathBuf>| p.as_deref().map(read_table).transpose();
    let tables = Tables {
        actors: read_table(&i.actors)?,
        items: read_table(&i.items)?,
        signals: read_table(&i.signals)?,
        relations: opt(&i.relations)?,
        sources: opt(&i.sources)?,
        ratings: opt(&i.ratings)?,
        claims: opt(&i.claims)?,
    };
    Ok((tables, previous_reputation(i.reputation.as_deref())?))
}

pub fn score(i: &Inputs, out: &Path, csv_too: bool) -> Result<u8> {
    let (tables, previous) = load(i)?;
    let ev = Evidence::new(&tables).map_err(|e| InputError(e.to_string()))?;
    drop(tables);
    let report = Report::from_evidence(&ev, i.today, &previous);
    drop(ev);
    std::fs::create_dir_all(out).with_context(|| out.display().to_string())?;
    let kv = vec![
        ("witness.model".to_string(), "trust-v1".to_string()),
        ("witness.today".to_string(), i.today.to_string()),
    ];
    for (name, columns, rows) in report.tables() {
        let schema = parquet::schema(columns.iter().map(parquet::column_field).collect());
        let path = out.join(format!("{name}.parquet"));
        parquet::write(&path, &schema, [parquet::batch(&schema, &rows)], &kv)
            .with_context(|| path.display().to_string())?;
        if csv_too {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(columns.iter().map(|c| c.name))?;
            for row in &rows {
                w.write_record(row.iter().map(cell))?;
            }
            let path = out.join(format!("{name}.csv"));
            crate::sink::atomic::write(&path, &w.into_inner()?)
                .with_context(|| path.display().to_string())?;
        }
        println!("{:<11} {:>7} rows -> {}", name, rows.len(), path.display());
    }
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for s in &report.scores {
        *counts.entry(s.status.name()).or_default() += 1;
    }
    let shown: Vec<String> = counts.iter().map(|(n, c)| format!("{n} {c}")).collect();
    println!("statuses    {}", shown.join(", "));
    Ok(0)
}

pub fn compare(i: &Inputs, target: &str, dimension: &str, context: &str) -> Result<u8> {
    let (tables, previous) = load(i)?;
    let ev = Evidence::new(&tables).map_err(|e| InputError(e.to_string()))?;
    let facets = normalize_context(context)
        .map_err(|e| InputError(format!("--context {context:?}: {e}")))?;
    let weights = crate::trust::reputation::weights(&ev, &previous);
    let (r, fell_back) =
        crate::trust::ratings::compare(&ev, i.today, &weights, target, dimension, &facets);
    if fell_back {
        println!("no rating of {target} has every facet of {facets:?}; using all contexts");
    }
    println!(
        "{target} {dimension}: {:.3} from {} rating(s) (mean {:.3}; low {}, mid {}, high {})",
        r.value, r.ratings, r.mean, r.low, r.mid, r.high
    );
    let failures = ev.usage_failures(target, i.today);
    println!("usage failures reported on {target}: {failures}");
    Ok(0)
}
