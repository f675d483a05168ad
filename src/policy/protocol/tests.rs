//! Tests of `policy::protocol`.

use super::*;

const POINT: DecisionPoint = DecisionPoint {
    name: "test.point",
    belief_for: &["read"],
    text_for: &["post"],
    text_limit: 8,
    safe: "read",
    fields: None,
};

#[test]
fn answers_are_checked_and_errors_name_the_key_and_field() {
    let allowed = ["check", "read"];
    let check = |raw: Json| check("k/r1/a2", &allowed, "{}", &raw, &POINT);
    let ok = check(json!({"action": "read", "belief": 0.25})).unwrap();
    assert_eq!((ok.action.as_str(), ok.belief), ("read", Some(0.25)));
    let err = |raw: Json| check(raw).unwrap_err();
    assert_eq!(
        err(json!({"action": "read", "belief": 1.7})),
        "k/r1/a2: belief = 1.7: out of range 0..=1"
    );
    assert!(err(json!({"action": "jump"})).contains("not allowed here (allowed: check, read)"));
    assert!(err(json!({"action": "read"})).contains("belief: missing"));
    assert!(err(json!({"belief": 0.5})).contains("action: missing"));
    assert!(err(json!({"action": "read", "belief": "0.5"})).contains("not a number"));
    assert!(err(json!({"action": 3})).contains("action = 3: not a string"));
}

#[test]
fn a_bad_usage_or_error_record_is_that_decision_s_error_and_keeps_its_text() {
    let msg = json!({"type": "decisions", "batch": "b", "items": [
        {"key": "a", "action": "read", "belief": 0.5, "usage": {"input_tokens": "many"}},
        {"key": "b", "error": "rate limited"},
        {"key": "c", "action": "read", "belief": 0.5, "usage": {"input_tokens": 3, "reasoning_tokens": 9}},
    ]});
    let r = decisions(&msg, "b").unwrap();
    let e = r[0].answer.as_ref().unwrap_err();
    assert_eq!(e.kind, "parse");
    assert!(e.message.contains("usage"), "{}", e.message);
    let e = r[1].answer.as_ref().unwrap_err();
    assert_eq!(
        (e.kind.as_str(), e.message.as_str()),
        ("provider", "rate limited")
    );
    assert!(r[2].answer.is_ok());
    assert_eq!(r[2].usage.input_tokens, Some(3));
}

#[test]
fn canonical_text_ignores_key_order_only() {
    let a: Json = serde_json::from_str(r#"{"b": [1, {"y": 2, "x": 0.1}], "a": null}"#).unwrap();
    let b: Json = serde_json::from_str(r#"{"a": null, "b": [1, {"x": 0.1, "y": 2}]}"#).unwrap();
    assert_eq!(canonical(&a), canonical(&b));
    assert_eq!(canonical(&a), r#"{"a":null,"b":[1,{"x":0.1,"y":2}]}"#);
    let c: Json = serde_json::from_str(r#"{"a": null, "b": [{"x": 0.1, "y": 2}, 1]}"#).unwrap();
    assert_ne!(canonical(&a), canonical(&c));
}

#[test]
fn the_request_hash_is_over_the_canonical_item_and_policy() {
    let obs = json!({"b": 1, "a": [0.5]});
    let text = RawValue::from_string(canonical(&obs)).unwrap();
    let item = Item {
        key: "k/r1/a0",
        obs: &text,
        allowed: &["read"],
    };
    let id = Identity {
        name: "n".into(),
        version: "1".into(),
        digest: "d".into(),
    };
    let whole = canonical(
        &json!({"policy": id, "item": {"obs": obs, "key": "k/r1/a0", "allowed": ["read"]}}),
    );
    use sha2::{Digest, Sha256};
    let want: String = Sha256::digest(whole.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(request_sha256(&item, &id), want);
}

#[test]
fn ready_is_checked() {
    let ok = json!({"type": "ready", "policy": {"name": "p", "version": "1", "digest": "d"}});
    assert_eq!(ready(&ok).unwrap().1, None);
    let mut v2 = ok.clone();
    v2["protocol"] = json!("witness-policy/2");
    assert!(ready(&v2)
        .unwrap_err()
        .contains("speaks \"witness-policy/1\" only"));
    assert!(ready(&json!({"type": "ready"}))
        .unwrap_err()
        .contains("policy {name, version, digest}"));
    let mut zero = ok;
    zero["max_batch"] = json!(0);
    assert!(ready(&zero).unwrap_err().contains("max_batch = 0"));
}
