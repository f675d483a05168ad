//! What a parameter accepts, and how a TOML value is checked against it.

use super::{ParamError, Value};

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
    pub const fn int(min: i64, max: i64) -> Kind {
        Kind::Int { min, max }
    }

    pub const fn float(min: f64, max: f64) -> Kind {
        Kind::Float { min, max }
    }

    pub const fn int_list(min: i64, max: i64) -> Kind {
        Kind::IntList { min, max }
    }

    pub const fn int_or_none(min: i64, max: i64) -> Kind {
        Kind::IntOrNone { min, max }
    }

    /// One of an enum's words.
    pub const fn choice<W: crate::words::Words>() -> Kind {
        Kind::Choice(W::NAMES)
    }

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

    /// The kind's name, as `describe` lists it.
    pub fn label(&self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::Int { .. } => "int",
            Kind::Float { .. } => "float",
            Kind::Choice(_) => "choice",
            Kind::IntList { .. } => "int list",
            Kind::IntOrNone { .. } => "int or none",
        }
    }

    /// Whether `v` is a value of this kind, in range: what every value a
    /// run reads has passed.
    pub fn holds(&self, v: &Value) -> bool {
        let within = |i: i64, min: i64, max: i64| (min..=max).contains(&i);
        match (*self, v) {
            (Kind::Bool, Value::Bool(_)) => true,
            (Kind::Int { min, max }, Value::Int(i)) => within(*i, min, max),
            (Kind::Float { min, max }, Value::Float(x)) => *x >= min && *x <= max,
            (Kind::Choice(c), Value::Str(s)) => c.contains(&s.as_str()),
            (Kind::IntList { min, max }, Value::List(l)) => l.iter().all(|&i| within(i, min, max)),
            (Kind::IntOrNone { .. }, Value::Null) => true,
            (Kind::IntOrNone { min, max }, Value::Int(i)) => within(*i, min, max),
            _ => false,
        }
    }

    /// Coerces a TOML value to this kind and checks its range. Integers are
    /// accepted where a float is expected (`gain = 6`), since that is how
    /// people type it.
    pub fn accept(&self, name: &str, raw: &toml::Value) -> Result<Value, ParamError> {
        let bad = |problem: &str| ParamError::new(name, show(raw), problem, self.allowed());
        let in_range = |i: i64, min: i64, max: i64| (min..=max).contains(&i);
        let range_checked = |v: Value| {
            if self.holds(&v) {
                Ok(v)
            } else {
                Err(bad("out of range"))
            }
        };
        match (*self, raw) {
            (Kind::Bool, toml::Value::Boolean(b)) => Ok(Value::Bool(*b)),
            (Kind::Int { .. }, toml::Value::Integer(i)) => range_checked(Value::Int(*i)),
            (Kind::Float { .. }, toml::Value::Integer(i)) => range_checked(Value::Float(*i as f64)),
            (Kind::Float { .. }, toml::Value::Float(x)) => range_checked(Value::Float(*x)),
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
            (Kind::IntOrNone { .. }, toml::Value::Integer(i)) => range_checked(Value::Int(*i)),
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

/// A value as typed on the command line: TOML (`true`, `[10, 20]`,
/// `"hub"`), and a bare word taken as text, so `graph=hub` works.
pub fn parse_word(text: &str) -> toml::Value {
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut t) => t.remove("v").expect("the key just written"),
        Err(_) => toml::Value::String(text.to_string()),
    }
}
