//! Regressions of the runner found by attacking it: grids too large to
//! number, duplicated and damaged rows, placebos that copy their baseline,
//! no-op reruns that wrote, thread counts, unusable output folders, shard
//! counts (mixed, and far above the chunks), Ctrl-C (work too large for
//! memory is in `memory.rs`). Each bad input exits 2 with a message that
//! names it; nothing panics.

mod common;

use common::{data_files, run_ok, witness, write_manifest, SMALL};
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use std::path::Path;

const HEAD: &str = "[experiment]\nname = \"g\"\nmodel = \"witness\"\n";

fn plan_fails(text: &str, needles: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "g.toml", text);
    let out = witness().arg("plan").arg(&m).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
}

#[test]
fn grids_too_large_to_number_are_refused_with_their_true_size() {
    // 3,000,000^3 = 2.7e19 runs, past 2^64 (1.8e19).
    let big = "{ from = 2, to = 3000001 }";
    plan_fails(
        &format!("{HEAD}[grid]\nseed = {big}\nreplicate = {big}\ncommunities = {big}\n"),
        &["more runs than witness can number", "27000000000000000000"],
    );
    // A product far past 2^64 (2.7e21) is counted exactly, not wrapped.
    plan_fails(
        &format!("{HEAD}[grid]\nseed = {big}\nreplicate = {big}\ncommunities = {big}\nhub_links = {{ from = 1, to = 100 }}\n"),
        &["more runs than witness can number", "2700000000000000000000"],
    );
    // A range wider than i64 can subtract.
    plan_fails(
        &format!(
            "{HEAD}[grid]\nseed = {{ from = -9000000000000000000, to = 9000000000000000000 }}\n"
        ),
        &["malformed range"],
    );
    // Under 2^64 but over --max-runs: the exact size.
    plan_fails(
        &format!("{HEAD}[grid]\nseed = {big}\nreplicate = {{ from = 1, to = 1000 }}\n"),
        &[
            "3000000000 runs, over the limit of 10000000",
            "--max-runs 3000000000",
        ],
    );
}

#[test]
fn a_placebo_that_would_copy_its_baseline_is_refused() {
    let arm = "[[arm]]\nname = \"e\"\npolicy = \"endorsement\"\nplacebo = true\n";
    plan_fails(
        &format!("{HEAD}[grid]\nreplicate = [0, 1]\n{arm}"),
        &["`replicate`", "repeat its baseline"],
    );
    plan_fails(
        &format!("{HEAD}[fixed]\nreplicate = 1\n{arm}"),
        &["`replicate`", "remove `replicate` from [fixed]"],
    );
}

#[test]
fn duplicate_axis_values_and_reserved_arm_names_are_refused() {
    plan_fails(
        &format!("{HEAD}[grid]\nseed = [1, 1, 1]\n"),
        &["seed", "the value 1 is listed more than once"],
    );
    plan_fails(
        &format!("{HEAD}[grid]\ngain = [3, 3.0]\n"),
        &["gain", "listed more than once"],
    );
    plan_fails(
        &format!("{HEAD}[[arm]]\nname = \"e:placebo\"\npolicy = \"endorsement\"\n"),
        &["e:placebo", "':' is kept for the arms witness generates"],
    );
}

#[test]
fn plan_warns_when_a_common_axis_is_ignored_by_some_arms() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(
        tmp.path(),
        "w.toml",
        &format!("{HEAD}[fixed]\npopulation = 20\nrounds = 5\n[grid]\ngain = [3.0, 6.0]\n[[arm]]\nname = \"e\"\npolicy = \"endorsement\"\n[[arm]]\nname = \"r\"\npolicy = \"reserved\"\n"),
    );
    witness()
        .arg("plan")
        .arg(&m)
        .assert()
        .success()
        .stdout(contains("`gain` is not read by arm(s) r").and(contains("1 duplicate runs")));
}

#[test]
fn thread_counts_far_from_the_machine_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    for (threads, needle) in [
        ("0", "give at least 1"),
        ("1000", "give at most"),
        ("100000", "give at most"),
    ] {
        witness()
            .args(["run", "-q", "--threads", threads, "--out"])
            .arg(tmp.path().join("out"))
            .arg(&m)
            .assert()
            .code(2)
            .stderr(contains(needle));
    }
    assert!(
        !tmp.path().join("out").exists(),
        "a refused run made its folder"
    );
}

#[test]
fn output_folders_that_cannot_be_used_are_bad_input_named_once() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let long = tmp.path().join("x".repeat(300));
    let under_a_file = file.join("out");
    for (out, needle) in [
        (file.as_path(), "is a file, not a folder"),
        (
            under_a_file.as_path(),
            "hint: a parent of that path is a file",
        ),
        (Path::new("/dev/null"), "is a file, not a folder"),
        (long.as_path(), "File name too long"),
        (
            long.as_path(),
            "hint: the file system does not allow a name",
        ),
    ] {
        let o = witness()
            .args(["run", "-q", "--out"])
            .arg(out)
            .arg(&m)
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&o.get_output().stderr).to_string();
        assert!(err.contains(needle), "{err}");
        assert_eq!(
            err.matches("os error").count().min(1),
            err.matches("os error").count(),
            "{err}"
        );
    }
}

#[test]
fn a_rerun_of_a_complete_folder_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    let before = common::snapshot(&out);
    witness()
        .args(["run", "--out"])
        .arg(&out)
        .arg(&m)
        .assert()
        .success()
        .stderr(contains("already complete"));
    assert!(
        common::snapshot(&out) == before,
        "timing.json or another file was rewritten"
    );
}

#[test]
fn a_duplicated_run_row_fails_verify() {
    use witness::store::parquet;
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    let path = out.join("runs.parquet");
    let reader = parquet::open(&path).unwrap();
    let kv = reader.metadata.clone();
    let text = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    let manifest =
        witness::manifest::Manifest::parse("m.toml", &text, &witness::model::Registry::builtin())
            .unwrap();
    let columns = witness::runner::tables::runs_columns(&manifest);
    let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
    let mut rows: Vec<_> = reader
        .flat_map(|b| b.unwrap().rows(&names).unwrap())
        .collect();
    rows.insert(40, rows[40].clone());
    parquet::write(&path, &columns, [parquet::batch(&columns, &rows)], &kv).unwrap();
    witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .code(1)
        .stdout(contains("run 40 (reserved): stored 2 times").and(contains("rows 40, 41")));
}

#[test]
fn damaged_bytes_anywhere_fail_verify_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let out = tmp.path().join("clean");
    run_ok(&m, &out);
    let bytes = std::fs::read(out.join("runs.parquet")).unwrap();
    for k in 0..40 {
        let at = 4 + k * (bytes.len() - 8) / 40;
        let dir = tmp.path().join(format!("flip-{k}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in [
            "manifest.toml",
            "complete.json",
            "trajectories.parquet",
            "agents.parquet",
        ] {
            std::fs::copy(out.join(f), dir.join(f)).unwrap();
        }
        let mut b = bytes.clone();
        b[at] ^= 0x10;
        std::fs::write(dir.join("runs.parquet"), &b).unwrap();
        let o = witness().arg("verify").arg(&dir).output().unwrap();
        let said =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "byte {at}: {said}");
        assert!(!said.contains("panicked"), "byte {at}: {said}");
        assert!(said.contains("runs.parquet"), "byte {at}: {said}");
        // The analysis verbs refuse it too, and `run` makes the results
        // again rather than calling the folder complete.
        witness()
            .args(["summary", "--by", "arm"])
            .arg(&dir)
            .assert()
            .code(2)
            .stderr(contains("runs.parquet: its bytes are not the ones written"));
        witness()
            .args(["run", "--out"])
            .arg(&dir)
            .arg(&m)
            .assert()
            .success()
            .stderr(contains("the results were made again: "));
        assert!(data_files(&dir) == data_files(&out), "byte {at}");
    }
}

#[test]
fn analysis_verbs_refuse_a_folder_its_seal_no_longer_describes() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    // An edited manifest would relabel every group of the analysis.
    let manifest = out.join("manifest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("population = 60", "population = 70"),
    )
    .unwrap();
    witness()
        .args(["summary", "--by", "arm"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(
            contains("manifest.toml: changed since the results were written")
                .and(contains("put back the manifest the results were run from")),
        );
    std::fs::write(&manifest, &text).unwrap();
    witness().arg("summary").arg(&out).assert().success();
    // A seal whose run count was edited is named as such, not as a
    // changed manifest with two equal hashes.
    let seal = std::fs::read_to_string(out.join("complete.json")).unwrap();
    let runs = "\"runs\": 64";
    assert!(seal.contains(runs), "{seal}");
    std::fs::write(
        out.join("complete.json"),
        seal.replace(runs, "\"runs\": 65"),
    )
    .unwrap();
    witness()
        .arg("summary")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains(
            "complete.json: records 65 runs where its manifest has 64",
        ));
    std::fs::remove_file(out.join("complete.json")).unwrap();
    witness()
        .arg("summary")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(contains("complete.json: missing").and(contains("to rebuild the results")));
}

#[test]
fn shards_of_different_counts_merge_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let single = tmp.path().join("single");
    run_ok(&m, &single);
    let dir = tmp.path().join("mixed");
    // Shard 0 of 2 holds the even chunks, shards 1 and 3 of 4 the odd ones.
    for k in ["0/2", "1/4", "3/4"] {
        witness()
            .args(["run", "-q", "--shard", k, "--out"])
            .arg(&dir)
            .arg(&m)
            .assert()
            .success();
    }
    witness().args(["merge", "-q"]).arg(&dir).assert().success();
    let mut got = data_files(&dir);
    got.retain(|k, _| !k.starts_with("timing"));
    assert!(got == data_files(&single));
}

#[test]
fn shards_lists_only_the_shards_that_own_chunks_and_knows_a_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    // 16 chunks. A count far above them (a Slurm array larger than the
    // plan) once made `shards` allocate a state per shard and abort.
    let dir = tmp.path().join("huge");
    let n = u64::MAX.to_string();
    witness()
        .args(["run", "-q", "--shard", &format!("0/{n}"), "--out"])
        .arg(&dir)
        .arg(&m)
        .assert()
        .success();
    let out = witness()
        .args(["shards", "--json"])
        .arg(&dir)
        .assert()
        .code(1);
    let doc: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["count"], u64::MAX);
    assert_eq!(doc["shards"].as_array().unwrap().len(), 16);
    assert_eq!(doc["unfinished"].as_array().unwrap().len(), 15);
    witness()
        .args(["shards", "--count", "4294967296"])
        .arg(&dir)
        .assert()
        .code(1)
        .stdout(contains("shard 15/4294967296  missing").and(contains(
            "shards 16..4294967295 have no chunks (the plan has 16 chunks)",
        )));
    // A folder run whole, not in shards, is one shard of one.
    let whole = tmp.path().join("whole");
    run_ok(&m, &whole);
    witness()
        .arg("shards")
        .arg(&whole)
        .assert()
        .success()
        .stdout(contains("complete and merged; nothing is left to run"));
}

#[test]
fn a_forced_run_takes_the_old_analysis_outputs_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let other = write_manifest(
        tmp.path(),
        "o.toml",
        &SMALL.replace("rounds = 20", "rounds = 10"),
    );
    let out = tmp.path().join("out");
    run_ok(&other, &out);
    for f in [
        "compare.csv",
        "compare.json",
        "summary.csv",
        "rank.csv",
        "notes.txt",
    ] {
        std::fs::write(out.join(f), "old").unwrap();
    }
    std::fs::create_dir_all(out.join("plots")).unwrap();
    witness()
        .args(["run", "-q", "--force", "--out"])
        .arg(&out)
        .arg(&m)
        .assert()
        .success();
    for f in [
        "compare.csv",
        "compare.json",
        "summary.csv",
        "rank.csv",
        "plots",
    ] {
        assert!(
            !out.join(f).exists(),
            "{f} of the old results is still there"
        );
    }
    assert!(
        out.join("notes.txt").exists(),
        "a file of the user's was removed"
    );
}

#[test]
fn verify_says_what_it_checked_for_models_without_detail_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(
        tmp.path(),
        "h.toml",
        "[experiment]\nname = \"h\"\nmodel = \"hive\"\n[fixed]\nrooms = 20\n[grid]\nseed = [1, 2]\n",
    );
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    witness().arg("verify").arg(&out).assert().success().stdout(
        contains("no detail tables stored").and(contains("identities re-derived for 0").not()),
    );
}

#[test]
fn ctrl_c_stops_saves_and_says_how_to_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "[experiment]\nname = \"long\"\nmodel = \"witness\"\nchunk_runs = 4\n[fixed]\npopulation = 400\n[grid]\nseed = { from = 1, to = 4000 }\n";
    let m = write_manifest(tmp.path(), "long.toml", text);
    let out = tmp.path().join("out");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("witness"))
        .args(["run", "--threads", "1", "--out"])
        .arg(&out)
        .arg(&m)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let runs = out.join("parts/runs");
    let started = std::time::Instant::now();
    while std::fs::read_dir(&runs).map_or(0, |d| d.count()) < 2 {
        assert!(started.elapsed().as_secs() < 60, "no part written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted;") && err.contains("run the same command to resume"),
        "{err}"
    );
    assert!(!out.join("complete.json").exists());
    // The same command finishes it.
    witness()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&m)
        .assert()
        .success();
    witness().arg("verify").arg(&out).assert().success();
}
