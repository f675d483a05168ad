//! Arms: each `[[arm]]` resolved into its fixed settings and its own
//! axes, and the placebo arms derived from them.

use super::axes::axes;
use super::raw::RawArm;
use super::{claim, Arm, Ctx, ManifestError};
use crate::params::{with_role, ParamId, ParamSpec, Role, Value};

pub(super) fn arm(
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
    // A variant's label is `name[key=value, ...]` and `--where` splits on
    // commas and semicolons: a name holding these could not be told from
    // a label witness makes, nor picked out by a filter.
    if let Some(c) = name.chars().find(|c| "[]=,;".contains(*c)) {
        return Err(cx.err(
            a.name.span(),
            format!(
                "[[arm]] name = {name:?}: {c:?} is kept for arm variants' labels (`name[gain=3.0]`) and filters \
                 (`--where arm=a, gain=3.0`); choose a name without [ ] = , or ;"
            ),
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
pub(super) fn placebo_of(
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
