//! A parameter's declaration: its name, what it accepts, its default, its
//! documentation and the role it plays for the runner.

use super::{Kind, ParamError, Value};

crate::words! {
    /// What a parameter means to the runner and the analysis, beyond its
    /// value. Roles replace recognising parameters by name.
    pub enum Role {
        /// An ordinary model parameter.
        Knob = "knob",
        /// The master seed: arms are paired by it (common random numbers).
        Seed = "seed",
        /// Varies only the draws a placebo rerun should vary.
        Replicate = "replicate",
        /// What `[[arm]] policy = ...` sets.
        Arm = "arm",
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: Kind,
    pub default: fn() -> Value,
    pub doc: &'static str,
    pub role: Role,
    /// Added after results were published: left out of run keys while at
    /// its default, and a column of `runs.parquet` only in experiments that
    /// set it, so results written before it existed keep their keys and
    /// columns.
    pub added: bool,
}

impl ParamSpec {
    /// Coerces a TOML value to this parameter's kind and checks its range.
    pub fn accept(&self, raw: &toml::Value) -> Result<Value, ParamError> {
        self.kind.accept(self.name, raw)
    }

    /// The documentation, without the leading space doc comments carry.
    pub fn doc(&self) -> &'static str {
        self.doc.trim()
    }
}

/// Index of a parameter in its model's declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub usize);

impl ParamId {
    /// The parameter called `name`, found at compile time when used in a
    /// constant (a misspelt name does not compile).
    pub const fn named(specs: &[ParamSpec], name: &str) -> ParamId {
        let mut i = 0;
        while i < specs.len() {
            if str_eq(specs[i].name, name) {
                return ParamId(i);
            }
            i += 1;
        }
        panic!("no parameter of that name")
    }

    pub fn spec(self, specs: &[ParamSpec]) -> &ParamSpec {
        &specs[self.0]
    }
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Finds a parameter's declaration, or says which names exist.
pub fn lookup(specs: &[ParamSpec], name: &str) -> Result<ParamId, ParamError> {
    specs
        .iter()
        .position(|s| s.name == name)
        .map(ParamId)
        .ok_or_else(|| {
            let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
            ParamError::new(
                name,
                "(any)",
                "unknown parameter",
                format!("one of {}", names.join(", ")),
            )
        })
}

/// The first parameter playing `role`, if the model has one.
pub fn with_role(specs: &[ParamSpec], role: Role) -> Option<ParamId> {
    specs.iter().position(|s| s.role == role).map(ParamId)
}
