//! Grid axes as written (lists, ranges, steps, inline tables) resolved
//! into typed values of their parameters, with a clear error for each
//! value a parameter cannot take.

use std::ops::Range;

use super::raw::Ordered;
use super::{claim, Axis, Ctx, ManifestError};
use crate::params::{show, Kind, ParamId, ParamSpec, Value};

pub(super) fn axes(
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
pub(super) fn axis_values(
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
    // Equal values after coercion (9 and 9.0, -0.0 and 0.0) would only
    // repeat runs; a range has none.
    let mut seen = std::collections::HashMap::new();
    let listed = matches!(v.get_ref(), toml::Value::Array(_));
    if let Some((first, twice)) = values
        .iter()
        .filter(|_| listed)
        .find_map(|x| seen.insert(x.setting_key(), x).map(|first| (first, x)))
    {
        let what = if first.to_string() == twice.to_string() {
            format!("the value {twice} is listed more than once")
        } else {
            format!("the values {first} and {twice} are the same setting")
        };
        return Err(cx.err(
            v.span(),
            format!(
                "[{label}] {key} = {}: {what}; list each value once",
                show(v.get_ref())
            ),
        ));
    }
    Ok(values)
}

pub(super) fn range(
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
pub(super) fn decimals(x: f64) -> usize {
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
pub(super) fn round_to(x: f64, places: usize) -> f64 {
    format!("{x:.places$}").parse().unwrap_or(x)
}

/// A table as it would be written inline, for messages.
pub(super) fn inline_table(t: &toml::Table) -> String {
    let items: Vec<String> = t
        .iter()
        .map(|(k, v)| format!("{k} = {}", show(v)))
        .collect();
    format!("{{ {} }}", items.join(", "))
}
