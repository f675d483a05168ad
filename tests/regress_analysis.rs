//! Regressions of the analysis verbs a newcomer hit: charts of a float
//! axis overwriting each other, the placebo of a baseline with its own
//! axes, compare's effect under an outcome, scenarios and filters matched
//! by value, and damaged trajectories in `plot`.

mod common;

use common::{run_ok, witness, write_manifest};
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

const GRID: &str = r#"
[experiment]
name = "g"
model = "witness"
[fixed]
population = 40
rounds = 12
truth = false
[grid]
seed = { from = 1, to = 4 }
communication = [0.5, 0.8]
[[arm]]
name = "endorsement"
policy = "endorsement"
grid = { gain = [3.0, 9.0] }
placebo = true
[[arm]]
name = "source_aware"
policy = "source_aware"
"#;

fn results(tmp: &Path) -> PathBuf {
    results_of(tmp, GRID)
}

/// The results of the manifest `text`, run into `tmp/out`.
fn results_of(tmp: &Path, text: &str) -> PathBuf {
    let m = write_manifest(tmp, "m.toml", text);
    let out = tmp.join("out");
    run_ok(&m, &out);
    out
}

fn compare_json(dir: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(dir.join("compare.json")).unwrap()).unwrap()
}

#[test]
fn charts_of_a_float_axis_do_not_overwrite_each_other() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    witness().arg("plot").arg(&out).assert().success();
    for c in ["0.5", "0.8"] {
        for ext in ["svg", "png"] {
            let f = out.join(format!("plots/trajectories-communication-{c}.{ext}"));
            assert!(f.is_file(), "{} missing", f.display());
        }
    }
}

#[test]
fn compare_finds_the_placebo_of_a_baseline_with_its_own_axes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    witness()
        .args(["compare", "--baseline", "endorsement[gain=3.0]"])
        .arg(&out)
        .assert()
        .success();
    let doc = compare_json(&out);
    assert_eq!(doc["placebo"], "endorsement:placebo[gain=3.0]");
    let arms: Vec<&str> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["arm"].as_str().unwrap())
        .collect();
    assert!(
        arms.contains(&"endorsement[gain=9.0]") && arms.contains(&"source_aware"),
        "{arms:?}"
    );
    assert!(!arms.iter().any(|a| a.contains("placebo")), "{arms:?}");
}

#[test]
fn an_outcome_comparison_has_an_effect_only_when_a_metric_is_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    let base = [
        "compare",
        "--baseline",
        "endorsement[gain=3.0]",
        "--outcome",
        "cleared",
    ];
    witness()
        .args(base)
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("no paired effect: pass --metric"));
    let doc = compare_json(&out);
    assert_eq!(doc["effect"], Json::Null);
    assert!(doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["effect_metric"].is_null()));
    witness()
        .args(base)
        .args(["--metric", "peak_mistaken"])
        .arg(&out)
        .assert()
        .success();
    let doc = compare_json(&out);
    assert_eq!(doc["effect"]["metric"], "peak_mistaken");
    assert!(doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["effect_metric"] == "peak_mistaken"));
}

#[test]
fn scenarios_and_filters_match_values_not_text() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results_of(
        tmp.path(),
        &GRID.replace("communication = [0.5, 0.8]", "communication = [0.5, 1]"),
    );
    witness()
        .args(["plot", "--scenario", "communication=1"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("trajectories-communication-1.0"));
    witness()
        .args(["plot", "--scenario", "communication=0.7"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("no such scenario").and(contains("communication=1.0")));
    // --where keeps the runs it names, in every verb; its table goes
    // beside the table of every run, not over it.
    witness().arg("summary").arg(&out).assert().success();
    let all = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    witness()
        .args(["summary", "--where", "communication=1, arm=source_aware"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains(
            "summary-where-communication-1-arm-source_aware.csv",
        ));
    assert_eq!(
        std::fs::read_to_string(out.join("summary.csv")).unwrap(),
        all
    );
    let csv =
        std::fs::read_to_string(out.join("summary-where-communication-1-arm-source_aware.csv"))
            .unwrap();
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.starts_with("source_aware,1.0,")),
        "{csv}"
    );
    witness()
        .args([
            "compare",
            "--baseline",
            "endorsement[gain=3.0]",
            "--where",
            "communication=0.5",
        ])
        .arg(&out)
        .assert()
        .success();
    let doc = compare_json(&out);
    assert!(doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["scenario"] == "communication=0.5"));
    witness()
        .args(["plot", "--where", "seed=1"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("heatmap"));
    witness()
        .args(["summary", "--where", "gain=lots"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("--where").and(contains("`gain`")));
}

#[test]
fn a_repeated_column_is_named_once_and_one_axis_is_not_two() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    witness()
        .args([
            "summary",
            "--by",
            "arm,arm",
            "--metrics",
            "peak_mistaken, peak_mistaken",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("arm\tmetric\tn\tmean"));
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    // Five arm variants (two gains, their placebos, source_aware), one
    // metric each: the repeats gave two arm columns and every row twice.
    assert_eq!(
        csv.lines().next(),
        Some("arm,metric,n,mean,sd,ci95_low,ci95_high")
    );
    assert_eq!(csv.lines().count(), 6, "{csv}");
    witness()
        .args(["plot", "--x", "communication", "--y", "communication"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("--x and --y are both communication"));
}

#[test]
fn a_filter_that_keeps_no_run_is_refused_with_the_values_there_are() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    // These gave empty tables, a heatmap from -inf to inf, or compare's
    // "arms here:" with nothing after it.
    for verb in [
        vec!["summary"],
        vec!["plot"],
        vec!["compare", "--baseline", "endorsement[gain=3.0]"],
    ] {
        witness()
            .args(&verb)
            .args(["--where", "arm=endorsment"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(contains(
                "--where \"arm=endorsment\": no arm `endorsment` here; arms: endorsement, endorsement:placebo, source_aware",
            ));
        witness()
            .args(&verb)
            .args(["--where", "communication=0.6, seed=2"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(contains(
                "keeps none of the 40 runs; values here: communication = 0.5 | 0.8; seed = 1 | 2 | 3 | 4",
            ));
    }
}

#[test]
fn rank_takes_a_filter_too() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results_of(tmp.path(), "[experiment]\nname = \"h\"\nmodel = \"hive\"\n[fixed]\nrooms = 20\n[grid]\nnoise = [30, 90]\n[[arm]]\nname = \"a\"\npolicy = \"hive+\"\n[[arm]]\nname = \"b\"\npolicy = \"vote\"\n");
    witness()
        .args(["rank", "--where", "noise=90"])
        .arg(&out)
        .assert()
        .success();
    assert!(!out.join("rank.csv").exists());
    let csv = std::fs::read_to_string(out.join("rank-where-noise-90.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.lines().skip(1).all(|l| l.contains("noise=90")), "{csv}");
}

#[test]
fn plot_refuses_damaged_trajectories_without_panicking() {
    use witness::params::Value;
    use witness::store::parquet;
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    let registry = witness::model::Registry::builtin();
    let plan = witness::runner::layout::Layout::new(&out)
        .read_plan(&registry)
        .unwrap();
    let table = witness::runner::tables::tables(&plan.manifest).remove(0);
    let names = table.column_names();
    for (column, value, needle) in [
        ("run_id", Value::Int(1_000_000), "a row of run 1000000"),
        (
            "round",
            Value::Int(1_000_000_000_000),
            "round = 1000000000000",
        ),
    ] {
        let dir = tmp.path().join(column);
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["manifest.toml", "runs.parquet", "complete.json"] {
            std::fs::copy(out.join(f), dir.join(f)).unwrap();
        }
        let reader = parquet::open(&out.join("trajectories.parquet")).unwrap();
        let kv = reader.metadata.clone();
        let mut rows: Vec<_> = reader
            .flat_map(|b| b.unwrap().rows(&names).unwrap())
            .collect();
        let k = names.iter().position(|n| *n == column).unwrap();
        rows[5][k] = value;
        parquet::write(
            &dir.join("trajectories.parquet"),
            &table.columns,
            [parquet::batch(&table.columns, &rows)],
            &kv,
        )
        .unwrap();
        common::reseal(&dir);
        witness()
            .arg("plot")
            .arg(&dir)
            .assert()
            .code(1)
            .stderr(contains(needle).and(contains("panicked").not()));
    }
}

#[test]
fn empty_flags_and_a_filtered_placebo_name_their_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results(tmp.path());
    for (args, says) in [
        (vec!["summary", "--by", ""], "--by \"\": names nothing"),
        (vec!["summary", "--metrics", " , "], "--metrics \" , \": names nothing"),
        (vec!["summary", "--where", ","], "--where \",\": names no run"),
        (
            vec!["summary", "--where", "arm=endorsement[gain=3.0]"],
            "arm= takes an arm's name; for one variant of it, write --where \"arm=endorsement, gain=3.0\"",
        ),
        (
            vec!["compare", "--baseline", "endorsement[gain=3.0]", "--where", "arm=endorsement"],
            "leaves out the placebo runs of the baseline 'endorsement[gain=3.0]' (arm endorsement:placebo)",
        ),
        (
            vec!["compare", "--baseline", "endorsement[gain=3.0]", "--where", "arm=source_aware"],
            "--where \"arm=source_aware\" keeps no run of the baseline 'endorsement[gain=3.0]'; let them through",
        ),
        (
            vec!["compare", "--baseline", "endorsement", "--metric", "peak"],
            "--metric peak: not a summary column of model witness; allowed: peak_mistaken",
        ),
        (
            vec!["compare", "--baseline", "endorsement:placebo[gain=3.0]"],
            "that is the placebo of 'endorsement[gain=3.0]', not an arm to compare against",
        ),
    ] {
        witness()
            .args(&args)
            .arg(&out)
            .assert()
            .code(2)
            .stderr(contains(says));
    }
    witness()
        .args([
            "summary",
            "--by",
            "arm",
            "--where",
            "arm=endorsement, gain=3.0",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("endorsement[gain=3.0]\tpeak_mistaken\t8\t"));
    // A key given twice keeps either value (it kept neither).
    witness()
        .args(["summary", "--by", "arm", "--where", "seed=1, seed=3"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("source_aware\tpeak_mistaken\t4\t"));
    // A typo in the second value is named, though the first keeps runs.
    witness()
        .args(["summary", "--by", "arm", "--where", "seed=1, seed=99"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains(
            "--where \"seed=1, seed=99\": no run has seed=99; values here: seed = 1 | 2 | 3 | 4",
        ));
    // The filter the verdicts were made under is recorded with them.
    witness()
        .args([
            "compare",
            "--baseline",
            "endorsement[gain=3.0]",
            "--where",
            "seed=1",
        ])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(compare_json(&out)["where"], "seed=1");
}

#[test]
fn summary_says_where_runs_have_no_value() {
    let tmp = tempfile::tempdir().unwrap();
    // Five rounds: most gain=9 runs never clear, so have no first clear round.
    let out = results_of(tmp.path(), &GRID.replace("rounds = 12", "rounds = 5"));
    witness()
        .args(["summary", "--by", "arm", "--metrics", "first_clear_round"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("source_aware\tfirst_clear_round\t2\t"))
        .stderr(contains(
            "note: arm=source_aware: first_clear_round has no value in 6 of 8 runs; n, the mean and the interval are over the 2 with one",
        ));
}

#[test]
fn plot_says_where_runs_have_no_value() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results_of(tmp.path(), &GRID.replace("rounds = 12", "rounds = 5"));
    witness()
        .args(["plot", "--metric", "first_clear_round"])
        .arg(&out)
        .assert()
        .success()
        .stderr(
            contains("note: heatmap: first_clear_round has no value in ")
                .and(contains(" of 40 runs;")),
        );
    witness()
        .args(["plot", "--metric", "peak_mistaken"])
        .arg(&out)
        .assert()
        .success()
        .stderr(contains("no value").not());
    // No run with a value: no heatmap (its scale would run from inf to
    // -inf), and the note says so.
    let other = tempfile::tempdir().unwrap();
    let none = results_of(other.path(), &GRID.replace("rounds = 12", "rounds = 1"));
    witness()
        .args(["plot", "--metric", "first_clear_round"])
        .arg(&none)
        .assert()
        .success()
        .stderr(contains(
            "no heatmap: first_clear_round has no value in any of the 40 runs drawn",
        ));
    assert!(std::fs::read_dir(none.join("plots")).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with("heatmap")));
}

#[test]
fn plots_of_some_runs_say_which_and_keep_the_plots_of_all() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results_of(tmp.path(), GRID);
    witness().arg("plot").arg(&out).assert().success();
    let all = common::snapshot(&out.join("plots"));
    witness()
        .args(["plot", "--where", "communication=0.5"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("-where-communication-0.5.svg"));
    let after = common::snapshot(&out.join("plots"));
    for (name, bytes) in &all {
        assert!(after[name] == *bytes, "{name} was replaced");
    }
    let filtered: Vec<&String> = after
        .keys()
        .filter(|k| !all.contains_key(*k) && k.ends_with(".svg"))
        .collect();
    assert!(!filtered.is_empty());
    let svg = String::from_utf8(after[filtered[0]].clone()).unwrap();
    assert!(svg.contains("[where communication=0.5]"), "{}", filtered[0]);
}

#[test]
fn an_arm_that_does_not_read_a_parameter_is_not_grouped_under_its_default() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results_of(tmp.path(), "[experiment]\nname = \"q\"\nmodel = \"witness\"\n[fixed]\npopulation = 40\nrounds = 15\n[grid]\nseed = [1, 2, 3]\n[[arm]]\nname = \"endorsement\"\npolicy = \"endorsement\"\n[[arm]]\nname = \"quorum\"\npolicy = \"quorum\"\ngrid = { threshold = [1, 3] }\n");
    // Endorsement runs carry threshold's default, 2, which they never read;
    // they were summarised as a threshold = 2 that no arm ran.
    witness()
        .args(["summary", "--by", "threshold", "--metrics", "peak_mistaken"])
        .arg(&out)
        .assert()
        .success()
        .stdout(
            contains("\n1\tpeak_mistaken\t3\t")
                .and(contains("\n3\tpeak_mistaken\t3\t"))
                .and(contains("\n(not read)\tpeak_mistaken\t3\t"))
                .and(contains("\n2\t").not()),
        );
}

#[test]
fn where_keeps_the_runs_of_an_arm_that_does_not_read_its_key() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results_of(tmp.path(), "[experiment]\nname = \"q\"\nmodel = \"witness\"\n[fixed]\npopulation = 40\nrounds = 15\n[grid]\nseed = [1, 2, 3]\n[[arm]]\nname = \"endorsement\"\npolicy = \"endorsement\"\n[[arm]]\nname = \"quorum\"\npolicy = \"quorum\"\ngrid = { threshold = [1, 3] }\n");
    // Endorsement runs store threshold's default, 2. They were kept by
    // threshold=2, which no quorum variant ran, and dropped by threshold=3.
    for (filter, quorum, other) in [("threshold=3", "3", "1"), ("threshold=1", "1", "3")] {
        witness()
            .args([
                "summary",
                "--by",
                "arm",
                "--metrics",
                "peak_mistaken",
                "--where",
                filter,
            ])
            .arg(&out)
            .assert()
            .success()
            .stdout(
                contains("\nendorsement\tpeak_mistaken\t3\t")
                    .and(contains(format!(
                        "\nquorum[threshold={quorum}]\tpeak_mistaken\t3\t"
                    )))
                    .and(contains(format!("quorum[threshold={other}]")).not()),
            );
    }
    // Only the endorsement runs remain; the key still filters the quorum's.
    witness()
        .args(["summary", "--by", "arm", "--where", "threshold=2"])
        .arg(&out)
        .assert()
        .success()
        .stdout(contains("\nendorsement\t").and(contains("quorum").not()));
}

#[test]
fn a_heatmap_with_too_many_panels_names_the_panels_as_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    // 14 gain variants: one heatmap panel each over graph x communication.
    let gains: Vec<String> = (1..=14).map(|g| format!("{g}.0")).collect();
    let text = format!(
        "[experiment]\nname = \"p\"\nmodel = \"witness\"\n[fixed]\npopulation = 20\nrounds = 5\n[grid]\ngraph = [\"hub\", \"ring\"]\ncommunication = [0.5, 0.8]\n[[arm]]\nname = \"e\"\npolicy = \"endorsement\"\ngrid = {{ gain = [{}] }}\n",
        gains.join(", ")
    );
    let out = results_of(tmp.path(), &text);
    witness()
        .args(["plot", "--x", "graph", "--y", "communication"])
        .arg(&out)
        .assert()
        .success()
        .stderr(
            contains("14 panel(s) is more than a chart shows").and(contains(
                "keep fewer arm variants (the panels) with --where",
            )),
        );
}

#[test]
fn a_sealed_table_that_is_gone_is_damage_not_an_output_left_off() {
    let tmp = tempfile::tempdir().unwrap();
    let out = results_of(tmp.path(), GRID);
    std::fs::remove_file(out.join("trajectories.parquet")).unwrap();
    for verb in ["plot", "report"] {
        witness().arg(verb).arg(&out).assert().code(2).stderr(
            contains("trajectories.parquet: missing, though the seal lists it")
                .and(contains("set [output]").not()),
        );
    }
}
