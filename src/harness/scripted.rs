//! The built-in scripted policies, for control arms. Each sees only what
//! an external policy is shown (the `View` is the observation, typed) and
//! each has a Python twin under `policies/` that must decide identically.
//! None of them knows the truth: a probe's verdict is read from the test
//! output, the others' from the stances they relay.

use std::rc::Rc;

use super::fixtures;
use super::world::{is_probe, probe_root, Agent, Move, Root, Stance};
use crate::cascade::engine::clip;

/// What an agent sees on its turn, with the turn's draws.
pub struct View<'a> {
    pub agent: usize,
    pub me: &'a Agent,
    /// Its latest probe's output, when it has probed.
    pub probe_text: Option<&'static str>,
    pub neighbours: &'a [u32],
    /// `unit()`, then `below(degree)`, from the agent's turn stream.
    pub u: f64,
    pub pick: u64,
}

impl View<'_> {
    fn picked(&self) -> u32 {
        self.neighbours[self.pick as usize]
    }
}

/// Relays the last message it received (stance, belief and cites) to the
/// picked neighbour and states that belief; passes when it has received
/// nothing. Never probes.
pub fn echo(v: &View) -> Move {
    match v.me.recent.back() {
        None => Move::Pass {
            belief: v.me.belief,
        },
        Some(m) => Move::Relay {
            to: v.picked(),
            stance: m.stance,
            belief: m.belief,
            cites: m.cites.clone(),
        },
    }
}

/// The chance per turn that `dedupe` probes while it holds no probe root.
pub const DEDUPE_PROBE_CHANCE: f64 = 0.2;

/// Source tracking, as the cascade's `source_aware`: a probe decides (its
/// own, or the latest stance relayed with another's); otherwise each
/// distinct other root is one log-odds step by its latest stance, so
/// copies of one report never add up. Probes while it holds no probe root
/// with chance 0.2; passes while it holds no root; else relays its belief
/// citing every root it holds.
pub fn dedupe(v: &View) -> Move {
    let belief = dedupe_belief(v);
    if !v.me.roots.iter().any(|&r| is_probe(r)) && v.u < DEDUPE_PROBE_CHANCE {
        return Move::Probe { belief };
    }
    if v.me.roots.is_empty() {
        return Move::Pass { belief };
    }
    Move::Relay {
        to: v.picked(),
        stance: Stance::of(belief),
        belief,
        cites: v.me.roots.clone(),
    }
}

fn dedupe_belief(v: &View) -> f64 {
    if let Some(text) = v.probe_text {
        return verdict(text);
    }
    // The latest stance each cited root was relayed with.
    let mut seen: Vec<(Root, Stance)> = Vec::new();
    for m in v.me.recent.iter().rev() {
        for &r in m.cites.iter() {
            if !seen.iter().any(|&(s, _)| s == r) {
                seen.push((r, m.stance));
            }
        }
    }
    let sign = |s: Stance| match s {
        Stance::Supports => 1,
        Stance::Refutes => -1,
        Stance::Unsure => 0,
    };
    let verified: i64 = seen
        .iter()
        .filter(|(r, _)| is_probe(*r))
        .map(|&(_, s)| sign(s))
        .sum();
    if verified > 0 {
        return 0.99;
    }
    if verified < 0 {
        return 0.01;
    }
    let steps: i64 = seen
        .iter()
        .filter(|(r, _)| !is_probe(*r))
        .map(|&(_, s)| sign(s))
        .sum();
    let log_odds = (steps as f64 * (0.68f64 / 0.32).ln()).clamp(-4.6, 4.6);
    clip(1.0 / (1.0 + (-log_odds).exp()))
}

/// Probes on its first turn, then relays what it saw (citing its own
/// probe) to the picked neighbour.
pub fn prober(v: &View) -> Move {
    match v.probe_text {
        None => Move::Probe {
            belief: v.me.belief,
        },
        Some(text) => {
            let belief = verdict(text);
            Move::Relay {
                to: v.picked(),
                stance: Stance::of(belief),
                belief,
                cites: Rc::new([probe_root(v.agent)]),
            }
        }
    }
}

/// The belief a probe's output supports.
fn verdict(text: &str) -> f64 {
    if fixtures::passed(text) {
        0.99
    } else {
        0.01
    }
}
