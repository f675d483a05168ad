//! One typed value: a parameter's setting, or one cell of an output row.

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<i64>),
}

/// Whether `Debug` writes this byte of a text as it is.
fn shown_as_is(b: u8) -> bool {
    (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\'
}

/// An integer in decimal, as `Display` writes it.
fn push_int(out: &mut String, i: i64) {
    let mut digits = [0u8; 20];
    let mut n = i.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&digits[at..]).expect("ASCII digits"));
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "none"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::List(v) => write!(f, "{v:?}"),
        }
    }
}

impl Value {
    /// Appends what `Display` writes, without the formatting machinery for
    /// the common cells: every run's key writes each of its parameters, and
    /// going through `fmt` was most of the key's cost on small runs.
    pub fn push_display(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("none"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => push_int(out, *i),
            // `Debug` of a text quotes it and escapes only `"`, `\` and
            // what is not printable ASCII: text without those is written
            // as it is.
            Value::Str(s) if s.bytes().all(shown_as_is) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            other => {
                use fmt::Write;
                let _ = write!(out, "{other}");
            }
        }
    }

    /// As a label shows it: strings without quotes (`graph=hub`).
    pub fn plain(&self) -> String {
        match self {
            Value::Str(s) => s.clone(),
            other => other.to_string(),
        }
    }

    /// A number, for statistics: integers and booleans count, the rest
    /// (null, text, lists) do not.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(x) => Some(*x),
            Value::Int(i) => Some(*i as f64),
            Value::Bool(b) => Some(f64::from(u8::from(*b))),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The same setting, where a float and an integer of equal value are
    /// the same (`gain=9` matches `gain=9.0`).
    pub fn same_setting(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Float(x), Value::Int(i)) | (Value::Int(i), Value::Float(x)) => *x == *i as f64,
            _ => self == other,
        }
    }

    /// A key that two values of one parameter share exactly when they are
    /// the same setting, for finding repeats by hashing: -0.0 is 0.0, as
    /// `==` has it, though `Debug` tells them apart.
    pub fn setting_key(&self) -> String {
        match self {
            Value::Float(x) if *x == 0.0 => format!("{:?}", Value::Float(0.0)),
            other => format!("{other:?}"),
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

/// Counts are stored as int64; a count past i64::MAX is not a count any
/// model can reach, so it saturates rather than wrapping negative.
impl From<u64> for Value {
    fn from(i: u64) -> Value {
        Value::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}

impl From<usize> for Value {
    fn from(i: usize) -> Value {
        Value::from(i as u64)
    }
}

impl From<u32> for Value {
    fn from(i: u32) -> Value {
        Value::Int(i64::from(i))
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Float(x)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl Value {
    /// As an export writes it: null as `"none"`, the word `--set` takes.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            Value::Null => json!("none"),
            Value::Bool(b) => json!(b),
            Value::Int(i) => json!(i),
            Value::Float(x) => json!(x),
            Value::Str(s) => json!(s),
            Value::List(l) => json!(l),
        }
    }

    /// A parameter's value from an export, checked against its declaration.
    pub fn from_json(
        spec: &super::ParamSpec,
        v: &serde_json::Value,
    ) -> Result<Value, super::ParamError> {
        let raw = json_to_toml(v).ok_or_else(|| {
            super::ParamError::new(spec.name, v, "not a TOML value", spec.kind.allowed())
        })?;
        spec.accept(&raw)
    }
}

fn json_to_toml(v: &serde_json::Value) -> Option<toml::Value> {
    use serde_json::Value as Json;
    Some(match v {
        Json::Bool(b) => toml::Value::Boolean(*b),
        Json::Number(n) if n.is_i64() => toml::Value::Integer(n.as_i64()?),
        Json::Number(n) => toml::Value::Float(n.as_f64()?),
        Json::String(s) => toml::Value::String(s.clone()),
        Json::Array(items) => {
            toml::Value::Array(items.iter().map(json_to_toml).collect::<Option<_>>()?)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::Int),
            Just(Value::Int(i64::MIN)),
            any::<f64>().prop_map(Value::Float),
            // Plain names, and texts with quotes, escapes and non-ASCII.
            "[a-z_0-9.-]{0,12}".prop_map(Value::Str),
            any::<String>().prop_map(Value::Str),
            "[ -~]{0,8}".prop_map(Value::Str),
            proptest::collection::vec(any::<i64>(), 0..4).prop_map(Value::List),
        ]
    }

    proptest! {
        #[test]
        fn push_display_writes_what_display_writes(v in value()) {
            let mut out = String::from("k=");
            v.push_display(&mut out);
            prop_assert_eq!(out, format!("k={v}"));
        }
    }

    #[test]
    fn minus_zero_is_the_setting_zero() {
        let (zero, minus) = (Value::Float(0.0), Value::Float(-0.0));
        assert_eq!(minus.setting_key(), zero.setting_key());
        assert_ne!(Value::Float(1.0).setting_key(), zero.setting_key());
    }
}
