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
    let numeric: Vec<&'static str> = model
        .summary_columns()
        .iter()
        .filter(|c| matches!(c.ty, ColType::Int | ColType::Float))
        .map(|c| c.name)
        .collect();
    let metric = *numeric
        .iter()
        .find(|n| **n == r.metric.get_ref().as_str())
        .ok_or_else(|| {
            cx.err(
                r.metric.span(),
                format!(
                    "[search] metric = {:?}: not a numeric summary column of model {}; allowed: {}",
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
        let span = r.first.as_ref().map_or(raw.span(), |f| f.span());
        return Err(cx.err(
            span,
            format!("[search] first = {first}: more than max = {max}; allowed: 1 ..= {max}"),
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
