//! The harness's turn loop. Each round, every agent with budget left makes
//! its two draws (`u`, then `pick` below its degree) from its own turn
//! stream, sees the state as the previous round left it, and chooses; the
//! choices are applied in agent order once all are in (the barrier), and
//! relays reach their recipients for the next round. The identities are
//! checked after every round.

use super::config::{Config, Policy};
use super::external;
use super::metrics::{self, Snapshot};
use super::scripted::{self, View};
use super::world::{self, Agent, Counters, Move, Msg, Root};
use crate::cascade::graph::Graph;
use crate::model::{Ask, Decided, PolicyFailure, Position, Violation};
use crate::rng::{extend, key, tag, Stream};
use std::rc::Rc;

/// What the engine hands an external round to.
pub type Decide<'a> = dyn FnMut(Vec<Ask>) -> Result<Vec<Decided>, PolicyFailure> + 'a;

pub struct Run {
    pub graph: Graph,
    pub agents: Vec<Agent>,
    pub trajectory: Vec<Snapshot>,
    /// Every relay delivered: (recipient, message), in round then sender
    /// order; kept only when asked for.
    pub messages: Vec<(u32, Msg)>,
    pub violation: Option<Violation>,
    /// Set when an external decision could not be had and the run stops.
    pub failed: bool,
}

/// Runs `cfg`. `decide` answers the turns of an external policy; `keep`
/// keeps the delivered messages.
pub fn simulate(cfg: &Config, mut decide: Option<&mut Decide>, keep: bool) -> Run {
    let n = cfg.population;
    let graph = Graph::build(cfg.seed, cfg.graph, n, &cfg.graph_params);
    let mut agents = world::round_zero(cfg);
    let mut c = Counters::default();
    let mut trajectory = Vec::with_capacity(cfg.rounds as usize + 1);
    let mut messages = Vec::new();
    let mut violation = None;
    let probe_text = cfg.observations.text(cfg.truth);
    let probe_passed = super::fixtures::passed(probe_text);
    let own_probe: Vec<Rc<[Root]>> = (0..n).map(|i| Rc::from([world::probe_root(i)])).collect();
    let check = |s: &Snapshot, prev: Option<&Snapshot>, v: &mut Option<Violation>| {
        if v.is_none() {
            *v = metrics::check_counts(s, n as u64, u64::from(cfg.budget))
                .or_else(|| prev.and_then(|p| metrics::check_step(p, s)));
        }
    };
    trajectory.push(metrics::snapshot(0, cfg.truth, &agents, &c));
    check(&trajectory[0], None, &mut violation);
    let mut failed = false;
    for r in 1..=cfg.rounds {
        let round_key = key(cfg.seed, &[tag::AGENT_ROUND, cfg.replicate, u64::from(r)]);
        let mut views = Vec::with_capacity(n);
        for (i, a) in agents.iter().enumerate() {
            if a.budget_left == 0 {
                continue;
            }
            let mut s = Stream::new(extend(round_key, i as u64));
            let u = s.unit();
            let nb = graph.neighbours(i);
            let pick = s.below(nb.len() as u64);
            views.push(View {
                agent: i,
                me: a,
                probe_text: a.latest_probe.map(|_| probe_text),
                probe_passed: a.latest_probe.map(|_| probe_passed),
                own_probe: &own_probe[i],
                neighbours: nb,
                u,
                pick,
            });
        }
        let chosen: Result<Vec<Move>, PolicyFailure> = match cfg.policy {
            Policy::Echo => Ok(views.iter().map(scripted::echo).collect()),
            Policy::Dedupe => Ok(views.iter().map(scripted::dedupe).collect()),
            Policy::Prober => Ok(views.iter().map(scripted::prober).collect()),
            Policy::External => ask(r, &views, n, decide.as_deref_mut()),
        };
        let Ok(chosen) = chosen else {
            failed = true;
            break;
        };
        // In agent order, as the views were made.
        let moves: Vec<(usize, Move)> = views.iter().map(|v| v.agent).zip(chosen).collect();
        drop(views);
        if violation.is_none() {
            violation = bad_move(cfg, &graph, &agents, &moves, r);
        }
        messages.extend(world::apply(cfg, &mut agents, moves, r, &mut c, keep));
        trajectory.push(metrics::snapshot(r, cfg.truth, &agents, &c));
        let k = trajectory.len();
        check(&trajectory[k - 1], trajectory.get(k - 2), &mut violation);
    }
    Run {
        graph,
        agents,
        trajectory,
        messages,
        violation,
        failed,
    }
}

/// An external round: one ask per agent with budget left; a fallback is
/// the safe action, a pass that keeps the stated belief.
fn ask(
    r: u32,
    views: &[View],
    n: usize,
    decide: Option<&mut Decide>,
) -> Result<Vec<Move>, PolicyFailure> {
    let Some(decide) = decide else {
        return Err(PolicyFailure {
            key: format!("r{r}"),
            message: "no external policy to ask".into(),
        });
    };
    let asks = views.iter().map(|v| external::ask(r, v)).collect();
    let answers = decide(asks)?;
    assert_eq!(answers.len(), views.len(), "a decider answers every ask");
    Ok(views
        .iter()
        .zip(answers)
        .map(|(v, d)| match d {
            Decided::Answer(a) => external::to_move(&a, n),
            Decided::Fallback => Move::Pass {
                belief: v.me.belief,
            },
        })
        .collect())
}

/// A move no agent may make: spending with no budget, a relay to a
/// non-neighbour or a belief out of 0..=1 (the scripted policies and the
/// answer checks rule these out; this catches a bug in either).
fn bad_move(
    cfg: &Config,
    graph: &Graph,
    agents: &[Agent],
    moves: &[(usize, Move)],
    r: u32,
) -> Option<Violation> {
    moves.iter().find_map(|&(i, ref m)| {
        let (belief, spends, to_neighbour) = match m {
            Move::Probe { belief } => (*belief, true, true),
            Move::Relay { belief, to, .. } => (*belief, true, graph.neighbours(i).contains(to)),
            Move::Pass { belief } => (*belief, false, true),
        };
        let over = spends && agents[i].budget_left == 0 || agents[i].budget_left > cfg.budget;
        let range = !(0.0..=1.0).contains(&belief);
        (over || range || !to_neighbour).then(|| Violation {
            identity: "no agent spends past its budget; relays go to neighbours; beliefs in 0..=1"
                .into(),
            at: Some(Position::Round(u64::from(r))),
            detail: format!(
                "agent {i}: budget left {}, move {m:?}",
                agents[i].budget_left
            ),
        })
    })
}
