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
        err.contains("stopped by Ctrl-C") && err.contains("run the same command to resume"),
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

/// The folder's manifest, its tables, and the table named `name`.
fn table_of(out: &Path, name: &str) -> witness::runner::tables::Table {
    let text = std::fs::read_to_string(out.join("manifest.toml")).unwrap();
    let manifest =
        witness::manifest::Manifest::parse("m.toml", &text, &witness::model::Registry::builtin())
            .unwrap();
    witness::runner::tables::tables(&manifest)
        .into_iter()
        .find(|t| t.name == name)
        .unwrap()
}

/// Rewrites one float of a chunk's part, keeping its metadata (so its
/// footer still says it is this chunk's, with the digest of the rows it
/// had): only its rows tell.
fn nudge_a_value_of_part(out: &Path, table: &str, chunk: u64) {
    use witness::store::parquet;
    let t = table_of(out, table);
    let path = out
        .join("parts")
        .join(table)
        .join(format!("chunk-{chunk:08}.parquet"));
    let reader = parquet::open(&path).unwrap();
    let kv = reader.metadata.clone();
    let names = t.column_names();
    let mut rows: Vec<_> = reader
        .flat_map(|b| b.unwrap().rows(&names).unwrap())
        .collect();
    let column = t
        .columns
        .iter()
        .position(|c| c.ty == witness::model::ColType::Float && !c.nullable)
        .expect("a float column");
    let row = rows.len() / 2;
    let witness::params::Value::Float(x) = rows[row][column] else {
        panic!("not a float");
    };
    rows[row][column] = witness::params::Value::Float(x + 1.0);
    parquet::write(&path, &t.columns, [parquet::batch(&t.columns, &rows)], &kv).unwrap();
}

/// Two shards of SMALL (16 chunks: shard 1 of 2 owns the odd ones) into
/// `dir`, not merged.
fn two_shards(m: &Path, dir: &Path) {
    for k in ["0/2", "1/2"] {
        witness()
            .args(["run", "-q", "--shard", k, "--out"])
            .arg(dir)
            .arg(m)
            .assert()
            .success();
    }
}

fn stderr_of(o: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&o.get_output().stderr).to_string()
}

#[test]
fn a_shard_rerun_rewrites_a_missing_or_damaged_part_it_owns() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let single = tmp.path().join("single");
    run_ok(&m, &single);
    let dir = tmp.path().join("sharded");
    two_shards(&m, &dir);
    // One trajectories part of shard 1/2 goes; its runs part stays.
    std::fs::remove_file(dir.join("parts/trajectories/chunk-00000003.parquet")).unwrap();
    let o = witness().args(["merge", "-q"]).arg(&dir).assert().code(1);
    let err = stderr_of(&o);
    assert!(
        err.contains("chunk 3 (runs 12..16)") && err.contains("rerun the shards that own them"),
        "{err}"
    );
    let shards = witness().arg("shards").arg(&dir).output().unwrap();
    // Following the advice repairs it: the shard runs that chunk again.
    let o = witness()
        .args(["run", "--shard", "1/2", "--out"])
        .arg(&dir)
        .arg(&m)
        .assert()
        .success();
    let err = stderr_of(&o);
    assert!(
        err.contains("32 runs (4 executed, 7 chunk(s) resumed)"),
        "{err}"
    );
    assert!(err.contains("chunk 3 (runs 12..16)"), "{err}");
    // `shards` said which shard that was.
    let said = String::from_utf8_lossy(&shards.stdout);
    assert_eq!(shards.status.code(), Some(1), "{said}");
    assert!(
        said.contains("shard 0/2  complete") && said.contains("shard 1/2  partial (7 of 8 chunks)"),
        "{said}"
    );
    // A part whose rows were changed (its footer intact) is rewritten too.
    nudge_a_value_of_part(&dir, "runs", 5);
    let o = witness()
        .args(["run", "--shard", "1/2", "--out"])
        .arg(&dir)
        .arg(&m)
        .assert()
        .success();
    let err = stderr_of(&o);
    assert!(err.contains("(4 executed, 7 chunk(s) resumed)"), "{err}");
    assert!(err.contains("chunk 5 (runs 20..24)"), "{err}");
    witness().args(["merge", "-q"]).arg(&dir).assert().success();
    let mut got = data_files(&dir);
    got.retain(|k, _| !k.starts_with("timing"));
    assert!(got == data_files(&single), "the merged tables differ");
}

#[test]
fn run_and_merge_recompute_a_part_whose_rows_no_longer_match_its_digest() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let single = tmp.path().join("single");
    run_ok(&m, &single);
    // `run` on a folder of parts assembles them from their files.
    let dir = tmp.path().join("run");
    two_shards(&m, &dir);
    nudge_a_value_of_part(&dir, "trajectories", 5);
    let o = witness()
        .args(["run", "-q", "--out"])
        .arg(&dir)
        .arg(&m)
        .assert()
        .success();
    let err = stderr_of(&o);
    assert!(
        data_files(&dir) == data_files(&single),
        "the final tables hold the changed value"
    );
    assert!(
        err.contains("chunk 5 (runs 20..24)") && err.contains("digest"),
        "the damaged chunk is not named: {err}"
    );
    witness().arg("verify").arg(&dir).assert().success();
    // `merge` checks the digests too: it removes the chunk and says whose
    // shard to run again, which then repairs it.
    let dir = tmp.path().join("merged");
    two_shards(&m, &dir);
    nudge_a_value_of_part(&dir, "trajectories", 6);
    let o = witness().args(["merge", "-q"]).arg(&dir).assert().code(1);
    let err = stderr_of(&o);
    assert!(
        err.contains("chunk 6 (runs 24..28)") && err.contains("rerun the shards that own them"),
        "{err}"
    );
    assert!(!dir.join("complete.json").exists());
    witness()
        .args(["run", "-q", "--shard", "0/2", "--out"])
        .arg(&dir)
        .arg(&m)
        .assert()
        .success();
    witness().args(["merge", "-q"]).arg(&dir).assert().success();
    let mut got = data_files(&dir);
    got.retain(|k, _| !k.starts_with("timing"));
    assert!(got == data_files(&single), "the merged tables differ");
}

/// A lock file saying this test's own process (alive) runs `shard`.
fn hold_lock(dir: &Path, shard: &str) -> (std::path::PathBuf, String) {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into());
    let text = serde_json::json!({
        "host": host,
        "pid": std::process::id(),
        "start": 0,
        "since": 0,
    })
    .to_string();
    let path = dir.join(format!(".shard-{shard}.lock"));
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

#[test]
fn a_complete_folder_is_known_complete_before_any_lock_is_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "s.toml", SMALL);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    let before = common::snapshot(&out);
    // Whether or not permissions stop this user (root ignores them), a
    // lock held by a live process shows whether `run` goes for the lock:
    // it would wait for it or stop (exit 2). A complete folder needs none.
    for (shard, says) in [(None, "already complete"), (Some("1/2"), "already merged")] {
        let (lock, text) = hold_lock(&out, &shard.unwrap_or("0/1").replace('/', "-of-"));
        let mut cmd = witness();
        cmd.arg("run");
        if let Some(k) = shard {
            cmd.args(["--shard", k]);
        }
        let o = cmd.arg("--out").arg(&out).arg(&m).assert().success();
        assert!(stderr_of(&o).contains(says), "{}", stderr_of(&o));
        assert_eq!(
            std::fs::read_to_string(&lock).unwrap(),
            text,
            "the lock was touched"
        );
        std::fs::remove_file(&lock).unwrap();
    }
    assert!(common::snapshot(&out) == before, "the folder changed");
    // A read-only copy.
    let ro = tmp.path().join("read-only");
    std::fs::create_dir_all(&ro).unwrap();
    for (name, bytes) in &before {
        std::fs::write(ro.join(name), bytes).unwrap();
    }
    let chmod = |mode: &str| {
        assert!(std::process::Command::new("chmod")
            .args(["-R", mode])
            .arg(&ro)
            .status()
            .unwrap()
            .success());
    };
    chmod("a-w");
    let probe = ro.join("probe");
    if std::fs::write(&probe, "x").is_ok() {
        // Root: permission bits stop no write; the held lock above is
        // what shows no lock is taken.
        let _ = std::fs::remove_file(&probe);
        eprintln!("note: running as a user whom permissions do not stop (root); the read-only run is covered by the held lock");
    } else {
        let o = witness().args(["run", "--out"]).arg(&ro).arg(&m).assert();
        let code = o.get_output().status.code();
        let err = stderr_of(&o);
        chmod("u+w");
        assert_eq!(code, Some(0), "{err}");
        assert!(err.contains("already complete"), "{err}");
    }
    chmod("u+w");
}
