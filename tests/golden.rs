//! Golden vectors computed by an independent implementation of
//! witness-engine/1 (tests/fixtures/vectors; see docs/models/cascade.md §15): discrete values must
//! match exactly, floats within 1e-12.

use serde_json::Value as Json;
use witness::cascade::config::{Config, Family, GraphParams, PARAMS};
use witness::cascade::engine::{round_zero, simulate, Parallelism};
use witness::cascade::export::{export, resolved_from_config};
use witness::cascade::graph::Graph;
use witness::cascade::ledger::REPORT;
use witness::jsondiff::first_difference;
use witness::params::{Resolved, Value};
use witness::rng::{key, Stream};

fn fixture(name: &str) -> Json {
    let path = format!(
        "{}/tests/fixtures/vectors/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn u64s(v: &Json) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn f64s(v: &Json) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn draws_match_the_protocol_vectors() {
    let d = fixture("draws.json");
    for v in d["vectors"].as_array().unwrap() {
        let args = u64s(&v["key_args"]);
        let k = key(args[0], &args[1..]);
        assert_eq!(k, v["key"].as_u64().unwrap(), "key{args:?}");
        let mut s = Stream::new(k);
        assert_eq!(
            (0..5).map(|_| s.next_u64()).collect::<Vec<_>>(),
            u64s(&v["next_u64_first5"])
        );
        let mut s = Stream::new(k);
        assert_eq!(
            (0..5).map(|_| s.unit()).collect::<Vec<_>>(),
            f64s(&v["unit_first5_fresh_stream"])
        );
        for n in [10u64, 7] {
            let mut s = Stream::new(k);
            let got: Vec<u64> = (0..5).map(|_| s.below(n)).collect();
            assert_eq!(
                got,
                u64s(&v[format!("below{n}_first5_fresh_stream")]),
                "below({n})"
            );
        }
    }
    assert_eq!(witness::rng::mix(0), d["extra"]["mix(0)"].as_u64().unwrap());
    assert_eq!(key(0, &[]), d["extra"]["key(0)"].as_u64().unwrap());
    assert_eq!(
        Stream::new(0).next_u64(),
        d["extra"]["seed_from_u64(0).next_u64()"].as_u64().unwrap()
    );
}

#[test]
fn graphs_match_for_every_family() {
    let d = fixture("graphs_seed42_n250.json");
    let n = d["population"].as_u64().unwrap() as usize;
    let gp = &d["graph_params"];
    let params = GraphParams {
        shortcut_prob: gp["shortcut_prob"].as_f64().unwrap(),
        communities: gp["communities"].as_u64().unwrap() as usize,
        module_links: gp["module_links"].as_u64().unwrap() as usize,
        within_prob: gp["within_prob"].as_f64().unwrap(),
        hub_fraction: gp["hub_fraction"].as_f64().unwrap(),
        hub_links: gp["hub_links"].as_u64().unwrap() as usize,
    };
    for family in [
        Family::Ring,
        Family::SmallWorld,
        Family::Modular,
        Family::Hub,
    ] {
        let want = &d["families"][family.name()];
        assert_eq!(
            key(42, &[1, family.code()]),
            want["graph_key"].as_u64().unwrap()
        );
        let g = Graph::build(42, family, n, &params);
        assert_eq!(
            g.edge_count() as u64,
            want["edge_count"].as_u64().unwrap(),
            "{family:?} edges"
        );
        let mut hist = std::collections::BTreeMap::new();
        for i in 0..n {
            *hist.entry(g.degree(i).to_string()).or_insert(0u64) += 1;
        }
        let want_hist: std::collections::BTreeMap<String, u64> =
            serde_json::from_value(want["degree_histogram"].clone()).unwrap();
        assert_eq!(hist, want_hist, "{family:?} degree histogram");
        for i in 0..=5 {
            let got: Vec<u64> = g.neighbours(i).iter().map(|&j| j as u64).collect();
            assert_eq!(
                got,
                u64s(&want["neighbours_0_to_5_inclusive"][i.to_string()]),
                "{family:?} node {i}"
            );
        }
        let max_node = (0..n)
            .max_by_key(|&i| (g.degree(i), std::cmp::Reverse(i)))
            .unwrap();
        assert_eq!(
            max_node as u64,
            want["max_degree_node"].as_u64().unwrap(),
            "{family:?}"
        );
        let degree_sum: usize = (0..n).map(|i| g.degree(i)).sum();
        assert_eq!(
            degree_sum as u64,
            want["degree_sum_check"].as_u64().unwrap()
        );
    }
}

#[test]
fn round_zero_exposures_match() {
    let d = fixture("exposures_seed42_n250.json");
    let mut p = Resolved::defaults(PARAMS);
    p.set_named("seed", Value::Int(d["seed"].as_i64().unwrap()));
    p.set_named("population", Value::Int(d["population"].as_i64().unwrap()));
    p.set_named(
        "report_fraction",
        Value::Float(d["report_fraction"].as_f64().unwrap()),
    );
    p.set_named(
        "probe_fraction",
        Value::Float(d["probe_fraction"].as_f64().unwrap()),
    );
    let cfg = Config::from_resolved(&p).unwrap();
    assert_eq!(key(cfg.seed, &[2]), d["exposure_key"].as_u64().unwrap());
    let agents = round_zero(&cfg);
    let ids = |f: &dyn Fn(usize) -> bool| {
        (0..agents.len())
            .filter(|&i| f(i))
            .map(|i| i as u64)
            .collect::<Vec<_>>()
    };
    let reported = ids(&|i| agents[i].ledger.contains(REPORT));
    let probed = ids(&|i| agents[i].checked);
    let both = ids(&|i| agents[i].checked && agents[i].ledger.contains(REPORT));
    assert_eq!(reported, u64s(&d["report_ids"]));
    assert_eq!(probed, u64s(&d["probe_ids"]));
    assert_eq!(both, u64s(&d["both_ids"]));
    let mut s = Stream::keyed(cfg.seed, &[2]);
    for pair in d["first5_agents_a_b"].as_array().unwrap() {
        assert_eq!(vec![s.unit(), s.unit()], f64s(pair));
    }
}

fn check_run(name: &str) {
    let mut want = fixture(name);
    want.as_object_mut().unwrap().remove("note");
    let (p, cfg) = resolved_from_config(&want["config"]).unwrap();
    for parallelism in [Parallelism::Sequential, Parallelism::Parallel] {
        let got = export(&p, &simulate(&cfg, parallelism));
        if let Some(diff) = first_difference(&want, &got, 1e-12, true) {
            panic!("{name} ({parallelism:?}) differs at {diff}");
        }
    }
}

#[test]
fn seed_42_endorsement_run_matches() {
    check_run("run_endorsement_truth_false.json");
}

#[test]
fn seed_42_source_aware_run_matches() {
    check_run("run_source_aware_truth_false.json");
}

#[test]
fn seed_42_quorum_run_matches() {
    check_run("policies/run_quorum_truth_false.json");
}

#[test]
fn seed_42_trust_run_matches() {
    check_run("policies/run_trust_truth_true.json");
}
