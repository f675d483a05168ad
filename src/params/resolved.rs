//! A full parameter set (every parameter with a value, in declaration
//! order) and sets of parameters.

use super::{ParamId, ParamSpec, Value};

/// Every parameter of a model with a value, in the model's declaration order.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub values: Vec<(&'static str, Value)>,
}

impl Resolved {
    /// The parameters added after results were published that sit at
    /// their defaults: left out of run keys and exports, so those of runs
    /// that never set them read as they did before.
    pub fn quiet(&self, specs: &[super::ParamSpec]) -> ParamSet {
        let mut out = ParamSet::EMPTY;
        for (i, ((_, v), spec)) in self.values.iter().zip(specs).enumerate() {
            if spec.added && *v == (spec.default)() {
                out.insert(super::ParamId(i));
            }
        }
        out
    }

    pub fn defaults(specs: &[ParamSpec]) -> Self {
        Resolved {
            values: specs.iter().map(|s| (s.name, (s.default)())).collect(),
        }
    }

    pub fn get(&self, id: ParamId) -> &Value {
        &self.values[id.0].1
    }

    pub fn set(&mut self, id: ParamId, value: Value) {
        self.values[id.0].1 = value;
    }

    /// The value of the parameter called `name`, if there is one.
    pub fn named(&self, name: &str) -> Option<&Value> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Sets a parameter by name, for tests and examples; panics on a name
    /// the model does not declare.
    pub fn set_named(&mut self, name: &str, value: Value) {
        let slot = self.values.iter_mut().find(|(n, _)| *n == name);
        slot.unwrap_or_else(|| panic!("undeclared parameter `{name}`"))
            .1 = value;
    }
}

/// A set of a model's parameters (at most 128, which the `params!` macro
/// checks at compile time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParamSet(u128);

impl ParamSet {
    pub const EMPTY: ParamSet = ParamSet(0);
    pub const ALL: ParamSet = ParamSet(!0);

    pub const fn of(ids: &[ParamId]) -> ParamSet {
        let mut bits = 0u128;
        let mut i = 0;
        while i < ids.len() {
            bits |= 1 << ids[i].0;
            i += 1;
        }
        ParamSet(bits)
    }

    pub fn contains(self, id: ParamId) -> bool {
        self.0 >> id.0 & 1 == 1
    }

    pub fn insert(&mut self, id: ParamId) {
        self.0 |= 1 << id.0;
    }

    pub fn union(self, other: ParamSet) -> ParamSet {
        ParamSet(self.0 | other.0)
    }

    pub fn intersection(self, other: ParamSet) -> ParamSet {
        ParamSet(self.0 & other.0)
    }

    /// The members of `self` that are not in `other`.
    pub fn difference(self, other: ParamSet) -> ParamSet {
        ParamSet(self.0 & !other.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The names of the members, in declaration order.
    pub fn names(self, specs: &[super::ParamSpec]) -> Vec<&'static str> {
        self.ids(specs.len()).map(|id| specs[id.0].name).collect()
    }

    /// The members below `n`, in declaration order.
    pub fn ids(self, n: usize) -> impl Iterator<Item = ParamId> {
        (0..n.min(128))
            .map(ParamId)
            .filter(move |&id| self.contains(id))
    }
}
