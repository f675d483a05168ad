//! `witness report` through the CLI: one self-contained page whose policy
//! admits exactly its own inline script and style, whose data block holds
//! what the folder's tables say, and whose bytes depend on the folder only.
//! (The page's rendering is checked in a real browser by
//! tests/interop/check_report.py.)

mod common;

use common::{run_ok, witness, write_manifest, SMALL};
use sha2::{Digest, Sha256};

fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let a = text.find(start).unwrap_or_else(|| panic!("no {start}")) + start.len();
    let b = text[a..].find(end).unwrap() + a;
    &text[a..b]
}

/// The inline data block, parsed.
fn data(page: &str) -> serde_json::Value {
    let json = between(
        page,
        "<script type=\"application/json\" id=\"witness-data\">",
        "</script>",
    );
    serde_json::from_str(json).unwrap()
}

fn b64_sha256(text: &str) -> String {
    // The same hash the browser computes, through an independent encoder.
    let digest = Sha256::digest(text.as_bytes());
    let abc = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = String::new();
    for b in digest.iter() {
        bits.push_str(&format!("{b:08b}"));
    }
    while !bits.len().is_multiple_of(6) {
        bits.push('0');
    }
    let mut out: String = bits
        .as_bytes()
        .chunks(6)
        .map(|c| abc[usize::from_str_radix(std::str::from_utf8(c).unwrap(), 2).unwrap()] as char)
        .collect();
    while !out.len().is_multiple_of(4) {
        out.push('=');
    }
    out
}

#[test]
fn the_page_is_self_contained_deterministic_and_holds_the_folders_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let dir = tmp.path().join("small");
    run_ok(&m, &dir);
    witness().arg("report").arg(&dir).assert().success();
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    witness().arg("report").arg(&dir).assert().success();
    assert!(
        std::fs::read_to_string(dir.join("report.html")).unwrap() == page,
        "not deterministic"
    );
    // The policy names the hashes of exactly the inline script and style.
    let policy = between(
        &page,
        "http-equiv=\"Content-Security-Policy\" content=\"",
        "\"",
    );
    assert!(policy.starts_with("default-src 'none';"), "{policy}");
    let script = between(&page, "<script>", "</script>");
    let style = between(&page, "<style>", "</style>");
    assert!(
        policy.contains(&format!("script-src 'sha256-{}'", b64_sha256(script))),
        "{policy}"
    );
    assert!(
        policy.contains(&format!("style-src 'sha256-{}'", b64_sha256(style))),
        "{policy}"
    );
    // The one address in it is SVG's namespace name, which is never fetched.
    let addresses = page.replace("\"http://www.w3.org/2000/svg\"", "");
    assert!(
        !addresses.contains("http://") && !addresses.contains("https://"),
        "the page names a network address"
    );
    // The data: every run counted, the headline means as `summary` computes them.
    let d = data(&page);
    assert_eq!(d["provenance"]["runs"], 64);
    assert_eq!(d["runs"]["rows"].as_array().unwrap().len(), 64);
    assert!(d["curves"]["figures"].as_array().unwrap().len() == 4);
    let out = witness()
        .args(["summary"])
        .arg(&dir)
        .args(["--metrics", "peak_mistaken"])
        .output()
        .unwrap();
    let summary = String::from_utf8(out.stdout).unwrap();
    let rows = d["summary"]["rows"].as_array().unwrap();
    let cols: Vec<&str> = d["summary"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let mean = cols.iter().position(|c| *c == "mean").unwrap();
    let metric = cols.iter().position(|c| *c == "metric").unwrap();
    let mut seen = 0;
    for r in rows.iter().filter(|r| r[metric] == "peak_mistaken") {
        let shown = format!("{:.4}", r[mean].as_f64().unwrap());
        assert!(summary.contains(&shown), "{shown} not in summary's output");
        seen += 1;
    }
    assert_eq!(seen, 16, "4 arm variants x 4 scenarios");
}

#[test]
fn verdicts_need_a_baseline_with_a_placebo_and_the_out_flag_moves_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let dir = tmp.path().join("small");
    run_ok(&m, &dir);
    witness()
        .arg("report")
        .arg(&dir)
        .args(["--baseline", "endorsement"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("placebo"));
    let placebo = SMALL.replace(
        "name = \"endorsement\"\npolicy = \"endorsement\"",
        "name = \"endorsement\"\npolicy = \"endorsement\"\nplacebo = true",
    );
    let m = write_manifest(tmp.path(), "placebo.toml", &placebo);
    let dir = tmp.path().join("placebo");
    run_ok(&m, &dir);
    let out = tmp.path().join("page.html");
    witness()
        .arg("report")
        .arg(&dir)
        .args(["--baseline", "endorsement", "--out"])
        .arg(&out)
        .assert()
        .success();
    let d = data(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(d["verdicts"]["baseline"], "endorsement");
    // 3 arm variants besides the baseline and its placebo, 4 scenarios.
    assert_eq!(d["verdicts"]["rows"].as_array().unwrap().len(), 3 * 4);
    assert!(!dir.join("report.html").exists());
}

#[test]
fn the_page_never_replaces_a_result_file() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let dir = tmp.path().join("small");
    run_ok(&m, &dir);
    for name in ["runs.parquet", "complete.json", "manifest.toml"] {
        let target = dir.join(name);
        let before = std::fs::read(&target).unwrap();
        witness()
            .arg("report")
            .arg(&dir)
            .arg("--out")
            .arg(&target)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("inside the results folder"));
        assert_eq!(std::fs::read(&target).unwrap(), before, "{name} changed");
    }
    // Nor through a link from outside.
    let link = tmp.path().join("page.html");
    std::os::unix::fs::symlink(dir.join("runs.parquet"), &link).unwrap();
    witness()
        .arg("report")
        .arg(&dir)
        .arg("--out")
        .arg(&link)
        .assert()
        .code(2);
    witness().args(["verify"]).arg(&dir).assert().success();
    // Any .html name in the folder is fine.
    witness()
        .arg("report")
        .arg(&dir)
        .arg("--out")
        .arg(dir.join("page.html"))
        .assert()
        .success();
}
