//! The harness's state: agents with a stated belief, a budget, their
//! latest direct probe, the messages they have received and the roots
//! (sources) those messages cite; round 0 from the cascade's exposure
//! stream; and how a round's moves change the state once every agent has
//! chosen (the barrier): spends, probes, relays queued and then delivered
//! in sender order.

use std::collections::VecDeque;
use std::rc::Rc;

use super::config::Config;
use crate::rng::{tag, Stream};

/// A source a message can cite: the outside report, or one agent's probe.
pub type Root = u32;
/// `report:0`, the false (or true) "tests pass" report.
pub const REPORT: Root = 0;
/// The belief the report states.
pub const REPORT_BELIEF: f64 = 0.82;

/// Agent `i`'s probe: `probe:i`. Every probe is a root of its own.
pub fn probe_root(agent: usize) -> Root {
    agent as Root + 1
}

pub fn is_probe(r: Root) -> bool {
    r != REPORT
}

pub fn root_name(r: Root) -> String {
    if is_probe(r) {
        format!("probe:{}", r - 1)
    } else {
        "report:0".to_string()
    }
}

/// The root a name stands for, in a population of `n`.
pub fn parse_root(name: &str, n: usize) -> Option<Root> {
    if name == "report:0" {
        return Some(REPORT);
    }
    let k: usize = name.strip_prefix("probe:")?.parse().ok()?;
    (k < n && name == format!("probe:{k}")).then(|| probe_root(k))
}

crate::words! {
    /// What a relayed message says of the claim.
    pub enum Stance {
        Supports = "supports",
        Refutes = "refutes",
        Unsure = "unsure",
    }
}

impl Stance {
    /// The stance a belief reads as, by the cascade's thresholds.
    pub fn of(belief: f64) -> Stance {
        match crate::cascade::metrics::side(belief) {
            1 => Stance::Supports,
            -1 => Stance::Refutes,
            _ => Stance::Unsure,
        }
    }
}

/// A message as its recipient keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Msg {
    pub round: u32,
    /// The sender; `None` for the report.
    pub from: Option<u32>,
    pub stance: Stance,
    pub belief: f64,
    /// Sorted, distinct; shared, since relays pass them on unchanged.
    pub cites: Rc<[Root]>,
}

#[derive(Clone, Debug)]
pub struct Agent {
    /// The belief it last stated (0.5 before its first turn).
    pub belief: f64,
    pub budget_left: u32,
    /// The round of its latest probe; the text is the fixture's.
    pub latest_probe: Option<u32>,
    /// The latest `context` messages received, oldest first.
    pub recent: VecDeque<Msg>,
    /// Every root it has received or made, sorted.
    pub roots: Rc<[Root]>,
    pub probes: u32,
    pub relays: u32,
    pub passes: u32,
}

/// One agent's choice for a round.
#[derive(Clone, Debug, PartialEq)]
pub enum Move {
    Probe {
        belief: f64,
    },
    Relay {
        to: u32,
        stance: Stance,
        belief: f64,
        cites: Rc<[Root]>,
    },
    Pass {
        belief: f64,
    },
}

/// Cumulative counts over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub actions: u64,
    pub probes: u64,
    pub relays: u64,
    pub passes: u64,
    pub delivered: u64,
    pub spent: u64,
}

/// Round 0: the report's recipients, drawn exactly as the cascade draws
/// them (two draws an agent from the exposure stream; the second, the
/// cascade's probe draw, is not used here), so a harness run and a cascade
/// run of one seed start from the same recipients.
pub fn round_zero(cfg: &Config) -> Vec<Agent> {
    let mut s = Stream::keyed(cfg.seed, &[tag::EXPOSURE]);
    (0..cfg.population)
        .map(|_| {
            let reported = s.unit() < cfg.report_fraction;
            let _cascade_probe = s.unit();
            let mut a = Agent {
                belief: 0.5,
                budget_left: cfg.budget,
                latest_probe: None,
                recent: VecDeque::with_capacity(cfg.context.min(64)),
                roots: Rc::new([]),
                probes: 0,
                relays: 0,
                passes: 0,
            };
            if reported {
                a.roots = Rc::new([REPORT]);
                receive(&mut a, report(), cfg.context);
            }
            a
        })
        .collect()
}

/// The report as its recipients hold it.
fn report() -> Msg {
    Msg {
        round: 0,
        from: None,
        stance: Stance::Supports,
        belief: REPORT_BELIEF,
        cites: Rc::new([REPORT]),
    }
}

fn receive(a: &mut Agent, m: Msg, context: usize) {
    if context == 0 {
        return;
    }
    if a.recent.len() == context {
        a.recent.pop_front();
    }
    a.recent.push_back(m);
}

/// `roots` and `more` (both sorted and distinct), merged; `None` when
/// `more` adds nothing, which is the common case and costs one pass.
fn merged(roots: &[Root], more: &[Root], all: &mut Vec<Root>) -> Option<Rc<[Root]>> {
    let (mut i, mut new) = (0, false);
    for &r in more {
        while i < roots.len() && roots[i] < r {
            i += 1;
        }
        if i == roots.len() || roots[i] != r {
            new = true;
            break;
        }
    }
    if !new {
        return None;
    }
    all.clear();
    let (mut a, mut b) = (roots.iter().peekable(), more.iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(&&x), Some(&&y)) if x < y => a.next(),
            (Some(&&x), Some(&&y)) if y < x => b.next(),
            (Some(_), Some(_)) => {
                b.next();
                a.next()
            }
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (None, None) => break,
        };
        all.extend(next.copied());
    }
    Some(Rc::from(&all[..]))
}

/// Applies round `r`'s moves (agent, move; in agent order) in agent
/// order, then delivers the relays in sender order. Returns the relays
/// delivered, as (recipient, message), when `keep` (the `messages` table).
pub fn apply(
    cfg: &Config,
    agents: &mut [Agent],
    moves: Vec<(usize, Move)>,
    r: u32,
    c: &mut Counters,
    keep: bool,
) -> Vec<(u32, Msg)> {
    let mut outbox = Vec::new();
    let mut scratch = Vec::new();
    for (i, m) in moves {
        let a = &mut agents[i];
        c.actions += 1;
        match m {
            Move::Probe { belief } => {
                a.belief = belief;
                a.budget_left -= 1;
                a.probes += 1;
                a.latest_probe = Some(r);
                if let Some(roots) = merged(&a.roots, &[probe_root(i)], &mut scratch) {
                    a.roots = roots;
                }
                c.probes += 1;
                c.spent += 1;
            }
            Move::Relay {
                to,
                stance,
                belief,
                cites,
            } => {
                a.belief = belief;
                a.budget_left -= 1;
                a.relays += 1;
                c.relays += 1;
                c.spent += 1;
                outbox.push((
                    to,
                    Msg {
                        round: r,
                        from: Some(i as u32),
                        stance,
                        belief,
                        cites,
                    },
                ));
            }
            Move::Pass { belief } => {
                a.belief = belief;
                a.passes += 1;
                c.passes += 1;
            }
        }
    }
    let mut delivered = Vec::with_capacity(if keep { outbox.len() } else { 0 });
    for (to, m) in outbox {
        let a = &mut agents[to as usize];
        if let Some(roots) = merged(&a.roots, &m.cites, &mut scratch) {
            a.roots = roots;
        }
        if keep {
            delivered.push((to, m.clone()));
        }
        receive(a, m, cfg.context);
        c.delivered += 1;
    }
    delivered
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_names_read_back_and_refuse_what_is_not_a_root() {
        for r in [REPORT, probe_root(0), probe_root(41)] {
            assert_eq!(parse_root(&root_name(r), 50), Some(r));
        }
        for bad in ["probe:50", "probe:01", "probe:-1", "report:1", "probe:", ""] {
            assert_eq!(parse_root(bad, 50), None, "{bad}");
        }
    }

    #[test]
    fn merging_keeps_roots_sorted_and_says_when_nothing_is_new() {
        let have: Rc<[Root]> = Rc::new([0, 3]);
        let s = &mut Vec::new();
        assert_eq!(merged(&have, &[3], s), None);
        assert_eq!(
            merged(&have, &[1, 5], s).as_deref(),
            Some(&[0, 1, 3, 5][..])
        );
        assert_eq!(
            merged(&have, &[0, 3, 4], s).as_deref(),
            Some(&[0, 3, 4][..])
        );
        assert_eq!(merged(&[], &[2], s).as_deref(), Some(&[2][..]));
    }

    #[test]
    fn context_keeps_the_newest_messages() {
        use super::super::config::HarnessParams;
        use crate::params::{Params, Resolved};
        let cfg = Config::from_resolved(&Resolved::defaults(HarnessParams::SPECS)).unwrap();
        let mut a = round_zero(&cfg).swap_remove(0);
        a.recent.clear();
        for r in 1..=5 {
            receive(
                &mut a,
                Msg {
                    round: r,
                    ..report()
                },
                3,
            );
        }
        let rounds: Vec<u32> = a.recent.iter().map(|m| m.round).collect();
        assert_eq!(rounds, [3, 4, 5]);
    }
}
