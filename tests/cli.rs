//! `simulate` and `replay` through the binary.

mod common;

use common::witness;
use predicates::str::contains;

#[test]
fn simulate_prints_the_seed_42_summary_and_exports_a_replayable_run() {
    let tmp = tempfile::tempdir().unwrap();
    let export = tmp.path().join("run.json");
    witness()
        .args(["simulate", "--export"])
        .arg(&export)
        .assert()
        .success()
        .stdout(
            contains("peak 32.40% (81 agents)")
                .and(contains("first clear round  10"))
                .and(contains("identities hold")),
        );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    assert_eq!(doc["engine"], "witness-engine/1");
    assert_eq!(doc["trajectory"].as_array().unwrap().len(), 61);
    assert_eq!(doc["agents"].as_array().unwrap().len(), 250);
    assert!(doc["assumptions"].as_array().unwrap().len() >= 3);
    witness()
        .arg("replay")
        .arg(&export)
        .assert()
        .success()
        .stdout(contains("replay ok"));
}

#[test]
fn replay_names_the_first_difference_of_a_tampered_export() {
    let tmp = tempfile::tempdir().unwrap();
    let export = tmp.path().join("run.json");
    witness()
        .args([
            "simulate",
            "--set",
            "policy=source_aware",
            "--set",
            "corrections=[3, 3]",
            "--export",
        ])
        .arg(&export)
        .assert()
        .success()
        .stdout(contains("correction round 3"));
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&export).unwrap()).unwrap();
    let m = doc["trajectory"][7]["mistaken"].as_u64().unwrap();
    doc["trajectory"][7]["mistaken"] = (m + 1).into();
    std::fs::write(&export, serde_json::to_string(&doc).unwrap()).unwrap();
    witness()
        .arg("replay")
        .arg(&export)
        .assert()
        .code(1)
        .stdout(contains("$.trajectory[7].mistaken"));
}

#[test]
fn set_accepts_toml_values_and_bare_words_and_rejects_bad_ones() {
    witness()
        .args([
            "simulate",
            "--set",
            "graph=hub",
            "--set",
            "truth=true",
            "--set",
            "population=\"300\"",
        ])
        .assert()
        .code(2)
        .stderr(contains("`population` = \"300\": wrong type (string)"));
    witness()
        .args([
            "simulate",
            "--set",
            "graph=hub",
            "--set",
            "truth=true",
            "--set",
            "rounds=5",
        ])
        .assert()
        .success()
        .stdout(
            contains("graph hub")
                .and(contains("truth true"))
                .and(contains("5 rounds")),
        );
}

#[test]
fn simulate_refuses_an_external_policy_it_has_no_process_for() {
    // It ran with nothing deciding: no messages, and "identities hold".
    for (model, set) in [
        ("witness", "policy=external"),
        ("hive", "member=external"),
        ("harness", "policy=\"external\""),
    ] {
        witness()
            .args([
                "simulate",
                "--model",
                model,
                "--set",
                set,
                "--export",
                "never.json",
            ])
            .assert()
            .code(2)
            .stderr(contains(format!(
                "--set {set}: an external policy is a process named by an [[arm]]"
            )));
        assert!(!std::path::Path::new("never.json").exists());
    }
    // A folder that is not there is named before the run, not after it.
    witness()
        .args(["simulate", "--export", "no-such-folder/x.json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains(
            "--export no-such-folder/x.json: there is no folder no-such-folder",
        ));
    // So is a folder given where a file name goes.
    let tmp = tempfile::tempdir().unwrap();
    witness()
        .args(["simulate", "--export"])
        .arg(tmp.path())
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains("a folder; give a file name, e.g. --export"));
    // And a file in a results folder, which could replace a sealed file.
    let m = common::write_manifest(tmp.path(), "s.toml", common::SMALL);
    let out = tmp.path().join("out");
    common::run_ok(&m, &out);
    let seal = std::fs::read(out.join("complete.json")).unwrap();
    witness()
        .args(["simulate", "--export"])
        .arg(out.join("complete.json"))
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains("inside the results folder").and(contains("export elsewhere")));
    assert_eq!(std::fs::read(out.join("complete.json")).unwrap(), seal);
}

use predicates::prelude::PredicateBooleanExt;

#[test]
fn a_reader_that_closes_standard_output_ends_the_command_quietly_with_0() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    // The read end is closed before witness writes a byte (`witness
    // describe | head -c0`): no death by SIGPIPE, no message, exit 0.
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("witness"))
        .arg("describe")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.signal(), None, "killed by a signal");
    assert_eq!(o.status.code(), Some(0));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
