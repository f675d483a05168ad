//! The single-run export of section 8 as a JSON document, and the way back
//! from an export's `config` to a parameter set, which `replay` needs. Pure:
//! the CLI does the reading and writing.

use serde_json::{json, Map, Value as Json};

use super::config::{Config, GRAPH_PARAMS, PARAMS};
use super::engine::Run;
use super::metrics::{summarize, Snapshot};
use super::VERSION;
use crate::params::{lookup, ParamError, Resolved, Value};

pub const ASSUMPTIONS: &[&str] = &[
    "authored simulation rules, not fitted to the behaviour of real LLM agents",
    "direct probe grounding is absorbing: a checked agent never changes its belief again",
    "all copies of the success report share one root (report:0); all probes share probe:0",
    "the adaptive link between confidence and checking is assumed, not established",
    "initial reports and probes are independent seeded Bernoulli draws, not quotas",
    "corrections are external interventions outside the effort budget",
    "the seeded generator (Xoshiro256++) is for reproducibility, not cryptography",
];

fn param_json(v: &Value) -> Json {
    match v {
        Value::Null => Json::String("none".into()),
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::Float(x) => json!(x),
        Value::Str(s) => json!(s),
        Value::List(l) => json!(l),
    }
}

/// The resolved configuration: model parameters flat, graph parameters
/// nested under `graph_params` (all of them, or only the family's).
fn config_json(p: &Resolved, graph_params: &[&str]) -> Json {
    let mut top = Map::new();
    let mut gp = Map::new();
    for (name, v) in &p.values {
        if GRAPH_PARAMS.contains(name) {
            if graph_params.contains(name) {
                gp.insert(name.to_string(), param_json(v));
            }
        } else {
            top.insert(name.to_string(), param_json(v));
        }
    }
    top.insert("graph_params".into(), Json::Object(gp));
    Json::Object(top)
}

fn snapshot_json(s: &Snapshot) -> Json {
    let c = &s.counters;
    json!({
        "round": s.round, "support": s.support, "refute": s.refute, "uncertain": s.uncertain,
        "correct": s.correct, "mistaken": s.mistaken, "brier": s.brier, "mean_belief": s.mean_belief,
        "probe_reach": s.probe_reach, "report_reach": s.report_reach, "checked": s.checked,
        "requested": c.requested, "completed": c.completed, "canceled": c.canceled,
        "messages": c.messages, "effort": c.effort, "pending": s.pending,
    })
}

pub fn export(p: &Resolved, run: &Run) -> Json {
    let cfg = &run.config;
    let s = summarize(&run.trajectory, cfg.population);
    let c = &s.counters;
    let ignored = cfg.ignored();
    let effective = Resolved {
        values: p
            .values
            .iter()
            .filter(|(n, _)| !ignored.contains(n))
            .cloned()
            .collect(),
    };
    json!({
        "engine": VERSION,
        "config": config_json(p, GRAPH_PARAMS),
        "effective_parameters": config_json(&effective, cfg.graph.params()),
        "assumptions": ASSUMPTIONS,
        "interventions": run.interventions.iter()
            .map(|iv| json!({"round": iv.round, "agents": iv.agents}))
            .collect::<Vec<_>>(),
        "summary": {
            "peak_mistaken": s.peak_mistaken, "mean_mistaken": s.mean_mistaken,
            "final_mistaken": s.final_mistaken, "peak_uncertain": s.peak_uncertain,
            "mean_uncertain": s.mean_uncertain, "final_uncertain": s.final_uncertain,
            "peak_brier": s.peak_brier, "mean_brier": s.mean_brier, "final_brier": s.final_brier,
            "final_correct": s.final_correct, "final_probe_reach": s.final_probe_reach,
            "final_checked": s.final_checked, "first_clear_round": s.first_clear_round,
            "requested": c.requested, "completed": c.completed, "canceled": c.canceled,
            "messages": c.messages, "effort": c.effort, "final_pending": s.final_pending,
            "failed": run.violation.is_some(),
        },
        "trajectory": run.trajectory.iter().map(snapshot_json).collect::<Vec<_>>(),
        "failures": run.violation.iter()
            .map(|v| json!({"identity": v.identity, "round": v.round, "detail": v.detail}))
            .collect::<Vec<_>>(),
        "agents": run.agents.iter().enumerate().map(|(i, a)| json!({
            "id": i, "degree": run.graph.degree(i), "p": a.p, "checked": a.checked,
            "roots": a.ledger.sorted_names(), "requested": a.requested,
        })).collect::<Vec<_>>(),
    })
}

fn json_to_toml(v: &Json) -> Option<toml::Value> {
    Some(match v {
        Json::Bool(b) => toml::Value::Boolean(*b),
        Json::Number(n) if n.is_i64() => toml::Value::Integer(n.as_i64()?),
        Json::Number(n) => toml::Value::Float(n.as_f64()?),
        Json::String(s) => toml::Value::String(s.clone()),
        Json::Array(items) => {
            toml::Value::Array(items.iter().map(json_to_toml).collect::<Option<_>>()?)
        }
        _ => return None,
    })
}

/// Reads an export's `config` back into a validated parameter set. Keys it
/// does not carry take their defaults, as they did when it was written.
pub fn resolved_from_config(config: &Json) -> Result<(Resolved, Config), ParamError> {
    let mut p = Resolved::defaults(PARAMS);
    let mut set = |key: &str, v: &Json| -> Result<(), ParamError> {
        let spec = lookup(PARAMS, key)?;
        let raw = json_to_toml(v)
            .ok_or_else(|| ParamError::new(key, v, "not a TOML value", spec.kind.allowed()))?;
        p.set(spec.name, spec.accept(&raw)?);
        Ok(())
    };
    let obj = config.as_object().ok_or_else(|| {
        ParamError::new(
            "config",
            config,
            "the export's config is not an object",
            "a JSON object".into(),
        )
    })?;
    for (key, v) in obj {
        match (key.as_str(), v) {
            ("graph_params", Json::Object(gp)) => {
                for (k, v) in gp {
                    set(k, v)?;
                }
            }
            _ => set(key, v)?,
        }
    }
    let cfg = Config::from_resolved(&p)?;
    Ok((p, cfg))
}
