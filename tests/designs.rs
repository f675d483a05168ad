//! `[design]` tables through the CLI: listed points (inline and from a CSV
//! file whose bytes are part of the manifest's identity), sampled designs
//! crossed with the grid and the arms, the `design_point` column, and the
//! grid's step and count ranges.

mod common;

use common::{data_files, run_ok, snapshot, witness, write_manifest};
use predicates::prelude::PredicateBooleanExt;
use std::os::unix::process::ExitStatusExt;
use witness::manifest::Manifest;
use witness::model::Registry;
use witness::params::Value;

const HEAD: &str =
    "[experiment]\nname = \"d\"\nmodel = \"witness\"\n[fixed]\npopulation = 40\nrounds = 10\n";

fn runs(dir: &std::path::Path, columns: &[&str]) -> Vec<Vec<Value>> {
    witness::store::parquet::read_columns(&dir.join("runs.parquet"), columns).unwrap()
}

#[test]
fn grid_ranges_take_a_step_or_a_count() {
    let text = format!(
        "{HEAD}[grid]\ngain = {{ from = 1.0, to = 2.0, step = 0.25 }}\n\
         communication = {{ from = 0.1, to = 0.3, step = 0.1 }}\n\
         report_fraction = {{ from = 0.0, to = 1.0, count = 3 }}\n\
         check_delay = {{ from = 0, to = 6, count = 4 }}\n"
    );
    let m = Manifest::parse("t.toml", &text, &Registry::builtin()).unwrap();
    let values =
        |k: usize| -> Vec<String> { m.common[k].values.iter().map(|v| v.to_string()).collect() };
    assert_eq!(values(0), ["1.0", "1.25", "1.5", "1.75", "2.0"]);
    // Rounded to the decimals written, not 0.30000000000000004.
    assert_eq!(values(1), ["0.1", "0.2", "0.3"]);
    assert_eq!(values(2), ["0.0", "0.5", "1.0"]);
    assert_eq!(values(3), ["0", "2", "4", "6"]);
    // Integer ranges stay exact far beyond a float's 53 bits.
    let big =
        format!("{HEAD}[grid]\nseed = {{ from = 9007199254740993, to = 9007199254740995 }}\n");
    let m = Manifest::parse("t.toml", &big, &Registry::builtin()).unwrap();
    let seeds: Vec<String> = m.common[0].values.iter().map(|v| v.to_string()).collect();
    assert_eq!(
        seeds,
        ["9007199254740993", "9007199254740994", "9007199254740995"]
    );
    // A step that would pass `to` once rounded stops short of it.
    let near =
        format!("{HEAD}[grid]\ngain = {{ from = 0.0, to = 0.99999999999999, step = 0.1 }}\n");
    let m = Manifest::parse("t.toml", &near, &Registry::builtin()).unwrap();
    assert_eq!(m.common[0].values.last().unwrap().to_string(), "0.9");
}

#[test]
fn listed_points_are_crossed_with_seeds_and_arms_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "{HEAD}[grid]\nseed = [1, 2, 3]\n[design]\nkind = \"list\"\n\
         points = [{{ gain = 3.0, communication = 0.5 }}, {{ communication = 0.9, gain = 9 }}]\n\
         [[arm]]\nname = \"e\"\npolicy = \"endorsement\"\nplacebo = true\n\
         [[arm]]\nname = \"s\"\npolicy = \"source_aware\"\n"
    );
    let m = write_manifest(tmp.path(), "list.toml", &text);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    let cols = runs(
        &out,
        &["arm", "design_point", "gain", "communication", "seed"],
    );
    // 3 arms (the placebo too) x 2 points x 3 seeds, seeds fastest.
    assert_eq!(cols[0].len(), 18);
    let row = |i: usize| -> Vec<String> { cols.iter().map(|c| c[i].plain()).collect() };
    assert_eq!(row(0), ["e", "0", "3.0", "0.5", "1"]);
    assert_eq!(row(3), ["e", "1", "9.0", "0.9", "1"]);
    assert_eq!(row(17), ["s", "1", "9.0", "0.9", "3"]);
    witness().arg("verify").arg(&out).assert().success();
    // compare pairs runs on the design point and the seed.
    witness()
        .args(["compare", "--baseline", "e"])
        .arg(&out)
        .assert()
        .success();
    let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    assert!(
        csv.lines().nth(1).unwrap().contains(",6,"),
        "6 pairs: {csv}"
    );
    // The same point twice (3 is 3.0 to gain) would repeat runs and keys.
    let twice = text
        .replace("gain = 9 }", "gain = 3 }")
        .replace("communication = 0.9", "communication = 0.5");
    let m = write_manifest(tmp.path(), "twice.toml", &twice);
    witness()
        .arg("plan")
        .arg(&m)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "point 2 repeats point 1; list each point once",
        ));
}

#[test]
fn a_points_file_is_part_of_the_manifest_and_kept_with_the_results() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("points.csv"),
        "gain,graph\n3.0,hub\n6,ring\n",
    )
    .unwrap();
    let text = format!("{HEAD}[design]\nkind = \"list\"\nfile = \"points.csv\"\n");
    let m = write_manifest(tmp.path(), "file.toml", &text);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    assert_eq!(
        std::fs::read(out.join("points.csv")).unwrap(),
        std::fs::read(tmp.path().join("points.csv")).unwrap()
    );
    let cols = runs(&out, &["design_point", "gain", "graph"]);
    assert_eq!(
        cols[2],
        [Value::Str("hub".into()), Value::Str("ring".into())]
    );
    // The folder alone is enough: verify re-reads the copy.
    std::fs::remove_file(tmp.path().join("points.csv")).unwrap();
    witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .success();
    // Other points under the same manifest text are another experiment.
    std::fs::write(
        tmp.path().join("points.csv"),
        "gain,graph\n4.0,hub\n6,ring\n",
    )
    .unwrap();
    let before = snapshot(&out);
    witness()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&m)
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("another manifest")
                .and(predicates::str::contains("points.csv differs")),
        );
    assert!(snapshot(&out) == before, "a refused run touched the folder");
    witness()
        .args(["run", "-q", "--force", "--out"])
        .arg(&out)
        .arg(&m)
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(out.join("points.csv")).unwrap(),
        "gain,graph\n4.0,hub\n6,ring\n"
    );
    assert_eq!(runs(&out, &["gain"])[0][0], Value::Float(4.0));
    witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .success();
    // The folder's copy deleted or edited: verify finds the results
    // damaged (exit 1), the analysis verbs refuse them (exit 2), and
    // running the manifest again puts the copy back, nothing rerun.
    let kept = std::fs::read(out.join("points.csv")).unwrap();
    type Harm<'a> = (&'a dyn Fn(), &'a str);
    let harms: [Harm; 2] = [
        (
            &|| std::fs::remove_file(out.join("points.csv")).unwrap(),
            "copy of the design's points file is gone",
        ),
        (
            &|| std::fs::write(out.join("points.csv"), "gain,graph\n5.0,hub\n6,ring\n").unwrap(),
            "or the copy of points.csv beside it, changed since the results were written",
        ),
    ];
    for (harm, says) in harms {
        harm();
        witness().arg("verify").arg(&out).assert().code(1);
        witness()
            .arg("summary")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
        witness()
            .args(["run", "--out"])
            .arg(&out)
            .arg(&m)
            .assert()
            .success()
            .stderr(predicates::str::contains("already complete"));
        assert_eq!(std::fs::read(out.join("points.csv")).unwrap(), kept);
    }
    // `design --out` may not replace the points file the manifest reads,
    // nor write into a results folder.
    for target in [
        tmp.path().join("points.csv"),
        out.join("points.csv"),
        out.join("d.csv"),
    ] {
        let before = snapshot(tmp.path());
        witness()
            .arg("design")
            .arg(&m)
            .arg("--out")
            .arg(&target)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("write the points elsewhere"));
        assert!(snapshot(tmp.path()) == before, "{}", target.display());
    }
    // A missing column is an error naming the file's line.
    std::fs::write(tmp.path().join("points.csv"), "gain,graph\n4.0,hub\n5.0\n").unwrap();
    witness()
        .arg("plan")
        .arg(&m)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("points.csv").and(predicates::str::contains("line 3")));
    // A bad value is named by its line in the file.
    std::fs::write(
        tmp.path().join("points.csv"),
        "gain,graph\n4.0,hub\n-6,ring\n",
    )
    .unwrap();
    witness().arg("plan").arg(&m).assert().code(2).stderr(
        predicates::str::contains("points.csv: point 2 (line 3)")
            .and(predicates::str::contains("`gain` = -6")),
    );
}

#[test]
fn plan_describes_a_sampled_design_and_warns_of_factors_an_arm_ignores() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "{HEAD}[grid]\nseed = [1, 2]\n[design]\nkind = \"lhs\"\nsamples = 5\nseed = 9\n\
         [design.factors]\ngain = {{ from = 1.0, to = 100.0, log = true }}\ncheck_delay = {{ from = 0, to = 4 }}\n\
         [[arm]]\nname = \"e\"\npolicy = \"endorsement\"\n[[arm]]\nname = \"r\"\npolicy = \"reserved\"\n"
    );
    let m = write_manifest(tmp.path(), "lhs.toml", &text);
    let assert = witness().arg("plan").arg(&m).assert().success();
    let out = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    for needle in [
        "runs       20 ",
        "lhs over 2 parameter(s): Latin hypercube, 5 samples, seed 9",
        "factor gain 1.0 ..= 100.0, log-uniform",
        "factor check_delay 0 ..= 4, uniform, integer",
        "[design] `gain` is not read by arm(s) r",
    ] {
        assert!(out.contains(needle), "expected {needle:?} in:\n{out}");
    }
    // The points: one per stratum of each factor, in the log for gain.
    let assert = witness()
        .args(["design", "--unit"])
        .arg(&m)
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&assert.get_output().stdout).to_string();
    let mut strata: Vec<usize> = csv
        .lines()
        .skip(1)
        .map(|l| (l.split(',').nth(1).unwrap().parse::<f64>().unwrap() * 5.0) as usize)
        .collect();
    strata.sort_unstable();
    assert_eq!(strata, [0, 1, 2, 3, 4]);
    witness()
        .arg("design")
        .arg(tmp.path().join("nowhere.toml"))
        .assert()
        .code(2);
    // --out naming the manifest itself would replace it with the CSV.
    let before = std::fs::read(&m).unwrap();
    witness()
        .arg("design")
        .arg(&m)
        .arg("--out")
        .arg(&m)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("the manifest reads that file"));
    assert_eq!(std::fs::read(&m).unwrap(), before);
}

#[test]
fn sensitivity_refuses_a_folder_without_a_sampled_design() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(
        tmp.path(),
        "grid.toml",
        &format!("{HEAD}[grid]\nseed = [1, 2]\n"),
    );
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    witness()
        .arg("sensitivity")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("no [design]")
                .and(predicates::str::contains("kind = \"sobol\"")),
        );
}

#[test]
fn sensitivity_names_the_fix_for_a_wrong_method_or_axis() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "{HEAD}[grid]\nseed = [1, 2]\ntruth = [false, true]\n[design]\nkind = \"morris\"\ntrajectories = 4\n\
         [design.factors]\ngain = {{ from = 1.0, to = 9.0 }}\ncommunication = {{ from = 0.2, to = 0.9 }}\n"
    );
    let m = write_manifest(tmp.path(), "morris.toml", &text);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    witness()
        .args(["sensitivity", "--method", "sobol"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("kind = \"morris\""));
    witness()
        .args(["sensitivity", "--by", "graph"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("--by graph")
                .and(predicates::str::contains("allowed: truth")),
        );
    // 39 resamples' 95 % interval would be their whole range; 40 trims one each end.
    witness()
        .args(["sensitivity", "--resamples", "39"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--resamples 39: a 95 % interval needs at least 40",
        ));
    // A count past any use would hold gigabytes (or overflow): refused.
    for huge in ["100001", "18446744073709551615"] {
        witness()
            .args(["sensitivity", "--resamples", huge])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("at most 100000"));
    }
    witness()
        .args(["sensitivity", "--resamples", "40"])
        .arg(&out)
        .assert()
        .success();
    // Per truth value by default; pooled over truth with --by "".
    witness().arg("sensitivity").arg(&out).assert().success();
    let csv = std::fs::read_to_string(out.join("sensitivity.csv")).unwrap();
    assert!(
        csv.contains("truth=false,default,peak_mistaken,mu_star,gain"),
        "{csv}"
    );
    assert!(csv.contains("truth=true,"), "{csv}");
    witness()
        .args(["sensitivity", "--by", ""])
        .arg(&out)
        .assert()
        .success();
    let csv = std::fs::read_to_string(out.join("sensitivity.csv")).unwrap();
    assert!(
        csv.lines().nth(1).unwrap().starts_with(",default,"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 1 + 2 * 3, "{csv}");
}

#[test]
fn every_design_kind_gives_the_same_bytes_on_any_threads_shards_and_after_a_kill() {
    let kinds = [
        "kind = \"list\"\npoints = [{ gain = 3.0, check_delay = 1 }, { gain = 9.0, check_delay = 4 }]",
        "kind = \"lhs\"\nsamples = 6\nseed = 4\n[design.factors]\ngain = { from = 1.0, to = 9.0 }\ncheck_delay = { from = 0, to = 5 }",
        "kind = \"sobol\"\nbase = 8\n[design.factors]\ngain = { from = 1.0, to = 9.0, log = true }\ncheck_delay = { from = 0, to = 5 }",
        "kind = \"morris\"\ntrajectories = 3\n[design.factors]\ngain = { from = 1.0, to = 9.0 }\ncheck_delay = { from = 0, to = 5 }",
    ];
    for design in kinds {
        let tmp = tempfile::tempdir().unwrap();
        let text = format!(
            "[experiment]\nname = \"k\"\nmodel = \"witness\"\nchunk_runs = 5\n[fixed]\npopulation = 30\nrounds = 8\n\
             [grid]\nseed = [1, 2]\n[design]\n{design}\n\
             [[arm]]\nname = \"e\"\npolicy = \"endorsement\"\n[[arm]]\nname = \"s\"\npolicy = \"source_aware\"\n"
        );
        let m = write_manifest(tmp.path(), "k.toml", &text);
        let run = |dir: &std::path::Path, extra: &[&str]| {
            witness()
                .args(["run", "-q"])
                .args(extra)
                .arg("--out")
                .arg(dir)
                .arg(&m)
                .assert()
                .success();
        };
        let one = tmp.path().join("one");
        run(&one, &["--threads", "1"]);
        let two = tmp.path().join("two");
        run(&two, &["--threads", "2"]);
        let sharded = tmp.path().join("sharded");
        for k in ["0/3", "1/3", "2/3"] {
            run(&sharded, &["--shard", k]);
        }
        witness()
            .args(["merge", "-q"])
            .arg(&sharded)
            .assert()
            .success();
        // Killed (SIGKILL) after the third crash point, then resumed.
        let killed = tmp.path().join("killed");
        let out = witness()
            .args(["run", "-q", "--out"])
            .arg(&killed)
            .arg(&m)
            .env("WITNESS_CRASH_AFTER", "3")
            .output()
            .unwrap();
        assert_eq!(out.status.signal(), Some(9), "{design}: not killed");
        run(&killed, &[]);
        let want = data_files(&one);
        assert!(!want.is_empty());
        for other in [&two, &sharded, &killed] {
            assert!(
                data_files(other) == want,
                "{design}: {} differs",
                other.display()
            );
        }
    }
}
