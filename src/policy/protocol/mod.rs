//! witness-policy/1 on the wire: JSON Lines, one object a line. The runner
//! says `hello`, the process answers `ready` with its identity; each
//! `decide` carries the decisions of one round of one run, and the process
//! answers `decisions`, items matched by key; `bye` ends it. Answers are
//! data: each is checked against what the decision point allows before it
//! is used.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value as Json};

use crate::model::{Answer, DecisionPoint};

pub const PROTOCOL: &str = "witness-policy/1";

/// What identifies a policy: what it says of itself in `ready`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub name: String,
    pub version: String,
    pub digest: String,
}

/// A decision as sent: its full key, what the decider observes, and the
/// actions it may take.
#[derive(Clone, Debug, Serialize)]
pub struct Item<'a> {
    pub key: &'a str,
    /// The observation as canonical JSON text.
    pub obs: &'a RawValue,
    pub allowed: &'a [&'static str],
}

/// What an answer cost, as the process reports it; every field optional,
/// and fields witness does not know (a provider's own) are ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cached_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cost_microusd: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub latency_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
}

impl Usage {
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }
}

pub fn hello(model: &str, version: &str, decision: &str, max_batch: usize) -> String {
    json!({"type": "hello", "protocol": PROTOCOL, "model": model, "model_version": version,
           "decision": decision, "max_batch": max_batch})
    .to_string()
}

/// A `decide` message, serialized from borrowed parts (no copy of the
/// observations is made on the way).
#[derive(Serialize)]
struct DecideMsg<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    batch: &'a str,
    run: RunInfo<'a>,
    items: &'a [Item<'a>],
}

#[derive(Serialize)]
struct RunInfo<'a> {
    run_key: &'a str,
    params: &'a Json,
}

pub fn decide(batch: &str, run_key: &str, params: &Json, items: &[Item]) -> String {
    serde_json::to_string(&DecideMsg {
        kind: "decide",
        batch,
        run: RunInfo { run_key, params },
        items,
    })
    .expect("a decide message is JSON")
}

pub fn bye() -> String {
    json!({"type": "bye"}).to_string()
}

/// The `ready` message: the identity and the batch size the process takes.
pub fn ready(msg: &Json) -> Result<(Identity, Option<usize>), String> {
    if msg["type"] != "ready" {
        return Err(format!("expected a `ready` message, got {}", short(msg)));
    }
    match &msg["protocol"] {
        Json::Null => {}
        Json::String(p) if p == PROTOCOL => {}
        other => {
            return Err(format!(
                "`ready` protocol = {other}: this runner speaks {PROTOCOL:?} only"
            ))
        }
    }
    let identity: Identity = serde_json::from_value(msg["policy"].clone())
        .map_err(|e| format!("`ready` needs policy {{name, version, digest}} (strings): {e}"))?;
    let max_batch = match &msg["max_batch"] {
        Json::Null => None,
        v => Some(
            v.as_u64()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("`ready` max_batch = {v}: a whole number above 0"))?
                as usize,
        ),
    };
    Ok((identity, max_batch))
}

/// One item of a `decisions` message: its key, and the answer or the error.
pub struct Reply {
    pub key: String,
    pub answer: Result<Json, ItemError>,
    pub usage: Usage,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ItemError {
    pub kind: String,
    pub message: String,
    pub retryable: bool,
}

/// The items of a `decisions` message for `batch`.
pub fn decisions(msg: &Json, batch: &str) -> Result<Vec<Reply>, String> {
    if msg["type"] != "decisions" {
        return Err(format!("expected `decisions`, got {}", short(msg)));
    }
    if msg["batch"] != batch {
        return Err(format!(
            "`decisions` for batch {}, expected {batch}",
            msg["batch"]
        ));
    }
    let items = msg["items"]
        .as_array()
        .ok_or("`decisions` needs an items array")?;
    items
        .iter()
        .map(|it| {
            let key = it["key"]
                .as_str()
                .ok_or_else(|| format!("a decision without a key: {}", short(it)))?
                .to_string();
            // A bad usage record is this decision's error, not the batch's.
            let (usage, bad_usage) = match &it["usage"] {
                Json::Null => (Usage::default(), None),
                u => match serde_json::from_value(u.clone()) {
                    Ok(u) => (u, None),
                    Err(e) => (Usage::default(), Some(format!("usage = {}: {e}", short(u)))),
                },
            };
            let answer = match (&it["error"], bad_usage) {
                (Json::Null, None) => Ok(it.clone()),
                (Json::Null, Some(message)) => Err(ItemError {
                    kind: "parse".into(),
                    message,
                    retryable: true,
                }),
                (Json::String(text), _) => Err(ItemError {
                    kind: "provider".into(),
                    message: text.clone(),
                    retryable: true,
                }),
                (e, _) => Err(ItemError {
                    kind: e["kind"].as_str().unwrap_or("provider").to_string(),
                    message: e["message"]
                        .as_str()
                        .map_or_else(|| short(e), str::to_string),
                    retryable: e["retryable"].as_bool().unwrap_or(true),
                }),
            };
            Ok(Reply { key, answer, usage })
        })
        .collect()
}

/// Checks an answer against the actions allowed and the decision point's
/// rules; an error names the key and the field:
/// `<key>: belief = 1.7: out of range 0..=1`.
pub fn check(
    key: &str,
    allowed: &[&str],
    obs: &str,
    raw: &Json,
    point: &DecisionPoint,
) -> Result<Answer, String> {
    let action = match &raw["action"] {
        Json::String(a) => a.as_str(),
        Json::Null => {
            return Err(format!(
                "{key}: action: missing (allowed: {})",
                allowed.join(", ")
            ))
        }
        v => {
            return Err(format!(
                "{key}: action = {}: not a string (allowed: {})",
                short(v),
                allowed.join(", ")
            ))
        }
    };
    if !allowed.contains(&action) {
        return Err(format!(
            "{key}: action = {action:?}: not allowed here (allowed: {})",
            allowed.join(", ")
        ));
    }
    let belief = match &raw["belief"] {
        Json::Null => None,
        Json::Number(n) => Some(
            n.as_f64()
                .filter(|b| b.is_finite() && (0.0..=1.0).contains(b))
                .ok_or_else(|| format!("{key}: belief = {n}: out of range 0..=1"))?,
        ),
        v => {
            return Err(format!(
                "{key}: belief = {}: not a number in 0..=1",
                short(v)
            ))
        }
    };
    if point.belief_for.contains(&action) && belief.is_none() {
        return Err(format!(
            "{key}: belief: missing; action {action} needs a number in 0..=1"
        ));
    }
    let text = match &raw["text"] {
        Json::Null => None,
        Json::String(s) if s.len() <= point.text_limit => Some(s.clone()),
        Json::String(s) => {
            return Err(format!(
                "{key}: text: {} bytes, over the limit of {}",
                s.len(),
                point.text_limit
            ))
        }
        v => return Err(format!("{key}: text = {}: not a string", short(v))),
    };
    if point.text_for.contains(&action) && text.is_none() {
        return Err(format!("{key}: text: missing; action {action} needs text"));
    }
    if let Some(fields) = point.fields {
        fields(action, raw, obs).map_err(|e| format!("{key}: {e}"))?;
    }
    Ok(Answer {
        action: action.to_string(),
        belief,
        text,
        raw: raw.clone(),
    })
}

/// JSON with every object's keys sorted, so equal values give equal text
/// whatever order they were built in.
pub fn canonical(v: &Json) -> String {
    let mut out = Vec::new();
    write_canonical(v, &mut out);
    String::from_utf8(out).expect("JSON is UTF-8")
}

fn write_canonical(v: &Json, out: &mut Vec<u8>) {
    let scalar = |v: &Json, out: &mut Vec<u8>| {
        serde_json::to_writer(&mut *out, v).expect("writing to memory")
    };
    match v {
        Json::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            // Models build their observations with sorted keys: then this
            // costs a scan.
            if !keys.is_sorted() {
                keys.sort();
            }
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, k).expect("writing to memory");
                out.push(b':');
                write_canonical(&m[k], out);
            }
            out.push(b'}');
        }
        Json::Array(items) => {
            out.push(b'[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(x, out);
            }
            out.push(b']');
        }
        other => scalar(other, out),
    }
}

/// The hash a logged answer is filed under: the canonical JSON of
/// `{"item": {allowed, key, obs}, "policy": {digest, name, version}}`, the
/// request item and the identity of the policy asked.
pub fn request_sha256(item: &Item, policy: &Identity) -> String {
    use sha2::{Digest, Sha256};
    let mut text = Vec::with_capacity(512);
    let mut put = |s: &str| text.extend_from_slice(s.as_bytes());
    put("{\"item\":{\"allowed\":");
    put(&serde_json::to_string(item.allowed).expect("JSON"));
    put(",\"key\":");
    put(&serde_json::to_string(item.key).expect("JSON"));
    put(",\"obs\":");
    put(item.obs.get());
    put("},\"policy\":");
    put(&canonical(&json!(policy)));
    put("}");
    Sha256::digest(&text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A message cut short for an error.
fn short(v: &Json) -> String {
    let s = v.to_string();
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests;
