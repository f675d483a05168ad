//! policies/llm_chat.py against a stand-in chat-completions server on
//! 127.0.0.1 (tests/fixtures/llm_server.py, which answers as the harness's
//! `prober` would): a whole experiment runs through it and equals the
//! built-in arm; usage columns carry the server's token counts; a reply
//! without JSON is a `parse` error and an HTTP 429 a `rate_limit`, both
//! retried; HTTP 500s fall back after the retries; and the experiment
//! verifies offline from its record log once the server is gone.

mod common;

use common::{assert_same, assert_same_rows, by_arm, witness, write_manifest};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The stand-in server, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(mode: &str, dir: &Path) -> Server {
        let port_file = dir.join(format!("port-{mode}"));
        let child = Command::new("python3")
            .arg(format!("{ROOT}/tests/fixtures/llm_server.py"))
            .arg(mode)
            .arg(&port_file)
            .spawn()
            .expect("python3 runs the stand-in server");
        let start = Instant::now();
        while !port_file.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let port = std::fs::read_to_string(&port_file)
            .unwrap()
            .parse()
            .unwrap();
        Server { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn manifest(dir: &Path, port: u16, extra: &str) -> PathBuf {
    let text = format!(
        r#"
[experiment]
name = "llm"
model = "harness"

[fixed]
population = 12
rounds = 6
budget = 4

[grid]
seed = [1, 2]
truth = [false, true]

[[arm]]
name = "prober"
policy = "prober"

[[arm]]
name = "llm"
policy = "external"
external = {{ command = ["python3", "{ROOT}/policies/llm_chat.py", "--base-url", "http://127.0.0.1:{port}/v1", "--model", "fake-1", "--key-env", "WITNESS_TEST_KEY"], timeout_s = 30{extra} }}

[output]
policy_calls = true
"#
    );
    write_manifest(dir, &format!("llm-{port}.toml"), &text)
}

fn run(m: &Path, out: &Path) -> std::process::Output {
    witness()
        .args(["run", "-q"])
        .arg(m)
        .arg("--out")
        .arg(out)
        .env("WITNESS_TEST_KEY", "secret")
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap()
}

fn llm_runs(out: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    by_arm(out, "runs").remove("llm").unwrap()
}

fn n(r: &std::collections::BTreeMap<String, String>, c: &str) -> u64 {
    r[c].parse().unwrap_or_else(|_| panic!("{c} = {:?}", r[c]))
}

#[test]
fn a_whole_experiment_runs_through_the_adapter_and_verifies_with_the_server_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start("ok", tmp.path());
    let m = manifest(tmp.path(), server.port, "");
    let out = tmp.path().join("out");
    let o = run(&m, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(assert_same(&out, "runs", "prober", "llm"), 4);
    assert_same(&out, "trajectories", "prober", "llm");
    for r in llm_runs(&out) {
        let d = n(&r, "decisions");
        assert!(d > 0);
        // The server's token counts, one completion a decision.
        assert_eq!(
            (n(&r, "input_tokens"), n(&r, "output_tokens")),
            (100 * d, 7 * d)
        );
        assert_eq!(r["policy_name"], "llm-chat:fake-1");
    }
    drop(server);
    witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn bad_replies_and_rate_limits_are_retried_and_server_errors_fall_back() {
    let tmp = tempfile::tempdir().unwrap();
    for (mode, kind) in [("malformed", "parse"), ("rate_limit", "rate_limit")] {
        let server = Server::start(mode, tmp.path());
        let m = manifest(tmp.path(), server.port, "");
        let out = tmp.path().join(mode);
        let o = run(&m, &out);
        assert!(
            o.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // Retried to the same answers: the rows equal the built-in arm's.
        assert_same_rows(&out, "runs", "prober", "llm");
        let errors: u64 = llm_runs(&out).iter().map(|r| n(r, "policy_errors")).sum();
        assert!(errors > 0, "{mode}: the first replies were errors");
        assert!(llm_runs(&out).iter().all(|r| n(r, "fallbacks") == 0));
        let calls = &by_arm(&out, "policy_calls")["llm"];
        assert!(
            calls
                .iter()
                .any(|c| c["attempts"] == "2" && c["last_error"].contains(kind)),
            "{mode}: a call retried after a {kind} error"
        );
    }
    let server = Server::start("error500", tmp.path());
    let m = manifest(
        tmp.path(),
        server.port,
        ", retries = 1, fallback = \"pass\"",
    );
    let out = tmp.path().join("error500");
    let o = run(&m, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for r in llm_runs(&out) {
        assert_eq!(
            n(&r, "fallbacks"),
            n(&r, "decisions"),
            "every decision fell back"
        );
        assert_eq!(n(&r, "policy_errors"), 2 * n(&r, "decisions"));
    }
    let calls = &by_arm(&out, "policy_calls")["llm"];
    assert!(
        calls[0]["last_error"].contains("HTTP 500"),
        "{:?}",
        calls[0]
    );
}

#[test]
fn a_missing_key_stops_the_run_before_anything_is_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start("ok", tmp.path());
    let m = manifest(tmp.path(), server.port, "");
    let out = tmp.path().join("out");
    let o = witness()
        .args(["run", "-q"])
        .arg(&m)
        .arg("--out")
        .arg(&out)
        .env_remove("WITNESS_TEST_KEY")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("WITNESS_TEST_KEY (--key-env) is not set"),
        "{err}"
    );
}
