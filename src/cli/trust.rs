//! `witness trust score` and `witness trust compare`: read evidence tables
//! (CSV or Parquet, by extension), run the pure trust-v1 scorer, and write
//! its tables. Every input is read and validated before anything is
//! written, so bad input leaves the output folder untouched.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::store::input::read_text_table;
use crate::store::Format;
use crate::trust::evidence::{normalize_context, Evidence, Tables};
use crate::trust::input::RawTable;
use crate::trust::output::Report;

#[derive(clap::Subcommand, Debug)]
pub enum TrustCommand {
    /// Score every revision, item and claim; write scores, ratings,
    /// reputation and ranking (Parquet, and CSV with --csv) into --out.
    Score {
        #[command(flatten)]
        inputs: Inputs,
        /// The output folder.
        #[arg(long)]
        out: PathBuf,
        /// Also write each table as CSV.
        #[arg(long)]
        csv: bool,
    },
    /// A target's ratings of one dimension in the contexts holding every
    /// facet asked for (all contexts, said so, when none does), with its
    /// usage failures next to the score.
    Compare {
        #[command(flatten)]
        inputs: Inputs,
        /// The rated target.
        #[arg(long)]
        target: String,
        /// The rated dimension.
        #[arg(long)]
        dimension: String,
        /// Facets key=value joined by `;`, e.g. "lang=rust;os=linux".
        #[arg(long, default_value = "")]
        context: String,
    },
}

pub fn run(t: TrustCommand) -> Result<u8> {
    match t {
        TrustCommand::Score { inputs, out, csv } => score(&inputs, &out, csv),
        TrustCommand::Compare {
            inputs,
            target,
            dimension,
            context,
        } => compare(&inputs, &target, &dimension, &context),
    }
}

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
    #[arg(long, allow_negative_numbers = true)]
    pub today: i64,
}

/// A CSV (with a header) or Parquet table, every cell as text.
pub fn read_table(path: &Path) -> Result<RawTable> {
    let t = read_text_table(path).map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
    Ok(RawTable {
        file: path.display().to_string(),
        columns: t.columns,
        rows: t.rows,
    })
}

fn previous_reputation(path: Option<&Path>) -> Result<HashMap<String, f64>> {
    match path {
        None => Ok(HashMap::new()),
        Some(path) => Ok(crate::trust::reputation::previous(&read_table(path)?)?),
    }
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
    check_today(i.today)?;
    let (tables, previous) = load(i)?;
    let ev = Evidence::new(&tables)?;
    drop(tables);
    if let Some(first) = ev.first_signal_day().filter(|&d| d > i.today) {
        eprintln!(
            "note: --today {}: every active signal is dated later (the first on day {first}), so none counts; \
             --today is the day the scores are as of",
            i.today
        );
    }
    let report = Report::from_evidence(&ev, i.today, &previous);
    drop(ev);
    if out.exists() && !out.is_dir() {
        return Err(Error::Usage(format!(
            "--out {}: a file, not a folder; give --out a folder (it is made if missing)",
            out.display()
        )));
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let kv = vec![
        ("witness.model".to_string(), "trust-v1".to_string()),
        ("witness.today".to_string(), i.today.to_string()),
    ];
    let mut formats = vec![Format::Parquet];
    if csv_too {
        formats.push(Format::Csv);
    }
    // Every table is written before any replaces its old version, and a
    // record of the set goes last, so a failure (a full disk) leaves the
    // old outputs whole and a reader can tell a complete set.
    let mut files = Vec::new();
    let mut record = serde_json::Map::new();
    for (name, table) in report.tables() {
        for &f in &formats {
            let path = out.join(format!("{name}.{}", f.extension()));
            let bytes = table.bytes(f, &kv).map_err(|e| Error::store(&path, e))?;
            record.insert(
                path.file_name().expect("a file").to_string_lossy().into_owned(),
                serde_json::json!({"bytes": bytes.len(), "sha256": crate::manifest::sha256_hex(&bytes), "rows": table.rows.len()}),
            );
            files.push((path, bytes));
        }
    }
    let set = serde_json::json!({"model": "trust-v1", "today": i.today, "files": record});
    let set_path = out.join("trust-score.json");
    refuse_overwriting_inputs(i, &files)?;
    let earlier = earlier_outputs(&set_path);
    files.push((
        set_path.clone(),
        serde_json::to_vec_pretty(&set).expect("JSON"),
    ));
    crate::store::atomic::write_all(&files).map_err(|e| Error::io(out, e))?;
    // Files the earlier scoring wrote and this one does not (its CSV
    // copies, without --csv) would sit beside the new tables with old
    // scores. Only files its record lists go: never one of the user's.
    let inputs: Vec<PathBuf> = i.paths().filter_map(|p| p.canonicalize().ok()).collect();
    for stale in earlier {
        let read_now = stale.canonicalize().is_ok_and(|p| inputs.contains(&p));
        if read_now || files.iter().any(|(p, _)| *p == stale) {
            continue;
        }
        match std::fs::remove_file(&stale) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(Error::io(&stale, e)),
            _ => {}
        }
    }
    for (name, table) in report.tables() {
        outln!(
            "{:<11} {:>7} rows -> {}",
            name,
            table.rows.len(),
            out.join(format!("{name}.parquet")).display()
        )?;
    }
    let shown: Vec<String> = report
        .status_counts()
        .iter()
        .map(|(n, c)| format!("{n} {c}"))
        .collect();
    outln!("statuses    {}", shown.join(", "))?;
    Ok(0)
}

impl Inputs {
    /// Every table this scoring reads.
    fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        [&self.actors, &self.items, &self.signals]
            .into_iter()
            .chain(self.relations.iter())
            .chain(self.sources.iter())
            .chain(self.ratings.iter())
            .chain(self.claims.iter())
            .chain(self.reputation.iter())
    }
}

/// An output that would replace an input table is refused, since the
/// next scoring would read the output in its place. A previous
/// reputation table is the one input meant to be replaced by its
/// successor.
fn refuse_overwriting_inputs(i: &Inputs, files: &[(PathBuf, Vec<u8>)]) -> Result<()> {
    let inputs = [
        ("--actors", Some(&i.actors)),
        ("--items", Some(&i.items)),
        ("--signals", Some(&i.signals)),
        ("--relations", i.relations.as_ref()),
        ("--sources", i.sources.as_ref()),
        ("--ratings", i.ratings.as_ref()),
        ("--claims", i.claims.as_ref()),
    ];
    for (flag, path) in inputs {
        let Some(input) = path.and_then(|p| p.canonicalize().ok()) else {
            continue;
        };
        let hit = files
            .iter()
            .find(|(out, _)| out.canonicalize().ok().as_ref() == Some(&input));
        if let Some((out, _)) = hit {
            return Err(Error::Usage(format!(
                "{flag} {}: the output {} would replace it; write the scores into another --out folder",
                path.expect("found above").display(),
                out.display()
            )));
        }
    }
    Ok(())
}

/// The files an earlier scoring into this folder recorded writing.
fn earlier_outputs(record: &Path) -> Vec<PathBuf> {
    let Ok(bytes) = std::fs::read(record) else {
        return Vec::new();
    };
    let Ok(set) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Vec::new();
    };
    let dir = record.parent().unwrap_or(Path::new("."));
    set["files"]
        .as_object()
        .into_iter()
        .flat_map(|files| files.keys())
        // Names as written: plain file names, nothing that leaves the folder.
        .filter(|name| !name.contains('/') && !name.contains('\\') && !name.starts_with('.'))
        .map(|name| dir.join(name))
        .collect()
}

fn check_today(today: i64) -> Result<()> {
    use crate::trust::input::MAX_DAY;
    if !(-MAX_DAY..=MAX_DAY).contains(&today) {
        return Err(Error::Usage(format!(
            "--today {today}: allowed: a day number in -{MAX_DAY} ..= {MAX_DAY}"
        )));
    }
    Ok(())
}

pub fn compare(i: &Inputs, target: &str, dimension: &str, context: &str) -> Result<u8> {
    check_today(i.today)?;
    if i.ratings.is_none() {
        return Err(Error::Usage(
            "trust compare compares ratings: pass --ratings FILE (actor, target, context, dimension, score, ...)"
                .into(),
        ));
    }
    let (tables, previous) = load(i)?;
    let ev = Evidence::new(&tables)?;
    ev.check_rated(target, dimension).map_err(|e| {
        Error::Usage(format!(
            "{}: {e}",
            i.ratings.as_ref().expect("checked").display()
        ))
    })?;
    let facets = normalize_context(context)
        .map_err(|e| Error::Usage(format!("--context {context:?}: {e}")))?;
    let weights = crate::trust::reputation::weights(&ev, &previous);
    let (r, fell_back) =
        crate::trust::ratings::compare(&ev, i.today, &weights, target, dimension, &facets);
    if fell_back {
        outln!("no rating of {target} has every facet of {facets:?}; using all contexts")?;
    }
    outln!(
        "{target} {dimension}: {:.3} from {} rating(s) (mean {:.3}; low {}, mid {}, high {})",
        r.value,
        r.ratings,
        r.mean,
        r.low,
        r.mid,
        r.high
    )?;
    let failures = ev.usage_failures(target, i.today);
    outln!("usage failures reported on {target}: {failures}")?;
    Ok(0)
}
