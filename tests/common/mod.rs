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
    s.retain(|k, _| !k.starts_with("timing"));
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
