//! Finds the first difference between two JSON documents under the replay
//! rule of witness-engine/1 (docs/models/cascade.md §13): discrete values (integers, strings,
//! booleans, list lengths, keys) must be identical, floats may differ by at
//! most a tolerance. Used by `replay` and by the golden tests.

use serde_json::Value as Json;

/// Compares `expected` against `actual`. With `subset`, keys only `actual`
/// has are allowed (a golden file may carry fewer fields than an export).
/// Returns the path and a description of the first difference.
pub fn first_difference(expected: &Json, actual: &Json, tol: f64, subset: bool) -> Option<String> {
    walk(expected, actual, tol, subset, "$")
}

fn walk(e: &Json, a: &Json, tol: f64, subset: bool, path: &str) -> Option<String> {
    match (e, a) {
        (Json::Object(eo), Json::Object(ao)) => {
            for (k, ev) in eo {
                let p = format!("{path}.{k}");
                match ao.get(k) {
                    Some(av) => {
                        if let Some(d) = walk(ev, av, tol, subset, &p) {
                            return Some(d);
                        }
                    }
                    None => {
                        return Some(format!(
                            "{p}: in the stored document ({}), but the rerun does not write it",
                            brief(ev)
                        ))
                    }
                }
            }
            if !subset {
                if let Some(k) = ao.keys().find(|k| !eo.contains_key(*k)) {
                    return Some(format!(
                        "{path}.{k}: missing from the stored document (the rerun writes {})",
                        brief(&ao[k])
                    ));
                }
            }
            None
        }
        (Json::Array(ea), Json::Array(aa)) => {
            if ea.len() != aa.len() {
                return Some(format!("{path}: {} items, expected {}", aa.len(), ea.len()));
            }
            ea.iter()
                .zip(aa)
                .enumerate()
                .find_map(|(i, (ev, av))| walk(ev, av, tol, subset, &format!("{path}[{i}]")))
        }
        (Json::Number(en), Json::Number(an)) => {
            let discrete = |n: &serde_json::Number| n.is_i64() || n.is_u64();
            if discrete(en) != discrete(an) {
                let kind =
                    |n: &serde_json::Number| if discrete(n) { "an integer" } else { "a float" };
                return Some(format!(
                    "{path}: {an} is {} where the stored document holds {} ({en})",
                    kind(an),
                    kind(en)
                ));
            }
            let same = if discrete(en) {
                en == an
            } else {
                let (x, y) = (
                    en.as_f64().unwrap_or(f64::NAN),
                    an.as_f64().unwrap_or(f64::NAN),
                );
                (x - y).abs() <= tol
            };
            (!same).then(|| format!("{path}: {an}, expected {en}"))
        }
        _ => (e != a).then(|| format!("{path}: {}, expected {}", brief(a), brief(e))),
    }
}

/// Longest value shown whole in a difference.
const SHOWN: usize = 80;

/// A value as a message shows it: whole when short, else its kind and size
/// with the start of it (a whole trajectory would fill the terminal).
fn brief(v: &Json) -> String {
    let text = v.to_string();
    if text.len() <= SHOWN {
        return text;
    }
    let size = match v {
        Json::Array(a) => format!("a list of {} items", a.len()),
        Json::Object(o) => format!("an object of {} keys", o.len()),
        _ => format!("{} characters", text.chars().count()),
    };
    let start: String = text.chars().take(SHOWN).collect();
    format!("{start}... ({size})")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_within_tolerance_pass_and_integers_must_match() {
        let e = json!({"a": [1, 2.0], "b": "x"});
        assert_eq!(
            first_difference(&e, &json!({"a": [1, 2.0 + 1e-13], "b": "x"}), 1e-12, false),
            None
        );
        assert_eq!(
            first_difference(&e, &json!({"a": [2, 2.0], "b": "x"}), 1e-12, false).as_deref(),
            Some("$.a[0]: 2, expected 1")
        );
        assert!(first_difference(&e, &json!({"a": [1, 2.1], "b": "x"}), 1e-12, false).is_some());
        // An integer stays an integer: 20 is not 20.0000000000001.
        let d = first_difference(
            &json!({"n": 20}),
            &json!({"n": 20.0000000000001}),
            1e-12,
            false,
        );
        assert!(d
            .unwrap()
            .contains("is a float where the stored document holds an integer"));
    }

    #[test]
    fn extra_keys_only_pass_as_a_subset() {
        let e = json!({"a": 1});
        let a = json!({"a": 1, "z": 0});
        assert_eq!(first_difference(&e, &a, 0.0, true), None);
        assert_eq!(
            first_difference(&e, &a, 0.0, false).as_deref(),
            Some("$.z: missing from the stored document (the rerun writes 0)")
        );
        // A long value is cut, with its size.
        let long = json!({"t": (0..100).collect::<Vec<i32>>()});
        let d = first_difference(&long, &json!({}), 0.0, false).unwrap();
        assert!(d.starts_with("$.t: in the stored document ([0,1,2,"), "{d}");
        assert!(
            d.ends_with("... (a list of 100 items)), but the rerun does not write it"),
            "{d}"
        );
        assert!(d.len() < 200, "{d}");
        assert!(first_difference(&a, &e, 0.0, false)
            .unwrap()
            .contains("$.z: in the stored document (0), but the rerun does not write it"));
    }
}
