//! Where the output goes. A standard output that cannot be written (a full
//! disk, `> /dev/full`) is an error every verb reports with exit 2, not a
//! panic. A file named by `--export` or `--out` that is a symlink or a FIFO
//! stays one: the content goes through it.

mod common;

use common::{run_ok, write_manifest, SMALL};
use std::path::Path;
use std::process::{Command, Stdio};

const HIVE: &str = r#"
[experiment]
name = "tiny-hive"
model = "hive"
[fixed]
rooms = 40
[grid]
seed = [1, 2]
[[arm]]
name = "hive+"
policy = "hive+"
[[arm]]
name = "vote"
policy = "vote"
"#;

/// Runs witness with standard output on /dev/full; its exit code and
/// standard error.
fn into_full_stdout(args: &[&str], cwd: &Path) -> (Option<i32>, String) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = Command::new(assert_cmd::cargo::cargo_bin("witness"))
        .args(args)
        .current_dir(cwd)
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
#[cfg(target_os = "linux")]
fn every_verb_that_prints_exits_2_on_a_full_standard_output() {
    let tmp = tempfile::tempdir().unwrap();
    // compare needs the baseline's placebo runs.
    let text = SMALL.replace(
        "policy = \"endorsement\"\n",
        "policy = \"endorsement\"\nplacebo = true\n",
    );
    assert_ne!(text, SMALL);
    let manifest = write_manifest(tmp.path(), "small.toml", &text);
    let dir = tmp.path().join("res");
    run_ok(&manifest, &dir);
    let hive = tmp.path().join("hive");
    run_ok(&write_manifest(tmp.path(), "hive.toml", HIVE), &hive);
    let d = dir.to_str().unwrap();
    let m = manifest.to_str().unwrap();
    let verbs: Vec<Vec<&str>> = vec![
        vec!["describe"],
        vec!["describe", "hive", "--markdown"],
        vec!["plan", m],
        vec!["simulate"],
        vec!["summary", d],
        vec!["rank", hive.to_str().unwrap()],
        vec!["compare", d, "--baseline", "endorsement"],
        vec!["verify", d, "--replay", "2"],
        vec!["shards", d, "--json"],
        vec!["generate", "completions", "bash"],
    ];
    for args in verbs {
        let (code, stderr) = into_full_stdout(&args, tmp.path());
        assert_eq!(code, Some(2), "witness {args:?}: {stderr}");
        assert!(
            stderr.contains("standard output: No space left on device"),
            "witness {args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "witness {args:?}: {stderr}");
    }
}

#[test]
#[cfg(target_os = "linux")]
fn an_export_goes_through_a_fifo_or_a_symlink_and_leaves_it_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("run.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // A reader that gives up, so a write that misses the FIFO fails the
    // test instead of hanging it.
    let reader = Command::new("timeout")
        .arg("60")
        .arg("cat")
        .arg(&fifo)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let status = Command::new(assert_cmd::cargo::cargo_bin("witness"))
        .args(["simulate", "--export"])
        .arg(&fifo)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let read = reader.wait_with_output().unwrap();
    assert!(read.status.success(), "the reader timed out");
    let doc: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(doc["engine"], "witness-engine/1");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());

    let link = tmp.path().join("latest.json");
    std::os::unix::fs::symlink("runs/one.json", &link).unwrap();
    std::fs::create_dir(tmp.path().join("runs")).unwrap();
    let ok = Command::new(assert_cmd::cargo::cargo_bin("witness"))
        .args(["simulate", "--export"])
        .arg(&link)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(ok.success());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("runs/one.json")).unwrap()).unwrap();
    assert_eq!(doc["engine"], "witness-engine/1");
}
