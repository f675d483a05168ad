//! The harness's decision point `harness.turn`: an agent's whole turn
//! (probe, relay to one neighbour, or pass, with its stated belief) asked
//! of an external policy. The observation is the scripted policies' view
//! written as canonical JSON; an answer's relay fields are checked against
//! it before it is logged, so a bad recipient or an uncited root is a
//! policy error (retried, then the fallback), never a model panic.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::scripted::View;
use super::world::{parse_root, root_name, Agent, Move, Msg, Root, Stance};
use crate::model::{Answer, Ask, DecisionPoint, Obs};

pub const TURN: DecisionPoint = DecisionPoint {
    name: "harness.turn",
    belief_for: ACTIONS,
    text_for: &[],
    text_limit: 0,
    safe: "pass",
    fields: Some(check_fields),
};

const ACTIONS: &[&str] = &["pass", "probe", "relay"];

// The observation, serialized straight to canonical JSON: fields are
// declared in alphabetical order.

#[derive(Serialize)]
struct Observation<'a> {
    agent: usize,
    belief: f64,
    budget_left: u32,
    draws: Draws,
    latest_probe: Option<Probe>,
    neighbours: &'a [u32],
    recent: Vec<Received>,
    roots: Vec<String>,
    round: u32,
}

#[derive(Serialize)]
struct Draws {
    pick: u64,
    u: f64,
}

#[derive(Serialize)]
struct Probe {
    round: u32,
    text: &'static str,
}

#[derive(Serialize)]
struct Received {
    belief: f64,
    cites: Vec<String>,
    from: Option<u32>,
    round: u32,
    stance: &'static str,
}

fn names(roots: &[Root]) -> Vec<String> {
    roots.iter().map(|&r| root_name(r)).collect()
}

/// The ask for agent `v.agent`'s turn in round `r`.
pub fn ask(r: u32, v: &View) -> Ask {
    let a: &Agent = v.me;
    let received = |m: &Msg| Received {
        belief: m.belief,
        cites: names(&m.cites),
        from: m.from,
        round: m.round,
        stance: m.stance.name(),
    };
    let obs = Observation {
        agent: v.agent,
        belief: a.belief,
        budget_left: a.budget_left,
        draws: Draws {
            pick: v.pick,
            u: v.u,
        },
        latest_probe: a
            .latest_probe
            .zip(v.probe_text)
            .map(|(round, text)| Probe { round, text }),
        neighbours: v.neighbours,
        recent: a.recent.iter().map(received).collect(),
        roots: names(&a.roots),
        round: r,
    };
    Ask {
        key: format!("r{r}/a{}", v.agent),
        obs: Obs::of(&obs),
        allowed: ACTIONS,
    }
}

/// The part of an observation a relay is checked against.
#[derive(Deserialize)]
struct Context {
    neighbours: Vec<u32>,
    roots: Vec<String>,
}

/// A relay must name a neighbour (`to`), a stance, and cite only roots the
/// agent holds, each once. Other actions carry no fields of their own.
fn check_fields(action: &str, answer: &Json, obs: &str) -> Result<(), String> {
    if action != "relay" {
        return Ok(());
    }
    let cx: Context =
        serde_json::from_str(obs).map_err(|e| format!("the observation cannot be read: {e}"))?;
    let to = &answer["to"];
    let ok_to = to
        .as_u64()
        .filter(|t| cx.neighbours.iter().any(|&n| u64::from(n) == *t));
    if ok_to.is_none() {
        return Err(format!(
            "to = {to}: not a neighbour (a relay goes to one of {:?})",
            cx.neighbours
        ));
    }
    let stance = &answer["stance"];
    if stance.as_str().and_then(Stance::from_name).is_none() {
        return Err(format!(
            "stance = {stance}: not one of supports, refutes, unsure"
        ));
    }
    let cites = answer["cites"]
        .as_array()
        .ok_or_else(|| format!("cites = {}: not a list of roots", answer["cites"]))?;
    let mut seen = Vec::new();
    for c in cites {
        let name = c.as_str().filter(|n| cx.roots.iter().any(|r| r == n));
        match name {
            Some(n) if !seen.contains(&n) => seen.push(n),
            Some(n) => return Err(format!("cites: {n:?} cited twice")),
            None => {
                return Err(format!(
                    "cites: {c} is not a root this agent holds ({})",
                    cx.roots.join(", ")
                ))
            }
        }
    }
    Ok(())
}

/// The move a checked answer stands for.
pub fn to_move(a: &Answer, n: usize) -> Move {
    let belief = a.belief.expect("every harness action carries a belief");
    match a.action.as_str() {
        "probe" => Move::Probe { belief },
        "relay" => {
            let raw = &a.raw;
            let mut cites: Vec<Root> = raw["cites"]
                .as_array()
                .expect("checked: cites")
                .iter()
                .map(|c| parse_root(c.as_str().expect("checked: a root"), n).expect("checked"))
                .collect();
            cites.sort_unstable();
            Move::Relay {
                to: raw["to"].as_u64().expect("checked: to") as u32,
                stance: Stance::from_name(raw["stance"].as_str().expect("checked: stance"))
                    .expect("checked: stance"),
                belief,
                cites: Rc::from(cites),
            }
        }
        _ => Move::Pass { belief },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OBS: &str = r#"{"neighbours":[3,7],"roots":["probe:3","report:0"]}"#;

    #[test]
    fn relays_are_checked_against_the_observation() {
        let relay = |extra: Json| {
            let mut a = json!({"action": "relay", "belief": 0.4, "to": 7, "stance": "unsure", "cites": ["report:0"]});
            for (k, v) in extra.as_object().unwrap() {
                a[k] = v.clone();
            }
            check_fields("relay", &a, OBS)
        };
        assert_eq!(relay(json!({})), Ok(()));
        assert!(relay(json!({"to": 4}))
            .unwrap_err()
            .starts_with("to = 4: not a neighbour"));
        assert!(relay(json!({"to": -1})).is_err());
        assert!(relay(json!({"stance": "maybe"}))
            .unwrap_err()
            .starts_with("stance = \"maybe\""));
        assert!(relay(json!({"cites": ["probe:9"]}))
            .unwrap_err()
            .contains("not a root this agent holds"));
        assert!(relay(json!({"cites": ["report:0", "report:0"]}))
            .unwrap_err()
            .contains("twice"));
        assert!(relay(json!({"cites": "report:0"})).is_err());
        assert_eq!(
            check_fields("pass", &json!({"action": "pass"}), OBS),
            Ok(())
        );
    }
}
