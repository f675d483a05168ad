//! Experiment manifests: TOML in, a validated experiment out. Stage one
//! (`raw`) is the shape as written; stage two here resolves names against
//! the model's declared parameters and reports every problem with the file,
//! line, key, value and what is allowed.

mod design;
mod raw;
mod search;

pub use design::Source;

use sha2::{Digest, Sha256};
use std::ops::Range;

use crate::model::{DynModel, Registry};
use crate::params::{
    lookup, show, with_role, Kind, ParamError, ParamId, ParamSet, ParamSpec, Resolved, Role, Value,
};
use raw::{Ordered, RawArm, RawManifest};

pub const DEFAULT_CHUNK_RUNS: usize = 32;

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
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(64);
    for b in Sha256::digest(bytes) {
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
            cx.err(
                span,
                format!("{} (see docs/reference/manifest.md)", e.message().trim()),
            )
        })?;
        let exp = raw.experiment.get_ref();
        let name = exp.name.get_ref().trim().to_string();
        let name_ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            && !name.starts_with('.');
        if !name_ok {
            return Err(cx.err(
                exp.name.span(),
                format!(
                    "[experiment] name = {:?}: not usable as a folder name; allowed: letters, digits, '-', '_', '.'",
                    exp.name.get_ref()
                ),
            ));
        }
        let model = registry.find(exp.model.get_ref()).ok_or_else(|| {
            cx.err(
                exp.model.span(),
                format!(
                    "[experiment] model = {:?}: unknown model; allowed: one of {}",
                    exp.model.get_ref(),
                    registry.names().join(", ")
                ),
            )
        })?;
        let chunk_runs = match &exp.chunk_runs {
            None => DEFAULT_CHUNK_RUNS,
            Some(c) if (1..=1_000_000).contains(c.get_ref()) => *c.get_ref() as usize,
            Some(c) => {
                return Err(cx.err(
                    c.span(),
                    format!(
                        "[experiment] chunk_runs = {}: out of range; allowed: 1 ..= 1000000",
                        c.get_ref()
                    ),
                ))
            }
        };
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
            description: exp.description.clone(),
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

fn axes(
    cx: &Ctx,
    specs: &[ParamSpec],
    table: &Ordered,
    taken: &mut Vec<ParamId>,
    label: &str,
) -> Result<Vec<Axis>, ManifestError> {
    let mut out = Vec::new();
    for (k, v) in &table.0 {
        let id = claim(cx, specs, k, taken, label)?;
        let spec = id.spec(specs);
        let values = axis_values(cx, spec, v, label)?;
        out.push(Axis {
            id,
            name: spec.name,
            values,
        });
    }
    Ok(out)
}

/// An axis is a list of values, or `{ from, to }` for an integer parameter.
fn axis_values(
    cx: &Ctx,
    spec: &ParamSpec,
    v: &toml::Spanned<toml::Value>,
    label: &str,
) -> Result<Vec<Value>, ManifestError> {
    let key = spec.name;
    let items: Vec<toml::Value> = match v.get_ref() {
        toml::Value::Array(items) => items.clone(),
        toml::Value::Table(t) => range(cx, spec, t, v.span(), label)?,
        other => {
            return Err(cx.err(
                v.span(),
                format!(
                "[{label}] {key} = {}: a grid axis is a list of values or {{ from = A, to = B[, step = S | count = N] }}; \
                     to pin one value, write [{0}] or put it under [fixed]",
                show(other)
            ),
            ))
        }
    };
    if items.is_empty() {
        return Err(cx.err(
            v.span(),
            format!("[{label}] {key} = []: an axis needs at least one value"),
        ));
    }
    let values: Vec<Value> = items
        .iter()
        .map(|item| {
            spec.accept(item)
                .map_err(|e| cx.param_err(v.span(), label, e))
        })
        .collect::<Result<_, _>>()?;
    // Equal values after coercion (9 and 9.0) would only repeat runs; a
    // range has none.
    let mut seen = std::collections::HashSet::new();
    let listed = matches!(v.get_ref(), toml::Value::Array(_));
    if let Some(twice) = values
        .iter()
        .filter(|_| listed)
        .find(|x| !seen.insert(format!("{x:?}")))
    {
        return Err(cx.err(
            v.span(),
            format!(
                "[{label}] {key} = {}: the value {twice} is listed more than once; list each value once",
                show(v.get_ref())
            ),
        ));
    }
    Ok(values)
}

fn range(
    cx: &Ctx,
    spec: &ParamSpec,
    t: &toml::Table,
    span: Range<usize>,
    label: &str,
) -> Result<Vec<toml::Value>, ManifestError> {
    let key = spec.name;
    let bad = |why: &str| {
        cx.err(
            span.clone(),
            format!(
                "[{label}] {key} = {}: malformed range: {why}; write {{ from = A, to = B }} (integers), \
                 {{ from = A, to = B, step = S }} or {{ from = A, to = B, count = N }}",
                inline_table(t)
            ),
        )
    };
    let integer = match spec.kind {
        Kind::Int { .. } => true,
        Kind::Float { .. } => false,
        _ => {
            return Err(bad(&format!(
                "ranges are for numeric parameters, and {key} takes {}",
                spec.kind.allowed()
            )))
        }
    };
    if let Some(extra) = t
        .keys()
        .find(|k| !["from", "to", "step", "count"].contains(&k.as_str()))
    {
        return Err(bad(&format!("unknown key `{extra}`")));
    }
    let count = match t.get("count") {
        None => None,
        Some(toml::Value::Integer(n)) if (2..=10_000_000).contains(n) => Some(*n as u64),
        Some(toml::Value::Integer(_)) => return Err(bad("`count` must be in 2 ..= 10000000")),
        Some(_) => return Err(bad("`count` is not an integer")),
    };
    if t.contains_key("step") && count.is_some() {
        return Err(bad("give `step` or `count`, not both"));
    }
    let too_many = || bad("more than 10,000,000 values");
    if integer {
        // Exact integer arithmetic: no value passes through a float.
        let int = |name: &str| match t.get(name) {
            Some(toml::Value::Integer(i)) => Ok(Some(i128::from(*i))),
            Some(_) => Err(bad(&format!("`{name}` is not an integer"))),
            None => Ok(None),
        };
        let need = |name: &str| int(name)?.ok_or_else(|| bad(&format!("`{name}` is missing")));
        let (from, to) = (need("from")?, need("to")?);
        if from > to {
            return Err(bad("`from` is above `to`"));
        }
        let step = match (int("step")?, count) {
            (Some(step), _) if step <= 0 => return Err(bad("`step` must be above 0")),
            (Some(step), _) => step,
            (None, None) => 1,
            (None, Some(c)) => {
                let gaps = i128::from(c) - 1;
                if (to - from) % gaps != 0 || to == from {
                    return Err(bad(&format!(
                        "{c} evenly spaced distinct integers do not fit from {from} to {to}; choose a count minus one that divides the span"
                    )));
                }
                (to - from) / gaps
            }
        };
        if (to - from) / step >= 10_000_000 {
            return Err(too_many());
        }
        let n = (to - from) / step;
        return Ok((0..=n)
            .map(|k| toml::Value::Integer((from + k * step) as i64))
            .collect());
    }
    let number = |name: &str| match t.get(name) {
        Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
        Some(toml::Value::Float(x)) if x.is_finite() => Ok(Some(*x)),
        Some(_) => Err(bad(&format!("`{name}` is not a number"))),
        None => Ok(None),
    };
    let need = |name: &str| number(name)?.ok_or_else(|| bad(&format!("`{name}` is missing")));
    let (from, to) = (need("from")?, need("to")?);
    if from > to {
        return Err(bad("`from` is above `to`"));
    }
    let values: Vec<f64> = match (number("step")?, count) {
        (None, None) => {
            return Err(bad(&format!(
                "{key} takes numbers, so say how to space them: `step` or `count`"
            )))
        }
        (Some(step), _) => {
            if step <= 0.0 {
                return Err(bad("`step` must be above 0"));
            }
            // Values are rounded to the decimals `from` and `step` are
            // written with, so 0.1 steps give 0.3, not 0.30000000000000004.
            let n = ((to - from) / step * (1.0 + 1e-12)).floor();
            if n >= 10_000_000.0 {
                return Err(too_many());
            }
            let places = decimals(from).max(decimals(step));
            (0..=n as u64)
                .map(|i| round_to(from + i as f64 * step, places))
                .filter(|&x| x <= to)
                .collect()
        }
        (None, Some(count)) => {
            let gaps = (count - 1) as f64;
            (0..count)
                .map(|i| {
                    let x = if i + 1 == count {
                        to
                    } else {
                        from + (to - from) * i as f64 / gaps
                    };
                    round_to(x, 12)
                })
                .collect()
        }
    };
    // Rounding must not merge values or move one outside the range.
    if values.iter().any(|&x| x < from || x > to) || values.windows(2).any(|w| w[0] >= w[1]) {
        return Err(bad(
            "its values repeat or leave the range once rounded to the decimals written; use a larger step or fewer values",
        ));
    }
    Ok(values.into_iter().map(toml::Value::Float).collect())
}

/// Digits after the point in a number's shortest form.
fn decimals(x: f64) -> usize {
    let text = format!("{x:?}");
    match text.split_once('e') {
        Some((m, e)) => {
            let frac = m.split_once('.').map_or(0, |(_, f)| f.len()) as i64;
            (frac - e.parse::<i64>().unwrap_or(0)).clamp(0, 17) as usize
        }
        None => text
            .split_once('.')
            .map_or(0, |(_, f)| f.trim_end_matches('0').len()),
    }
}

/// `x` rounded to `places` decimals, through its decimal text.
fn round_to(x: f64, places: usize) -> f64 {
    format!("{x:.places$}").parse().unwrap_or(x)
}

/// A table as it would be written inline, for messages.
fn inline_table(t: &toml::Table) -> String {
    let items: Vec<String> = t
        .iter()
        .map(|(k, v)| format!("{k} = {}", show(v)))
        .collect();
    format!("{{ {} }}", items.join(", "))
}

fn arm(
    cx: &Ctx,
    specs: &[ParamSpec],
    a: &RawArm,
    common: &[ParamId],
) -> Result<Arm, ManifestError> {
    let name = a.name.get_ref().trim().to_string();
    if name.is_empty() {
        return Err(cx.err(
            a.name.span(),
            "[[arm]] name = \"\": an arm needs a non-empty name",
        ));
    }
    if name.contains(':') {
        return Err(cx.err(
            a.name.span(),
            format!("[[arm]] name = {name:?}: ':' is kept for the arms witness generates (`base:placebo`); choose a name without it"),
        ));
    }
    let label = format!("arm {name}");
    let mut taken: Vec<ParamId> = common.to_vec();
    let mut fixed = Vec::new();
    // Arm keys: `policy` sets the model's first arm parameter, `member` the
    // arm parameter of that name.
    let arm_keys = [("policy", &a.policy), ("member", &a.member)];
    for (word, value) in arm_keys {
        let Some(p) = value else { continue };
        let found = specs
            .iter()
            .enumerate()
            .find(|(_, s)| s.role == Role::Arm && (word == "policy" || s.name == word));
        let id = found.map(|(i, _)| ParamId(i)).ok_or_else(|| {
            cx.err(
                p.span(),
                format!("[{label}] {word}: this model has no {word} parameter; set its parameters under fixed = {{ ... }} instead"),
            )
        })?;
        let key = id.spec(specs).name;
        if taken.contains(&id) {
            return Err(cx.err(
                p.span(),
                format!("[{label}] {word}: `{key}` is already set in [fixed] or [grid]; set it per arm only"),
            ));
        }
        taken.push(id);
        fixed.push((
            id,
            id.spec(specs)
                .accept(p.get_ref())
                .map_err(|e| cx.param_err(p.span(), &label, e))?,
        ));
    }
    let external = match &a.external {
        None => None,
        Some(raw) => {
            let span = raw.span();
            let raw = raw.clone().into_inner();
            Some(
                crate::policy::External::new(raw, cx.folder.clone())
                    .map_err(|e| cx.err(span, format!("[{label}] external: {e}")))?,
            )
        }
    };
    for (k, v) in &a.fixed.0 {
        let id = claim(cx, specs, k, &mut taken, &format!("{label} fixed"))?;
        fixed.push((
            id,
            id.spec(specs)
                .accept(v.get_ref())
                .map_err(|e| cx.param_err(v.span(), &label, e))?,
        ));
    }
    let axes = axes(cx, specs, &a.grid, &mut taken, &format!("{label} grid"))?;
    Ok(Arm {
        name,
        fixed,
        axes,
        placebo_of: None,
        external,
    })
}

/// The placebo of an arm: the same runs with the replicate parameter at 1,
/// so only the draws a replicate varies differ. `compare` uses it to size
/// chance differences. The replicate must be left to the placebo, or the
/// placebo would repeat its baseline's runs exactly.
fn placebo_of(
    cx: &Ctx,
    specs: &[ParamSpec],
    raw: &toml::Spanned<RawArm>,
    arm: &Arm,
    common: &[ParamId],
    index: usize,
) -> Result<Arm, ManifestError> {
    let id = with_role(specs, Role::Replicate).ok_or_else(|| {
        cx.err(
            raw.span(),
            format!(
                "[[arm]] {}: placebo = true needs a model with a replicate parameter",
                arm.name
            ),
        )
    })?;
    let key = id.spec(specs).name;
    if arm.fixed.iter().any(|(k, _)| *k == id) || arm.axes.iter().any(|a| a.id == id) {
        return Err(cx.err(
            raw.span(),
            format!(
                "[[arm]] {}: placebo = true sets `{key}`; remove `{key}` from the arm",
                arm.name
            ),
        ));
    }
    if common.contains(&id) {
        return Err(cx.err(
            raw.span(),
            format!(
                "[[arm]] {}: placebo = true reruns the arm with `{key}` = 1, but `{key}` is set in [fixed] or [grid], \
                 so the placebo could repeat its baseline's runs exactly; remove `{key}` from [fixed] and [grid]",
                arm.name
            ),
        ));
    }
    let mut placebo = arm.clone();
    placebo.name = format!("{}:placebo", arm.name);
    placebo.fixed.push((id, Value::Int(1)));
    placebo.placebo_of = Some(index);
    Ok(placebo)
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
