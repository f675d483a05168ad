//! Experiment manifests: TOML in, a validated experiment out. Stage one
//! (`raw`) is the shape as written; stage two here resolves names against
//! the model's declared parameters and reports every problem with the file,
//! line, key, value and what is allowed.

mod arms;
mod axes;
mod design;
mod experiment;
mod raw;
mod search;

pub use design::Source;

use sha2::{Digest, Sha256};
use std::ops::Range;

use crate::model::{DynModel, Registry};
use crate::params::{lookup, show, ParamError, ParamId, ParamSet, ParamSpec, Resolved, Value};
use arms::{arm, placebo_of};
use axes::axes;
use experiment::Header;
use raw::{Ordered, RawManifest};

pub use experiment::DEFAULT_CHUNK_RUNS;

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub id: ParamId,
    pub name: &'static str,
    pub values: Vec<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    pub name: String,
    /// Parameters the arm pins, its arm key (`policy`) included.
    pub fixed: Vec<(ParamId, Value)>,
    pub axes: Vec<Axis>,
    /// For a generated placebo arm: the index of the arm it reruns.
    pub placebo_of: Option<usize>,
    /// The process that decides for the arm's runs, if they hand a
    /// decision out.
    pub external: Option<crate::policy::External>,
}

#[derive(Clone)]
pub struct Manifest {
    pub file: String,
    pub text: String,
    pub hash: String,
    pub name: String,
    pub model: &'static dyn DynModel,
    pub description: String,
    pub chunk_runs: usize,
    /// Defaults with `[fixed]` applied.
    pub base: Resolved,
    pub common: Vec<Axis>,
    pub arms: Vec<Arm>,
    /// Which of the model's detail tables to write, in the model's order.
    pub tables: Vec<bool>,
    /// Write `policy_calls`: one row per decision of an external arm.
    pub policy_calls: bool,
    /// The parameters that are columns of `runs.parquet`: every one but the
    /// later additions this manifest leaves at their defaults.
    pub shown: ParamSet,
    /// A sampled or listed design crossed with the grid; `None` for the
    /// full grid alone.
    pub design: Option<crate::design::Design>,
    /// Files the manifest reads (a design's CSV): part of `hash`.
    pub sources: Vec<Source>,
    /// A race or successive halving over the arms' candidates; `None`
    /// runs the whole grid.
    pub search: Option<crate::search::Search>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct ManifestError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub message: String,
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    sha256_hex_prefix(bytes, 64)
}

/// The first `digits` (even, at most 64) hex digits of `sha256_hex`,
/// writing out only those.
pub fn sha256_hex_prefix(bytes: &[u8], digits: usize) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(digits);
    for b in &Sha256::digest(bytes)[..digits / 2] {
        s.push(HEX[usize::from(b >> 4)] as char);
        s.push(HEX[usize::from(b & 15)] as char);
    }
    s
}

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    /// The manifest's folder: where external policies run.
    folder: std::path::PathBuf,
}

impl Ctx<'_> {
    fn err(&self, span: Range<usize>, message: impl Into<String>) -> ManifestError {
        let before = &self.text[..span.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        ManifestError {
            file: self.file.to_string(),
            line,
            col,
            message: message.into(),
        }
    }

    fn param_err(&self, span: Range<usize>, table: &str, e: ParamError) -> ManifestError {
        self.err(span, format!("[{table}] {e}"))
    }
}

impl Manifest {
    /// Whether some arm hands its decisions to an external policy (its
    /// results then carry the usage columns).
    pub fn has_external(&self) -> bool {
        self.arms.iter().any(|a| a.external.is_some())
    }

    /// Parses and validates manifest `text`, read from `file` (for messages).
    pub fn parse(file: &str, text: &str, registry: &Registry) -> Result<Manifest, ManifestError> {
        let folder = std::path::Path::new(file)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."))
            .to_path_buf();
        let cx = Ctx { file, text, folder };
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            let message = e.message().trim();
            // The parser's own words name a Rust type, not the limit.
            let message = if message.contains("value was too large") {
                format!(
                    "{}: too large; TOML integers are at most {} (see docs/reference/manifest.md)",
                    text.get(span.clone()).unwrap_or("an integer"),
                    i64::MAX
                )
            } else {
                format!("{message} (see docs/reference/manifest.md)")
            };
            cx.err(span, message)
        })?;
        let Header {
            name,
            model,
            description,
            chunk_runs,
        } = experiment::header(&cx, raw.experiment.as_ref(), registry)?;
        let specs = model.params();
        let mut base = Resolved::defaults(specs);
        let mut taken: Vec<ParamId> = Vec::new();
        for (k, v) in &raw.fixed.0 {
            let id = claim(&cx, specs, k, &mut taken, "fixed")?;
            base.set(
                id,
                id.spec(specs)
                    .accept(v.get_ref())
                    .map_err(|e| cx.param_err(v.span(), "fixed", e))?,
            );
        }
        let common = axes(&cx, specs, &raw.grid, &mut taken, "grid")?;
        let (design, source) = match &raw.design {
            Some(d) => design::design(&cx, specs, d, &mut taken)?,
            None => (None, None),
        };
        let sources: Vec<Source> = source.into_iter().collect();
        let search = match (&raw.search, &design) {
            (None, _) => None,
            (Some(s), Some(_)) => {
                return Err(cx.err(
                    s.span(),
                    "[search] with a [design]: a search races the arms' own grid axes over a [grid] axis; \
                     remove the [design], or run it without [search]",
                ))
            }
            (Some(s), None) => Some((s, search::search(&cx, model, &common, s)?)),
        };
        let mut arms: Vec<Arm> = Vec::new();
        for a in &raw.arm {
            let arm = arm(&cx, specs, a.get_ref(), &taken)?;
            if arms.iter().any(|x| x.name == arm.name) {
                return Err(cx.err(
                    a.get_ref().name.span(),
                    format!(
                        "[[arm]] name = {:?}: duplicate arm name; each arm needs its own name",
                        arm.name
                    ),
                ));
            }
            let placebo = a
                .get_ref()
                .placebo
                .then(|| placebo_of(&cx, specs, a, &arm, &taken, arms.len()))
                .transpose()?;
            arms.push(arm);
            arms.extend(placebo);
        }
        if arms.is_empty() {
            arms.push(Arm {
                name: "default".into(),
                fixed: vec![],
                axes: vec![],
                placebo_of: None,
                external: None,
            });
        }
        let search = match search {
            None => None,
            Some((raw_search, s)) => {
                // Candidates that can leave: each arm's own grid points,
                // a placebo and the arm it reruns aside.
                let free: u128 = arms
                    .iter()
                    .enumerate()
                    .filter(|(i, a)| {
                        a.placebo_of.is_none() && !arms.iter().any(|x| x.placebo_of == Some(*i))
                    })
                    .map(|(_, a)| {
                        a.axes
                            .iter()
                            .map(|x| x.values.len() as u128)
                            .product::<u128>()
                    })
                    .sum();
                search::check_floor(&cx, raw_search, &s, free)?;
                Some(s)
            }
        };
        let (tables, policy_calls) = output(&cx, model, &raw.output)?;
        if let Some((k, _)) = raw
            .output
            .0
            .iter()
            .find(|(k, v)| k.get_ref() == CALLS && v.get_ref().as_bool() == Some(true))
        {
            if !arms.iter().any(|a| a.external.is_some()) {
                return Err(cx.err(
                    k.span(),
                    "[output] policy_calls = true: no arm of this manifest has an external policy; remove it, or add `external = { ... }` to an arm",
                ));
            }
        }
        let set = arms
            .iter()
            .flat_map(|a| {
                a.fixed
                    .iter()
                    .map(|(id, _)| *id)
                    .chain(a.axes.iter().map(|x| x.id))
            })
            .chain(taken.iter().copied());
        let shown = specs
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.added)
            .map(|(i, _)| ParamId(i))
            .chain(set)
            .fold(ParamSet::EMPTY, |acc, id| acc.union(ParamSet::of(&[id])));
        Ok(Manifest {
            file: file.to_string(),
            text: text.to_string(),
            hash: manifest_hash(text, &sources),
            name,
            model,
            description,
            chunk_runs,
            base,
            common,
            arms,
            tables,
            policy_calls,
            shown,
            design,
            sources,
            search,
        })
    }
}

/// The hash that names a manifest's results: its text's SHA-256, or, when
/// it reads other files, the SHA-256 of the text and each file's name and
/// bytes (lengths first, so no two different inputs frame alike).
fn manifest_hash(text: &str, sources: &[Source]) -> String {
    if sources.is_empty() {
        return sha256_hex(text.as_bytes());
    }
    let mut all = Vec::new();
    let mut part = |b: &[u8]| {
        all.extend_from_slice(&(b.len() as u64).to_le_bytes());
        all.extend_from_slice(b);
    };
    part(text.as_bytes());
    for s in sources {
        part(s.name.as_bytes());
        part(&s.bytes);
    }
    sha256_hex(&all)
}

/// Resolves a key to a parameter and refuses a second setting of it.
fn claim(
    cx: &Ctx,
    specs: &[ParamSpec],
    k: &toml::Spanned<String>,
    taken: &mut Vec<ParamId>,
    table: &str,
) -> Result<ParamId, ManifestError> {
    let id = lookup(specs, k.get_ref()).map_err(|e| cx.param_err(k.span(), table, e))?;
    if taken.contains(&id) {
        return Err(cx.err(
            k.span(),
            format!("[{table}] {}: already set elsewhere in this manifest; set each parameter in one place", id.spec(specs).name),
        ));
    }
    taken.push(id);
    Ok(id)
}

/// The `[output]` key of the table of external decisions.
const CALLS: &str = "policy_calls";

fn output(
    cx: &Ctx,
    model: &dyn DynModel,
    table: &Ordered,
) -> Result<(Vec<bool>, bool), ManifestError> {
    let specs = model.tables();
    let mut want: Vec<bool> = specs.iter().map(|t| t.default_on).collect();
    let mut calls = false;
    for (k, v) in &table.0 {
        let mut names: Vec<&str> = specs.iter().map(|t| t.name).collect();
        names.push(CALLS);
        let i = names.iter().position(|n| n == k.get_ref()).ok_or_else(|| {
            cx.err(
                k.span(),
                format!(
                    "[output] {}: unknown output table; allowed: {}",
                    k.get_ref(),
                    names.join(", ")
                ),
            )
        })?;
        let slot = match want.get_mut(i) {
            Some(w) => w,
            None => &mut calls,
        };
        *slot = v.get_ref().as_bool().ok_or_else(|| {
            cx.err(
                v.span(),
                format!(
                    "[output] {} = {}: wrong type; allowed: true or false",
                    k.get_ref(),
                    show(v.get_ref())
                ),
            )
        })?;
    }
    Ok((want, calls))
}
