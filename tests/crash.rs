//! A crash at any moment loses nothing. `run`, `merge` and a `--force`
//! replacement are killed with SIGKILL at every crash point they pass (the
//! test hook `WITNESS_CRASH_AFTER=N` counts them, so no timing is
//! involved), and running the same command again gives the bytes of an
//! uninterrupted run. Damaged, foreign and deleted files are healed or
//! refused the same way.

mod common;

use common::{data_files, witness, write_manifest, SMALL};
use predicates::prelude::PredicateBooleanExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

/// Runs `args` with a crash after `n` points; true when it was killed.
fn killed_at(args: &[&str], dir: &Path, n: u64) -> bool {
    let out = witness()
        .args(args)
        .arg(dir)
        .env("WITNESS_CRASH_AFTER", n.to_string())
        .output()
        .unwrap();
    match out.status.signal() {
        Some(9) => true,
        None if out.status.success() => false,
        other => panic!(
            "{args:?} at point {n}: {other:?}, {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn run_args<'a>(manifest: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["run", "-q", "--threads", "1"];
    a.extend_from_slice(extra);
    a.extend([manifest, "--out"]);
    a
}

#[test]
fn a_run_killed_at_any_point_resumes_to_the_uninterrupted_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let m = m.to_str().unwrap();
    let reference = tmp.path().join("reference");
    witness()
        .args(run_args(m, &[]))
        .arg(&reference)
        .assert()
        .success();
    let want = data_files(&reference);
    let mut points = 0;
    for n in 1.. {
        let dir = tmp.path().join(format!("killed-{n}"));
        if !killed_at(&run_args(m, &[]), &dir, n) {
            break;
        }
        points += 1;
        witness()
            .args(run_args(m, &[]))
            .arg(&dir)
            .assert()
            .success();
        assert!(
            data_files(&dir) == want,
            "resumed after point {n}: bytes differ"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
    // 16 chunks x 3 parts, the final tables, the seal and the removals.
    assert!(points > 60, "only {points} crash points");
}

#[test]
fn a_merge_killed_at_any_point_completes_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let m = m.to_str().unwrap();
    let reference = tmp.path().join("reference");
    witness()
        .args(run_args(m, &[]))
        .arg(&reference)
        .assert()
        .success();
    let want = data_files(&reference);
    let sharded = tmp.path().join("sharded");
    for k in ["0/2", "1/2"] {
        witness()
            .args(run_args(m, &["--shard", k]))
            .arg(&sharded)
            .assert()
            .success();
    }
    let mut points = 0;
    for n in 1.. {
        let dir = tmp.path().join(format!("merge-{n}"));
        std::fs::create_dir_all(&dir).unwrap();
        for e in walk(&sharded) {
            let to = dir.join(e.strip_prefix(&sharded).unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&e, &to).unwrap();
        }
        if !killed_at(&["merge", "-q"], &dir, n) {
            break;
        }
        points += 1;
        witness().args(["merge", "-q"]).arg(&dir).assert().success();
        let mut got = data_files(&dir);
        got.retain(|k, _| !k.starts_with("timing"));
        assert!(got == want, "merge resumed after point {n}: bytes differ");
    }
    assert!(points >= 8, "only {points} crash points");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

const OTHER: &str = r#"
[experiment]
name = "other"
model = "witness"
chunk_runs = 4
[fixed]
population = 40
rounds = 10
[grid]
seed = { from = 1, to = 8 }
"#;

#[test]
fn a_forced_replacement_keeps_the_old_results_until_the_new_ones_are_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let small = write_manifest(tmp.path(), "small.toml", SMALL);
    let other = write_manifest(tmp.path(), "other.toml", OTHER);
    let (small, other) = (small.to_str().unwrap(), other.to_str().unwrap());
    let reference = tmp.path().join("reference");
    witness()
        .args(run_args(small, &[]))
        .arg(&reference)
        .assert()
        .success();
    let want = data_files(&reference);
    let old = tmp.path().join("old");
    witness()
        .args(run_args(other, &[]))
        .arg(&old)
        .assert()
        .success();
    let old_files = data_files(&old);
    let mut points = 0;
    for n in 1.. {
        let dir = tmp.path().join(format!("forced-{n}"));
        copy_tree(&old, &dir);
        // Analysis outputs of the old results are replaced with them.
        std::fs::write(dir.join("summary.csv"), "old").unwrap();
        if !killed_at(&run_args(small, &["--force"]), &dir, n) {
            break;
        }
        points += 1;
        let mut now = data_files(&dir);
        now.retain(|k, _| !k.starts_with(".staging") && k != "summary.csv");
        // Until the new results are promoted the old ones stay whole.
        let old_manifest = now.get("manifest.toml") == old_files.get("manifest.toml");
        if old_manifest && now.contains_key("complete.json") {
            assert!(
                now == old_files,
                "old results damaged before promotion (point {n})"
            );
        }
        witness()
            .args(run_args(small, &["--force"]))
            .arg(&dir)
            .assert()
            .success();
        let got = data_files(&dir);
        assert!(
            got == want,
            "forced run resumed after point {n}: {:?}",
            got.keys().collect::<Vec<_>>()
        );
    }
    assert!(points > 60, "only {points} crash points");
}

fn copy_tree(from: &Path, to: &Path) {
    for e in walk(from) {
        let t = to.join(e.strip_prefix(from).unwrap());
        std::fs::create_dir_all(t.parent().unwrap()).unwrap();
        std::fs::copy(&e, &t).unwrap();
    }
}

#[test]
fn a_run_that_cannot_start_leaves_the_old_results_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let other = write_manifest(tmp.path(), "other.toml", OTHER);
    let small = write_manifest(tmp.path(), "small.toml", SMALL);
    let dir = tmp.path().join("old");
    common::run_ok(&other, &dir);
    let before = data_files(&dir);
    // A thread pool that cannot start (far more threads than cores).
    witness()
        .args(["run", "-q", "--force", "--threads", "100000", "--out"])
        .arg(&dir)
        .arg(&small)
        .assert()
        .code(2);
    assert!(data_files(&dir) == before);
    // Slurm's grant is checked the same way and named as the source; a
    // junk value is an error, not silently every core.
    for (value, says) in [
        ("100000", "SLURM_CPUS_PER_TASK=100000: this machine has"),
        ("lots", "SLURM_CPUS_PER_TASK=\"lots\": not a whole number"),
        ("0", "SLURM_CPUS_PER_TASK=0: give at least 1"),
    ] {
        for verb in [&["run", "-q", "--force", "--out"][..], &["plan"][..]] {
            let mut cmd = witness();
            cmd.env("SLURM_CPUS_PER_TASK", value).args(verb);
            if verb[0] == "run" {
                cmd.arg(&dir);
            }
            cmd.arg(&small).assert().code(2).stderr(
                predicates::str::contains(says)
                    .and(predicates::str::contains("`run --threads N` overrides it")),
            );
        }
    }
    assert!(data_files(&dir) == before);
}

#[test]
fn deleted_truncated_or_foreign_files_are_redone_not_called_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let reference = tmp.path().join("reference");
    common::run_ok(&m, &reference);
    let want = data_files(&reference);
    type Harm<'a> = (&'a str, &'a dyn Fn(&Path));
    let damage: [Harm; 3] = [
        ("deleted", &|d| {
            std::fs::remove_file(d.join("trajectories.parquet")).unwrap()
        }),
        ("truncated", &|d| {
            let f = d.join("agents.parquet");
            let bytes = std::fs::read(&f).unwrap();
            std::fs::write(&f, &bytes[..bytes.len() / 2]).unwrap();
        }),
        ("seal removed", &|d| {
            std::fs::remove_file(d.join("complete.json")).unwrap()
        }),
    ];
    for (what, harm) in damage {
        let dir = tmp.path().join(what.replace(' ', "-"));
        copy_tree(&reference, &dir);
        harm(&dir);
        witness()
            .args(["run", "--out"])
            .arg(&dir)
            .arg(&m)
            .assert()
            .success()
            .stderr(predicates::str::contains("already complete").not());
        assert!(
            data_files(&dir) == want,
            "{what}: not redone to the same bytes"
        );
    }
    // A part of another manifest, and a missing part, in an interrupted run.
    let other = write_manifest(tmp.path(), "other.toml", OTHER);
    let foreign = tmp.path().join("foreign");
    assert!(killed_at(
        &run_args(other.to_str().unwrap(), &[]),
        &foreign,
        6
    ));
    let dir = tmp.path().join("mixed");
    assert!(killed_at(&run_args(m.to_str().unwrap(), &[]), &dir, 30));
    let part = |d: &Path, t: &str| d.join("parts").join(t).join("chunk-00000000.parquet");
    std::fs::copy(part(&foreign, "trajectories"), part(&dir, "trajectories")).unwrap();
    std::fs::remove_file(dir.join("parts/agents/chunk-00000001.parquet")).unwrap();
    witness()
        .args(["run", "--threads", "1", "--out"])
        .arg(&dir)
        .arg(&m)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "2 chunk(s) had damaged parts and were run again",
        ));
    assert!(data_files(&dir) == want);
}

#[test]
fn a_final_table_that_cannot_be_written_is_named_and_the_run_resumes_later() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let m = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/manifests/small-runs-10000.toml");
    let reference = tmp.path().join("reference");
    common::run_ok(&m, &reference);
    // Files may not grow past 1 MiB: every part fits, the 4 MB
    // trajectory table does not, as on a disk that fills at the end.
    let dir = tmp.path().join("full");
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("witness"));
    cmd.args(["run", "-q", "--out"]).arg(&dir).arg(&m);
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1 << 20,
                rlim_max: 1 << 20,
            };
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("trajectories.parquet") && stderr.contains("File too large"),
        "{stderr}"
    );
    assert!(!stderr.contains("damaged"), "{stderr}");
    // With room again, the kept parts are assembled without a rerun.
    witness()
        .args(["run", "--out"])
        .arg(&dir)
        .arg(&m)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "(0 executed, 40 chunk(s) resumed)",
        ));
    assert!(data_files(&dir) == data_files(&reference));
}
