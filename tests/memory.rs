//! The memory limit: work that would not fit is refused before anything
//! starts, naming what it grows with and the flag that moves the limit.
//! Every refusal here sets its limit with `--max-memory`, so the tests
//! mean the same on a machine of any size.

mod common;

use common::{witness, write_manifest};
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;

#[test]
fn work_that_would_not_fit_in_memory_is_refused_before_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(
        tmp.path(),
        "big.toml",
        "[experiment]\nname = \"big\"\nmodel = \"hive\"\n[fixed]\nrooms = 100000000\n[output]\nepisodes = true\n",
    );
    witness()
        .arg("plan")
        .arg(&m)
        .args(["--max-memory", "8"])
        .assert()
        .code(2)
        .stderr(contains("in memory at once").and(contains(
            "over the limit of 8.0 GB (--max-memory); turn off a large table in [output], lower \
             chunk_runs, --threads or the run's size (rooms), or pass --max-memory",
        )));
    witness()
        .args(["simulate", "--set", "population=10000000", "--export"])
        .arg(tmp.path().join("x.json"))
        .args(["--max-memory", "8"])
        .assert()
        .code(2)
        .stderr(
            contains("the run and its export would need about").and(contains(
                "over the limit of 8.0 GB (--max-memory); lower population = 10000000, \
                 rounds = 60, drop --export, or pass --max-memory GB",
            )),
        );
    assert!(!tmp.path().join("x.json").exists());
    // A dense graph is sized by its edges (about 28 GB here), and the
    // refusal names the knob that makes it dense.
    witness()
        .args(["simulate", "--set", "population=10000000"])
        .args(["--set", "graph=modular", "--set", "module_links=100"])
        .args(["--max-memory", "8"])
        .assert()
        .code(2)
        .stderr(contains(
            "lower population = 10000000, rounds = 60, module_links = 100, or pass --max-memory GB",
        ));
    // The limit is the flag's, both ways: a run of a few MB is refused
    // under a limit of 1 MB and runs without it.
    witness()
        .args([
            "simulate",
            "--set",
            "population=20000",
            "--max-memory",
            "0.001",
        ])
        .assert()
        .code(2)
        .stderr(contains("over the limit of 1.0 MB (--max-memory)"));
    witness()
        .args(["simulate", "--set", "population=20000"])
        .assert()
        .success();
}

#[test]
fn memory_limits_that_are_not_positive_numbers_are_refused() {
    for bad in ["0", "-4", "nan", "lots"] {
        for verb in [&["simulate"][..], &["plan", "experiments/default.toml"][..]] {
            witness()
                .args(verb)
                .arg(format!("--max-memory={bad}"))
                .assert()
                .code(2)
                .stderr(contains(format!(
                    "`{bad}` is not a positive number of GB; give one such as 16 or 0.5"
                )));
        }
    }
}
