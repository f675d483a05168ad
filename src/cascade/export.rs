//! The single-run export (docs/models/cascade.md §13) as a JSON document, the way back from
//! an export's `config` to a parameter set (which `replay` needs), and the
//! readable summary `simulate` prints. Pure: the CLI does the reading and
//! writing.

use serde_json::{json, Map, Value as Json};

use super::config::{CascadeParams, Config, GRAPH_PARAMS, PARAMS};
use super::engine::{simulate, Parallelism, Run};
use super::metrics::{summarize, Snapshot};
use super::VERSION;
use crate::model::{Export, Simulation};
use crate::params::{lookup, ParamError, ParamId, ParamSet, Params, Resolved, Value};

pub const ASSUMPTIONS: &[&str] = &[
    "authored simulation rules, not fitted to the behaviour of real LLM agents",
    "direct probe grounding is absorbing: a checked agent never changes its belief again",
    "all copies of the success report share one root (report:0); all probes share probe:0",
    "the adaptive link between confidence and checking is assumed, not established",
    "initial reports and probes are independent seeded Bernoulli draws, not quotas",
    "corrections are external interventions outside the effort budget",
    "the seeded generator (Xoshiro256++) is for reproducibility, not cryptography",
];

/// The resolved configuration: model parameters flat, graph parameters
/// nested under `graph_params` (those in `graph_params`); parameters in
/// `skip` are left out.
fn config_json(p: &Resolved, graph_params: ParamSet, skip: ParamSet) -> Json {
    let mut top = Map::new();
    let mut gp = Map::new();
    for (i, (name, v)) in p.values.iter().enumerate() {
        let id = ParamId(i);
        if skip.contains(id) {
            continue;
        }
        if GRAPH_PARAMS.contains(id) {
            if graph_params.contains(id) {
                gp.insert(name.to_string(), v.to_json());
            }
        } else {
            top.insert(name.to_string(), v.to_json());
        }
    }
    top.insert("graph_params".into(), Json::Object(gp));
    Json::Object(top)
}

fn snapshot_json(s: &Snapshot) -> Json {
    json!({
        "round": s.round, "support": s.support, "refute": s.refute, "uncertain": s.uncertain,
        "correct": s.correct, "mistaken": s.mistaken, "brier": s.brier, "mean_belief": s.mean_belief,
        "probe_reach": s.probe_reach, "report_reach": s.report_reach, "checked": s.checked,
        "requested": s.requested, "completed": s.completed, "canceled": s.canceled,
        "messages": s.messages, "effort": s.effort, "pending": s.pending,
    })
}

pub fn export(p: &Resolved, run: &Run) -> Json {
    let cfg = &run.config;
    let s = summarize(&run.trajectory, cfg.population);
    let ignored = cfg.ignored();
    json!({
        "engine": VERSION,
        "config": config_json(p, GRAPH_PARAMS, p.quiet(PARAMS)),
        "effective_parameters": config_json(p, cfg.graph.params(), ignored.union(p.quiet(PARAMS))),
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
            "requested": s.requested, "completed": s.completed, "canceled": s.canceled,
            "messages": s.messages, "effort": s.effort, "final_pending": s.final_pending,
            "failed": run.violation.is_some(),
        },
        "trajectory": run.trajectory.iter().map(snapshot_json).collect::<Vec<_>>(),
        "failures": run.violation.iter()
            .map(|v| json!({"identity": v.identity, "round": match v.at {
                Some(crate::model::Position::Round(r)) => Some(r),
                _ => None,
            }, "detail": v.detail}))
            .collect::<Vec<_>>(),
        "agents": run.agents.iter().enumerate().map(|(i, a)| json!({
            "id": i, "degree": run.graph.degree(i), "p": a.p, "checked": a.checked,
            "roots": a.ledger.sorted_names(), "requested": a.requested,
        })).collect::<Vec<_>>(),
    })
}

/// Reads an export's `config` back into a validated parameter set. Keys it
/// does not carry take their defaults, as they did when it was written.
pub fn resolved_from_config(config: &Json) -> Result<(Resolved, Config), ParamError> {
    let mut p = Resolved::defaults(PARAMS);
    let mut set = |key: &str, v: &Json| -> Result<(), ParamError> {
        let id = lookup(PARAMS, key)?;
        p.set(id, Value::from_json(id.spec(PARAMS), v)?);
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

fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

/// The readable summary `simulate` prints.
pub fn describe(run: &Run) -> String {
    let c = &run.config;
    let s = summarize(&run.trajectory, c.population);
    let n = c.population as f64;
    let mut out = format!(
        "{VERSION}  seed {}  {} agents  {} rounds  graph {}  policy {}  allocation {}  truth {}\n",
        c.seed, c.population, c.rounds, c.graph, c.policy, c.allocation, c.truth
    );
    out += &format!(
        "mistaken   peak {} ({} agents)  mean {}  final {}\n",
        pct(s.peak_mistaken),
        (s.peak_mistaken * n).round(),
        pct(s.mean_mistaken),
        pct(s.final_mistaken)
    );
    out += &format!(
        "uncertain  peak {}  mean {}  final {}\n",
        pct(s.peak_uncertain),
        pct(s.mean_uncertain),
        pct(s.final_uncertain)
    );
    out += &format!(
        "brier      peak {:.4}  mean {:.4}  final {:.6}\n",
        s.peak_brier, s.mean_brier, s.final_brier
    );
    out += &match s.first_clear_round {
        Some(r) => format!("first clear round  {r}\n"),
        None => "first clear round  none (still mistaken agents at the end)\n".to_string(),
    };
    out += &format!(
        "checks     requested {}  completed {}  canceled {}  pending {}\n",
        s.requested, s.completed, s.canceled, s.final_pending
    );
    out += &format!("messages   {}  effort {}\n", s.messages, s.effort);
    for iv in &run.interventions {
        out += &format!("correction round {}: agents {:?}\n", iv.round, iv.agents);
    }
    out += &match &run.violation {
        None => "identities hold\n".to_string(),
        Some(v) => format!("FAILED: {v}\n"),
    };
    out
}

/// The cascade's export: the document of docs/models/cascade.md §13 and the readable summary.
pub struct CascadeExport;

impl Export for CascadeExport {
    fn simulate(&self, p: &Resolved, with_export: bool) -> Result<Simulation, ParamError> {
        let cfg = Config::new(CascadeParams::from_resolved(p))?;
        let run = simulate(&cfg, Parallelism::Auto);
        Ok(Simulation {
            text: describe(&run),
            export: with_export.then(|| export(p, &run)),
            failed: run.violation.is_some(),
        })
    }

    fn params_of(&self, doc: &Json) -> Result<Resolved, ParamError> {
        resolved_from_config(&doc["config"]).map(|(p, _)| p)
    }
}
