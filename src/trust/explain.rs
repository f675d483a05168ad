//! The explanation stored with every score (docs/models/trust.md §5, scores): exactly its
//! keys plus `superseded_by`, numbers at full precision, groups by root.

use serde_json::{json, Value};

use super::score::{Score, MODEL_VERSION};

pub fn explanation(s: &Score) -> Value {
    let groups: Vec<Value> = s
        .groups
        .iter()
        .map(|g| {
            json!({
                "root": s.root(g),
                "weight": g.weight,
                "polarity": g.polarity,
                "signals": s.signals(g).collect::<Vec<&str>>(),
                "real_world": g.real_world,
            })
        })
        .collect();
    json!({
        "model_version": MODEL_VERSION,
        "prior": { "alpha": s.alpha0, "beta": s.beta0, "inherited_from": s.inherited_from },
        "support_mass": s.support_mass,
        "opposition_mass": s.opposition_mass,
        "groups": groups,
        "self_reported": s.self_reported(),
        "flags": s.flags,
        "superseded_by": s.superseded_by,
    })
}
