//! External policies end to end (witness-policy/1): a scripted policy that
//! reproduces the built-in endorsement rule gives the built-in rows for any
//! process count, thread count and batch size; a killed run resumes to the
//! same bytes without asking any key twice; a finished experiment verifies
//! and replays with no process; and every way a policy can misbehave ends
//! in a typed, named outcome, never a hang or a panic.

mod common;

use common::{snapshot, witness, write_manifest};
use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use witness::store::parquet;

fn script(name: &str) -> String {
    format!(
        "{}/tests/fixtures/policies/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A small cascade: the built-in endorsement rule and the same rule asked
/// of `misbehave.py MODE`, with `extra` added to the external table.
fn manifest(mode: &str, extra: &str) -> String {
    sized(mode, extra, "[1, 2, 3]", 8)
}

fn sized(mode: &str, extra: &str, seeds: &str, rounds: u32) -> String {
    format!(
        r#"
[experiment]
name = "ext"
model = "witness"
chunk_runs = 2

[fixed]
population = 40
rounds = {rounds}

[grid]
seed = {seeds}
truth = [false, true]

[[arm]]
name = "builtin"
policy = "endorsement"

[[arm]]
name = "py"
policy = "external"
external = {{ command = ["python3", "{}", "{mode}"]{extra} }}
"#,
        script("misbehave.py")
    )
}

/// The rows of `table` by column name.
fn rows(dir: &Path, table: &str) -> Vec<BTreeMap<String, String>> {
    let r = parquet::open(&dir.join(format!("{table}.parquet"))).unwrap();
    let names: Vec<String> = r.columns.iter().map(|c| c.0.clone()).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    r.flat_map(|b| b.unwrap().rows(&refs).unwrap())
        .map(|row| {
            names
                .iter()
                .cloned()
                .zip(row.iter().map(|v| v.plain()))
                .collect()
        })
        .collect()
}

/// The external arm's run rows equal the built-in arm's, policy columns
/// aside; returns the external rows.
fn assert_loopback(dir: &Path) -> Vec<BTreeMap<String, String>> {
    let all = rows(dir, "runs");
    let (b, e): (Vec<_>, Vec<_>) = all.into_iter().partition(|r| r["arm"] == "builtin");
    assert_eq!(b.len(), e.len());
    let strip = |r: &BTreeMap<String, String>| {
        let mut r = r.clone();
        r.retain(|k, _| !common::IDENTITY.contains(&k.as_str()));
        r
    };
    for (x, y) in b.iter().zip(&e) {
        assert_eq!(strip(x), strip(y), "built-in and external rows differ");
    }
    let t = rows(dir, "trajectories");
    let n = t.len() / 2;
    for (x, y) in t[..n].iter().zip(&t[n..]) {
        let mut y = y.clone();
        y.insert("run_id".into(), x["run_id"].clone());
        assert_eq!(x, &y, "trajectories differ");
    }
    e
}

/// The result files that must not depend on processes, threads or
/// batches (the policies' stderr logs aside).
fn results(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut s = snapshot(dir);
    s.retain(|k, _| !k.starts_with("timing") && !k.starts_with("policy-logs"));
    s
}

/// Panics naming the files that differ (never printing their bytes).
fn same_files(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>, what: &str) {
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(a), names(b), "{what}: different files");
    let differ: Vec<&String> = a.keys().filter(|k| a[*k] != b[*k]).collect();
    assert!(differ.is_empty(), "{what}: {differ:?} differ");
}

fn run(m: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    witness()
        .args(["run", "-q"])
        .args(extra)
        .arg(m)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_scripted_policy_equals_the_built_in_rule_for_any_jobs_threads_and_batches() {
    let tmp = tempfile::tempdir().unwrap();
    let mut reference: Option<BTreeMap<String, Vec<u8>>> = None;
    // (processes, threads, largest batch)
    for (jobs, threads, batch) in [(1, "1", 1024), (4, "2", 1024), (2, "2", 7), (1, "2", 1)] {
        let extra = format!(", jobs = {jobs}, max_batch = {batch}");
        let m = write_manifest(
            tmp.path(),
            &format!("m{jobs}{batch}.toml"),
            &manifest("normal", &extra),
        );
        let out = tmp.path().join(format!("out-{jobs}-{threads}-{batch}"));
        let o = run(&m, &out, &["--threads", threads]);
        assert!(o.status.success(), "{}", stderr(&o));
        let ext = assert_loopback(&out);
        assert!(ext
            .iter()
            .all(|r| r["policy_errors"] == "0" && r["fallbacks"] == "0"));
        assert!(ext.iter().all(|r| r["policy_name"] == "misbehave"));
        assert!(
            ext.iter().all(|r| r["input_tokens"] != "none"),
            "usage is summed"
        );
        // The manifests differ in jobs and batch (and files record their
        // manifest); the rows and the record log may not differ at all.
        let mut files = results(&out);
        files.retain(|k, _| k.starts_with("policy-log/"));
        for t in ["runs", "trajectories"] {
            files.insert(t.into(), format!("{:?}", rows(&out, t)).into_bytes());
        }
        match &reference {
            None => reference = Some(files),
            Some(r) => same_files(
                r,
                &files,
                "the record log or the rows depend on jobs, threads or batches",
            ),
        }
    }
}

#[test]
fn verify_replays_offline_and_names_an_edited_answer() {
    let tmp = tempfile::tempdir().unwrap();
    // A copy of the policy that can be taken away.
    let copy = tmp.path().join("policy.py");
    let text = std::fs::read_to_string(script("misbehave.py"))
        .unwrap()
        .replace(
            "os.path.join(os.path.dirname(__file__), \"..\", \"..\", \"..\", \"policies\")",
            &format!("\"{}/policies\"", env!("CARGO_MANIFEST_DIR")),
        );
    std::fs::write(&copy, text).unwrap();
    let m = manifest("normal", "").replace(&script("misbehave.py"), copy.to_str().unwrap());
    let m = write_manifest(tmp.path(), "m.toml", &m);
    let out = tmp.path().join("out");
    assert!(run(&m, &out, &[]).status.success());
    std::fs::remove_file(&copy).unwrap();
    witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains("12 runs replayed identically"));
    // Edit one logged answer.
    let log = out.join("policy-log/py/part-000003.jsonl.zst");
    let text = zstd::decode_all(std::fs::File::open(&log).unwrap()).unwrap();
    let text = String::from_utf8(text).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("\"action\":\"read\""))
        .unwrap();
    let key = line.split('"').nth(3).unwrap().to_string();
    let edited_line = line.replacen(
        "\"action\":\"read\",\"belief\":",
        "\"action\":\"read\",\"belief\":0.25,\"was\":",
        1,
    );
    let edited = text.replacen(line, &edited_line, 1);
    std::fs::write(&log, zstd::encode_all(edited.as_bytes(), 3).unwrap()).unwrap();
    let o = witness()
        .args(["verify", "--all"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &stderr(&o);
    assert!(said.contains(&key), "the edited key is named: {said}");
    assert!(said.contains("changed after it was written"), "{said}");
}

#[test]
fn a_replay_from_the_log_gives_the_same_results_and_names_what_no_longer_matches() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "m.toml", &manifest("normal", ""));
    let out = tmp.path().join("out");
    assert!(run(&m, &out, &[]).status.success());
    // The same manifest, with a command that cannot run: nothing is asked.
    let gone = manifest("normal", "").replace("python3", "/no/such/python");
    let m2 = write_manifest(tmp.path(), "m2.toml", &gone);
    let again = tmp.path().join("again");
    let o = run(&m, &again, &["--policy-replay", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(rows(&out, "runs"), rows(&again, "runs"));
    // Chunks cut differently: the answers are found by key all the same.
    let rechunked = manifest("normal", "").replace("chunk_runs = 2", "chunk_runs = 5");
    let m4 = write_manifest(tmp.path(), "m4.toml", &rechunked);
    let o = run(
        &m4,
        &tmp.path().join("rechunked"),
        &["--policy-replay", out.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        rows(&out, "runs"),
        rows(&tmp.path().join("rechunked"), "runs")
    );
    // A replay needs no program at all.
    let o = run(
        &m2,
        &tmp.path().join("again2"),
        &["--policy-replay", out.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Other parameters: the runs' keys are not in the log, and each run
    // says so.
    let other = manifest("normal", "").replace("rounds = 8", "rounds = 9");
    let m3 = write_manifest(tmp.path(), "m3.toml", &other);
    let o = run(
        &m3,
        &tmp.path().join("other"),
        &["--policy-replay", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no answer in the record log for this key"),
        "{}",
        stderr(&o)
    );
}

/// Kills `witness run` at its n-th crash point; true if it was killed.
fn killed_at(m: &Path, out: &Path, n: u64, keys: &Path) -> bool {
    let o = witness()
        .args(["run", "-q", "--threads", "1"])
        .arg(m)
        .arg("--out")
        .arg(out)
        .env("WITNESS_CRASH_AFTER", n.to_string())
        .env("WITNESS_TEST_KEYS", keys)
        .output()
        .unwrap();
    match o.status.signal() {
        Some(9) => true,
        None if o.status.success() => false,
        other => panic!("point {n}: {other:?} {}", stderr(&o)),
    }
}

fn crash_points(m: &Path, dir: &Path) -> u64 {
    let o = witness()
        .args(["run", "-q", "--threads", "1"])
        .arg(m)
        .arg("--out")
        .arg(dir)
        .env("WITNESS_CRASH_LIST", "1")
        .output()
        .unwrap();
    stderr(&o)
        .lines()
        .filter(|l| l.starts_with("crash point"))
        .count() as u64
}

#[test]
fn a_run_killed_during_an_external_arm_resumes_to_the_same_bytes_asking_nothing_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "m.toml", &manifest("normal", ""));
    let reference = tmp.path().join("reference");
    assert!(run(&m, &reference, &["--threads", "1"]).status.success());
    let want = results(&reference);
    let total = crash_points(&m, &tmp.path().join("count"));
    assert!(total > 20, "{total} crash points");
    for n in [1, 2, total / 3, total / 2, total - 8, total - 3, total - 1] {
        let dir = tmp.path().join(format!("killed-{n}"));
        let keys = tmp.path().join(format!("keys-{n}"));
        assert!(killed_at(&m, &dir, n, &keys), "point {n} of {total}");
        let o = witness()
            .args(["run", "-q", "--threads", "1"])
            .arg(&m)
            .arg("--out")
            .arg(&dir)
            .env("WITNESS_TEST_KEYS", &keys)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        same_files(
            &results(&dir),
            &want,
            &format!("killed at point {n} of {total}"),
        );
        let asked = std::fs::read_to_string(&keys).unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        for k in asked.lines() {
            assert!(
                seen.insert(k),
                "key {k} was asked twice (killed at point {n})"
            );
        }
    }
}

/// Runs the misbehaving `mode` with `extra` in the external table.
fn misbehave(mode: &str, extra: &str) -> (std::process::Output, PathBuf, tempfile::TempDir) {
    misbehave_in(mode, extra, 40)
}

/// `misbehave` with `population` agents (a policy broken on every decision
/// is restarted for each, so these runs are kept small).
fn misbehave_in(
    mode: &str,
    extra: &str,
    population: usize,
) -> (std::process::Output, PathBuf, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let text = sized(mode, extra, "[1]", 3)
        .replace("population = 40", &format!("population = {population}"));
    let m = write_manifest(tmp.path(), "m.toml", &text);
    let out = tmp.path().join("out");
    let o = witness()
        .args(["run", "-q"])
        .arg(&m)
        .arg("--out")
        .arg(&out)
        .env("WITNESS_TEST_ONCE", tmp.path().join("once"))
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    (o, out, tmp)
}

#[test]
fn a_policy_that_cannot_start_stops_the_run_with_its_reason() {
    for (mode, extra, says) in [
        ("exit_at_start", "", "exited (exit status: 3)"),
        ("exit_at_start", "", "giving up at once"),
        ("no_handshake", ", timeout_s = 0.5", "no answer within 5 s"),
        ("wrong_protocol", "", "speaks \"witness-policy/1\" only"),
    ] {
        let (o, out, _tmp) = misbehave(mode, extra);
        assert_eq!(o.status.code(), Some(2), "{mode}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{mode}: {}", stderr(&o));
        assert!(!out.join("runs.parquet").exists());
    }
}

#[test]
fn bad_answers_are_retried_then_fall_back_or_fail_the_run_naming_key_and_field() {
    let cases = [
        ("non_json", "not JSON"),
        ("unknown_key", "answered key not-a-key"),
        (
            "bad_action",
            "action = \"jump\": not allowed here (allowed: check, read)",
        ),
        ("belief_17", "belief = 1.7: out of range 0..=1"),
        ("belief_nan", "not JSON"),
        ("sleep", "no answer within 0.3 s"),
        ("flood_stdout", "expected `decisions`"),
        ("refuse", "the policy reported refusal: no"),
    ];
    for (mode, says) in cases {
        // Failing the run: recorded, named, and the other runs go on.
        let (o, out, _tmp) = misbehave_in(mode, ", timeout_s = 0.3, retries = 1, breaker = 0", 8);
        assert_eq!(o.status.code(), Some(1), "{mode}: {}", stderr(&o));
        let ext: Vec<_> = rows(&out, "runs")
            .into_iter()
            .filter(|r| r["arm"] == "py")
            .collect();
        for r in &ext {
            assert_eq!(r["failed"], "true", "{mode}");
            assert!(
                r["policy_failure"].contains(says),
                "{mode}: {}",
                r["policy_failure"]
            );
            assert!(
                r["policy_failure"].contains(&format!("{}/r1/a", r["run_key"])),
                "{mode}: the key is named: {}",
                r["policy_failure"]
            );
        }
        assert!(rows(&out, "runs")
            .iter()
            .filter(|r| r["arm"] == "builtin")
            .all(|r| r["failed"] == "false"));
        witness().args(["verify"]).arg(&out).assert().success();
        // Falling back: the run completes on the safe action, and counts.
        let (o, out, _tmp) = misbehave_in(
            mode,
            ", timeout_s = 0.3, retries = 1, fallback = \"read\", breaker = 0",
            8,
        );
        // An arm whose every decision fell back says so and exits 1: its
        // rows are the safe action's, not the policy's.
        let partly = mode == "belief_17" || mode == "belief_nan";
        match partly {
            true => assert!(o.status.success(), "{mode}: {}", stderr(&o)),
            false => {
                assert_eq!(o.status.code(), Some(1), "{mode}: {}", stderr(&o));
                assert!(
                    stderr(&o).contains("error: arm py: all ")
                        && stderr(&o).contains(
                            " of its decisions fell back to \"read\": the policy answered none"
                        ),
                    "{mode}: {}",
                    stderr(&o)
                );
            }
        }
        for r in rows(&out, "runs").into_iter().filter(|r| r["arm"] == "py") {
            assert_eq!(r["failed"], "false");
            let n = |c: &str| r[c].parse::<u64>().unwrap();
            // Only reads carry a belief; a check answer is fine. (A NaN
            // makes the whole line unreadable; after that each decision is
            // asked alone, so only the reads fall back.)
            if mode == "belief_17" || mode == "belief_nan" {
                assert!(
                    n("fallbacks") > 0 && n("fallbacks") < n("decisions"),
                    "{mode}"
                );
            } else {
                assert_eq!(
                    n("fallbacks"),
                    n("decisions"),
                    "{mode}: every decision fell back"
                );
            }
            let tries = if mode == "refuse" { 1 } else { 2 };
            if mode == "belief_nan" {
                // The decisions that shared a broken batch also count it.
                assert!(n("policy_errors") > tries * n("fallbacks"), "{mode}");
            } else {
                assert_eq!(
                    n("policy_errors"),
                    tries * n("fallbacks"),
                    "{mode}: an error per attempt"
                );
            }
        }
    }
}

#[test]
fn a_policy_that_crashes_mid_batch_is_replaced_and_its_batch_retried() {
    let (o, out, _tmp) = misbehave("crash_mid_batch", "");
    assert!(o.status.success(), "{}", stderr(&o));
    let ext = assert_loopback(&out);
    let errors: u64 = ext
        .iter()
        .map(|r| r["policy_errors"].parse::<u64>().unwrap())
        .sum();
    assert!(errors > 0, "the crashed batch counts its errors");
    assert!(ext.iter().all(|r| r["fallbacks"] == "0"));
}

#[test]
fn a_policy_that_writes_10_mb_of_stderr_is_unharmed_and_its_stderr_kept() {
    let (o, out, _tmp) = misbehave("stderr_10mb", "");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_loopback(&out);
    let log = std::fs::metadata(out.join("policy-logs/py-0.log"))
        .unwrap()
        .len();
    assert!(log >= 10 << 20, "{log} bytes of stderr kept");
}

#[test]
fn plan_checks_external_commands_and_probes_them_when_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let gone = manifest("normal", "").replace("python3", "no-such-python-here");
    let m = write_manifest(tmp.path(), "gone.toml", &gone);
    witness()
        .arg("plan")
        .arg(&m)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("external command"))
        .stderr(predicates::str::contains(
            "`no-such-python-here` is not a program on PATH",
        ));
    let m = write_manifest(tmp.path(), "ok.toml", &manifest("normal", ""));
    witness()
        .args(["plan", "--probe-policy"])
        .arg(&m)
        .assert()
        .success()
        .stdout(predicates::str::contains("reports misbehave normal"))
        .stdout(predicates::str::contains("decisions/s per process"));
    // An external table on an arm that decides by built-in rules, and an
    // external policy with no table, are refused by name.
    let wrong = manifest("normal", "").replace("policy = \"external\"", "policy = \"trust\"");
    let m = write_manifest(tmp.path(), "wrong.toml", &wrong);
    witness()
        .arg("plan")
        .arg(&m)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "decides by its built-in rules; remove `external`",
        ));
    let fallback = manifest("normal", ", fallback = \"pass\"");
    let m = write_manifest(tmp.path(), "fb.toml", &fallback);
    witness()
        .arg("plan")
        .arg(&m)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("has the safe action \"read\""));
}

#[test]
fn shards_of_an_external_arm_merge_to_the_unsharded_results() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "m.toml", &manifest("normal", ""));
    let whole = tmp.path().join("whole");
    assert!(run(&m, &whole, &[]).status.success());
    let sharded = tmp.path().join("sharded");
    for k in ["0/2", "1/2"] {
        let o = run(&m, &sharded, &["--shard", k]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    witness()
        .args(["merge", "-q"])
        .arg(&sharded)
        .assert()
        .success();
    same_files(&results(&whole), &results(&sharded), "sharded and merged");
    witness()
        .args(["verify", "--all"])
        .arg(&sharded)
        .assert()
        .success();
}

#[test]
fn policy_calls_holds_one_row_per_decision_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let text = manifest("normal", "") + "\n[output]\npolicy_calls = true\n";
    let m = write_manifest(tmp.path(), "m.toml", &text);
    let out = tmp.path().join("out");
    assert!(run(&m, &out, &[]).status.success());
    let calls = rows(&out, "policy_calls");
    let decided: u64 = rows(&out, "runs")
        .iter()
        .filter(|r| r["arm"] == "py")
        .map(|r| r["decisions"].parse::<u64>().unwrap())
        .sum();
    assert_eq!(calls.len() as u64, decided);
    assert!(calls
        .iter()
        .all(|c| c["outcome"] == "answer" && c["attempts"] == "1"));
    assert!(
        calls.iter().any(|c| c["action"] == "check") && calls.iter().any(|c| c["action"] == "read")
    );
    assert!(
        calls[0]["place"].starts_with("r1/a"),
        "{}",
        calls[0]["place"]
    );
    witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .success();
    // A replay marks what it copied.
    let again = tmp.path().join("again");
    assert!(run(&m, &again, &["--policy-replay", out.to_str().unwrap()])
        .status
        .success());
    assert!(rows(&again, "policy_calls")
        .iter()
        .all(|c| c["replayed"] == "true"));
    witness()
        .args(["verify", "--all"])
        .arg(&again)
        .assert()
        .success();
    // Without an external arm there is nothing to list.
    let none = "[experiment]\nname = \"n\"\nmodel = \"witness\"\n[output]\npolicy_calls = true\n";
    let m = write_manifest(tmp.path(), "none.toml", none);
    witness()
        .arg("plan")
        .arg(&m)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "policy_calls = true: no arm of this manifest has an external policy",
        ));
}

/// The guide's first policy and its manifest, as printed there, run and
/// decide without falling back: the documentation cannot drift from what
/// works (the docs test runs the same blocks, but only checks exit codes).
#[test]
fn the_guides_first_policy_runs_as_printed() {
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guide/external-policies.md"),
    )
    .unwrap();
    let section = &guide[guide.find("## A first policy").unwrap()..];
    let block = |fence: &str| {
        let start = section.find(fence).unwrap() + fence.len();
        section[start..start + section[start..].find("```").unwrap()].to_string()
    };
    let script = block("```python file=experiments/mean.py\n");
    let manifest = block("```toml file=experiments/mean-reader.toml\n");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("mean.py"), script).unwrap();
    let m = write_manifest(tmp.path(), "mean-reader.toml", &manifest);
    let out = tmp.path().join("out");
    witness()
        .args(["run", "-q"])
        .arg(&m)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let runs = rows(&out, "runs");
    let mean: Vec<_> = runs.iter().filter(|r| r["arm"] == "mean-reader").collect();
    assert_eq!(mean.len(), 4);
    for r in mean {
        assert!(r["decisions"].parse::<u64>().unwrap() > 0, "{r:?}");
        assert_eq!(
            (r["fallbacks"].as_str(), r["failed"].as_str()),
            ("0", "false"),
            "{r:?}"
        );
        assert_eq!(r["policy_name"], "mean");
    }
}

/// `run` with the misbehaving policy's marker and pid files in `tmp`.
fn run_marked(m: &Path, out: &Path, tmp: &Path) -> std::process::Output {
    witness()
        .args(["run", "-q"])
        .arg(m)
        .arg("--out")
        .arg(out)
        .env("WITNESS_TEST_ONCE", tmp.join("once"))
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap()
}

#[test]
fn a_policy_that_dies_mid_write_or_writes_a_stray_line_is_a_failed_batch_not_a_dead_run() {
    // Batches of a round of 2,000 agents: lines far longer than a pipe's
    // buffer, so witness is still writing when the policy goes (the first
    // process only; the next answers well).
    for mode in ["exit_mid_read", "stray_line"] {
        let tmp = tempfile::tempdir().unwrap();
        let text = sized(mode, "", "[1]", 3).replace("population = 40", "population = 2000");
        let m = write_manifest(tmp.path(), "m.toml", &text);
        let out = tmp.path().join("out");
        for pass in ["first", "again"] {
            let o = run_marked(&m, &out, tmp.path());
            assert_eq!(
                o.status.signal(),
                None,
                "{mode} ({pass}): killed by a signal"
            );
            assert_eq!(o.status.code(), Some(0), "{mode} ({pass}): {}", stderr(&o));
        }
        assert_loopback(&out);
    }
}

/// Whether `pid` is a live process (a zombie is not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        let state = s[s.rfind(')').unwrap() + 1..].split_whitespace().next();
        !matches!(state, Some("Z" | "X"))
    })
}

#[test]
fn sigterm_stops_hung_policies_and_what_they_started_and_the_rerun_resumes_to_the_same_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    // The first policy process starts a helper in its own session and one
    // in its group, then hangs on its first batch ignoring SIGTERM.
    let text = sized("hang_once", ", timeout_s = 600", "[1, 2]", 3);
    let m = write_manifest(tmp.path(), "m.toml", &text);
    let (out, pids) = (tmp.path().join("out"), tmp.path().join("pids"));
    let child = Command::new(assert_cmd::cargo::cargo_bin("witness"))
        .args(["run", "-q"])
        .arg(&m)
        .arg("--out")
        .arg(&out)
        .env("WITNESS_TEST_ONCE", tmp.path().join("once"))
        .env("WITNESS_TEST_PIDS", &pids)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let listed = || -> Vec<u32> {
        std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect()
    };
    let start = Instant::now();
    while listed().len() < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the policy never hung"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signals the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    assert!(stderr(&o).contains("stopped by SIGTERM"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("run the same command to resume"),
        "{}",
        stderr(&o)
    );
    std::thread::sleep(Duration::from_secs(1));
    let left: Vec<u32> = listed().into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "still running after SIGTERM: {left:?}");
    // The rerun resumes (the policy answers now) to the bytes of a run
    // never stopped.
    let o = run_marked(&m, &out, tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let fresh = tmp.path().join("fresh");
    assert!(run_marked(&m, &fresh, tmp.path()).status.success());
    same_files(&results(&out), &results(&fresh), "resumed after SIGTERM");
}

#[test]
fn a_policy_failing_again_and_again_trips_the_breaker_and_the_rerun_asks_its_fallbacks_again() {
    let tmp = tempfile::tempdir().unwrap();
    // Refuses every decision (not retryable) until the marker exists.
    let text = sized(
        "refuse_until",
        ", fallback = \"read\", breaker = 3",
        "[1]",
        3,
    );
    let m = write_manifest(tmp.path(), "m.toml", &text);
    let out = tmp.path().join("out");
    let o = run_marked(&m, &out, tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("arm py: the policy gave no usable answer 3 times in a row (breaker = 3)"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("the policy reported refusal: no"),
        "{}",
        stderr(&o)
    );
    assert!(!out.join("runs.parquet").exists());
    // Some decisions fell back and were logged before the breaker opened.
    let logged = std::fs::read_to_string(out.join("policy-log/py/part-000000.jsonl"))
        .unwrap_or_default()
        + &std::fs::read_to_string(out.join("policy-log/py/part-000001.jsonl")).unwrap_or_default();
    assert!(logged.contains("\"outcome\":\"fallback\""), "{logged}");
    // The policy is mended: the rerun asks those decisions again, so no
    // run of the arm keeps a fallback.
    std::fs::write(tmp.path().join("once"), "").unwrap();
    let o = run_marked(&m, &out, tmp.path());
    assert!(o.status.success(), "{}", stderr(&o));
    for r in assert_loopback(&out) {
        assert_eq!(r["fallbacks"], "0", "{r:?}");
    }
}

#[test]
fn a_helper_that_left_its_policys_process_group_is_stopped_with_the_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "m.toml", &sized("helper_setsid", "", "[1]", 3));
    let pids = tmp.path().join("pids");
    let o = witness()
        .args(["run", "-q"])
        .arg(&m)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .env("WITNESS_TEST_PIDS", &pids)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let helpers: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert!(!helpers.is_empty());
    std::thread::sleep(Duration::from_millis(500));
    let left: Vec<u32> = helpers.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "helpers outlived the run: {left:?}");
}

#[test]
fn a_run_says_how_many_decisions_of_each_external_arm_fell_back() {
    // Only reads carry a belief, so a belief of 1.7 makes just those fall
    // back: the run finishes (exit 0) and its last lines give the count.
    let tmp = tempfile::tempdir().unwrap();
    let text = sized(
        "belief_17",
        ", timeout_s = 5, retries = 0, fallback = \"read\", breaker = 0",
        "[1]",
        3,
    )
    .replace("population = 40", "population = 8");
    let m = write_manifest(tmp.path(), "m.toml", &text);
    let out = tmp.path().join("out");
    let o = witness()
        .arg("run")
        .arg(&m)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (fell, decided) = rows(&out, "runs")
        .into_iter()
        .filter(|r| r["arm"] == "py")
        .fold((0u64, 0u64), |(f, d), r| {
            (
                f + r["fallbacks"].parse::<u64>().unwrap(),
                d + r["decisions"].parse::<u64>().unwrap(),
            )
        });
    assert!(fell > 0 && fell < decided);
    let said = format!("arm py: {fell} of {decided} decision(s) fell back to \"read\"");
    assert!(stderr(&o).contains(&said), "{said}\n{}", stderr(&o));
}
