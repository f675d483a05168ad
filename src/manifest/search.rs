//! The `[search]` table: its raw shape, and its validation into a
//! `search::Search`. The resource is one of the manifest's `[grid]` axes,
//! added to the survivors rung by rung; the metric is a numeric summary
//! column of the model.

use serde::Deserialize;
use toml::Spanned;

use super::{Axis, Ctx, ManifestError};
use crate::model::{ColType, DynModel};
use crate::search::{Method, Search};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSearch {
    pub method: Spanned<String>,
    pub metric: Spanned<String>,
    pub maximize: Spanned<bool>,
    pub resource: Spanned<String>,
    pub first: Option<Spanned<i64>>,
    pub eta: Option<Spanned<i64>>,
    pub max: Option<Spanned<i64>>,
    pub alpha: Option<Spanned<f64>>,
    pub keep_at_least: Option<Spanned<i64>>,
}

/// A positive integer key, or its default.
fn count(
    cx: &Ctx,
    key: &str,
    v: &Option<Spanned<i64>>,
    default: usize,
    least: i64,
) -> Result<usize, ManifestError> {
    match v {
        None => Ok(default),
        Some(v) if *v.get_ref() >= least => Ok(*v.get_ref() as usize),
        Some(v) => Err(cx.err(
            v.span(),
            format!(
                "[search] {key} = {}: too small; allowed: {least} or more",
                v.get_ref()
            ),
        )),
    }
}

/// Refuses a floor that leaves nothing to remove: with `keep_at_least` at
/// or above the candidates that can leave, the search would only run its
/// first rung (a race) or the whole grid (halving).
pub fn check_floor(
    cx: &Ctx,
    raw: &Spanned<RawSearch>,
    s: &Search,
    candidates: u128,
) -> Result<(), ManifestError> {
    if (s.keep_at_least as u128) < candidates {
        return Ok(());
    }
    let span = raw
        .get_ref()
        .keep_at_least
        .as_ref()
        .map_or(raw.span(), |k| k.span());
    Err(cx.err(
        span,
        format!(
            "[search] keep_at_least = {}: the manifest has {candidates} candidate(s) that can leave (arm variants; \
             a placebo and its arm always stay), so none ever would; set it below {candidates}, or give the arms axes to race",
            s.keep_at_least
        ),
    ))
}

pub fn search(
    cx: &Ctx,
    model: &dyn DynModel,
    common: &[Axis],
    raw: &Spanned<RawSearch>,
) -> Result<Search, ManifestError> {
    let r = raw.get_ref();
    let method = match r.method.get_ref().as_str() {
        "race" => Method::Race,
        "halving" => Method::Halving,
        other => {
            return Err(cx.err(
                r.method.span(),
                format!(
                    "[search] method = {other:?}: unknown method; allowed: \"race\", \"halving\""
                ),
            ))
        }
    };
    // A race needs a score from every run: a column that may be null
    // ("never cleared") has no order a test could use.
    let numeric: Vec<&'static str> = model
        .summary_columns()
        .iter()
        .filter(|c| matches!(c.ty, ColType::Int | ColType::Float) && !c.nullable)
        .map(|c| c.name)
        .collect();
    let metric = *numeric
        .iter()
        .find(|n| **n == r.metric.get_ref().as_str())
        .ok_or_else(|| {
            cx.err(
                r.metric.span(),
                format!(
                    "[search] metric = {:?}: not a numeric summary column of model {} that every run has; allowed: {}",
                    r.metric.get_ref(),
                    model.name(),
                    numeric.join(", ")
                ),
            )
        })?;
    let axes: Vec<&str> = common.iter().map(|a| a.name).collect();
    let resource = common
        .iter()
        .position(|a| a.name == r.resource.get_ref().as_str())
        .ok_or_else(|| {
            cx.err(
                r.resource.span(),
                format!(
                    "[search] resource = {:?}: not a [grid] axis; the resource is the axis whose values are added rung by rung \
                     (usually the seed); [grid] axes: {}",
                    r.resource.get_ref(),
                    if axes.is_empty() { "none".to_string() } else { axes.join(", ") }
                ),
            )
        })?;
    let n = common[resource].values.len();
    if n < 2 {
        return Err(cx.err(
            r.resource.span(),
            format!(
                "[search] resource = {:?}: the axis has one value, so there is nothing to add; give it two or more",
                r.resource.get_ref()
            ),
        ));
    }
    let first = count(cx, "first", &r.first, 2, 1)?;
    let eta = count(cx, "eta", &r.eta, 3, 2)?;
    let max = count(cx, "max", &r.max, n, 1)?;
    if max > n {
        return Err(cx.err(
            r.max.as_ref().expect("given").span(),
            format!(
                "[search] max = {max}: the resource axis `{}` has {n} values; allowed: 1 ..= {n}",
                common[resource].name
            ),
        ));
    }
    if first > max {
        let (span, given) = match &r.first {
            Some(f) => (f.span(), ""),
            None => (raw.span(), " (the default)"),
        };
        return Err(cx.err(
            span,
            format!(
                "[search] first = {first}{given}: more than max = {max}; set first to 1 ..= {max}"
            ),
        ));
    }
    let alpha = match (&r.alpha, method) {
        (None, _) => 0.05,
        (Some(a), Method::Race) if *a.get_ref() > 0.0 && *a.get_ref() < 1.0 => *a.get_ref(),
        (Some(a), Method::Race) => {
            return Err(cx.err(
                a.span(),
                format!("[search] alpha = {}: allowed 0 < alpha < 1", a.get_ref()),
            ))
        }
        (Some(a), Method::Halving) => {
            return Err(cx.err(
                a.span(),
                "[search] alpha: halving keeps the best 1/eta and tests nothing; remove alpha, or use method = \"race\"",
            ))
        }
    };
    let keep_at_least = count(cx, "keep_at_least", &r.keep_at_least, 1, 1)?;
    Ok(Search {
        method,
        metric,
        maximize: *r.maximize.get_ref(),
        resource,
        first,
        eta,
        max,
        alpha,
        keep_at_least,
    })
}
