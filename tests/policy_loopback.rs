//! The shipped loopback experiments: the built-in rules and the same rules
//! run as external policies (`policies/*.py`) give the same results. The
//! cascade's over the 540-run sweep's endorsement runs at 1 and 4 policy
//! processes, run rows and trajectories value for value (the policy's own
//! columns aside); the hive's over 500 rooms at noise 90, room by room.

mod common;

use common::{assert_same, by_arm, witness};
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A shipped manifest with its relative policy path made absolute and the
/// external table's `jobs` set.
fn shipped(name: &str, jobs: usize, dir: &Path) -> std::path::PathBuf {
    let text = std::fs::read_to_string(format!("{ROOT}/experiments/{name}")).unwrap();
    let text = text
        .replace("\"../policies/", &format!("\"{ROOT}/policies/"))
        .replace(", jobs = 2 }", &format!(", jobs = {jobs} }}"));
    let path = dir.join(format!("{jobs}-{name}"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_endorsement_loopback_equals_the_built_in_arm_over_the_540_run_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    for jobs in [1, 4] {
        let m = shipped("external-loopback.toml", jobs, tmp.path());
        let out = tmp.path().join(format!("out-{jobs}"));
        witness()
            .args(["run", "-q"])
            .arg(&m)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        assert_eq!(
            assert_same(&out, "runs", "endorsement", "endorsement-py"),
            180
        );
        assert_same(&out, "trajectories", "endorsement", "endorsement-py");
    }
}

#[test]
fn the_hive_member_loopback_equals_hive_plus_over_500_rooms_at_noise_90() {
    let tmp = tempfile::tempdir().unwrap();
    let m = shipped("external-loopback-hive.toml", 1, tmp.path());
    let out = tmp.path().join("out");
    witness()
        .args(["run", "-q"])
        .arg(&m)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert_same(&out, "runs", "hive+", "hive+-py");
    assert_eq!(assert_same(&out, "episodes", "hive+", "hive+-py"), 500);
    let runs = by_arm(&out, "runs");
    // The published 500-room figures of hive+ at noise 90.
    let r = &runs["hive+-py"][0];
    assert_eq!(
        (r["correct_pct"].as_str(), r["converged"].as_str()),
        ("78.8", "495")
    );
}

#[test]
fn each_harness_twin_equals_its_scripted_policy_on_the_controls() {
    let tmp = tempfile::tempdir().unwrap();
    let m = shipped("harness-controls.toml", 1, tmp.path());
    let out = tmp.path().join("out");
    witness()
        .args(["run", "-q"])
        .arg(&m)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    for policy in ["echo", "dedupe", "prober"] {
        let twin = format!("{policy}-py");
        assert_eq!(assert_same(&out, "runs", policy, &twin), 120);
        for table in ["trajectories", "agents", "messages"] {
            assert!(assert_same(&out, table, policy, &twin) > 0, "{table}");
        }
    }
}
