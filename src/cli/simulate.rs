//! `witness simulate` and `witness replay`: one cascade run, its readable
//! summary, its JSON export, and the check that an export reproduces.

use anyhow::{Context, Result};
use std::path::Path;

use super::set;
use crate::cascade::config::{Config, PARAMS};
use crate::cascade::engine::{simulate as run_engine, Parallelism, Run};
use crate::cascade::export::{export as export_json, resolved_from_config};
use crate::cascade::metrics::summarize;
use crate::cascade::VERSION;
use crate::jsondiff::first_difference;
use crate::params::Resolved;

pub fn simulate(sets: &[String], export: Option<&Path>) -> Result<u8> {
    let mut p = Resolved::defaults(PARAMS);
    set::apply(PARAMS, &mut p, sets)?;
    let cfg = Config::from_resolved(&p)?;
    let run = run_engine(&cfg, Parallelism::Auto);
    print!("{}", describe(&p, &run));
    if let Some(path) = export {
        let text = serde_json::to_string_pretty(&export_json(&p, &run))?;
        crate::sink::atomic::write(path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        println!("export     {}", path.display());
    }
    Ok(if run.violation.is_some() {
        super::EXIT_FAILED
    } else {
        0
    })
}

fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

fn describe(p: &Resolved, run: &Run) -> String {
    let c = &run.config;
    let s = summarize(&run.trajectory, c.population);
    let n = c.population as f64;
    let k = &s.counters;
    let mut out = format!(
        "{VERSION}  seed {}  {} agents  {} rounds  graph {}  policy {}  allocation {}  truth {}\n",
        c.seed,
        c.population,
        c.rounds,
        p.str("graph"),
        p.str("policy"),
        p.str("allocation"),
        c.truth
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
        k.requested, k.completed, k.canceled, s.final_pending
    );
    out += &format!("messages   {}  effort {}\n", k.messages, k.effort);
    for iv in &run.interventions {
        out += &format!("correction round {}: agents {:?}\n", iv.round, iv.agents);
    }
    out += &match &run.violation {
        None => "identities hold\n".to_string(),
        Some(v) => format!("FAILED: {v}\n"),
    };
    out
}

pub fn replay(path: &Path) -> Result<u8> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let stored: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let engine = stored["engine"].as_str().unwrap_or("(missing)");
    if engine != VERSION {
        return Err(super::InputError(format!(
            "{}: written by engine {engine}, this build runs {VERSION}; replay it with the matching witness version",
            path.display()
        ))
        .into());
    }
    let (p, cfg) = resolved_from_config(&stored["config"])
        .with_context(|| format!("{}: config", path.display()))?;
    let fresh = export_json(&p, &run_engine(&cfg, Parallelism::Auto));
    match first_difference(&stored, &fresh, 1e-12, false) {
        None => {
            println!(
                "replay ok: {} reproduces (discrete values identical, floats within 1e-12)",
                path.display()
            );
            Ok(0)
        }
        Some(diff) => {
            println!("replay FAILED: {} differs at {diff}", path.display());
            Ok(super::EXIT_FAILED)
        }
    }
}
