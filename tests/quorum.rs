//! The `quorum` policy (docs/models/cascade.md §7.4): the consequences the
//! spec lists, identities under every knob, parallel rounds, and 648 runs
//! pinned to their digests.

use proptest::prelude::*;
use witness::cascade::config::{Config, PARAMS, QUORUM_PARAMS};
use witness::cascade::engine::{round_zero, simulate, Parallelism};
use witness::cascade::ledger::REPORT;
use witness::params::{Resolved, Value};

fn config(sets: &[(&str, Value)]) -> Config {
    let mut p = Resolved::defaults(PARAMS);
    p.set_named("policy", Value::Str("quorum".into()));
    for (k, v) in sets {
        p.set_named(k, v.clone());
    }
    Config::from_resolved(&p).unwrap()
}

fn s(x: &str) -> Value {
    Value::Str(x.into())
}

fn roots_2(seed: i64, graph: &str, truth: bool) -> Vec<(&'static str, Value)> {
    vec![
        ("count", s("roots")),
        ("threshold", Value::Int(2)),
        ("seed", Value::Int(seed)),
        ("graph", s(graph)),
        ("truth", Value::Bool(truth)),
        ("rounds", Value::Int(30)),
    ]
}

#[test]
fn counting_roots_the_lone_report_never_misleads_anyone_new() {
    for seed in 1..=4 {
        for graph in ["small_world", "hub"] {
            let sets = roots_2(seed, graph, false);
            let start = round_zero(&config(&sets));
            // A run of r rounds ends in the state of round r of a longer run.
            for r in 1..=30 {
                let mut at = sets.clone();
                at[5] = ("rounds", Value::Int(r));
                let run = simulate(&config(&at), Parallelism::Sequential);
                for (i, a) in run.agents.iter().enumerate() {
                    if a.p >= 0.65 {
                        assert!(
                            start[i].ledger.contains(REPORT),
                            "seed {seed} {graph}: agent {i} misled in round {r}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn counting_roots_refute_never_carries_so_only_checks_correct() {
    for seed in 1..=6 {
        let run = simulate(
            &config(&roots_2(seed, "small_world", false)),
            Parallelism::Sequential,
        );
        for snap in &run.trajectory {
            assert_eq!(
                snap.refute, snap.checked,
                "seed {seed} round {}",
                snap.round
            );
        }
    }
}

#[test]
fn counting_roots_a_true_claim_spreads_once_a_probe_exists() {
    for seed in 1..=6 {
        let run = simulate(
            &config(&roots_2(seed, "small_world", true)),
            Parallelism::Sequential,
        );
        let last = run.trajectory.last().unwrap();
        assert!(
            last.support > last.checked,
            "seed {seed}: support carried beyond the checked agents"
        );
        assert!(
            last.correct as f64 > 0.9 * 250.0,
            "seed {seed}: {} correct",
            last.correct
        );
    }
}

#[test]
fn require_grounded_never_changes_a_run_in_this_version() {
    for seed in 1..=4 {
        let a = simulate(
            &config(&[("seed", Value::Int(seed))]),
            Parallelism::Sequential,
        );
        let b = simulate(
            &config(&[
                ("seed", Value::Int(seed)),
                ("require_grounded", Value::Bool(false)),
            ]),
            Parallelism::Sequential,
        );
        assert_eq!(a.trajectory, b.trajectory);
    }
}

#[test]
fn parallel_rounds_give_the_sequential_run() {
    // Chunks of agents split the memory at their neighbour lists, which
    // differ in length from chunk to chunk on a hub graph.
    for graph in ["small_world", "hub"] {
        let large = config(&[
            ("population", Value::Int(100_000)),
            ("rounds", Value::Int(5)),
            ("graph", s(graph)),
        ]);
        let seq = simulate(&large, Parallelism::Sequential);
        let par = simulate(&large, Parallelism::Parallel);
        assert_eq!(seq.trajectory, par.trajectory, "{graph}");
        assert!(seq.agents == par.agents, "{graph}");
    }
}

#[test]
fn effective_parameters_follow_section_11() {
    let ignored = |policy: &str| {
        let mut p = Resolved::defaults(PARAMS);
        p.set_named("policy", s(policy));
        let ignored = Config::from_resolved(&p).unwrap().ignored();
        ignored.names(PARAMS)
    };
    assert!(ignored("quorum").contains(&"gain"));
    assert!(!ignored("quorum").contains(&"threshold"));
    for other in ["endorsement", "source_aware", "reserved"] {
        for knob in [
            "threshold",
            "window",
            "require_grounded",
            "require_evidential",
            "refutation_cap",
            "count",
        ] {
            assert!(
                ignored(other).contains(&knob),
                "{other} should ignore {knob}"
            );
        }
    }
    assert!(!ignored("endorsement").contains(&"gain"));
    // The trust policy (docs/models/cascade.md §7.3): effective parameters as in §12.
    assert!(ignored("trust").contains(&"gain") && !ignored("trust").contains(&"allocation"));
    assert!(QUORUM_PARAMS
        .names(PARAMS)
        .iter()
        .all(|k| ignored("trust").contains(k)));
}

#[test]
fn zero_threshold_window_or_cap_are_typed_errors() {
    for (name, bad) in [("threshold", 0), ("window", 0), ("refutation_cap", 0)] {
        let id = witness::params::lookup(PARAMS, name).unwrap();
        let err = id
            .spec(PARAMS)
            .accept(&toml::Value::Integer(bad))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("`{name}` = 0")) && err.contains("1 ..= 1000"),
            "{err}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]
    #[test]
    fn identities_hold_under_every_knob(
        threshold in 1i64..6, window in 1i64..6, grounded in any::<bool>(), evidential in any::<bool>(),
        cap in prop::option::of(1i64..4), roots in any::<bool>(), truth in any::<bool>(),
        seed in 0i64..500, graph in 0usize..4, delay in 0i64..3,
    ) {
        let cfg = config(&[
            ("threshold", Value::Int(threshold)),
            ("window", Value::Int(window)),
            ("require_grounded", Value::Bool(grounded)),
            ("require_evidential", Value::Bool(evidential)),
            ("refutation_cap", cap.map_or(Value::Null, Value::Int)),
            ("count", s(if roots { "roots" } else { "senders" })),
            ("truth", Value::Bool(truth)),
            ("seed", Value::Int(seed)),
            ("graph", s(["ring", "small_world", "modular", "hub"][graph])),
            ("check_delay", Value::Int(delay)),
            ("population", Value::Int(80)),
            ("rounds", Value::Int(20)),
        ]);
        let run = simulate(&cfg, Parallelism::Sequential);
        prop_assert!(run.violation.is_none(), "{:?}", run.violation);
    }
}

/// A grid of quorum runs wide enough to reach every part of the count:
/// each graph family (and a denser modular graph and a hub graph of few,
/// large hubs, whose members hear many senders), both counts, several
/// thresholds, windows short and long, caps and evidence, both truths, and
/// a check delay that varies with the seed.
fn pinned_configs() -> Vec<(String, Config)> {
    let graphs: [(&str, &[(&str, Value)]); 6] = [
        ("ring", &[]),
        ("small_world", &[]),
        ("modular", &[]),
        ("modular", &[("module_links", Value::Int(12))]),
        ("hub", &[]),
        (
            "hub",
            &[
                ("hub_fraction", Value::Float(0.01)),
                ("hub_links", Value::Int(3)),
            ],
        ),
    ];
    let mut out = Vec::new();
    for (g, (graph, extra)) in graphs.iter().enumerate() {
        for count in ["senders", "roots"] {
            for threshold in [1, 2, 3] {
                for window in [1, 3, 40] {
                    for (evidential, cap) in [(false, None), (true, None), (false, Some(2))] {
                        for truth in [false, true] {
                            let seed = out.len() as i64 + 1;
                            let label = format!(
                                "{graph}{g} {count} threshold={threshold} window={window} \
                                 evidential={evidential} cap={cap:?} truth={truth} seed={seed}"
                            );
                            let mut sets = vec![
                                ("graph", s(graph)),
                                ("count", s(count)),
                                ("threshold", Value::Int(threshold)),
                                ("window", Value::Int(window)),
                                ("require_evidential", Value::Bool(evidential)),
                                ("refutation_cap", cap.map_or(Value::Null, Value::Int)),
                                ("truth", Value::Bool(truth)),
                                ("seed", Value::Int(seed)),
                                ("check_delay", Value::Int(seed % 3)),
                                ("population", Value::Int(150)),
                                ("rounds", Value::Int(30)),
                            ];
                            sets.extend(extra.iter().cloned());
                            out.push((label, config(&sets)));
                        }
                    }
                }
            }
        }
    }
    out
}

/// Each pinned run's trajectory and final agents, hashed.
fn pinned_digest(cfg: &Config) -> String {
    let run = simulate(cfg, Parallelism::Sequential);
    let text = format!("{:?}\n{:?}", run.trajectory, run.agents);
    witness::manifest::sha256_hex_prefix(text.as_bytes(), 16)
}

/// The quorum policy has no independent golden vectors, so its runs are
/// pinned to the digests the engine gave before its memory was redesigned
/// (tests/fixtures/quorum-pins.txt, written by this test with
/// `WITNESS_WRITE_PINS=1` at commit 6bb589a): a change to how the memory
/// is kept must leave every one of them as it was.
#[test]
fn quorum_runs_match_their_pinned_digests() {
    let path = format!(
        "{}/tests/fixtures/quorum-pins.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let lines: Vec<String> = pinned_configs()
        .iter()
        .map(|(label, cfg)| format!("{} {label}", pinned_digest(cfg)))
        .collect();
    if std::env::var_os("WITNESS_WRITE_PINS").is_some() {
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(&path).unwrap();
    let pinned: Vec<&str> = pinned.lines().collect();
    assert_eq!(pinned.len(), lines.len(), "one pin per configuration");
    for (want, got) in pinned.iter().zip(&lines) {
        assert_eq!(*want, got, "a pinned quorum run changed");
    }
}
