//! Regressions of input handling: trust-v1 tables (day ranges, controller
//! cycles, relations without an actor, rating targets, compare's
//! arguments, Parquet written by other tools, an output set written as a
//! whole), `replay` on files that are not exports, and text that a
//! spreadsheet would run. Every bad input exits 2 and names what is wrong.

mod common;

use common::{snapshot, witness};
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use std::path::{Path, PathBuf};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/trust");

/// The worked example copied, so a test may change one table.
fn example(tmp: &Path) -> PathBuf {
    let dir = tmp.join("in");
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(EXAMPLE).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "csv") {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    dir
}

fn inputs(dir: &Path, ext: &str) -> Vec<String> {
    let mut a = Vec::new();
    for t in [
        "actors",
        "items",
        "signals",
        "relations",
        "sources",
        "ratings",
    ] {
        a.push(format!("--{t}"));
        a.push(dir.join(format!("{t}.{ext}")).display().to_string());
    }
    a.extend(["--today".into(), "1000".into()]);
    a
}

fn score(dir: &Path, out: &Path) -> assert_cmd::assert::Assert {
    witness()
        .args(["trust", "score"])
        .args(inputs(dir, "csv"))
        .arg("--out")
        .arg(out)
        .assert()
}

fn append(file: &Path, line: &str) {
    let mut t = std::fs::read_to_string(file).unwrap();
    t.push_str(line);
    std::fs::write(file, t).unwrap();
}

#[test]
fn day_numbers_are_bounded_so_no_difference_overflows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = example(tmp.path());
    append(
        &dir.join("signals.csv"),
        "u99,parser-r1,bob,usage,success,true,,false,-9223372036854775808,active\n",
    );
    score(&dir, &tmp.path().join("out")).code(2).stderr(
        contains("signals.csv: row")
            .and(contains("field `day`"))
            .and(contains("-1000000000 ..= 1000000000")),
    );
    witness()
        .args(["trust", "score"])
        .args(inputs(Path::new(EXAMPLE), "csv"))
        .args(["--today", "9000000000000", "--out"])
        .arg(tmp.path().join("o2"))
        .assert()
        .code(2)
        .stderr(contains("--today"));
    // At the bounds the scorer runs.
    let dir2 = tmp.path().join("far");
    std::fs::rename(&dir, &dir2).unwrap();
    let mut t = std::fs::read_to_string(dir2.join("signals.csv")).unwrap();
    t = t.replace("-9223372036854775808", "-1000000000");
    std::fs::write(dir2.join("signals.csv"), t).unwrap();
    score(&dir2, &tmp.path().join("ok")).success();
}

#[test]
fn a_controller_cycle_is_shown_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = example(tmp.path());
    append(
        &dir.join("actors.csv"),
        "loop-a,ai,loop-b,none,0\nloop-b,ai,loop-a,none,0\n",
    );
    let out = score(&dir, &tmp.path().join("out")).code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        err.contains("controller cycle: loop-a -> loop-b -> loop-a"),
        "{err}"
    );
    assert_eq!(
        err.matches(" -> ").count(),
        2,
        "the cycle is shown more than once: {err}"
    );
}

#[test]
fn only_supersessions_and_corrections_need_an_actor() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = example(tmp.path());
    append(
        &dir.join("relations.csv"),
        "blog-b,claim:tests-pass,supports,0.5,,997\nblog-b-copy,blog-b,mirrors,,,997\n",
    );
    score(&dir, &tmp.path().join("out")).success();
    append(
        &dir.join("relations.csv"),
        "guide2-r1,old-guide,corrects,,,991\n",
    );
    score(&dir, &tmp.path().join("out2"))
        .code(2)
        .stderr(contains("field `actor`").and(contains("needs the actor who made it")));
}

#[test]
fn a_rating_target_is_never_made_a_claim() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = example(tmp.path());
    append(
        &dir.join("ratings.csv"),
        "bob,carol,,helpfulness,70,,false,960\n",
    );
    let out = tmp.path().join("out");
    score(&dir, &out).success();
    let scores =
        witness::store::parquet::read_columns(&out.join("scores.parquet"), &["target"]).unwrap();
    assert!(
        !scores[0].contains(&witness::params::Value::from("carol")),
        "an actor scored as a claim"
    );
    let ratings =
        witness::store::parquet::read_columns(&out.join("ratings.parquet"), &["target"]).unwrap();
    assert!(ratings[0].contains(&witness::params::Value::from("carol")));
}

#[test]
fn trust_compare_refuses_what_it_cannot_compare() {
    let base = || {
        let mut c = witness();
        c.args(["trust", "compare"])
            .args(inputs(Path::new(EXAMPLE), "csv"));
        c
    };
    base()
        .args(["--target", "parser", "--dimension", "speed"])
        .assert()
        .success();
    base()
        .args(["--target", "nothing", "--dimension", "speed"])
        .assert()
        .code(2)
        .stderr(contains("--target nothing").and(contains("rated targets: parser")));
    base()
        .args(["--target", "parser", "--dimension", "colour"])
        .assert()
        .code(2)
        .stderr(contains("--dimension colour").and(contains("its dimensions: speed")));
    let without: Vec<String> = inputs(Path::new(EXAMPLE), "csv")
        .chunks(2)
        .filter(|p| p[0] != "--ratings")
        .flatten()
        .cloned()
        .collect();
    witness()
        .args(["trust", "compare"])
        .args(without)
        .args(["--target", "parser", "--dimension", "speed"])
        .assert()
        .code(2)
        .stderr(contains("pass --ratings"));
}

#[test]
fn a_missing_input_file_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = example(tmp.path());
    std::fs::remove_file(dir.join("items.csv")).unwrap();
    score(&dir, &tmp.path().join("out"))
        .code(2)
        .stderr(contains("items.csv"));
}

#[test]
fn parquet_written_by_other_tools_scores_as_its_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let want_dir = tmp.path().join("csv");
    score(Path::new(EXAMPLE), &want_dir).success();
    let want = snapshot(&want_dir);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/trust/pyarrow");
    for variant in [
        "snappy",
        "gzip",
        "lz4",
        "large-strings",
        "dictionary",
        "int32-days",
    ] {
        let out = tmp.path().join(variant);
        witness()
            .args(["trust", "score"])
            .args(inputs(&fixtures.join(variant), "parquet"))
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        let got = snapshot(&out);
        for (file, bytes) in &want {
            if file.ends_with(".parquet") {
                assert!(
                    got[file] == *bytes,
                    "{variant}: {file} differs from the CSV inputs' scores"
                );
            }
        }
    }
}

#[test]
fn a_failed_score_leaves_the_old_output_set_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    score(Path::new(EXAMPLE), &out).success();
    let before = snapshot(&out);
    // New inputs, and a file-size limit that fails a write partway through
    // the set, as a full disk would.
    let dir = example(tmp.path());
    append(
        &dir.join("signals.csv"),
        "u98,parser-r1,erin,usage,success,true,,false,990,active\n",
    );
    let bin = assert_cmd::cargo::cargo_bin("witness");
    let args: Vec<String> = inputs(&dir, "csv");
    let run = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f 2; exec \"$0\" trust score \"$@\" --out {}",
            out.display()
        ))
        .arg(&bin)
        .args(&args)
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(2),
        "the limited write did not fail: {:?}, {}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        snapshot(&out) == before,
        "a failed write changed the old outputs"
    );
}

#[test]
fn replay_of_a_file_that_is_not_an_export_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("run.json");
    witness()
        .args([
            "simulate",
            "--set",
            "population=30",
            "--set",
            "rounds=5",
            "--export",
        ])
        .arg(&good)
        .assert()
        .success();
    let text = std::fs::read_to_string(&good).unwrap();
    let cases: [(&str, Vec<u8>); 4] = [
        ("truncated", text.as_bytes()[..text.len() / 2].to_vec()),
        ("empty", Vec::new()),
        ("binary", vec![0, 159, 146, 150, 255, 1, 2]),
        (
            "nan",
            text.replacen("\"peak_mistaken\": ", "\"peak_mistaken\": NaN, \"x\": ", 1)
                .into_bytes(),
        ),
    ];
    for (what, bytes) in cases {
        let f = tmp.path().join(format!("{what}.json"));
        std::fs::write(&f, bytes).unwrap();
        witness()
            .arg("replay")
            .arg(&f)
            .assert()
            .code(2)
            .stderr(contains("not a JSON export"));
    }
    // JSON of another kind (a seal, a compare.json) is not called an old
    // engine's export.
    let other = tmp.path().join("other.json");
    std::fs::write(&other, r#"{"seed": 1}"#).unwrap();
    witness()
        .arg("replay")
        .arg(&other)
        .assert()
        .code(2)
        .stderr(contains("JSON, but not an export (it names no engine)"));
    // A removed field is named as missing from the export; an integer
    // turned float is a difference.
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["summary"].as_object_mut().unwrap().remove("messages");
    std::fs::write(&good, doc.to_string()).unwrap();
    witness()
        .arg("replay")
        .arg(&good)
        .assert()
        .code(1)
        .stdout(contains(
            "$.summary.messages: missing from the stored document",
        ));
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["summary"]["messages"] =
        serde_json::json!(doc["summary"]["messages"].as_f64().unwrap() + 1e-13);
    std::fs::write(&good, doc.to_string()).unwrap();
    witness()
        .arg("replay")
        .arg(&good)
        .assert()
        .code(1)
        .stdout(contains(
            "is an integer where the stored document holds a float",
        ));
}

#[test]
fn csv_cells_a_spreadsheet_would_run_are_quoted() {
    let tmp = tempfile::tempdir().unwrap();
    let m = common::write_manifest(
        tmp.path(),
        "f.toml",
        "[experiment]\nname = \"f\"\nmodel = \"witness\"\n[fixed]\npopulation = 20\nrounds = 5\n[grid]\nseed = [1, 2]\n[[arm]]\nname = \"@HYPERLINK(1)\"\npolicy = \"endorsement\"\n",
    );
    let out = tmp.path().join("out");
    common::run_ok(&m, &out);
    witness().arg("summary").arg(&out).assert().success();
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(csv.contains("\n'@HYPERLINK(1),"), "{csv}");
}

#[test]
fn summary_refuses_metrics_that_are_not_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let m = common::write_manifest(tmp.path(), "s.toml", common::SMALL);
    let out = tmp.path().join("out");
    common::run_ok(&m, &out);
    witness()
        .args(["summary", "--metrics", "arm"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("--metrics arm: not a numeric summary column"));
    assert!(!out.join("summary.csv").exists());
}

/// Issue #47: a table whose header names a column twice is refused, naming
/// the file and the column, and nothing is written; before, the first
/// copy was read and the second ignored.
#[test]
fn a_header_naming_a_column_twice_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = example(tmp.path());
    let actors = dir.join("actors.csv");
    let text = std::fs::read_to_string(&actors).unwrap();
    let doubled: String = text
        .lines()
        .map(|l| format!("{l},{}\n", l.split(',').next().unwrap()))
        .collect();
    std::fs::write(&actors, doubled).unwrap();
    let out = tmp.path().join("out");
    score(&dir, &out).code(2).stderr(contains(format!(
        "{}: column `id` appears twice in the header (columns 1 and 6); keep one",
        actors.display()
    )));
    assert!(!out.exists(), "scores were written");
}

/// Issue #47: `simulate --set` of one parameter twice is refused, naming
/// both, instead of keeping the last.
#[test]
fn simulate_refuses_a_parameter_set_twice() {
    witness()
        .args([
            "simulate",
            "--set",
            "population=50",
            "--set",
            "population=60",
        ])
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains(
            "parameter `population` = 60: set twice (first by --set population=50); \
             allowed: one --set population per run; keep the one you mean",
        ));
}
