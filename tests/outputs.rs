//! Where the output goes. A standard output that cannot be written (a full
//! disk, `> /dev/full`) is an error every verb reports with exit 2, not a
//! panic.

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
