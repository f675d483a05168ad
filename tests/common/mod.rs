//! Helpers shared by the CLI tests: the binary, manifests in temp folders,
//! and whole-folder byte snapshots.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub fn witness() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("witness").unwrap()
}

/// 64 runs in 16 chunks, all three policies, an arm grid, agents on.
pub const SMALL: &str = r#"
[experiment]
name = "small"
model = "witness"
chunk_runs = 4

[fixed]
population = 60
rounds = 20

[grid]
seed = { from = 1, to = 4 }
truth = [false, true]
graph = ["small_world", "hub"]

[[arm]]
name = "endorsement"
policy = "endorsement"

[[arm]]
name = "source_aware"
policy = "source_aware"

[[arm]]
name = "reserved"
policy = "reserved"
grid = { communication = [0.5, 0.9] }

[output]
agents = true
"#;

pub fn write_manifest(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Every file under `dir` with its bytes, keyed by relative path.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The data files only: timing files are meant to differ between runs.
pub fn data_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut s = snapshot(dir);
    // Timings vary; a shard lock is left by a killed process until the
    // next run on that folder takes it over.
    s.retain(|k, _| !k.starts_with("timing") && !k.ends_with(".lock"));
    s
}

/// `witness run -q --out OUT MANIFEST`, which must succeed.
pub fn run_ok(manifest: &Path, out: &Path) {
    witness()
        .args(["run", "-q", "--out"])
        .arg(out)
        .arg(manifest)
        .assert()
        .success();
}

/// Records the tables of `dir` as they now are in its seal, as a user who
/// edits stored values on purpose would: the analysis verbs refuse a table
/// whose bytes differ from the seal's.
pub fn reseal(dir: &Path) {
    let mut seal = witness::store::seal::Seal::read(dir)
        .unwrap()
        .expect("a seal");
    for t in &mut seal.tables {
        let (sha256, bytes) = witness::store::digest::file_sha256(&dir.join(&t.file)).unwrap();
        t.sha256 = sha256;
        t.bytes = bytes;
    }
    seal.write(dir).unwrap();
}

/// Every row of `table`, as strings by column, split by arm.
pub fn by_arm(dir: &Path, table: &str) -> BTreeMap<String, Vec<BTreeMap<String, String>>> {
    let runs = witness::store::parquet::open(&dir.join("runs.parquet")).unwrap();
    let arm_of: BTreeMap<i64, String> = runs
        .flat_map(|b| b.unwrap().rows(&["run_id", "arm"]).unwrap())
        .map(|r| (r[0].as_i64().unwrap(), r[1].plain()))
        .collect();
    let r = witness::store::parquet::open(&dir.join(format!("{table}.parquet"))).unwrap();
    let names: Vec<String> = r.columns.iter().map(|c| c.0.clone()).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut out: BTreeMap<String, Vec<BTreeMap<String, String>>> = BTreeMap::new();
    for row in r.flat_map(|b| b.unwrap().rows(&refs).unwrap()) {
        let arm = arm_of[&row[0].as_i64().unwrap()].clone();
        let cells = names.iter().cloned().zip(row.iter().map(|v| v.plain()));
        out.entry(arm).or_default().push(cells.collect());
    }
    out
}

/// The columns that name a run or its policy rather than what it did.
pub const IDENTITY: &[&str] = &[
    "run_id",
    "run_key",
    "arm",
    "policy",
    "member",
    "decisions",
    "policy_errors",
    "fallbacks",
    "input_tokens",
    "output_tokens",
    "cost_microusd",
    "policy_seconds",
    "policy_name",
    "policy_version",
    "policy_digest",
    "policy_failure",
];

/// Asserts the rows of `table` of arm `built_in` and arm `external` are
/// equal but for the columns naming the run or policy; returns their count.
pub fn assert_same(dir: &Path, table: &str, built_in: &str, external: &str) -> usize {
    let n = assert_same_rows(dir, table, built_in, external);
    if table == "runs" {
        for r in &by_arm(dir, table)[external] {
            assert_eq!(
                (r["policy_errors"].as_str(), r["fallbacks"].as_str()),
                ("0", "0")
            );
            assert!(r["decisions"].parse::<u64>().unwrap() > 0);
        }
    }
    n
}

/// `assert_same` without asking that the external arm's policy never
/// erred (for policies whose errors are the point).
pub fn assert_same_rows(dir: &Path, table: &str, built_in: &str, external: &str) -> usize {
    let arms = by_arm(dir, table);
    let strip = |rows: &[BTreeMap<String, String>]| -> Vec<BTreeMap<String, String>> {
        rows.iter()
            .map(|r| {
                let mut r = r.clone();
                r.retain(|k, _| !IDENTITY.contains(&k.as_str()));
                r
            })
            .collect()
    };
    let (a, b) = (strip(&arms[built_in]), strip(&arms[external]));
    assert_eq!(a.len(), b.len(), "{table}: row counts");
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "{table}: row {i} of {built_in} and {external} differ");
    }
    a.len()
}
