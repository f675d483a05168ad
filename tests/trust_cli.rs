//! `witness trust score` on the worked example: byte-identical outputs run
//! to run (only the inputs and --today matter), CSV and Parquet inputs
//! agreeing, and bad input refused with file, row and field named and
//! nothing written.

mod common;

use std::path::{Path, PathBuf};

use common::{snapshot, witness};
use predicates::prelude::*;

const EXAMPLE: &str = "experiments/trust";

fn args(dir: &Path, out: &Path) -> Vec<String> {
    let f = |name: &str| dir.join(name).display().to_string();
    let mut a: Vec<String> = vec!["trust".into(), "score".into()];
    for (flag, file) in [
        ("--actors", "actors.csv"),
        ("--items", "items.csv"),
        ("--signals", "signals.csv"),
        ("--relations", "relations.csv"),
        ("--sources", "sources.csv"),
        ("--ratings", "ratings.csv"),
    ] {
        a.push(flag.into());
        a.push(f(file));
    }
    a.extend([
        "--today".into(),
        "1000".into(),
        "--out".into(),
        out.display().to_string(),
    ]);
    a
}

/// The example copied to a temp folder, so a test may break one file.
fn example_copy(tmp: &Path) -> PathBuf {
    let dir = tmp.join("in");
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(EXAMPLE).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "csv") {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    dir
}

#[test]
fn today_may_be_negative_as_its_range_says() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut a = args(Path::new(EXAMPLE), &out);
    let at = a.iter().position(|x| x == "--today").unwrap();
    a[at + 1] = "-5".into();
    // clap read `-5` as a flag and refused it. Every signal is later (the
    // first on day 600): said, since every claim then reads unverified.
    witness()
        .args(&a)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "note: --today -5: every active signal is dated later (the first on day 600), so none counts",
        ));
    witness()
        .args(args(Path::new(EXAMPLE), &out))
        .assert()
        .success()
        .stderr(predicates::str::contains("note:").not());
}

#[test]
fn the_example_scores_reproducibly() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for out in [&a, &b] {
        witness()
            .args(args(Path::new(EXAMPLE), out))
            .arg("--csv")
            .assert()
            .success();
    }
    let (sa, sb) = (snapshot(&a), snapshot(&b));
    assert_eq!(
        sa.len(),
        9,
        "four tables, Parquet and CSV, and the set's record"
    );
    let record: serde_json::Value = serde_json::from_slice(&sa["trust-score.json"]).unwrap();
    assert_eq!(record["files"].as_object().unwrap().len(), 8);
    assert!(sa == sb, "two runs differ");
    let scores = String::from_utf8(sa["scores.csv"].clone()).unwrap();
    assert!(scores.lines().skip(1).all(|l| l.starts_with("trust-v1,")));
    for (target, status) in [
        ("old-guide", "superseded"),
        ("claim:tests-pass", "disputed"),
        ("parser", "supported"),
    ] {
        let line = scores
            .lines()
            .find(|l| l.contains(&format!(",{target},")))
            .unwrap();
        assert!(line.contains(&format!(",{status},")), "{line}");
    }
    // Scored again without --csv: the old CSV copies go, the set is whole.
    witness()
        .args(args(Path::new(EXAMPLE), &a))
        .assert()
        .success();
    let again = snapshot(&a);
    assert_eq!(again.len(), 5, "{:?}", again.keys().collect::<Vec<_>>());
    assert!(again.keys().all(|k| !k.ends_with(".csv")));
}

#[test]
fn scoring_never_removes_or_replaces_a_file_it_did_not_write() {
    let tmp = tempfile::tempdir().unwrap();
    let input = example_copy(tmp.path());
    // A CSV of the user's own under an output's name, with no record of
    // an earlier scoring: left alone.
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("scores.csv"), "my notes\n").unwrap();
    witness().args(args(&input, &out)).assert().success();
    assert_eq!(
        std::fs::read_to_string(out.join("scores.csv")).unwrap(),
        "my notes\n"
    );
    // Scoring into the inputs' own folder with --csv would replace
    // ratings.csv with the ratings output: refused, nothing written.
    let before = snapshot(&input);
    witness()
        .args(args(&input, &input))
        .arg("--csv")
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("--ratings").and(predicates::str::contains(
                "would replace it; write the scores into another --out folder",
            )),
        );
    assert!(snapshot(&input) == before);
    // Rolling forward from a CSV reputation without --csv: the earlier
    // record's CSV copies go, but not the table this scoring reads.
    let roll = tmp.path().join("roll");
    witness()
        .args(args(&input, &roll))
        .arg("--csv")
        .assert()
        .success();
    witness()
        .args(args(&input, &roll))
        .arg("--reputation")
        .arg(roll.join("reputation.csv"))
        .assert()
        .success();
    let left: Vec<String> = snapshot(&roll)
        .into_keys()
        .filter(|k| k.ends_with(".csv"))
        .collect();
    assert_eq!(left, ["reputation.csv"]);
}

/// Every example CSV rewritten as Parquet (string columns, `day`-like
/// columns as int64), under the same stems.
fn as_parquet(dir: &Path) -> PathBuf {
    use witness::model::{ColType, Column};
    use witness::params::Value;
    use witness::store::parquet;
    let out = dir.join("pq");
    std::fs::create_dir_all(&out).unwrap();
    for e in std::fs::read_dir(EXAMPLE).unwrap().flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "csv") {
            continue;
        }
        let mut r = csv::Reader::from_path(&path).unwrap();
        let names: Vec<&'static str> = r
            .headers()
            .unwrap()
            .iter()
            .map(|h| &*Box::leak(h.to_string().into_boxed_str()))
            .collect();
        let ints = ["day", "created", "number"];
        let columns: Vec<Column> = names
            .iter()
            .map(|&name| {
                let ty = if ints.contains(&name) {
                    ColType::Int
                } else {
                    ColType::Str
                };
                Column::new(name, ty, true, "")
            })
            .collect();
        let rows: Vec<Vec<Value>> = r
            .records()
            .map(|rec| {
                rec.unwrap()
                    .iter()
                    .zip(&columns)
                    .map(|(c, col)| match (c, col.ty) {
                        ("", _) => Value::Null,
                        (c, ColType::Int) => Value::Int(c.parse().unwrap()),
                        (c, _) => Value::Str(c.to_string()),
                    })
                    .collect()
            })
            .collect();
        let target = out.join(path.with_extension("parquet").file_name().unwrap());
        parquet::write(&target, &columns, [parquet::batch(&columns, &rows)], &[]).unwrap();
    }
    out
}

#[test]
fn parquet_inputs_give_the_same_scores_as_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let csv_out = tmp.path().join("csv");
    witness()
        .args(args(Path::new(EXAMPLE), &csv_out))
        .arg("--csv")
        .assert()
        .success();
    let pq = as_parquet(tmp.path());
    let pq_out = tmp.path().join("from-parquet");
    let pq_args: Vec<String> = args(&pq, &pq_out)
        .into_iter()
        .map(|a| a.replace(".csv", ".parquet"))
        .collect();
    witness().args(pq_args).assert().success();
    for t in ["scores", "ratings", "reputation", "ranking"] {
        let f = format!("{t}.parquet");
        assert!(
            snapshot(&pq_out)[&f] == snapshot(&csv_out)[&f],
            "{f} differs"
        );
    }
    // Feed the reputation output (Parquet) back in, as the next run would.
    let next = tmp.path().join("next");
    witness()
        .args(args(Path::new(EXAMPLE), &next))
        .arg("--reputation")
        .arg(csv_out.join("reputation.parquet"))
        .assert()
        .success();
    let again = tmp.path().join("again");
    witness()
        .args(args(Path::new(EXAMPLE), &again))
        .arg("--reputation")
        .arg(csv_out.join("reputation.csv"))
        .assert()
        .success();
    assert!(
        snapshot(&next) == snapshot(&again),
        "reputation read from Parquet and from CSV differ"
    );
    assert!(snapshot(&next)["scores.parquet"] != snapshot(&csv_out)["scores.parquet"]);
}

#[test]
fn bad_input_names_file_row_and_field_and_writes_nothing() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "signals.csv",
            "u3,parser-r2,acme-bot-1,",
            "u3,parser-r2,nobody,",
            &[
                "signals.csv",
                "row 3",
                "`actor` = \"nobody\"",
                "unknown actor",
            ],
        ),
        (
            "actors.csv",
            "acme,organization,,domain,0",
            "acme,ai,acme-bot-1,domain,0",
            &["actors.csv", "controller cycle"],
        ),
        (
            "signals.csv",
            "usage,success,true,,false,950",
            "usage,fine,true,,false,950",
            &[
                "signals.csv",
                "row 3",
                "`outcome` = \"fine\"",
                "success, failure, unknown",
            ],
        ),
        (
            "signals.csv",
            "true,false,0.9,true,981",
            "true,false,1.9,true,981",
            &["row 11", "`confidence` = \"1.9\"", "0 ..= 1"],
        ),
        (
            "signals.csv",
            "u4,parser-r2",
            "u3,parser-r2",
            &[
                "row 4",
                "`id` = \"u3\"",
                "duplicate id, first used on row 3",
            ],
        ),
        (
            "items.csv",
            "cache-r1,cache,1,alice,true",
            "cache-r1,cache,1,alice,false",
            &["items.csv", "item `cache` has no current revision"],
        ),
        (
            "signals.csv",
            "s1,claim:tests-pass",
            "s1,parser",
            &["row 21", "`target` = \"parser\"", "this is an item"],
        ),
    ];
    for (file, from, to, wanted) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = example_copy(tmp.path());
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{from}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        let out = tmp.path().join("out");
        let run = witness().args(args(&dir, &out)).assert().code(2);
        let err = String::from_utf8(run.get_output().stderr.clone()).unwrap();
        for w in *wanted {
            assert!(err.contains(w), "{file}: {to}: missing {w:?} in {err}");
        }
        assert!(!out.exists(), "{to}: output written despite bad input");
    }
}

#[test]
fn a_claims_table_makes_unknown_targets_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = example_copy(tmp.path());
    std::fs::write(dir.join("claims.csv"), "id,author\nclaim:other,alice\n").unwrap();
    let out = tmp.path().join("out");
    let run = witness()
        .args(args(&dir, &out))
        .arg("--claims")
        .arg(dir.join("claims.csv"))
        .assert()
        .code(2);
    let err = String::from_utf8(run.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("`target` = \"claim:tests-pass\"") && err.contains("not in the claims table"),
        "{err}"
    );
}
