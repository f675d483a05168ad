//! The cascade's decision point `cascade.agent_round`: step 3 of a round
//! (an agent checks or reads) asked of an external policy. Every draw the
//! built-in rules could need is made first, from the same stream and in
//! the same order, and shown to the policy, so draw streams (and common
//! random numbers across arms) never depend on an answer and a scripted
//! policy can reproduce a built-in rule exactly. All agents of a round are
//! asked against the previous snapshot and the answers are applied in
//! agent order once every one is in: the round is a barrier, as it is for
//! the built-in rules.

use serde::Serialize;

use super::config::{Config, Grounding};
use super::engine::{self, clip, ground, Agent, NOT_PENDING, SLOTS};
use super::graph::Graph;
use super::ledger::{self, Ledger};
use super::metrics::Counters;
use crate::model::{Ask, Decided, DecisionPoint, Obs, PolicyFailure};
use crate::rng::{extend, Stream};

pub const AGENT_ROUND: DecisionPoint = DecisionPoint {
    name: "cascade.agent_round",
    belief_for: &["read"],
    text_for: &[],
    text_limit: 0,
    safe: "read",
    fields: None,
};

const CHECK_OR_READ: &[&str] = &["check", "read"];
const READ: &[&str] = &["read"];

/// What the engine hands a decision to.
pub type Decide<'a> = dyn FnMut(Vec<Ask>) -> Result<Vec<Decided>, PolicyFailure> + 'a;

/// An agent's draws for the round and whether it is asked.
struct Drawn {
    slots: [u32; SLOTS],
    asked: bool,
}

/// Steps 2 and 3 of round `r` for every agent, `next` already corrected
/// (step 1); `key` is the round's stream-key prefix.
#[allow(clippy::too_many_arguments)]
pub fn round(
    cfg: &Config,
    graph: &Graph,
    prev: &[Agent],
    next: &mut [Agent],
    r: u32,
    key: u64,
    d: &mut Counters,
    decide: &mut Decide,
) -> Result<(), PolicyFailure> {
    let mut drawn = Vec::with_capacity(next.len());
    let mut asks = Vec::new();
    for (i, a) in next.iter_mut().enumerate() {
        if a.pending == r {
            a.pending = NOT_PENDING;
            ground(a, cfg.truth);
            d.completed += 1;
        }
        let mut s = Stream::new(extend(key, i as u64));
        let u = (!a.checked && a.pending == NOT_PENDING).then(|| s.unit());
        let nb = graph.neighbours(i);
        let mut picks = [0u64; SLOTS];
        let mut slots = [0u32; SLOTS];
        for (pick, slot) in picks.iter_mut().zip(&mut slots) {
            *pick = s.below(nb.len() as u64);
            *slot = nb[*pick as usize];
        }
        let asked = !(a.checked && cfg.grounding == Grounding::Absorbing);
        if asked {
            asks.push(Ask {
                key: format!("r{r}/a{i}"),
                obs: observation(r, i, a, nb.len(), &slots, &picks, u, prev),
                allowed: if u.is_some() { CHECK_OR_READ } else { READ },
            });
        }
        drawn.push(Drawn { slots, asked });
    }
    let mut answers = decide(asks)?.into_iter();
    for (a, drawn) in next.iter_mut().zip(&drawn) {
        let decided = if drawn.asked { answers.next() } else { None };
        match decided {
            Some(Decided::Answer(ans)) if ans.action == "check" => {
                engine::request_check(cfg, a, r, d)
            }
            Some(Decided::Answer(ans)) => {
                read(a, &drawn.slots, prev, d);
                a.p = clip(ans.belief.expect("a read carries a checked belief"));
            }
            // The safe action, and an absorbing checked agent: read,
            // belief unchanged.
            Some(Decided::Fallback) | None => read(a, &drawn.slots, prev, d),
        }
    }
    Ok(())
}

/// The four messages: ledgers merge as the built-in rules merge them.
fn read(a: &mut Agent, slots: &[u32; SLOTS], prev: &[Agent], d: &mut Counters) {
    for &j in slots {
        a.ledger.merge(&prev[j as usize].ledger);
    }
    d.messages += SLOTS as u64;
    d.effort += SLOTS as u64;
}

fn roots(l: &Ledger) -> Vec<&'static str> {
    l.roots().iter().map(|&r| ledger::name(r)).collect()
}

// What an agent observes, serialized straight to canonical JSON: the
// fields of each struct are declared in alphabetical order.

#[derive(Serialize)]
struct Observation {
    agent: usize,
    belief: f64,
    checked: bool,
    draws: Draws,
    ledger: Vec<LedgerRoot>,
    messages: [Message; SLOTS],
    neighbours: usize,
    pending_round: Option<u32>,
    round: u32,
}

#[derive(Serialize)]
struct Draws {
    check: Option<f64>,
    slots: [u64; SLOTS],
}

#[derive(Serialize)]
struct LedgerRoot {
    root: &'static str,
    verified: bool,
}

#[derive(Serialize)]
struct Message {
    belief: f64,
    from: u32,
    roots: Vec<&'static str>,
}

#[allow(clippy::too_many_arguments)]
fn observation(
    r: u32,
    i: usize,
    a: &Agent,
    degree: usize,
    slots: &[u32; SLOTS],
    picks: &[u64; SLOTS],
    u: Option<f64>,
    prev: &[Agent],
) -> Obs {
    let ledger = a
        .ledger
        .roots()
        .iter()
        .map(|&root| LedgerRoot {
            root: ledger::name(root),
            verified: ledger::verified(root),
        })
        .collect();
    let messages = slots.map(|j| {
        let from = &prev[j as usize];
        Message {
            belief: from.p,
            from: j,
            roots: roots(&from.ledger),
        }
    });
    Obs::of(&Observation {
        agent: i,
        belief: a.p,
        checked: a.checked,
        draws: Draws {
            check: u,
            slots: *picks,
        },
        ledger,
        messages,
        neighbours: degree,
        pending_round: (a.pending != NOT_PENDING).then_some(a.pending),
        round: r,
    })
}
