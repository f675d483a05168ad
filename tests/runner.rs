//! The runner end to end, mostly through the CLI: byte-identical results
//! for any thread count, after SIGKILL and resume, after shards and merge,
//! and whether the final tables were written during the run or after it;
//! verify catching tampering; the shipped sweep.

mod common;

use common::{data_files, run_ok, witness, write_manifest, SMALL};
use predicates::prelude::PredicateBooleanExt;
use std::time::{Duration, Instant};

#[test]
fn results_are_byte_identical_for_1_2_and_8_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let mut outputs = Vec::new();
    for threads in ["1", "2", "8"] {
        let out = tmp.path().join(format!("t{threads}"));
        witness()
            .args(["run", "-q", "--threads", threads, "--out"])
            .arg(&out)
            .arg(&m)
            .assert()
            .success();
        outputs.push(data_files(&out));
    }
    let names: Vec<&String> = outputs[0].keys().collect();
    assert_eq!(
        names,
        [
            "agents.parquet",
            "complete.json",
            "manifest.toml",
            "runs.parquet",
            "trajectories.parquet"
        ]
    );
    assert!(
        outputs[0] == outputs[1] && outputs[1] == outputs[2],
        "outputs differ between thread counts"
    );
}

/// The final tables are written while the chunks run: on one thread
/// every chunk is in them by the time the last one finishes. Shards
/// stream nothing (`merge` assembles them from the parts), and both give
/// the same bytes.
#[test]
fn final_tables_written_during_the_run_equal_ones_assembled_from_parts() {
    use witness::runner::{execute, merge, Options, Shard};
    let tmp = tempfile::tempdir().unwrap();
    let registry = witness::model::Registry::builtin();
    let manifest = witness::manifest::Manifest::parse("small.toml", SMALL, &registry).unwrap();
    let plan = witness::grid::Plan::new(manifest).unwrap();
    assert!(plan.chunk_count() > 1);
    let streamed = tmp.path().join("streamed");
    let opts = Options {
        threads: Some(1),
        ..Options::default()
    };
    let report = execute(&plan, &streamed, &opts, &|_| {}).unwrap();
    assert_eq!(report.streamed, plan.chunk_count());
    let sharded = tmp.path().join("sharded");
    for index in 0..2 {
        let opts = Options {
            shard: Some(Shard { index, count: 2 }),
            ..Options::default()
        };
        let report = execute(&plan, &sharded, &opts, &|_| {}).unwrap();
        assert_eq!(report.streamed, 0);
    }
    merge(&sharded, &registry).unwrap();
    assert!(data_files(&streamed) == data_files(&sharded));
}

#[test]
fn shards_plus_merge_equal_a_single_run() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let single = tmp.path().join("single");
    run_ok(&m, &single);
    let sharded = tmp.path().join("sharded");
    // A file another shard is writing at this moment: no shard may remove
    // it (only merge, when every shard is done).
    let in_flight = sharded.join("parts/runs/.chunk-00000003.parquet.tmp4242");
    for k in 0..4 {
        witness()
            .args(["run", "-q", "--shard", &format!("{k}/4"), "--out"])
            .arg(&sharded)
            .arg(&m)
            .assert()
            .success();
        if k == 0 {
            std::fs::write(&in_flight, b"half a part").unwrap();
        }
        assert!(
            k == 0 || in_flight.exists(),
            "shard {k} removed another's file"
        );
        if k == 1 {
            witness()
                .args(["merge"])
                .arg(&sharded)
                .assert()
                .code(1)
                .stderr(predicates::str::contains("chunks are missing"));
        }
    }
    assert!(
        !sharded.join("runs.parquet").exists(),
        "a shard of several must not assemble"
    );
    witness().args(["merge"]).arg(&sharded).assert().success();
    assert!(
        data_files(&single) == data_files(&sharded),
        "merged shards differ from a single run"
    );
    assert!(!sharded.join("parts").exists());
    assert!(!in_flight.exists(), "merge clears what a killed shard left");
    // A shard run again in the merged folder (a resubmitted array task)
    // finds its runs there and changes nothing.
    let merged = common::snapshot(&sharded);
    witness()
        .args(["run", "--shard", "2/4", "--out"])
        .arg(&sharded)
        .arg(&m)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "shard 2/4: its 16 runs are already merged into",
        ));
    assert!(
        common::snapshot(&sharded) == merged,
        "the merged folder changed"
    );
}

#[test]
fn a_run_killed_mid_way_resumes_to_identical_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let text = SMALL
        .replace("population = 60", "population = 4000")
        .replace("rounds = 20", "rounds = 60")
        .replace("chunk_runs = 4", "chunk_runs = 1");
    let m = write_manifest(tmp.path(), "heavy.toml", &text);
    let clean = tmp.path().join("clean");
    run_ok(&m, &clean);

    let killed = tmp.path().join("killed");
    let bin = assert_cmd::cargo::cargo_bin("witness");
    let mut child = std::process::Command::new(bin)
        .args(["run", "-q", "--threads", "1", "--out"])
        .arg(&killed)
        .arg(&m)
        .spawn()
        .unwrap();
    // Finished chunks: those with every table's part in place (a part
    // being written is a hidden temporary, and a chunk's tables are
    // committed one after another, so one table's count alone can run
    // ahead of every finished chunk on a busy machine).
    let finished = |dir: &std::path::Path| -> usize {
        ["runs", "trajectories"]
            .iter()
            .map(|t| {
                std::fs::read_dir(dir.join("parts").join(t)).map_or(0, |d| {
                    d.flatten()
                        .filter(|e| e.file_name().to_string_lossy().starts_with("chunk-"))
                        .count()
                })
            })
            .min()
            .unwrap_or(0)
    };
    let started = Instant::now();
    while finished(&killed) < 3 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no parts appeared"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    assert!(
        !killed.join("runs.parquet").exists(),
        "the run finished before it was killed; make it heavier"
    );

    let out = witness()
        .args(["run", "--out"])
        .arg(&killed)
        .arg(&m)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(
        !said.contains(" 0 chunk(s) resumed"),
        "nothing was resumed: {said}"
    );
    assert!(
        data_files(&clean) == data_files(&killed),
        "resumed results differ from an uninterrupted run"
    );
}

#[test]
fn rerunning_a_finished_experiment_does_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    let before = data_files(&out);
    witness()
        .args(["run", "--out"])
        .arg(&out)
        .arg(&m)
        .assert()
        .success()
        .stderr(predicates::str::contains("already complete"));
    assert!(before == data_files(&out));
}

#[test]
fn verify_passes_on_fresh_results_and_names_a_tampered_run() {
    use witness::params::Value;
    use witness::store::parquet;
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let out = tmp.path().join("out");
    run_ok(&m, &out);
    witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains("64 runs replayed identically"));

    // Change one stored belief in run 9's summary, keeping the metadata.
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
    let col = names.iter().position(|n| *n == "peak_brier").unwrap();
    if let Value::Float(x) = &mut rows[9][col] {
        *x += 1e-6;
    }
    parquet::write(&path, &columns, [parquet::batch(&columns, &rows)], &kv).unwrap();
    witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .code(1)
        .stdout(
            predicates::str::contains("run 9 (endorsement): ").and(predicates::str::contains(
                "runs.parquet, row 9, column peak_brier",
            )),
        );
}

#[test]
fn the_recorded_540_run_sweep_writes_540_runs_and_verifies() {
    use witness::store::parquet;
    let tmp = tempfile::tempdir().unwrap();
    let m = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/sweep-540.toml");
    let out = tmp.path().join("sweep");
    run_ok(&m, &out);
    let count = |name: &str| -> usize {
        let reader = parquet::open(&out.join(name)).unwrap();
        reader.map(|b| b.unwrap().num_rows()).sum()
    };
    assert_eq!(count("runs.parquet"), 540);
    assert_eq!(count("trajectories.parquet"), 540 * 61);
    witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn shards_says_which_are_missing_and_its_command_finishes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let single = tmp.path().join("single");
    run_ok(&m, &single);
    let dir = tmp.path().join("sharded");
    // Nothing run yet: the count is unknown until given.
    witness()
        .args(["run", "-q", "--shard", "1/3", "--out"])
        .arg(&dir)
        .arg(&m)
        .assert()
        .success();
    std::fs::remove_file(dir.join("timing-shard-1-of-3.json")).unwrap();
    witness()
        .arg("shards")
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("pass --count N"));
    // No chunk in yet (a shard killed before its first): every shard missing.
    let none = tmp.path().join("none");
    std::fs::create_dir(&none).unwrap();
    std::fs::copy(dir.join("manifest.toml"), none.join("manifest.toml")).unwrap();
    witness()
        .args(["shards", "--count", "3"])
        .arg(&none)
        .assert()
        .code(1)
        .stdout(predicates::str::contains("shard 0/3  missing"))
        .stdout(predicates::str::contains("shard 2/3  missing"))
        .stdout(predicates::str::contains("for k in 0 1 2; do"));
    witness()
        .args(["shards", "--count", "3"])
        .arg(&dir)
        .assert()
        .code(1)
        .stdout(predicates::str::contains("shard 0/3  missing"))
        .stdout(predicates::str::contains("shard 1/3  complete"));
    // One more shard done: the count is recorded, and the printed command
    // (run as printed, by a shell) finishes the rest.
    witness()
        .args(["run", "-q", "--shard", "2/3", "--out"])
        .arg(&dir)
        .arg(&m)
        .env("SLURM_JOB_ID", "7")
        .assert()
        .success();
    let out = witness().arg("shards").arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let json = witness()
        .args(["shards", "--json"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(json.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["unfinished"], serde_json::json!([0]));
    assert_eq!(doc["engine"], "slurm");
    assert_eq!(doc["shards"][1]["done"], doc["shards"][1]["chunks"]);
    // The engine a shard ran under comes first.
    let first = text.lines().find(|l| l.starts_with("  ")).unwrap();
    assert!(
        first.contains("Slurm:") && first.contains("--array=0 "),
        "{text}"
    );
    let command = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("one machine:"))
        .unwrap()
        .trim()
        .to_string();
    assert!(command.contains("for k in 0; do"), "{command}");
    let bin = assert_cmd::cargo::cargo_bin("witness");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let ran = std::process::Command::new("sh")
        .args(["-c", &command])
        .env("PATH", path)
        .status()
        .unwrap();
    assert!(ran.success());
    witness()
        .arg("shards")
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicates::str::contains("every shard is complete"));
    witness().arg("merge").arg(&dir).assert().success();
    witness()
        .arg("shards")
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicates::str::contains("merged"));
    assert!(data_files(&single) == data_files(&dir));
}

/// Two processes on one results folder: different shards at once merge to
/// a single run's bytes; the same shard twice is refused while the first
/// runs (exit 2, naming it), or waits with --wait.
#[test]
fn concurrent_shards_share_a_folder_and_one_shard_runs_once() {
    let tmp = tempfile::tempdir().unwrap();
    let text = SMALL
        .replace("population = 60", "population = 6000")
        .replace("rounds = 20", "rounds = 40")
        .replace("chunk_runs = 4", "chunk_runs = 1");
    let m = write_manifest(tmp.path(), "heavy.toml", &text);
    let single = tmp.path().join("single");
    run_ok(&m, &single);
    let dir = tmp.path().join("shared");
    let bin = assert_cmd::cargo::cargo_bin("witness");
    let start = |shard: &str, wait: bool| {
        let mut c = std::process::Command::new(&bin);
        c.args(["run", "-q", "--threads", "1", "--shard", shard, "--out"])
            .arg(&dir)
            .arg(&m);
        if wait {
            c.arg("--wait");
        }
        c.stderr(std::process::Stdio::piped()).spawn().unwrap()
    };
    let first = start("0/2", false);
    let other = start("1/2", false);
    let lock = dir.join(".shard-0-of-2.lock");
    let t = Instant::now();
    while !lock.exists() {
        assert!(t.elapsed() < Duration::from_secs(30), "no lock appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    let twice = std::process::Command::new(&bin)
        .args(["run", "-q", "--shard", "0/2", "--out"])
        .arg(&dir)
        .arg(&m)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&twice.stderr);
    assert_eq!(twice.status.code(), Some(2), "{err}");
    assert!(err.contains("shard 0/2 is being run by pid"), "{err}");
    let waited = start("0/2", true);
    for mut c in [first, other, waited] {
        let out = c.wait().unwrap();
        assert!(out.success());
    }
    assert!(!lock.exists(), "the lock goes with its holder");
    witness().arg("merge").arg(&dir).assert().success();
    assert!(data_files(&single) == data_files(&dir));
}
