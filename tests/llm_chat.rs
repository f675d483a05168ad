//! policies/llm_chat.py against a stand-in chat-completions server on
//! 127.0.0.1 (tests/fixtures/llm_server.py, which answers as the harness's
//! `prober` would): a whole experiment runs through it and equals the
//! built-in arm; usage columns carry the server's token counts; a reply
//! without JSON is a `parse` error and an HTTP 429 a `rate_limit`, both
//! retried; HTTP 500s fall back after the retries (the run then exits 1,
//! its arm having fallen back entirely); and the experiment
//! verifies offline from its record log once the server is gone. Real
//! providers' reply shapes and faults (issue #47): content as a list of
//! parts, refusals in either shape, a body cut off or not JSON, NaN or
//! Infinity in the model's answer, and replies that made the JSON search
//! quadratic are each one decision's error (or answer), never a crash of the
//! adapter or a line that is not JSON.

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
    // No circuit breaker, so that every decision is asked and falls back;
    // an arm that fell back entirely makes the run exit 1, its rows kept.
    let m = manifest(
        tmp.path(),
        server.port,
        ", retries = 1, fallback = \"pass\", breaker = 0",
    );
    let out = tmp.path().join("error500");
    let o = run(&m, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("arm llm: all ") && err.contains("fell back"),
        "{err}"
    );
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

/// The adapter's stderr (every process of every arm) holds no Python
/// traceback: what went wrong was reported as an error item, not a crash.
fn assert_no_traceback(out: &Path) {
    for e in std::fs::read_dir(out.join("policy-logs"))
        .unwrap()
        .flatten()
    {
        let text = std::fs::read_to_string(e.path()).unwrap();
        assert!(
            !text.contains("Traceback"),
            "{}: the adapter crashed:\n{text}",
            e.path().display()
        );
    }
}

/// The experiment's policy_calls rows of the LLM arm.
fn llm_calls(out: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    by_arm(out, "policy_calls").remove("llm").unwrap()
}

/// Runs `mode` and asks that its first replies were errors of `reported`
/// (`"<kind>: <message start>"`), retried to the same rows as the built-in
/// arm, with no fallback, no crash and no broken batch.
fn retried_to_the_same_rows(
    mode: &str,
    reported: &[&str],
) -> Vec<std::collections::BTreeMap<String, String>> {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(mode, tmp.path());
    let m = manifest(tmp.path(), server.port, "");
    let out = tmp.path().join(mode);
    let o = run(&m, &out);
    assert!(
        o.status.success(),
        "{mode}: {} {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_traceback(&out);
    assert_same_rows(&out, "runs", "prober", "llm");
    assert_same_rows(&out, "trajectories", "prober", "llm");
    let runs = llm_runs(&out);
    assert!(
        runs.iter().all(|r| n(r, "fallbacks") == 0),
        "{mode}: no fallbacks"
    );
    assert!(
        runs.iter().map(|r| n(r, "policy_errors")).sum::<u64>() > 0,
        "{mode}: the first replies were errors"
    );
    let calls = llm_calls(&out);
    for c in &calls {
        // At most one error a decision, and that the adapter's report on
        // it, not a batch that broke (a crash, a line that is not JSON, a
        // timeout).
        assert!(c["errors"] == "0" || c["errors"] == "1", "{mode}: {c:?}");
        if c["errors"] == "1" {
            assert!(
                c["last_error"].contains(": the policy reported "),
                "{mode}: {c:?}"
            );
        }
    }
    for want in reported {
        assert!(
            calls.iter().any(|c| c["attempts"] == "2"
                && c["last_error"].contains(&format!("the policy reported {want}"))),
            "{mode}: no call retried after `{want}`: {:?}",
            calls.iter().find(|c| c["attempts"] != "1")
        );
    }
    calls
}

#[test]
fn content_given_as_a_list_of_parts_is_read_and_reasoning_parts_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start("parts", tmp.path());
    let m = manifest(tmp.path(), server.port, "");
    let out = tmp.path().join("out");
    let o = run(&m, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_no_traceback(&out);
    // The text parts, joined, hold the answer; the reasoning part's "pass"
    // was not taken for it: every answer is the built-in arm's, first time.
    assert_eq!(assert_same(&out, "runs", "prober", "llm"), 4);
    assert_same(&out, "trajectories", "prober", "llm");
    for r in llm_runs(&out) {
        let d = n(&r, "decisions");
        assert_eq!(
            (n(&r, "input_tokens"), n(&r, "output_tokens")),
            (100 * d, 7 * d)
        );
    }
}

#[test]
fn refusals_as_a_field_or_as_a_part_are_refusals_and_not_retried() {
    // By turns the server refuses with `content: null` and `refusal`,
    // refuses with a refusal part in a content list, and answers.
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start("refusal", tmp.path());
    let m = manifest(
        tmp.path(),
        server.port,
        ", retries = 2, fallback = \"pass\", breaker = 0",
    );
    let out = tmp.path().join("out");
    let o = run(&m, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_no_traceback(&out);
    let runs = llm_runs(&out);
    for r in &runs {
        // A refusal is one failed attempt and not retried: it falls back.
        assert_eq!(n(r, "fallbacks"), n(r, "policy_errors"), "{r:?}");
    }
    let fell_back: u64 = runs.iter().map(|r| n(r, "fallbacks")).sum();
    let decisions: u64 = runs.iter().map(|r| n(r, "decisions")).sum();
    assert!(
        0 < fell_back && fell_back < decisions,
        "{fell_back} of {decisions}"
    );
    let calls = llm_calls(&out);
    for c in &calls {
        assert_eq!(c["attempts"], "1", "{c:?}");
        if c["outcome"] == "fallback" {
            assert!(
                c["last_error"].contains("the policy reported refusal: I can't help with that."),
                "{c:?}"
            );
        } else {
            assert_eq!(c["outcome"], "answer", "{c:?}");
        }
    }
}

#[test]
fn a_reply_cut_off_or_not_json_is_a_retryable_provider_error() {
    let calls = retried_to_the_same_rows("truncated", &["provider"]);
    // Both faults were served and reported as such.
    for said in [
        "was cut off or garbled: IncompleteRead",
        "reply is not JSON",
    ] {
        assert!(
            calls.iter().any(|c| c["last_error"].contains(said)),
            "no call's last error says {said:?}"
        );
    }
}

#[test]
fn nan_or_infinity_in_the_answer_is_the_models_parse_error_never_sent_on() {
    let calls = retried_to_the_same_rows("nonfinite", &["parse: the model's answer has"]);
    for token in ["has NaN,", "has Infinity,", "has -Infinity,", "has 1e999,"] {
        assert!(
            calls.iter().any(|c| c["last_error"].contains(token)),
            "no call's last error says {token:?}"
        );
    }
}

#[test]
fn replies_of_200000_braces_are_parse_errors_answered_within_the_timeout() {
    // Each first reply is 200,000 "{", 40,000 nested '{"a":' or 33,333
    // '{"a":"{': no JSON object, found out in linear time (a quadratic
    // search, or a recursion error, broke the batch or ran past timeout_s).
    retried_to_the_same_rows("braces", &["parse: no JSON object in the reply"]);
}

/// The JSON search itself, in Python: it finds what json's own
/// `raw_decode` from the leftmost possible "{" finds (on random texts made
/// of JSON's pieces), refuses NaN and Infinity, reads each content shape,
/// and gets through pathological texts.
#[test]
fn the_json_search_agrees_with_json_and_reads_every_content_shape() {
    let o = Command::new("python3")
        .arg("-c")
        .arg(SEARCH_CHECK)
        .arg(format!("{ROOT}/policies/llm_chat.py"))
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("ok 20000"));
}

const SEARCH_CHECK: &str = r#"
import importlib.util, json, math, random, sys
spec = importlib.util.spec_from_file_location("llm_chat", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)

def reference(text):
    # The first "{" from which json reads an object, quadratic but plain.
    d = json.JSONDecoder()
    at = text.find("{")
    while at != -1:
        try:
            value, _ = d.raw_decode(text, at)
            if isinstance(value, dict):
                return value
        except (ValueError, RecursionError):
            pass
        at = text.find("{", at + 1)
    return None

def finite(v):
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, dict):
        return all(finite(x) for x in v.values())
    if isinstance(v, list):
        return all(finite(x) for x in v)
    return True

def search(text):
    try:
        return m.first_json_object(text), None
    except m.BadAnswer as e:
        return None, e

pieces = ['{', '}', '[', ']', '"', ':', ',', ' ', '\n', '1', '-', '0', '.5', 'e3',
          'E+', '"a"', '"b"', 'true', 'nul', 'null', 'NaN', 'Infinity', '\\', '\\"',
          '\\u00e9', '\t', '\x01', 'x', '1e999', '{"a":1}', '{"k": [1, 2]}', '"{"', '"}"']
random.seed(47)
for k in range(20000):
    text = "".join(random.choice(pieces) for _ in range(random.randint(0, 18)))
    want = reference(text)
    got, bad = search(text)
    if want is not None and not finite(want):
        assert bad is not None, (text, want, got)
    else:
        assert bad is None and json.dumps(got) == json.dumps(want), (text, want, got, bad)

assert search('Sure.\n```json\n{"action": "probe", "belief": 0.5}\n```')[0] == \
    {"action": "probe", "belief": 0.5}
assert search('{I think} {"action": "pass"} {"action": "probe"}')[0] == {"action": "pass"}
assert search('He said "hi. {"action": "pass", "belief": 1}')[0] == \
    {"action": "pass", "belief": 1}
assert "NaN" in str(search('{"action": "pass", "belief": NaN}')[1])
for text in ["{" * 200000, '{"a":' * 40000, '{"a":"{' * 33333, '{"' * 100000,
             '{"a":[' * 40000, '{"{":' + '":1,",' * 30000]:
    assert search(text) == (None, None), text[:20]

said = "I can't."
shapes = [
    ({"content": "x"}, ("x", None)),
    ({"content": None}, ("", None)),
    ({"content": None, "refusal": said}, ("", said)),
    ({"content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}},
                  {"type": "thinking", "thinking": "no"}, {"type": "text", "text": "b"}]},
     ("ab", None)),
    ({"content": [{"type": "refusal", "refusal": said}]}, ("", said)),
    ({"content": [{"type": "output_text", "text": {"value": "v"}}, "w"]}, ("vw", None)),
    ({"content": None, "tool_calls": [{"type": "function",
                                       "function": {"name": "f", "arguments": "{}"}}]},
     ("{}", None)),
    ({"content": 3}, (None, None)),
]
for message, want in shapes:
    assert m.message_text(message) == want, (message, m.message_text(message))
print("ok", k + 1)
"#;

#[test]
fn a_server_answering_401_to_every_call_trips_the_breaker_naming_the_error() {
    // A revoked key: every decision fails. The run neither ends on
    // fallbacks with exit 0 nor crawls through restarts: the breaker stops
    // it after 3 failed exchanges, naming the arm and the provider's error.
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start("unauthorized", tmp.path());
    let m = manifest(
        tmp.path(),
        server.port,
        ", fallback = \"pass\", breaker = 3",
    );
    let out = tmp.path().join("out");
    let o = run(&m, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("arm llm: the policy gave no usable answer 3 times in a row (breaker = 3)"),
        "{err}"
    );
    assert!(err.contains("401"), "{err}");
    assert!(!out.join("runs.parquet").exists());
    // With the breaker off, the run finishes on fallbacks and says so.
    let m = manifest(
        tmp.path(),
        server.port,
        ", fallback = \"pass\", breaker = 0, retries = 0",
    );
    let out = tmp.path().join("off");
    let o = run(&m, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error: arm llm: all ") && err.contains("fell back to \"pass\""),
        "{err}"
    );
}
