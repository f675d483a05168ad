//! The built-in scripted policies, for control arms. Each sees only what
//! an external policy is shown (the `View` is the observation, typed) and
//! each has a Python twin under `policies/` that must decide identically.
//! None of them knows the truth: a probe's verdict is read from the test
//! output, the others' from the stances they relay.

use std::rc::Rc;

use super::world::{is_probe, probe_root, Agent, Move, Root, Stance};
use crate::cascade::belief::LOG_ODDS_STEP;
use crate::cascade::engine::clip;
use crate::math;

/// What an agent sees on its turn, with the turn's draws.
pub struct View<'a> {
    pub agent: usize,
    pub me: &'a Agent,
    /// Its latest probe's output, when it has probed.
    pub probe_text: Option<&'static str>,
    /// What `fixtures::passed` reads in that output (read once a run: the
    /// output is the same text every time).
    pub probe_passed: Option<bool>,
    /// `[probe:agent]`, made once, for relays citing its own probe.
    pub own_probe: &'a Rc<[Root]>,
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
    if let Some(passed) = v.probe_passed {
        return verdict(passed);
    }
    // The latest stance each cited root was relayed with: newest message
    // first, a root counted once (a bit per root; cited roots are held).
    let words = v.me.roots.last().map_or(0, |&r| r as usize) / 64 + 1;
    let (mut small, mut big) = ([0u64; 8], Vec::new());
    let seen: &mut [u64] = if words <= small.len() {
        &mut small[..words]
    } else {
        big.resize(words, 0);
        &mut big
    };
    let (mut verified, mut steps) = (0i64, 0i64);
    let mut left = v.me.roots.len();
    for m in v.me.recent.iter().rev() {
        // Older messages can only repeat roots already counted.
        if left == 0 {
            break;
        }
        let sign = match m.stance {
            Stance::Supports => 1,
            Stance::Refutes => -1,
            Stance::Unsure => 0,
        };
        for &r in m.cites.iter() {
            let (word, bit) = (r as usize / 64, 1u64 << (r % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                left -= 1;
                if is_probe(r) {
                    verified += sign;
                } else {
                    steps += sign;
                }
            }
        }
    }
    if verified > 0 {
        return 0.99;
    }
    if verified < 0 {
        return 0.01;
    }
    let log_odds = (steps as f64 * *LOG_ODDS_STEP).clamp(-4.6, 4.6);
    clip(1.0 / (1.0 + math::exp(-log_odds)))
}

/// Probes on its first turn, then relays what it saw (citing its own
/// probe) to the picked neighbour.
pub fn prober(v: &View) -> Move {
    match v.probe_passed {
        None => Move::Probe {
            belief: v.me.belief,
        },
        Some(passed) => {
            let belief = verdict(passed);
            debug_assert_eq!(v.own_probe[..], [probe_root(v.agent)]);
            Move::Relay {
                to: v.picked(),
                stance: Stance::of(belief),
                belief,
                cites: v.own_probe.clone(),
            }
        }
    }
}

/// The belief a probe's output supports (as `fixtures::passed` reads it).
fn verdict(passed: bool) -> f64 {
    if passed {
        0.99
    } else {
        0.01
    }
}
