//! Nothing silently wrong: every single-value change to every column of
//! the runs and detail tables of three shipped experiments is caught by a
//! default `verify`, which names the file, the column and the row. Values
//! are changed as a careless or hostile rewrite would: a nudge, NaN, an
//! infinity, a sign flip, a null, a changed word. The metadata is kept, so
//! only the values tell.

mod common;

use std::path::{Path, PathBuf};
use witness::model::{ColType, Registry};
use witness::params::Value;
use witness::rng::Stream;
use witness::runner::layout::Layout;
use witness::runner::tables::{tables, Table};
use witness::runner::verify::{verify, Replay};
use witness::store::parquet;

#[derive(Clone, Copy, Debug)]
enum Change {
    /// The smallest change of the type: the next float, +1, a letter more,
    /// a flipped bool, one more list item.
    Nudge,
    Nan,
    Infinity,
    MinusInfinity,
    /// A sign flip (0 becomes -0.0 or -1).
    Negate,
    Null,
}

const SPECIALS: [Change; 5] = [
    Change::Nan,
    Change::Infinity,
    Change::MinusInfinity,
    Change::Negate,
    Change::Null,
];

fn changed(v: &Value, ty: ColType, change: Change) -> Option<Value> {
    Some(match (v, change) {
        (Value::Null, Change::Nudge) => match ty {
            ColType::Bool => Value::Bool(true),
            ColType::Int => Value::Int(1),
            ColType::Float => Value::Float(0.5),
            ColType::Str => Value::from("x"),
            ColType::IntList => Value::List(vec![1]),
        },
        (Value::Null, Change::Null) => return None,
        (_, Change::Null) => Value::Null,
        (Value::Float(x), Change::Nudge) => Value::Float(f64::from_bits(x.to_bits() + 1)),
        (Value::Float(_), Change::Nan) => Value::Float(f64::NAN),
        (Value::Float(_), Change::Infinity) => Value::Float(f64::INFINITY),
        (Value::Float(_), Change::MinusInfinity) => Value::Float(f64::NEG_INFINITY),
        (Value::Float(x), Change::Negate) => Value::Float(-x),
        (Value::Int(i), Change::Nudge) => Value::Int(i + 1),
        (Value::Int(i), Change::Negate) => Value::Int(-i - 1),
        (Value::Str(s), Change::Nudge) => Value::Str(format!("{s}x")),
        (Value::Str(_), Change::Negate) => Value::Str(String::new()),
        (Value::Bool(b), Change::Nudge | Change::Negate) => Value::Bool(!b),
        (Value::List(l), Change::Nudge) => Value::List([l.clone(), vec![1]].concat()),
        _ => return None,
    })
}

/// Rewrites one cell of a table file, keeping its metadata.
fn rewrite(path: &Path, table: &Table, row: usize, column: usize, value: Value) {
    let reader = parquet::open(path).unwrap();
    let kv = reader.metadata.clone();
    let names = table.column_names();
    let mut rows: Vec<_> = reader
        .flat_map(|b| b.unwrap().rows(&names).unwrap())
        .collect();
    let mut columns = table.columns.clone();
    // The writer refuses a null in a column declared never null; a tool
    // rewriting the file would declare the column nullable.
    columns[column].nullable |= value == Value::Null;
    rows[row][column] = value;
    parquet::write(path, &columns, [parquet::batch(&columns, &rows)], &kv).unwrap();
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Whether a problem names `row` exactly, or a range of rows holding it.
fn names_row(problem: &str, row: usize) -> bool {
    if problem.contains(&format!("row {row},")) || problem.contains(&format!("rows {row},")) {
        return true;
    }
    let ranges = problem.split("rows ").skip(1);
    ranges.into_iter().any(|r| {
        let spec: String = r
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '=' || *c == ',' || *c == ' ')
            .collect();
        spec.split(", ").any(|part| match part.split_once("..=") {
            Some((a, b)) => {
                let (a, b) = (a.trim().parse::<usize>(), b.trim().parse::<usize>());
                matches!((a, b), (Ok(a), Ok(b)) if (a..=b).contains(&row))
            }
            None => part.trim().parse::<usize>() == Ok(row),
        })
    })
}

/// Runs `manifest` once, then changes every column of every table in turn
/// (at a seeded random row, by a nudge and by one special change) and
/// requires `verify` to catch each, naming the file, column and row.
fn every_change_is_caught(name: &str, manifest: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let m = common::write_manifest(tmp.path(), &format!("{name}.toml"), manifest);
    let clean = tmp.path().join("clean");
    common::run_ok(&m, &clean);
    let registry = Registry::builtin();
    let plan = Layout::new(&clean).read_plan(&registry).unwrap();
    let tables = tables(&plan.manifest);
    let mut rng = Stream::keyed(7, &[name.len() as u64]);
    let mut cases = 0;
    for table in &tables {
        let file = format!("{}.parquet", table.name);
        let n_rows: usize = parquet::open(&clean.join(&file))
            .unwrap()
            .map(|b| b.unwrap().num_rows())
            .sum();
        for (k, column) in table.columns.iter().enumerate() {
            // Floats take every special in turn; other types a sign flip or a null.
            let special = match column.ty {
                ColType::Float => SPECIALS[(k + table.name.len()) % SPECIALS.len()],
                _ => [Change::Negate, Change::Null][k % 2],
            };
            for change in [Change::Nudge, special] {
                let row = rng.below(n_rows as u64) as usize;
                let reader = parquet::open(&clean.join(&file)).unwrap();
                let all: Vec<_> = reader
                    .flat_map(|b| b.unwrap().rows(&table.column_names()).unwrap())
                    .collect();
                let Some(value) = changed(&all[row][k], column.ty, change) else {
                    continue;
                };
                let dir: PathBuf = tmp.path().join(format!("case-{cases}"));
                copy(&clean, &dir);
                rewrite(&dir.join(&file), table, row, k, value.clone());
                let report = verify(&dir, Replay::Sample(32), &registry).unwrap();
                let what = format!(
                    "{name}: {file}, column {}, row {row}: {} -> {value} ({change:?})",
                    column.name, all[row][k]
                );
                assert!(!report.problems.is_empty(), "not caught: {what}");
                assert!(
                    report
                        .problems
                        .iter()
                        .any(|p| p.contains(&file) && p.contains(column.name) && names_row(p, row)),
                    "caught without naming the file, column and row: {what}\n{:#?}",
                    report.problems
                );
                std::fs::remove_dir_all(&dir).unwrap();
                cases += 1;
            }
        }
    }
    let columns: usize = tables.iter().map(|t| t.columns.len()).sum();
    assert!(
        cases * 4 >= columns * 7,
        "{cases} cases for {columns} columns"
    );
    // The control: the same rewrite without a change writes the same bytes,
    // and verifies.
    let dir = tmp.path().join("control");
    copy(&clean, &dir);
    let runs = tables.last().unwrap();
    let reader = parquet::open(&dir.join("runs.parquet")).unwrap();
    let first = reader
        .flat_map(|b| b.unwrap().rows(&runs.column_names()).unwrap())
        .next()
        .unwrap();
    rewrite(&dir.join("runs.parquet"), runs, 0, 1, first[1].clone());
    let report = verify(&dir, Replay::Sample(32), &registry).unwrap();
    assert_eq!(report.problems, Vec::<String>::new());
}

fn shipped(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("experiments")
            .join(name),
    )
    .unwrap()
}

#[test]
fn every_change_to_the_default_experiment_is_caught() {
    every_change_is_caught("default", &shipped("default.toml"));
}

#[test]
fn every_change_to_the_hive_arms_with_episodes_is_caught() {
    let text = format!("{}\n[output]\nepisodes = true\n", shipped("hive-arms.toml"));
    every_change_is_caught("hive-arms", &text);
}

#[test]
fn every_change_to_a_harness_experiment_is_caught() {
    let text = "[experiment]\nname = \"h\"\nmodel = \"harness\"\n\
                [grid]\nseed = [1, 2]\npolicy = [\"echo\", \"dedupe\", \"prober\"]\n\
                [output]\nagents = true\nmessages = true\n";
    every_change_is_caught("harness", text);
}

#[test]
fn every_change_to_the_trust_attacks_is_caught() {
    every_change_is_caught("trust-attacks", &shipped("trust-attacks.toml"));
}

#[test]
fn the_cli_exits_1_and_names_the_changed_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let m = common::write_manifest(tmp.path(), "default.toml", &shipped("default.toml"));
    let out = tmp.path().join("out");
    common::run_ok(&m, &out);
    let registry = Registry::builtin();
    let plan = Layout::new(&out).read_plan(&registry).unwrap();
    let runs = tables(&plan.manifest).pop().unwrap();
    let k = runs
        .columns
        .iter()
        .position(|c| c.name == "peak_mistaken")
        .unwrap();
    rewrite(
        &out.join("runs.parquet"),
        &runs,
        77,
        k,
        Value::Float(f64::NAN),
    );
    common::witness()
        .arg("verify")
        .arg(&out)
        .assert()
        .code(1)
        .stdout(predicates::str::contains(
            "runs.parquet, row 77, column peak_mistaken",
        ));
}
