//! The standings fold (hive-rooms/1 "The standings fold"): which topics have
//! enough counted supporters to carry, after grounding, evidential,
//! cross-inhibition and refutation rules. A pure function of the set of
//! traces in the window: order and duplicates of its input do not matter.

use std::collections::{HashMap, HashSet};

use super::markers::{Author, Kind, Trace};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    pub threshold: usize,
    pub window: u64,
    pub require_grounded: bool,
    pub require_evidential: bool,
    pub refutation_cap: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FoldError {
    #[error("threshold = 0: a quorum needs at least one supporter; allowed 1 ..= 8")]
    ZeroThreshold,
    #[error("window = 0: the fold would see no trace; allowed 1 or more")]
    ZeroWindow,
    #[error("refutation_cap = 0 would block every topic; use none or 1 or more")]
    ZeroCap,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standing {
    pub topic: String,
    /// Counted supporters, in first-support order.
    pub supporters: Vec<u8>,
    pub silenced: Vec<u8>,
    pub refuted_by: Vec<u8>,
    /// Summed importance of the counted supporters' traces.
    pub support: u64,
    pub carried: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Consensus {
    Deliberating,
    Quorum(String),
    Deadlocked(Vec<String>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Standings {
    pub standings: Vec<Standing>,
    pub consensus: Consensus,
}

/// The kept traces of one sequence, from traces sorted by identity.
fn at_sequence<'a>(kept: &'a [&'a Trace], seq: u64) -> impl Iterator<Item = &'a Trace> + 'a {
    let lo = kept.partition_point(|t| t.sequence < seq);
    kept[lo..]
        .iter()
        .take_while(move |t| t.sequence == seq)
        .copied()
}

/// Does a citation chain from `t` reach an evidence trace? The visited set
/// makes cycles and self-citations terminate.
fn reaches_evidence(t: &Trace, kept: &[&Trace]) -> bool {
    let mut stack: Vec<u64> = t.cites.clone();
    let mut visited = HashSet::new();
    while let Some(seq) = stack.pop() {
        if !visited.insert(seq) {
            continue;
        }
        for k in at_sequence(kept, seq) {
            if k.kind == Kind::Evidence {
                return true;
            }
            stack.extend(&k.cites);
        }
    }
    false
}

pub fn standings(traces: &[Trace], at: u64, p: &Policy) -> Result<Standings, FoldError> {
    if p.threshold == 0 {
        return Err(FoldError::ZeroThreshold);
    }
    if p.window == 0 {
        return Err(FoldError::ZeroWindow);
    }
    if p.refutation_cap == Some(0) {
        return Err(FoldError::ZeroCap);
    }
    // 1. The window, in identity order, without duplicates.
    let from = at.saturating_sub(p.window);
    let mut kept: Vec<&Trace> = traces
        .iter()
        .filter(|t| t.sequence >= from && t.sequence <= at)
        .collect();
    kept.sort_by_key(|t| t.identity());
    kept.dedup_by_key(|t| t.identity());
    // 2-3.
    let grounded_required = p.require_grounded || p.require_evidential;
    let evidenced: HashSet<u8> = kept
        .iter()
        .filter(|t| t.kind == Kind::Evidence)
        .filter_map(|t| t.agent_author())
        .collect();
    let refuters: HashSet<(u8, &str)> = kept
        .iter()
        .filter(|t| t.kind == Kind::Refute && t.grounded())
        .filter_map(|t| Some((t.agent_author()?, t.topic.as_deref()?)))
        .collect();
    // 4. Support.
    let mut order: Vec<&str> = Vec::new();
    let mut advocacy: HashMap<u64, Vec<(u8, &str)>> = HashMap::new();
    let mut supporters: HashMap<&str, Vec<u8>> = HashMap::new();
    let mut weight: HashMap<(&str, u8), u64> = HashMap::new();
    for t in &kept {
        let (Some(topic), Some(author)) = (t.topic.as_deref(), t.agent_author()) else {
            continue;
        };
        match t.kind {
            Kind::Propose => {}
            Kind::Support => {
                if grounded_required && !t.grounded() {
                    continue;
                }
                if p.require_evidential && !reaches_evidence(t, &kept) {
                    continue;
                }
            }
            _ => continue,
        }
        if refuters.contains(&(author, topic)) {
            continue;
        }
        if !order.contains(&topic) {
            order.push(topic);
        }
        advocacy
            .entry(t.sequence)
            .or_default()
            .push((author, topic));
        let list = supporters.entry(topic).or_default();
        if !list.contains(&author) {
            list.push(author);
        }
        *weight.entry((topic, author)).or_default() += t.kind.importance();
    }
    // 5. Cross-inhibition.
    let mut silenced: HashMap<&str, Vec<u8>> = HashMap::new();
    for t in kept.iter().filter(|t| t.kind == Kind::Object) {
        if grounded_required && !t.grounded() {
            continue;
        }
        if p.require_evidential && !t.agent_author().is_some_and(|a| evidenced.contains(&a)) {
            continue;
        }
        let Some(target) = t.target else { continue };
        for &(advocate, topic) in advocacy.get(&target).map(Vec::as_slice).unwrap_or(&[]) {
            if Author::Member(advocate) != t.author {
                let list = silenced.entry(topic).or_default();
                if !list.contains(&advocate) {
                    list.push(advocate);
                }
            }
        }
    }
    // 6. Refutation.
    let mut refuted_by: HashMap<&str, Vec<u8>> = HashMap::new();
    for t in kept
        .iter()
        .filter(|t| t.kind == Kind::Refute && t.grounded())
    {
        let (Some(topic), Some(author)) = (t.topic.as_deref(), t.agent_author()) else {
            continue;
        };
        if order.contains(&topic) {
            let list = refuted_by.entry(topic).or_default();
            if !list.contains(&author) {
                list.push(author);
            }
        }
    }
    // 7. One standing per advocated topic.
    let standings: Vec<Standing> = order
        .iter()
        .map(|&topic| {
            let quiet = silenced.get(topic).cloned().unwrap_or_default();
            let counted: Vec<u8> = supporters[topic]
                .iter()
                .copied()
                .filter(|a| !quiet.contains(a))
                .collect();
            let refuted = refuted_by.get(topic).cloned().unwrap_or_default();
            let capped = p.refutation_cap.is_some_and(|c| refuted.len() >= c);
            Standing {
                topic: topic.to_string(),
                support: counted.iter().map(|&a| weight[&(topic, a)]).sum(),
                carried: !capped && counted.len() >= p.threshold,
                supporters: counted,
                silenced: quiet,
                refuted_by: refuted,
            }
        })
        .collect();
    let carried: Vec<String> = standings
        .iter()
        .filter(|s| s.carried)
        .map(|s| s.topic.clone())
        .collect();
    let consensus = match carried.len() {
        0 => Consensus::Deliberating,
        1 => Consensus::Quorum(carried[0].clone()),
        _ => Consensus::Deadlocked(carried),
    };
    Ok(Standings {
        standings,
        consensus,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hive::markers::parse;
    use proptest::prelude::*;

    fn policy(threshold: usize) -> Policy {
        Policy {
            threshold,
            window: 100,
            require_grounded: true,
            require_evidential: false,
            refutation_cap: None,
        }
    }

    fn room(messages: &[(u8, &str)]) -> Vec<Trace> {
        messages
            .iter()
            .enumerate()
            .flat_map(|(i, (m, text))| parse(i as u64 + 2, Author::Member(*m), text))
            .collect()
    }

    #[test]
    fn room_0_under_hive_plus_carries_revert_at_the_fifth_turn() {
        // hive-rooms/1 worked example: proposals by members 0..4.
        let traces = room(&[
            (0, "!propose #shadow"),
            (1, "!propose #revert"),
            (2, "!propose #revert"),
            (3, "!propose #revert"),
        ]);
        let s = standings(&traces, 5, &policy(3)).unwrap();
        assert_eq!(s.consensus, Consensus::Quorum("revert".into()));
        assert_eq!(s.standings[0].topic, "shadow", "first-advocacy order");
        assert_eq!(s.standings[1].supporters, vec![1, 2, 3]);
        assert_eq!(s.standings[1].support, 2700);
        let early = standings(&traces, 4, &policy(3)).unwrap();
        assert_eq!(early.consensus, Consensus::Deliberating);
    }

    #[test]
    fn objections_silence_advocates_and_refutations_cap_support() {
        let traces = room(&[
            (0, "!propose #a"),
            (1, "!support #a ^2"),
            (2, "!object >2 ^3"),
            (3, "!refute #a ^2"),
            (4, "!support #a ^2"),
        ]);
        let s = standings(&traces, 6, &policy(2)).unwrap();
        let a = &s.standings[0];
        assert_eq!(
            a.silenced,
            vec![0],
            "the proposer at sequence 2 is silenced"
        );
        assert_eq!(a.supporters, vec![1, 4]);
        assert_eq!(a.refuted_by, vec![3]);
        assert!(a.carried);
        let mut capped = policy(2);
        capped.refutation_cap = Some(1);
        assert!(!standings(&traces, 6, &capped).unwrap().standings[0].carried);
    }

    #[test]
    fn the_evidential_walk_follows_chains_and_ends_on_cycles() {
        let mut ev = policy(1);
        ev.require_evidential = true;
        // Sequences 2, 3, ...: a chain 5 -> 4 -> 3, where 3 is evidence.
        let linked = room(&[
            (0, "!propose #a"),
            (1, "!evidence ^2"),
            (2, "!support #a ^3"),
            (3, "!support #a ^4"),
        ]);
        let s = standings(&linked, 5, &ev).unwrap();
        assert_eq!(s.standings[0].supporters, vec![0, 2, 3]);
        // A cycle 3 <-> 4 and a self-citation at 5 never reach evidence.
        let cyclic = room(&[
            (0, "!propose #a"),
            (1, "!support #a ^4"),
            (2, "!support #a ^3"),
            (3, "!support #a ^5"),
        ]);
        let s = standings(&cyclic, 5, &ev).unwrap();
        assert_eq!(
            s.standings[0].supporters,
            vec![0],
            "only the proposal counts"
        );
        ev.require_evidential = false;
        assert_eq!(
            standings(&cyclic, 5, &ev).unwrap().standings[0].supporters,
            vec![0, 1, 2, 3]
        );
    }

    #[test]
    fn zero_threshold_window_or_cap_are_errors() {
        let mut p = policy(0);
        assert_eq!(standings(&[], 1, &p), Err(FoldError::ZeroThreshold));
        p.threshold = 1;
        p.window = 0;
        assert_eq!(standings(&[], 1, &p), Err(FoldError::ZeroWindow));
        p.window = 1;
        p.refutation_cap = Some(0);
        assert_eq!(standings(&[], 1, &p), Err(FoldError::ZeroCap));
    }

    fn arb_traces() -> impl Strategy<Value = Vec<Trace>> {
        let line = (
            0u8..7,
            0usize..3,
            0u64..12,
            prop::collection::vec(1u64..12, 0..3),
        )
            .prop_map(|(k, t, target, cites)| {
                let kind = [
                    "propose", "support", "object", "refute", "evidence", "question", "commit",
                ][k as usize];
                let cites: String = cites.iter().map(|c| format!(" ^{c}")).collect();
                format!("!{kind} #{} >{target}{cites}", ["a", "b", "c"][t])
            });
        // One message per sequence (2, 3, ...), as in a room.
        prop::collection::vec((0u8..6, line), 0..14).prop_map(|msgs| {
            msgs.into_iter()
                .enumerate()
                .flat_map(|(i, (m, text))| {
                    let author = if m == 5 {
                        Author::Other
                    } else {
                        Author::Member(m)
                    };
                    parse(i as u64 + 2, author, &text)
                })
                .collect()
        })
    }

    proptest! {
        #[test]
        fn the_fold_ignores_order_and_duplicates(traces in arb_traces(), rot in 0usize..24, seed in any::<u64>(), ev in any::<bool>(), cap in prop::option::of(1usize..3)) {
            let p = Policy { threshold: 2, window: 6, require_grounded: true, require_evidential: ev, refutation_cap: cap };
            let base = standings(&traces, 11, &p).unwrap();
            let mut reversed = traces.clone();
            reversed.reverse();
            prop_assert_eq!(&standings(&reversed, 11, &p).unwrap(), &base);
            let mut rotated = traces.clone();
            if !rotated.is_empty() {
                let k = rot % rotated.len();
                rotated.rotate_left(k);
            }
            prop_assert_eq!(&standings(&rotated, 11, &p).unwrap(), &base);
            let mut shuffled = traces.clone();
            let mut s = crate::hive::rng::Stream::new(seed);
            for i in (1..shuffled.len()).rev() {
                shuffled.swap(i, s.below(i as u64 + 1) as usize);
            }
            prop_assert_eq!(&standings(&shuffled, 11, &p).unwrap(), &base);
            let mut doubled = traces.clone();
            doubled.extend(traces.iter().cloned());
            prop_assert_eq!(&standings(&doubled, 11, &p).unwrap(), &base);
        }
    }
}
