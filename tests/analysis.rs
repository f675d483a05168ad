//! compare, summary and plot on stored results, through the binary.

mod common;

use common::{reseal, run_ok, witness, write_manifest};
use predicates::str::contains;
use serde_json::Value as Json;
use std::path::Path;
use witness::params::Value;
use witness::store::parquet;

const COMPARE: &str = r#"
[experiment]
name = "cmp"
model = "witness"

[fixed]
population = 120
rounds = 25
truth = false

[grid]
seed = { from = 1, to = 8 }
graph = ["small_world", "hub"]

[[arm]]
name = "endorsement"
policy = "endorsement"
placebo = true

[[arm]]
name = "source_aware"
policy = "source_aware"

[[arm]]
name = "reserved_fixed"
policy = "reserved"
fixed = { allocation = "fixed" }
"#;

fn compare_json(dir: &Path) -> Vec<Json> {
    witness()
        .args(["compare", "--baseline", "endorsement"])
        .arg(dir)
        .assert()
        .success();
    let doc: Json =
        serde_json::from_slice(&std::fs::read(dir.join("compare.json")).unwrap()).unwrap();
    doc["rows"].as_array().unwrap().clone()
}

fn row<'a>(rows: &'a [Json], scenario: &str, arm: &str) -> &'a Json {
    rows.iter()
        .find(|r| r["scenario"] == scenario && r["arm"] == arm)
        .unwrap()
}

#[test]
fn verdicts_come_from_the_stored_runs_and_follow_a_changed_value() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "cmp.toml", COMPARE);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    let rows = compare_json(&out);
    assert_eq!(rows.len(), 4, "2 scenarios x 2 arms");
    let sa = row(&rows, "graph=small_world", "source_aware");
    assert_eq!(sa["verdict"], "confirmed", "{sa}");
    assert_eq!(sa["placebo_flips"], 0);
    assert!(
        sa["effect_mean"].as_f64().unwrap() > 0.2 && sa["effect_ci_low"].as_f64().unwrap() > 0.0
    );
    assert!(
        std::fs::read_to_string(out.join("compare.csv"))
            .unwrap()
            .lines()
            .count()
            == 5
    );

    // Change one stored value: the placebo's peak_mistaken on one seed of
    // graph=small_world. That scenario's baseline becomes unstable; the
    // other scenario's verdicts must not move.
    let copy = tmp.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    for f in [
        "manifest.toml",
        "runs.parquet",
        "trajectories.parquet",
        "complete.json",
    ] {
        std::fs::copy(out.join(f), copy.join(f)).unwrap();
    }
    let path = copy.join("runs.parquet");
    let reader = parquet::open(&path).unwrap();
    let kv = reader.metadata.clone();
    let text = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    let manifest =
        witness::manifest::Manifest::parse("m.toml", &text, &witness::model::Registry::builtin())
            .unwrap();
    let columns = witness::runner::tables::runs_columns(&manifest);
    let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
    let (arm, graph, seed, peak) = ["arm", "graph", "seed", "peak_mistaken"]
        .map(|c| names.iter().position(|n| *n == c).unwrap())
        .into();
    let mut all: Vec<_> = reader
        .flat_map(|b| b.unwrap().rows(&names).unwrap())
        .collect();
    let target = all
        .iter()
        .position(|r| {
            r[arm] == Value::Str("endorsement:placebo".into())
                && r[graph] == Value::Str("small_world".into())
                && r[seed] == Value::Int(3)
        })
        .unwrap();
    if let Value::Float(x) = &mut all[target][peak] {
        *x = (*x + 0.5) % 1.0;
    }
    parquet::write(&path, &columns, [parquet::batch(&columns, &all)], &kv).unwrap();
    // Unsealed, the edited table is refused; resealed, it is read.
    witness()
        .args(["compare", "--baseline", "endorsement"])
        .arg(&copy)
        .assert()
        .code(2)
        .stderr(contains("runs.parquet: its bytes are not the ones written"));
    reseal(&copy);
    // Under the zero-tolerance rule one placebo flip voids the scenario
    // (the default, fisher, weighs it against the arm's flips).
    let changed = compare_rows(&copy, &["--baseline-rule", "zero"]);
    let sa = row(&changed, "graph=small_world", "source_aware");
    assert_eq!(
        (sa["verdict"].as_str(), sa["reason"].as_str()),
        (Some("inconclusive"), Some("unstable_baseline"))
    );
    assert_eq!(sa["placebo_flips"], 1);
    let fisher = compare_json(&copy);
    let sa = row(&fisher, "graph=small_world", "source_aware");
    assert_eq!(sa["reason"], "majority_flip", "{sa}");
    for r in rows.iter().filter(|r| r["scenario"] == "graph=hub") {
        assert_eq!(
            row(&fisher, "graph=hub", r["arm"].as_str().unwrap()),
            r,
            "an untouched scenario moved"
        );
    }
}

#[test]
fn an_arm_with_a_knob_its_policy_ignores_is_reported_as_not_applied() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "cmp.toml", COMPARE);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    let rows = compare_json(&out);
    for scenario in ["graph=small_world", "graph=hub"] {
        let r = row(&rows, scenario, "reserved_fixed");
        assert_eq!(r["applied"], false);
        assert_eq!(r["not_applied_knob"], "allocation");
        assert_eq!(
            (r["verdict"].as_str(), r["reason"].as_str()),
            (Some("inconclusive"), Some("not_applied"))
        );
        assert!(r["claim"].as_str().unwrap().contains("`allocation`"));
        assert_eq!(row(&rows, scenario, "source_aware")["applied"], true);
    }
}

#[test]
fn compare_refuses_without_a_placebo_and_with_an_unknown_baseline() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(
        tmp.path(),
        "cmp.toml",
        &COMPARE.replace("placebo = true\n", ""),
    );
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    witness()
        .args(["compare", "--baseline", "endorsement"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("placebo = true"));
    witness()
        .args(["compare", "--baseline", "pooling"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("no arm named 'pooling'").and(contains("source_aware")));
}

#[test]
fn a_domain_comparator_uses_the_models_outcomes() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "cmp.toml", COMPARE);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    witness()
        .args([
            "compare",
            "--baseline",
            "endorsement",
            "--outcome",
            "cleared",
        ])
        .arg(&out)
        .assert()
        .success();
    let doc: Json =
        serde_json::from_slice(&std::fs::read(out.join("compare.json")).unwrap()).unwrap();
    assert_eq!(doc["comparator_kind"], "domain");
    // Every run clears here, so no arm changes the answer.
    assert!(doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["flips"] == 0 && r["band_gated"] == false));
    witness()
        .args(["compare", "--baseline", "endorsement", "--outcome", "vibes"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("cleared, terminal_majority"));
}

#[test]
fn summary_matches_a_direct_computation() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "cmp.toml", COMPARE);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    witness()
        .args(["summary", "--by", "arm,graph", "--metrics", "peak_mistaken"])
        .arg(&out)
        .assert()
        .success();
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let line = csv
        .lines()
        .find(|l| l.starts_with("source_aware,hub,peak_mistaken,"))
        .unwrap();
    let mean_csv: f64 = line.split(',').nth(4).unwrap().parse().unwrap();
    let cols = parquet::read_columns(
        &out.join("runs.parquet"),
        &["arm", "graph", "peak_mistaken"],
    )
    .unwrap();
    let xs: Vec<f64> = (0..cols[0].len())
        .filter(|&i| {
            cols[0][i] == Value::Str("source_aware".into())
                && cols[1][i] == Value::Str("hub".into())
        })
        .map(|i| {
            if let Value::Float(x) = cols[2][i] {
                x
            } else {
                unreachable!()
            }
        })
        .collect();
    assert_eq!(xs.len(), 8);
    assert!((mean_csv - xs.iter().sum::<f64>() / 8.0).abs() < 1e-12);
}

#[test]
fn plots_are_valid_deterministic_png_and_svg() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "cmp.toml", COMPARE);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    let draw = || {
        witness()
            .args(["plot", "--x", "graph", "--y", "seed"])
            .arg(&out)
            .assert()
            .success();
        common::snapshot(&out.join("plots"))
    };
    let first = draw();
    assert_eq!(
        first.len(),
        6,
        "2 trajectory charts + 1 heatmap, each svg and png: {:?}",
        first.keys()
    );
    for (name, bytes) in &first {
        if name.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        } else {
            let text = String::from_utf8(bytes.clone()).unwrap();
            assert!(
                text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
                "{name}"
            );
            let axis = if name.starts_with("heatmap") {
                "seed"
            } else {
                "round"
            };
            assert!(
                text.contains("source_aware") && text.contains(axis),
                "{name}: labels missing"
            );
        }
    }
    assert!(
        first == draw(),
        "plots differ between two runs on the same results"
    );
}

use predicates::prelude::PredicateBooleanExt;

/// Rows of compare.json after `compare ARGS` on `out`.
fn compare_rows(out: &std::path::Path, args: &[&str]) -> Vec<serde_json::Value> {
    witness()
        .arg("compare")
        .arg(out)
        .args(["--baseline", "endorsement"])
        .args(args)
        .assert()
        .success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    doc["rows"].as_array().unwrap().clone()
}

#[test]
fn p_values_are_adjusted_over_the_table_and_the_fisher_rule_weighs_placebo_flips() {
    let tmp = tempfile::tempdir().unwrap();
    // Small runs over many seeds: the placebo flips on a few of them.
    let m = write_manifest(
        tmp.path(),
        "many.toml",
        "[experiment]\nname = \"many\"\nmodel = \"witness\"\n[fixed]\npopulation = 50\nrounds = 20\n\
         [grid]\nseed = { from = 1, to = 1500 }\ngraph = [\"small_world\", \"hub\"]\n\
         [output]\ntrajectories = false\n\
         [[arm]]\nname = \"endorsement\"\npolicy = \"endorsement\"\nplacebo = true\n\
         [[arm]]\nname = \"source_aware\"\npolicy = \"source_aware\"\n\
         [[arm]]\nname = \"fixed\"\npolicy = \"endorsement\"\nfixed = { allocation = \"fixed\" }\n",
    );
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    let zero = compare_rows(&out, &["--baseline-rule", "zero"]);
    let small_world = |rows: &[serde_json::Value], arm: &str| {
        rows.iter()
            .find(|r| r["scenario"] == "graph=small_world" && r["arm"] == arm)
            .unwrap()
            .clone()
    };
    let z = small_world(&zero, "source_aware");
    assert!(z["placebo_flips"].as_u64().unwrap() > 0, "{z}");
    assert_eq!(z["reason"], "unstable_baseline");
    assert!(
        z["claim"]
            .as_str()
            .unwrap()
            .contains("Holm-adjusted over 4 comparisons"),
        "{z}"
    );
    let f = small_world(
        &compare_rows(&out, &["--baseline-rule", "fisher"]),
        "source_aware",
    );
    assert_eq!(
        (&f["verdict"], &f["reason"]),
        (&"confirmed".into(), &"majority_flip".into()),
        "{f}"
    );
    assert!(f["placebo_fisher_p"].as_f64().unwrap() < 0.05);
    // An arm that flips no more than the placebo stays void under fisher.
    let fixed = small_world(&compare_rows(&out, &["--baseline-rule", "fisher"]), "fixed");
    if fixed["placebo_fisher_p"]
        .as_f64()
        .is_some_and(|p| p >= 0.05)
    {
        assert_eq!(fixed["reason"], "unstable_baseline", "{fixed}");
    }
    // Adjustments: none is the raw p, Holm is at least BH, both at least raw.
    let raw = compare_rows(&out, &["--adjust", "none"]);
    let bh = compare_rows(&out, &["--adjust", "bh"]);
    for ((h, b), n) in zero.iter().zip(&bh).zip(&raw) {
        let p = n["p_value"].as_f64().unwrap();
        assert_eq!(n["p_adjusted"].as_f64().unwrap(), p);
        let (ph, pb) = (
            h["p_adjusted"].as_f64().unwrap(),
            b["p_adjusted"].as_f64().unwrap(),
        );
        assert!(
            ph >= pb && pb >= p && ph <= 1.0,
            "holm {ph} bh {pb} raw {p}"
        );
        assert_eq!(h["adjustment"], "holm");
        assert_eq!(b["adjustment"], "bh");
    }
    witness()
        .arg("compare")
        .arg(&out)
        .args(["--baseline", "endorsement", "--adjust", "bonferroni"])
        .assert()
        .code(2)
        .stderr(contains("holm, bh, none"));
}

/// A shipped experiment, run into `tmp`.
fn shipped(name: &str, tmp: &Path) -> std::path::PathBuf {
    let out = tmp.join(name);
    run_ok(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("experiments/{name}.toml")),
        &out,
    );
    out
}

#[test]
fn compare_policies_gets_the_exact_p_values_of_the_inference_vectors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = shipped("compare-policies", tmp.path());
    let all = compare_rows(&out, &[]);
    let p = |graph: &str, arm: &str| {
        let r = row(&all, &format!("truth=false, graph={graph}"), arm);
        assert_eq!(r["p_method"], "exact-enumeration", "{r}");
        r["p_value"].as_f64().unwrap()
    };
    let close = |got: f64, want: f64| (got - want).abs() <= 5e-5 * want;
    for (graph, arm, want) in [
        ("small_world", "source_aware", 2.0 / 1_048_576.0),
        ("small_world", "reserved", 2.0 / 1_048_576.0),
        ("hub", "source_aware", 2.0 / 1_048_576.0),
        ("small_world", "trust", 3.8147e-6),
        ("small_world", "fixed_allocation", 0.027588),
        ("hub", "fixed_allocation", 9.1553e-4),
        ("hub", "trust", 3.0518e-5),
    ] {
        let got = p(graph, arm);
        assert!(close(got, want), "{graph} {arm}: p {got}, want {want}");
    }
    // The family is the testable rows: on truth = true nothing is ever
    // mistaken, so those rows cannot be tested and are left out.
    for r in &all {
        let testable = r["testable"].as_bool().unwrap();
        assert_eq!(r["family_size"], 8, "{r}");
        assert_eq!(
            testable,
            r["scenario"].as_str().unwrap().starts_with("truth=false"),
            "{r}"
        );
        assert_eq!(r["p_adjusted"].is_null(), !testable, "{r}");
        // No claim says two arms cannot be told apart when the test says
        // they differ.
        let claim = r["claim"].as_str().unwrap();
        assert!(!claim.contains("cannot be told apart"), "{claim}");
    }
    // The worked example of the effect (lower is better; sesoi 0.05): the
    // t interval, the word, and TOST (its Holm p over the 8 rows).
    let four = |x: &Json| format!("{:+.4}", x.as_f64().unwrap());
    for (graph, arm, lo, hi, word) in [
        ("small_world", "source_aware", "+0.4266", "+0.4738", "worse"),
        ("small_world", "trust", "-0.0905", "-0.0571", "better"),
        ("hub", "trust", "-0.1646", "-0.0614", "better"),
        (
            "small_world",
            "fixed_allocation",
            "-0.0106",
            "-0.0010",
            "negligible",
        ),
    ] {
        let r = row(&all, &format!("truth=false, graph={graph}"), arm);
        assert_eq!(
            (
                four(&r["effect_ci_low"]).as_str(),
                four(&r["effect_ci_high"]).as_str()
            ),
            (lo, hi),
            "{graph} {arm}"
        );
        assert_eq!(
            (&r["effect_verdict"], &r["direction"]),
            (&word.into(), &"lower".into()),
            "{r}"
        );
        if word != "negligible" {
            let claim = r["claim"].as_str().unwrap();
            assert!(
                claim.contains(&format!("{word} by more than 0.05")),
                "{claim}"
            );
        }
    }
    let fixed = row(&all, "truth=false, graph=small_world", "fixed_allocation");
    let tost = fixed["tost_p_adjusted"].as_f64().unwrap();
    assert!((tost - 2.5e-13).abs() < 0.05e-13, "{fixed}");
    // Holm over the 8 testable rows, recomputed here: the k-th smallest p
    // times (8 - k), made monotone.
    let mut tested: Vec<(f64, f64)> = all
        .iter()
        .filter(|r| r["testable"] == true)
        .map(|r| {
            (
                r["p_value"].as_f64().unwrap(),
                r["p_adjusted"].as_f64().unwrap(),
            )
        })
        .collect();
    tested.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut running: f64 = 0.0;
    for (k, (p, adjusted)) in tested.iter().enumerate() {
        running = running.max(((8 - k) as f64 * p).min(1.0));
        assert!(
            (adjusted - running).abs() < 1e-15,
            "{k}: {adjusted} against {running}"
        );
    }
    let trust = row(&all, "truth=false, graph=small_world", "trust");
    assert!(
        trust["claim"]
            .as_str()
            .unwrap()
            .contains("differ on average"),
        "{trust}"
    );
    // Streams and p-values follow a row's content, not its place in the
    // table: keeping only the hub's false-report rows changes none of them.
    let hub = compare_rows(&out, &["--where", "graph=hub,truth=false"]);
    let numbers = |r: &Json| {
        [
            "p_value",
            "effect_mean",
            "effect_ci_low",
            "effect_ci_high",
            "flips",
            "similarity_mean",
        ]
        .map(|k| r[k].clone())
    };
    for r in &hub {
        let arm = r["arm"].as_str().unwrap();
        assert_eq!(
            numbers(r),
            numbers(row(&all, "truth=false, graph=hub", arm)),
            "{arm}"
        );
    }
}

#[test]
fn quorum_knobs_says_no_row_can_reach_holm_significance_and_how_many_seeds_would() {
    // 48 of its 96 rows are testable (on truth = true no run is ever
    // mistaken): Holm needs p <= 0.05 / 48, and 10 seeds allow 2 / 1024,
    // so 11 seeds are needed (2 / 2048 * 48 <= 0.05; decision 169).
    let tmp = tempfile::tempdir().unwrap();
    let out = shipped("quorum-knobs", tmp.path());
    let said = witness()
        .arg("compare")
        .arg(&out)
        .args(["--baseline", "endorsement"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&said.get_output().stdout).into_owned();
    assert!(
        stdout.contains("warning: no comparison can be significant here")
            && stdout.contains("run at least 11 seeds"),
        "{stdout}"
    );
    let doc: Json =
        serde_json::from_slice(&std::fs::read(out.join("compare.json")).unwrap()).unwrap();
    assert!(
        doc["warnings"][0].as_str().unwrap().contains("11 seeds"),
        "{doc}"
    );
}

#[test]
fn a_metric_without_bounds_is_compared_by_order_with_never_cleared_as_worst() {
    let tmp = tempfile::tempdir().unwrap();
    let out = shipped("compare-policies", tmp.path());
    let rows = compare_rows(&out, &["--metric", "first_clear_round"]);
    let doc: Json =
        serde_json::from_slice(&std::fs::read(out.join("compare.json")).unwrap()).unwrap();
    assert_eq!(doc["comparator_kind"], "ordinal");
    for r in &rows {
        assert_eq!(r["p_method"], "exact-sign-test", "{r}");
        assert_eq!(r["direction"], "lower", "{r}");
        assert_eq!(
            r["left_out"], 0,
            "never cleared is worst, not left out: {r}"
        );
        let nb = r["effect_mean"].as_f64().unwrap();
        assert!((-1.0..=1.0).contains(&nb), "{r}");
        if r["testable"] == true {
            let (lo, hi) = (
                r["effect_ci_low"].as_f64().unwrap(),
                r["effect_ci_high"].as_f64().unwrap(),
            );
            assert!(lo <= nb && nb <= hi, "{r}");
        }
    }
    // Trust-v1 clears the mistake sooner on every seed of small_world: a
    // net benefit of +1, 20 wins and no loss, sign test p = 2 / 2^20.
    let trust = row(&rows, "truth=false, graph=small_world", "trust");
    assert_eq!(trust["effect_mean"], 1.0, "{trust}");
    assert_eq!(trust["p_value"].as_f64().unwrap(), 2.0 / 1_048_576.0);
    assert_eq!(trust["effect_verdict"], "better", "{trust}");
    assert!(trust["median_diff"].as_f64().unwrap() < 0.0, "{trust}");
}
