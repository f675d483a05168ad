//! `plan` on every shipped manifest: each one validates, and its estimate
//! (which runs a few sample runs through the same row building as `run`)
//! completes. A raced manifest once panicked here: the samples' rows
//! lacked the `rung` column its runs table has. A folder given for a
//! manifest is named as one.

mod common;

use common::{run_ok, witness, write_manifest, SMALL};
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

#[test]
fn plan_checks_and_estimates_every_shipped_manifest() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let mut manifests: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    manifests.sort();
    assert!(manifests.len() >= 10, "{manifests:?}");
    assert!(manifests.iter().any(|m| m.ends_with("hive-race.toml")));
    for m in &manifests {
        let out = witness().arg("plan").arg(m).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: exit {:?}\n{stdout}\n{}",
            m.display(),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("estimate   ~"), "{}: {stdout}", m.display());
    }
}

#[test]
fn a_results_folder_given_for_a_manifest_points_at_its_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    run_ok(&write_manifest(tmp.path(), "s.toml", SMALL), &out);
    for verb in ["plan", "design", "run"] {
        witness().arg(verb).arg(&out).assert().code(2).stderr(
            contains("a results folder, not a manifest")
                .and(contains(format!("{}", out.join("manifest.toml").display()))),
        );
    }
    witness()
        .arg("plan")
        .arg(tmp.path())
        .assert()
        .code(2)
        .stderr(contains("a folder, not a manifest"));
}
