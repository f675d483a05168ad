//! Invariants of witness-engine/1 beyond the golden vectors: common random
//! numbers, parallel rounds, accounting identities, parameter validation.

use proptest::prelude::*;
use witness::cascade::config::{Config, PARAMS};
use witness::cascade::engine::{round_zero, simulate, Parallelism};
use witness::cascade::graph::Graph;
use witness::cascade::ledger::REPORT;
use witness::cascade::model::Cascade;
use witness::model::Model;
use witness::params::{lookup, Resolved, Value};

fn config(sets: &[(&str, Value)]) -> Config {
    let mut p = Resolved::defaults(PARAMS);
    for (k, v) in sets {
        p.set_named(k, v.clone());
    }
    Config::from_resolved(&p).unwrap()
}

fn s(x: &str) -> Value {
    Value::Str(x.into())
}

/// Who starts with the report and who with a probe.
fn exposures(cfg: &Config) -> (Vec<bool>, Vec<bool>) {
    let a = round_zero(cfg);
    (
        a.iter().map(|x| x.ledger.contains(REPORT)).collect(),
        a.iter().map(|x| x.checked).collect(),
    )
}

fn edges(cfg: &Config) -> Vec<Vec<u32>> {
    let g = Graph::build(cfg.seed, cfg.graph, cfg.population, &cfg.graph_params);
    (0..cfg.population)
        .map(|i| g.neighbours(i).to_vec())
        .collect()
}

#[test]
fn graph_and_exposures_are_common_random_numbers() {
    for graph in ["small_world", "modular", "hub"] {
        let base = config(&[("graph", s(graph)), ("seed", Value::Int(3))]);
        let variants = [
            ("policy", s("source_aware")),
            ("policy", s("reserved")),
            ("truth", Value::Bool(true)),
            ("allocation", s("fixed")),
            ("communication", Value::Float(0.3)),
            ("gain", Value::Float(1.5)),
            ("replicate", Value::Int(7)),
        ];
        for (k, v) in variants {
            let other = config(&[("graph", s(graph)), ("seed", Value::Int(3)), (k, v.clone())]);
            assert_eq!(
                edges(&base),
                edges(&other),
                "{graph}: graph changed with {k}"
            );
            assert_eq!(
                exposures(&base),
                exposures(&other),
                "{graph}: exposures changed with {k}"
            );
        }
        let reseeded = config(&[("graph", s(graph)), ("seed", Value::Int(4))]);
        assert_ne!(
            exposures(&base),
            exposures(&reseeded),
            "the seed must matter"
        );
    }
}

#[test]
fn replicate_changes_only_the_agent_round_draws() {
    let a = simulate(&config(&[]), Parallelism::Sequential);
    let b = simulate(
        &config(&[("replicate", Value::Int(1))]),
        Parallelism::Sequential,
    );
    assert_eq!(a.trajectory[0], b.trajectory[0], "round 0 is shared");
    assert_ne!(
        a.trajectory, b.trajectory,
        "a placebo rerun draws differently"
    );
}

#[test]
fn parallel_rounds_equal_sequential_rounds_at_100_000_agents() {
    for policy in ["endorsement", "source_aware"] {
        let cfg = config(&[
            ("population", Value::Int(100_000)),
            ("rounds", Value::Int(4)),
            ("policy", s(policy)),
            ("check_delay", Value::Int(1)),
            ("corrections", Value::List(vec![2])),
        ]);
        let seq = simulate(&cfg, Parallelism::Sequential);
        let par = simulate(&cfg, Parallelism::Parallel);
        assert_eq!(seq.trajectory, par.trajectory, "{policy}: trajectory");
        assert_eq!(seq.interventions, par.interventions);
        assert!(
            seq.agents == par.agents,
            "{policy}: final agent states differ"
        );
        assert!(seq.violation.is_none());
    }
}

fn arb_config() -> impl Strategy<Value = Vec<(&'static str, Value)>> {
    (
        (
            3i64..120,
            1i64..25,
            any::<bool>(),
            0usize..4,
            0usize..5,
            any::<bool>(),
        ),
        (
            0.0..=1.0f64,
            0.0..=20.0f64,
            0.0..=1.0f64,
            0.0..=0.3f64,
            0i64..4,
            0u64..1000,
        ),
        (
            prop::collection::vec(1i64..25, 0..3),
            0.0..=1.0f64,
            0.01..=0.5f64,
            1i64..4,
            0i64..3,
        ),
    )
        .prop_map(
            |(
                (n, r, truth, g, pol, fixed),
                (c, gain, rf, pf, delay, seed),
                (corr, sc, hf, hl, ml),
            )| {
                let graph = ["ring", "small_world", "modular", "hub"][g];
                vec![
                    ("population", Value::Int(n.max(10))),
                    ("rounds", Value::Int(r)),
                    ("truth", Value::Bool(truth)),
                    ("graph", s(graph)),
                    (
                        "policy",
                        s(["endorsement", "source_aware", "reserved", "quorum", "trust"][pol]),
                    ),
                    ("allocation", s(if fixed { "fixed" } else { "adaptive" })),
                    ("communication", Value::Float(c)),
                    ("gain", Value::Float(gain)),
                    ("report_fraction", Value::Float(rf)),
                    ("probe_fraction", Value::Float(pf)),
                    ("check_delay", Value::Int(delay)),
                    (
                        "corrections",
                        Value::List(corr.into_iter().filter(|&x| x <= r).collect()),
                    ),
                    ("seed", Value::Int(seed as i64)),
                    ("shortcut_prob", Value::Float(sc)),
                    ("hub_fraction", Value::Float(hf)),
                    ("hub_links", Value::Int(hl)),
                    ("module_links", Value::Int(ml)),
                ]
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn identities_hold_for_random_valid_configurations(sets in arb_config()) {
        let cfg = config(&sets);
        let run = simulate(&cfg, Parallelism::Sequential);
        prop_assert!(run.violation.is_none(), "{:?}", run.violation);
        let last = run.trajectory.last().unwrap();
        prop_assert_eq!(last.effort, 4 * cfg.population as u64 * cfg.rounds as u64);
    }
}

#[test]
fn invalid_parameters_name_the_parameter_value_and_range() {
    let cases: &[(&str, toml::Value, &str)] = &[
        (
            "population",
            toml::Value::Integer(2),
            "allowed: an integer in 3 ..= 10000000",
        ),
        (
            "communication",
            toml::Value::Float(1.5),
            "allowed: a number in 0.0 ..= 1.0",
        ),
        (
            "policy",
            toml::Value::String("pooling".into()),
            "one of endorsement, source_aware, reserved",
        ),
        (
            "graph",
            toml::Value::String("tree".into()),
            "one of ring, small_world, modular, hub",
        ),
        ("truth", toml::Value::Integer(1), "wrong type (integer)"),
        (
            "corrections",
            toml::Value::Array(vec![toml::Value::Integer(0)]),
            "each in 1 ..= 100000",
        ),
    ];
    for (name, raw, needle) in cases {
        let err = lookup(PARAMS, name)
            .unwrap()
            .spec(PARAMS)
            .accept(raw)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("`{name}`")) && err.contains(needle),
            "{err}"
        );
    }
    let mut p = Resolved::defaults(PARAMS);
    p.set_named("graph", s("modular"));
    p.set_named("population", Value::Int(9));
    let err = Config::from_resolved(&p).unwrap_err().to_string();
    assert!(
        err.contains("`communities` = 5") && err.contains("2 ..= 4"),
        "{err}"
    );
    p.set_named("graph", s("ring"));
    p.set_named("rounds", Value::Int(10));
    p.set_named("corrections", Value::List(vec![11]));
    let err = Config::from_resolved(&p).unwrap_err().to_string();
    assert!(
        err.contains("`corrections`") && err.contains("1 ..= 10"),
        "{err}"
    );
    let err = lookup(PARAMS, "grain").unwrap_err().to_string();
    assert!(
        err.contains("unknown parameter") && err.contains("gain"),
        "{err}"
    );
}

/// A run of 100,000 agents on a modular graph of 100 links peaked at
/// 166 MB (`/usr/bin/time -f %M witness simulate --set
/// population=100000 --set graph=modular --set module_links=100`);
/// 400 bytes an agent, the estimate before edges were counted, is 40.
#[test]
fn a_dense_graph_is_counted_by_its_edges() {
    let sets = |links: i64| {
        config(&[
            ("population", Value::Int(100_000)),
            ("graph", s("modular")),
            ("module_links", Value::Int(links)),
        ])
    };
    let dense = Cascade::footprint(&sets(100)).working_bytes;
    assert!(dense >= 166_000_000, "{dense} bytes");
    let sparse = Cascade::footprint(&sets(2)).working_bytes;
    assert!(sparse < dense / 5, "{sparse} against {dense}");
}
