//! Tests of `policy::log`.

use super::*;
use serde_json::json;

fn entry(key: &str) -> Entry {
    Entry {
        key: key.into(),
        request_sha256: "00".into(),
        obs: RawValue::from_string(r#"{"belief":0.5}"#.into()).unwrap(),
        allowed: vec!["read".into()],
        outcome: Outcome::Answer,
        answer: Some(json!({"action": "read", "belief": 0.25})),
        errors: vec![],
        usage: Usage::default(),
        attempts: 1,
        replayed: false,
        check: String::new(),
    }
    .sealed()
}

#[test]
fn a_torn_last_line_is_dropped_and_an_edited_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = part(dir.path(), "a", 0);
    let mut w = Writer::new(path.clone());
    w.append(&[entry("k/r1/a0"), entry("k/r1/a1")]).unwrap();
    drop(w);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text += "{\"key\": \"k/r1/a2\", \"req";
    std::fs::write(&path, &text).unwrap();
    let log = load(&path).unwrap();
    assert_eq!(log.entries.len(), 2);
    // Reading leaves the file as it is (it may be another folder's, or
    // still being written); the writer cuts the torn line before it
    // appends.
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    let mut w = Writer::new(path.clone());
    w.append(&[entry("k/r1/a2")]).unwrap();
    drop(w);
    assert_eq!(load(&path).unwrap().entries.len(), 3);
    assert!(!std::fs::read_to_string(&path).unwrap().contains("\"req\n"));
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replacen("0.25", "0.75", 1);
    std::fs::write(&path, edited).unwrap();
    let e = load(&path).unwrap_err().to_string();
    assert!(
        e.contains("line 1: key k/r1/a0: the entry was changed"),
        "{e}"
    );
}

#[test]
fn compressed_logs_read_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = part(dir.path(), "a", 3);
    Writer::new(path.clone())
        .append(&[entry("k/r1/a0")])
        .unwrap();
    let before = load(&path).unwrap().entries;
    compress_all(dir.path()).unwrap();
    assert!(!path.exists() && compressed(&path).exists());
    assert_eq!(load(&path).unwrap().entries, before);
}
