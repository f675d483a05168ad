//! Model parameters as the runner sees them: a typed value, a declared kind
//! with its allowed range, and a resolved set in declaration order. Models
//! declare their parameters once (name, kind, default, doc); manifests,
//! `--set` and exports are all checked against that one declaration.

use std::fmt;

/// One parameter value, or one cell of an output row.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<i64>),
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
    /// As a label shows it: strings without quotes (`graph=hub`).
    pub fn plain(&self) -> String {
        match self {
            Value::Str(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// What a parameter accepts. Ranges are inclusive.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Bool,
    Int {
        min: i64,
        max: i64,
    },
    Float {
        min: f64,
        max: f64,
    },
    Choice(&'static [&'static str]),
    /// A list of integers, each in range (e.g. correction rounds).
    IntList {
        min: i64,
        max: i64,
    },
    /// `"none"` or an integer in range (e.g. a refutation cap).
    IntOrNone {
        min: i64,
        max: i64,
    },
}

impl Kind {
    /// The allowed values, as an error message shows them.
    pub fn allowed(&self) -> String {
        match *self {
            Kind::Bool => "true or false".into(),
            Kind::Int { min, max } => format!("an integer in {min} ..= {max}"),
            Kind::Float { min, max } => format!("a number in {min:?} ..= {max:?}"),
            Kind::Choice(c) => format!("one of {}", c.join(", ")),
            Kind::IntList { min, max } => format!("a list of integers, each in {min} ..= {max}"),
            Kind::IntOrNone { min, max } => format!("\"none\" or an integer in {min} ..= {max}"),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: Kind,
    pub default: fn() -> Value,
    pub doc: &'static str,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub name: String,
    pub value: String,
    pub problem: String,
    pub allowed: String,
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_empty() {
            write!(
                f,
                "parameter `{}`: {}; allowed: {}",
                self.name, self.problem, self.allowed
            )
        } else {
            write!(
                f,
                "parameter `{}` = {}: {}; allowed: {}",
                self.name, self.value, self.problem, self.allowed
            )
        }
    }
}

impl std::error::Error for ParamError {}

impl ParamError {
    pub fn new(name: &str, value: impl fmt::Display, problem: &str, allowed: String) -> Self {
        ParamError {
            name: name.to_string(),
            value: value.to_string(),
            problem: problem.to_string(),
            allowed,
        }
    }
}

impl ParamSpec {
    /// Coerces a TOML value to this parameter's kind and checks its range.
    /// Integers are accepted where a float is expected (`gain = 6`), and a
    /// bare word where a choice is expected, since `--set graph=hub` is how
    /// people type it.
    pub fn accept(&self, raw: &toml::Value) -> Result<Value, ParamError> {
        let bad =
            |problem: &str| ParamError::new(self.name, show(raw), problem, self.kind.allowed());
        let in_range = |i: i64, min: i64, max: i64| (min..=max).contains(&i);
        match (self.kind, raw) {
            (Kind::Bool, toml::Value::Boolean(b)) => Ok(Value::Bool(*b)),
            (Kind::Int { min, max }, toml::Value::Integer(i)) => {
                if in_range(*i, min, max) {
                    Ok(Value::Int(*i))
                } else {
                    Err(bad("out of range"))
                }
            }
            (Kind::Float { min, max }, toml::Value::Integer(_) | toml::Value::Float(_)) => {
                let x = match raw {
                    toml::Value::Integer(i) => *i as f64,
                    toml::Value::Float(x) => *x,
                    _ => unreachable!(),
                };
                if x >= min && x <= max {
                    Ok(Value::Float(x))
                } else {
                    Err(bad("out of range"))
                }
            }
            (Kind::Choice(options), toml::Value::String(s)) => {
                if options.contains(&s.as_str()) {
                    Ok(Value::Str(s.clone()))
                } else {
                    Err(bad("unknown value"))
                }
            }
            (Kind::IntList { min, max }, toml::Value::Array(items)) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    match item {
                        toml::Value::Integer(i) if in_range(*i, min, max) => out.push(*i),
                        toml::Value::Integer(_) => return Err(bad("an element is out of range")),
                        _ => return Err(bad("an element is not an integer")),
                    }
                }
                Ok(Value::List(out))
            }
            (Kind::IntOrNone { .. }, toml::Value::String(s)) if s == "none" => Ok(Value::Null),
            (Kind::IntOrNone { min, max }, toml::Value::Integer(i)) => {
                if in_range(*i, min, max) {
                    Ok(Value::Int(*i))
                } else {
                    Err(bad("out of range"))
                }
            }
            _ => Err(bad(&format!("wrong type ({})", raw.type_str()))),
        }
    }
}

/// A TOML value as the user wrote it, for error messages.
pub fn show(raw: &toml::Value) -> String {
    match raw {
        toml::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// Declares a parameter: `spec!(name, kind, default, doc)`.
macro_rules! spec {
    ($name:literal, $kind:expr, $default:expr, $doc:literal) => {
        $crate::params::ParamSpec {
            name: $name,
            kind: $kind,
            default: || $default,
            doc: $doc,
        }
    };
}
pub(crate) use spec;

/// Every parameter of a model with a value, in the model's declaration order.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub values: Vec<(&'static str, Value)>,
}

impl Resolved {
    pub fn defaults(specs: &[ParamSpec]) -> Self {
        Resolved {
            values: specs.iter().map(|s| (s.name, (s.default)())).collect(),
        }
    }

    pub fn get(&self, name: &str) -> &Value {
        &self
            .values
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("model reads undeclared parameter `{name}`"))
            .1
    }

    pub fn set(&mut self, name: &str, value: Value) {
        let slot = self.values.iter_mut().find(|(n, _)| *n == name);
        slot.unwrap_or_else(|| panic!("undeclared parameter `{name}`"))
            .1 = value;
    }

    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Value::Int(i) => *i,
            v => panic!("parameter `{name}` is {v}, not an integer"),
        }
    }

    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            Value::Float(x) => *x,
            v => panic!("parameter `{name}` is {v}, not a number"),
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            Value::Bool(b) => *b,
            v => panic!("parameter `{name}` is {v}, not a bool"),
        }
    }

    pub fn str(&self, name: &str) -> &str {
        match self.get(name) {
            Value::Str(s) => s,
            v => panic!("parameter `{name}` is {v}, not a string"),
        }
    }

    pub fn list(&self, name: &str) -> &[i64] {
        match self.get(name) {
            Value::List(l) => l,
            v => panic!("parameter `{name}` is {v}, not a list"),
        }
    }
}

/// Finds a parameter's declaration, or says which names exist.
pub fn lookup<'a>(specs: &'a [ParamSpec], name: &str) -> Result<&'a ParamSpec, ParamError> {
    specs.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        ParamError::new(
            name,
            "(any)",
            "unknown parameter",
            format!("one of {}", names.join(", ")),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GAIN: ParamSpec = ParamSpec {
        name: "gain",
        kind: Kind::Float {
            min: 0.0,
            max: 100.0,
        },
        default: || Value::Float(6.0),
        doc: "",
    };

    #[test]
    fn integers_are_accepted_for_floats_and_ranges_are_inclusive() {
        assert_eq!(
            GAIN.accept(&toml::Value::Integer(100)),
            Ok(Value::Float(100.0))
        );
        let err = GAIN.accept(&toml::Value::Float(100.5)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "parameter `gain` = 100.5: out of range; allowed: a number in 0.0 ..= 100.0"
        );
    }

    #[test]
    fn wrong_type_names_the_type() {
        let err = GAIN.accept(&toml::Value::String("x".into())).unwrap_err();
        assert!(err.problem.contains("wrong type (string)"), "{err}");
    }
}
