//! `[search]` through the CLI: a race's rungs are ordinary runs of one
//! results folder, so its bytes do not depend on threads, shards (run one
//! after another or at once) or a SIGKILL at any point; halving keeps the
//! best of a hive grid; the race removes candidates a paired test finds
//! worse; `search` reports what was decided.

mod common;

use common::{data_files, witness, write_manifest};
use predicates::prelude::PredicateBooleanExt;
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use witness::params::Value;

/// 12 candidates of the cascade (three policies by four gains) raced over
/// six seeds at two truths.
const RACE: &str = include_str!("fixtures/race.toml");

fn run(manifest: &Path, dir: &Path, extra: &[&str]) {
    witness()
        .args(["run", "-q"])
        .args(extra)
        .arg("--out")
        .arg(dir)
        .arg(manifest)
        .assert()
        .success();
}

fn column(dir: &Path, name: &str) -> Vec<Value> {
    witness::store::parquet::read_columns(&dir.join("runs.parquet"), &[name])
        .unwrap()
        .remove(0)
}

fn search_rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    witness().arg("search").arg(dir).assert().success();
    let text = std::fs::read_to_string(dir.join("search.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|l| {
            // Candidate labels hold commas inside quotes.
            let mut cells = Vec::new();
            let (mut cell, mut quoted) = (String::new(), false);
            for ch in l.chars() {
                match ch {
                    '"' => quoted = !quoted,
                    ',' if !quoted => cells.push(std::mem::take(&mut cell)),
                    c => cell.push(c),
                }
            }
            cells.push(cell);
            header.iter().cloned().zip(cells).collect()
        })
        .collect()
}

#[test]
fn a_race_gives_the_same_bytes_on_any_threads_shards_and_after_a_kill_anywhere() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "race.toml", RACE);
    let one = tmp.path().join("one");
    run(&m, &one, &["--threads", "1"]);
    let want = data_files(&one);
    // The race stopped early: fewer runs than the grid's 144, more than
    // the first rung's 72.
    let rungs = column(&one, "rung");
    let n = rungs.len();
    assert!(n > 72 && n < 144, "{n} runs");
    assert!(rungs.windows(2).all(|w| w[0].as_i64() <= w[1].as_i64()));
    let two = tmp.path().join("two");
    run(&m, &two, &["--threads", "2"]);
    assert!(data_files(&two) == want, "two threads differ");
    // Shards one after another: the first runs what no other is running.
    let sequential = tmp.path().join("sequential");
    for k in ["0/3", "1/3", "2/3"] {
        run(&m, &sequential, &["--shard", k]);
    }
    witness()
        .args(["merge", "-q"])
        .arg(&sequential)
        .assert()
        .success();
    assert!(data_files(&sequential) == want, "sequential shards differ");
    // Shards at once: each waits for the others' chunks of a rung.
    let together = tmp.path().join("together");
    let bin = assert_cmd::cargo::cargo_bin("witness");
    let children: Vec<_> = ["0/2", "1/2"]
        .iter()
        .map(|k| {
            std::process::Command::new(&bin)
                .args(["run", "-q", "--threads", "1", "--shard", k, "--out"])
                .arg(&together)
                .arg(&m)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    witness()
        .args(["merge", "-q"])
        .arg(&together)
        .assert()
        .success();
    assert!(data_files(&together) == want, "concurrent shards differ");
    // A SIGKILL at every crash point, each followed by a resume.
    let listed = witness()
        .args(["run", "-q", "--out"])
        .arg(tmp.path().join("listed"))
        .arg(&m)
        .env("WITNESS_CRASH_LIST", "1")
        .output()
        .unwrap();
    let points = String::from_utf8_lossy(&listed.stderr)
        .matches("crash point")
        .count();
    assert!(points > 20, "{points} crash points");
    for k in 1..=points {
        let killed = tmp.path().join(format!("killed-{k}"));
        let out = witness()
            .args(["run", "-q", "--threads", "2", "--out"])
            .arg(&killed)
            .arg(&m)
            .env("WITNESS_CRASH_AFTER", k.to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.signal(), Some(9), "crash point {k}: not killed");
        run(&m, &killed, &[]);
        assert!(
            data_files(&killed) == want,
            "killed at crash point {k}: differs"
        );
        std::fs::remove_dir_all(&killed).unwrap();
    }
    witness().arg("verify").arg(&one).assert().success();
}

#[test]
fn the_race_removes_candidates_a_paired_test_finds_worse() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "race.toml", RACE);
    let dir = tmp.path().join("r");
    run(&m, &dir, &[]);
    let rows = search_rows(&dir);
    assert_eq!(rows.len(), 12);
    let survivors: Vec<&BTreeMap<String, String>> =
        rows.iter().filter(|r| r["outcome"] == "survivor").collect();
    assert!(!survivors.is_empty() && survivors.len() < 12);
    let tested: Vec<&BTreeMap<String, String>> =
        rows.iter().filter(|r| r["outcome"] == "tested").collect();
    assert!(!tested.is_empty());
    for r in &tested {
        let q: f64 = r["p_adjusted"].parse().unwrap();
        let p: f64 = r["p_value"].parse().unwrap();
        assert!(p <= q && q < 0.002, "{r:?}");
        // Lower is better: the one it lost to has a lower mean.
        let against = rows
            .iter()
            .find(|x| x["candidate"] == r["against"])
            .unwrap();
        assert!(against["mean"].parse::<f64>().unwrap() < r["mean"].parse::<f64>().unwrap());
    }
    // Survivors come first, best first.
    let means: Vec<f64> = survivors
        .iter()
        .map(|r| r["mean"].parse().unwrap())
        .collect();
    assert!(means.windows(2).all(|w| w[0] <= w[1]), "{means:?}");
    assert_eq!(rows[0]["place"], "1");
    assert_eq!(rows[0]["outcome"], "survivor");
}

/// 18 hive policies over nine seeds of 100 rooms: halving (first 1, eta 3)
/// keeps the policy with the best mean at nine seeds.
const HIVE: &str = r#"
[experiment]
name = "hive"
model = "hive"

[fixed]
rooms = 100
noise = 90

[grid]
seed = { from = 1, to = 9, step = 1 }

[[arm]]
name = "p"
policy = "hive+"
grid = { budget = [10, 15, 20], threshold = [2, 3, 5], evidential = [false, true] }
"#;

#[test]
fn halving_keeps_the_full_grids_best_for_a_fraction_of_the_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let full = write_manifest(tmp.path(), "full.toml", HIVE);
    let raced = write_manifest(
        tmp.path(),
        "raced.toml",
        &format!(
            "{HIVE}\n[search]\nmethod = \"halving\"\nmetric = \"correct_pct\"\nmaximize = true\nresource = \"seed\"\nfirst = 1\neta = 3\n"
        ),
    );
    let (f, r) = (tmp.path().join("full"), tmp.path().join("raced"));
    run(&full, &f, &[]);
    run(&raced, &r, &[]);
    // The full grid's best mean over nine seeds, from its own runs.
    let keys = |dir: &Path| -> Vec<String> {
        let cols: Vec<Vec<Value>> = ["budget", "threshold", "evidential"]
            .iter()
            .map(|c| column(dir, c))
            .collect();
        (0..cols[0].len())
            .map(|i| {
                cols.iter()
                    .map(|c| c[i].plain())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect()
    };
    let mut means: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    for (k, v) in keys(&f).into_iter().zip(column(&f, "correct_pct")) {
        let e = means.entry(k).or_default();
        e.0 += v.as_f64().unwrap();
        e.1 += 1;
    }
    assert_eq!(means.len(), 18);
    let best = means
        .values()
        .map(|(s, n)| s / f64::from(*n))
        .fold(f64::MIN, f64::max);
    let winners: Vec<&String> = means
        .iter()
        .filter(|(_, (s, n))| s / f64::from(*n) == best)
        .map(|(k, _)| k)
        .collect();
    // The race: 18 at one seed, 6 at two more, 2 at six more.
    let raced_keys = keys(&r);
    assert_eq!(raced_keys.len(), 18 + 6 * 2 + 2 * 6);
    let rungs = column(&r, "rung");
    let mut at_nine: BTreeMap<&String, u32> = BTreeMap::new();
    for (k, rung) in raced_keys.iter().zip(&rungs) {
        if rung.as_i64() == Some(2) {
            *at_nine.entry(k).or_default() += 1;
        }
    }
    assert_eq!(at_nine.len(), 2);
    for w in winners {
        assert_eq!(
            at_nine.get(w),
            Some(&6),
            "the full grid's best {w} did not survive"
        );
    }
    let out = witness().arg("search").arg(&r).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("runs: 42 of the full grid's 162 (25.9 %); 2 survivor(s)"),
        "{text}"
    );
    // A raced run is the full grid's run of the same settings and seed, so
    // `rank` of the raced folder, in either order, is the full folder's
    // restricted to those runs: ties go by the grid, not by rung order.
    let with_seed = |dir: &Path| -> Vec<String> {
        keys(dir)
            .into_iter()
            .zip(column(dir, "seed"))
            .map(|(k, s)| format!("{k}/{}", s.plain()))
            .collect()
    };
    let full_id: BTreeMap<String, usize> = with_seed(&f)
        .into_iter()
        .enumerate()
        .map(|(i, k)| (k, i))
        .collect();
    let raced_to_full: Vec<usize> = with_seed(&r).iter().map(|k| full_id[k]).collect();
    let ranked_ids = |dir: &Path, extra: &[&str]| -> Vec<usize> {
        witness()
            .arg("rank")
            .args(extra)
            .arg(dir)
            .assert()
            .success();
        let text = std::fs::read_to_string(dir.join("rank.csv")).unwrap();
        text.lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect()
    };
    for extra in [&[][..], &["--grid-order"][..]] {
        let raced: Vec<usize> = ranked_ids(&r, extra)
            .into_iter()
            .map(|id| raced_to_full[id])
            .collect();
        let full: Vec<usize> = ranked_ids(&f, extra)
            .into_iter()
            .filter(|id| raced.contains(id))
            .collect();
        assert_eq!(raced, full, "rank {extra:?}");
    }
}

#[test]
fn search_refuses_a_folder_without_a_race() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "full.toml", HIVE);
    let dir = tmp.path().join("full");
    run(&m, &dir, &[]);
    witness()
        .arg("search")
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("has no [search]"));
}

#[test]
fn a_placebo_and_its_arm_stay_in_the_race_and_compare_pairs_on_the_seeds_run() {
    let tmp = tempfile::tempdir().unwrap();
    let text = RACE
        .replace(
            "name = \"e\"\npolicy = \"endorsement\"\ngrid = { gain = [1.0, 3.0, 6.0, 9.0] }",
            "name = \"e\"\npolicy = \"endorsement\"\nplacebo = true",
        )
        .replace(
            "name = \"s\"\npolicy = \"source_aware\"\ngrid = { gain = [1.0, 3.0, 6.0, 9.0] }",
            "name = \"g\"\npolicy = \"endorsement\"\ngrid = { gain = [1.0, 9.0] }",
        );
    let m = write_manifest(tmp.path(), "race.toml", &text);
    let dir = tmp.path().join("r");
    run(&m, &dir, &[]);
    let arms = column(&dir, "arm");
    let seeds = |arm: &str| {
        let mut s: Vec<i64> = arms
            .iter()
            .zip(column(&dir, "seed"))
            .filter(|(a, _)| a.as_str() == Some(arm))
            .map(|(_, s)| s.as_i64().unwrap())
            .collect();
        s.sort_unstable();
        s.dedup();
        s
    };
    // The race ran two rungs; the baseline and its placebo ran both.
    assert_eq!(seeds("e"), (1..=6).collect::<Vec<_>>());
    assert_eq!(seeds("e:placebo"), (1..=6).collect::<Vec<_>>());
    // Reserved left at rung 0, on three seeds.
    assert_eq!(seeds("r"), vec![1, 2, 3]);
    let rows = search_rows(&dir);
    for r in &rows {
        if r["candidate"] == "e" || r["candidate"] == "e:placebo" {
            assert_eq!(r["outcome"], "survivor", "{r:?}");
        }
    }
    // compare pairs each arm with the baseline on the seeds it ran.
    let out = witness()
        .arg("compare")
        .arg(&dir)
        .args(["--baseline", "e"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("3/3") || text.contains("/3 "), "{text}");
}

#[test]
fn halving_runs_its_survivors_to_the_whole_budget_even_at_the_floor() {
    let tmp = tempfile::tempdir().unwrap();
    let text = RACE
        .replace("method = \"race\"", "method = \"halving\"")
        .replace("alpha = 0.002\n", "keep_at_least = 6\n")
        .replace("first = 3", "first = 1");
    let m = write_manifest(tmp.path(), "halving.toml", &text);
    let dir = tmp.path().join("h");
    run(&m, &dir, &[]);
    let rows = search_rows(&dir);
    let survivors: Vec<_> = rows.iter().filter(|r| r["outcome"] == "survivor").collect();
    assert_eq!(survivors.len(), 6);
    assert!(
        survivors.iter().all(|r| r["values"] == "6"),
        "{survivors:?}"
    );
    // search.json names each rung's seeds (it gave their positions on the
    // axis, so rung 0 read as seeds 0 and 1).
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("search.json")).unwrap()).unwrap();
    let rungs: Vec<Vec<i64>> = doc["rungs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(rungs.concat(), (1..=6).collect::<Vec<i64>>(), "{rungs:?}");
    assert_eq!(rungs[0], [1]);
}

#[test]
fn a_damaged_runs_table_is_run_again_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "race.toml", RACE);
    let clean = tmp.path().join("clean");
    run(&m, &clean, &[]);
    let want = data_files(&clean);
    let damaged = tmp.path().join("damaged");
    run(&m, &damaged, &[]);
    let table = damaged.join("runs.parquet");
    let bytes = std::fs::read(&table).unwrap();
    std::fs::write(&table, &bytes[..bytes.len() / 2]).unwrap();
    run(&m, &damaged, &[]);
    assert!(
        data_files(&damaged) == want,
        "the damaged folder was not healed"
    );
}

#[test]
fn a_damaged_table_in_a_raced_folder_is_named_not_called_unfinished() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "race.toml", RACE);
    let dir = tmp.path().join("race");
    run(&m, &dir, &[]);
    let want = data_files(&dir);
    let table = dir.join("runs.parquet");
    let bytes = std::fs::read(&table).unwrap();
    std::fs::write(&table, &bytes[..bytes.len() / 2]).unwrap();
    for verb in ["search", "summary", "rank"] {
        witness().arg(verb).arg(&dir).assert().code(2).stderr(
            predicates::str::contains("runs.parquet: its bytes are not the ones written")
                .and(predicates::str::contains("witness verify"))
                .and(predicates::str::contains("not finished").not()),
        );
    }
    // Running the manifest again rebuilds it.
    run(&m, &dir, &[]);
    assert!(data_files(&dir) == want);
}
