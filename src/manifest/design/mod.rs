//! The `[design]` table: its raw shape, and its validation into a
//! `design::Design`. Which keys a kind takes is checked here, so a key
//! meant for another kind (`samples` under `kind = "sobol"`) is an error
//! that names the kind's keys rather than a silent no-op. Listed points
//! (`kind = "list"`, inline or from a file) are checked in `list`.

mod list;

use serde::Deserialize;
use toml::Spanned;

use super::raw::Ordered;
use super::{claim, Ctx, ManifestError};
use crate::design::{sobol, Design, Factor, Method};
use crate::params::{show, Kind, ParamId, ParamSpec, Value};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDesign {
    pub kind: Option<Spanned<String>>,
    pub samples: Option<Spanned<i64>>,
    pub seed: Option<Spanned<i64>>,
    pub base: Option<Spanned<i64>>,
    pub second_order: Option<Spanned<bool>>,
    pub trajectories: Option<Spanned<i64>>,
    pub levels: Option<Spanned<i64>>,
    pub points: Option<Spanned<Vec<Ordered>>>,
    pub file: Option<Spanned<String>>,
    #[serde(default)]
    pub factors: Ordered,
}

/// Listed points as written: each a list of (parameter name, value).
type RawPoints = Vec<Vec<(String, toml::Value)>>;

/// A file a manifest reads besides itself: part of its hash, and copied
/// into the results folder beside `manifest.toml`.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// The path as written, relative to the manifest.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The most points a design may have.
const MAX_POINTS: u128 = 10_000_000;

const KINDS: &str = "\"grid\", \"list\", \"lhs\", \"sobol\", \"morris\"";

/// The design a `[design]` table declares (`None` for the grid), and the
/// file it read, if any.
pub fn design(
    cx: &Ctx,
    specs: &[ParamSpec],
    raw: &Spanned<RawDesign>,
    taken: &mut Vec<ParamId>,
) -> Result<(Option<Design>, Option<Source>), ManifestError> {
    let d = raw.get_ref();
    let kind = d.kind.as_ref().map_or("grid", |k| k.get_ref().as_str());
    let span = d.kind.as_ref().map_or(raw.span(), |k| k.span());
    let allowed: &[&str] = match kind {
        "grid" => &[],
        "list" => &["points", "file"],
        "lhs" => &["samples", "seed", "factors"],
        "sobol" => &["base", "second_order", "factors"],
        "morris" => &["trajectories", "levels", "seed", "factors"],
        other => {
            return Err(cx.err(
                span,
                format!("[design] kind = {other:?}: unknown design; allowed: {KINDS}"),
            ))
        }
    };
    let present = [
        ("samples", d.samples.as_ref().map(|s| s.span())),
        ("seed", d.seed.as_ref().map(|s| s.span())),
        ("base", d.base.as_ref().map(|s| s.span())),
        ("second_order", d.second_order.as_ref().map(|s| s.span())),
        ("trajectories", d.trajectories.as_ref().map(|s| s.span())),
        ("levels", d.levels.as_ref().map(|s| s.span())),
        ("points", d.points.as_ref().map(|s| s.span())),
        ("file", d.file.as_ref().map(|s| s.span())),
        ("factors", d.factors.0.first().map(|(k, _)| k.span())),
    ];
    if let Some((key, Some(at))) = present
        .iter()
        .find(|(k, at)| at.is_some() && !allowed.contains(k))
    {
        let takes = if allowed.is_empty() {
            "no other keys".to_string()
        } else {
            allowed.join(", ")
        };
        return Err(cx.err(
            at.clone(),
            format!("[design] {key}: not a key of kind = {kind:?}, which takes {takes}"),
        ));
    }
    let int =
        |v: &Option<Spanned<i64>>, key: &str, min: i64, max: i64, default: Option<i64>| match v {
            None => default.ok_or_else(|| {
                cx.err(
                    span.clone(),
                    format!(
                        "[design] kind = {kind:?} needs `{key}`, an integer in {min} ..= {max}"
                    ),
                )
            }),
            Some(x) if (min..=max).contains(x.get_ref()) => Ok(*x.get_ref()),
            Some(x) => Err(cx.err(
                x.span(),
                format!(
                    "[design] {key} = {}: out of range; allowed: an integer in {min} ..= {max}",
                    x.get_ref()
                ),
            )),
        };
    let seed = || int(&d.seed, "seed", 0, i64::MAX, Some(1)).map(|s| s as u64);
    let method = match kind {
        "grid" => return Ok((None, None)),
        "list" => return list::list(cx, specs, d, span, taken),
        "lhs" => Method::Lhs {
            samples: int(&d.samples, "samples", 1, MAX_POINTS as i64, None)? as usize,
            seed: seed()?,
        },
        "sobol" => {
            let base = int(&d.base, "base", 2, 1 << 24, None)?;
            if base.count_ones() != 1 {
                let at = d.base.as_ref().map_or(span.clone(), |b| b.span());
                let (lo, hi) = (
                    1i64 << (63 - base.leading_zeros()),
                    1i64 << (64 - base.leading_zeros()),
                );
                return Err(cx.err(
                    at,
                    format!(
                        "[design] base = {base}: Sobol' base samples must be a power of two (the sequence's balance needs it); try {lo} or {hi}"
                    ),
                ));
            }
            Method::Sobol {
                base: base as usize,
                second_order: d.second_order.as_ref().is_none_or(|s| *s.get_ref()),
            }
        }
        _ => {
            let levels = int(&d.levels, "levels", 2, 1000, Some(4))?;
            if levels % 2 == 1 {
                let at = d.levels.as_ref().map_or(span.clone(), |l| l.span());
                return Err(cx.err(
                    at,
                    format!(
                        "[design] levels = {levels}: Morris levels must be even, so a step of levels / (2 (levels - 1)) lands on the grid; try {}",
                        levels + 1
                    ),
                ));
            }
            Method::Morris {
                trajectories: int(&d.trajectories, "trajectories", 2, MAX_POINTS as i64, None)?
                    as usize,
                levels: levels as usize,
                seed: seed()?,
            }
        }
    };
    let factors = factors(cx, specs, &d.factors, span.clone(), taken)?;
    if matches!(method, Method::Sobol { .. }) && 2 * factors.len() > sobol::MAX_DIMS {
        return Err(cx.err(
            span,
            format!(
                "[design] {} factors: a Sobol' design takes at most {}; fix the others in [fixed] or screen them first with kind = \"morris\"",
                factors.len(),
                sobol::MAX_DIMS / 2
            ),
        ));
    }
    if let Method::Sobol { base, .. } = method {
        let unmixed = sobol::unmixed_factors(base, factors.len());
        if !unmixed.is_empty() {
            let names: Vec<&str> = unmixed.iter().map(|&j| factors[j].name).collect();
            return Err(cx.err(
                d.base.as_ref().map_or(span, |b| b.span()),
                format!(
                    "[design] base = {base}: over {} factors the first {base} Sobol' points give A and B the same {}, so {} indices would be 0 by construction, not measured; use base = {} or more",
                    factors.len(),
                    names.join(", "),
                    if names.len() == 1 { "its" } else { "their" },
                    sobol::smallest_base(factors.len())
                ),
            ));
        }
    }
    let size = method.size(factors.len()).unwrap_or(0);
    if size > MAX_POINTS {
        return Err(cx.err(
            span,
            format!(
                "[design] {size} points: over the limit of {MAX_POINTS}; ask for fewer samples"
            ),
        ));
    }
    Ok((Some(Design::sampled(method, factors)), None))
}

/// `[design.factors] name = { from = A, to = B, log = false }`.
fn factors(
    cx: &Ctx,
    specs: &[ParamSpec],
    table: &Ordered,
    span: std::ops::Range<usize>,
    taken: &mut Vec<ParamId>,
) -> Result<Vec<Factor>, ManifestError> {
    if table.0.is_empty() {
        return Err(cx.err(
            span,
            "[design] no factors: a sampled design needs [design.factors], e.g. gain = { from = 1.0, to = 9.0 }",
        ));
    }
    let mut out = Vec::new();
    for (k, v) in &table.0 {
        let id = claim(cx, specs, k, taken, "design.factors")?;
        let spec = id.spec(specs);
        let name = spec.name;
        let shape = "write { from = A, to = B } (and log = true to sample evenly in the logarithm)";
        let bad = |why: String| {
            cx.err(
                v.span(),
                format!(
                    "[design.factors] {name} = {}: {why}; {shape}",
                    show(v.get_ref())
                ),
            )
        };
        let integer = match spec.kind {
            Kind::Int { .. } => true,
            Kind::Float { .. } => false,
            other => {
                return Err(bad(format!(
                "a factor must be a number, and {name} takes {}; list its values in [grid] instead",
                other.allowed()
            )))
            }
        };
        let toml::Value::Table(t) = v.get_ref() else {
            return Err(bad("not a table".into()));
        };
        if let Some(extra) = t
            .keys()
            .find(|k| !["from", "to", "log"].contains(&k.as_str()))
        {
            return Err(bad(format!("unknown key `{extra}`")));
        }
        let end = |key: &str| -> Result<f64, ManifestError> {
            let raw = t
                .get(key)
                .ok_or_else(|| bad(format!("`{key}` is missing")))?;
            let value = spec
                .accept(raw)
                .map_err(|e| cx.param_err(v.span(), "design.factors", e))?;
            match value {
                Value::Int(i) => Ok(i as f64),
                Value::Float(x) => Ok(x),
                _ => Err(bad(format!("`{key}` is not a number"))),
            }
        };
        let (from, to) = (end("from")?, end("to")?);
        if from >= to {
            return Err(bad("`from` must be below `to`".into()));
        }
        let log = match t.get("log") {
            None => false,
            Some(toml::Value::Boolean(b)) => *b,
            Some(_) => return Err(bad("`log` is not true or false".into())),
        };
        if log && from <= 0.0 {
            return Err(bad("a log factor needs `from` above 0".into()));
        }
        out.push(Factor {
            id,
            name,
            from,
            to,
            log,
            integer,
        });
    }
    Ok(out)
}
