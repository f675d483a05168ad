//! Stage one of manifest parsing: the TOML shapes exactly as written, with
//! source spans, and unknown keys rejected by serde. Nothing here knows what
//! a parameter means; `super::validate` turns these into domain types.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawManifest {
    /// Optional here only so that its absence gets a message naming the
    /// fix, rather than serde's.
    pub experiment: Option<Spanned<RawExperiment>>,
    #[serde(default)]
    pub fixed: Ordered,
    #[serde(default)]
    pub grid: Ordered,
    #[serde(default)]
    pub arm: Vec<Spanned<RawArm>>,
    #[serde(default)]
    pub output: Ordered,
    pub design: Option<Spanned<super::design::RawDesign>>,
    pub search: Option<Spanned<super::search::RawSearch>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExperiment {
    /// Both required; optional here for the same reason as `experiment`.
    pub name: Option<Spanned<String>>,
    pub model: Option<Spanned<String>>,
    #[serde(default)]
    pub description: String,
    /// Runs per chunk: the unit of parallel work, of resume and of shards.
    pub chunk_runs: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArm {
    pub name: Spanned<String>,
    pub policy: Option<Spanned<toml::Value>>,
    /// Who writes a member's messages (a model's arm key named `member`).
    pub member: Option<Spanned<toml::Value>>,
    /// The process that decides for this arm.
    pub external: Option<Spanned<crate::policy::spec::RawExternal>>,
    #[serde(default)]
    pub fixed: Ordered,
    #[serde(default)]
    pub grid: Ordered,
    #[serde(default)]
    pub placebo: bool,
}

/// A table's entries in the order written, each key and value with its
/// span: grid axes expand in written order, and errors point at the line.
#[derive(Debug, Default)]
pub struct Ordered(pub Vec<(Spanned<String>, Spanned<toml::Value>)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of parameter = value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Ordered, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = m.next_entry()? {
                    out.push(entry);
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V)
    }
}
