//! The harness model's invariants: its identities hold for any parameters
//! and any policy, scripted or not (a random policy answers through the
//! decision point, its answers checked as the protocol checks them); runs
//! are pure functions of their parameters; and bad relays are refused
//! before a model could apply them.

use proptest::prelude::*;
use serde_json::{json, Value as Json};
use witness::harness::external::TURN;
use witness::model::{Ask, Decided, Decider, DynModel, PolicyFailure, Registry};
use witness::params::{Resolved, Value};
use witness::policy::protocol;
use witness::rng::Stream;

fn model() -> &'static dyn DynModel {
    Registry::builtin().find("harness").unwrap()
}

fn params(set: &[(&str, Value)]) -> Resolved {
    let m = model();
    let mut r = Resolved::defaults(m.params());
    for (k, v) in set {
        r.set_named(k, v.clone());
    }
    r
}

/// Answers every turn at random (seeded): any allowed action, any belief,
/// a relay to any listed neighbour citing any subset of the held roots;
/// now and then no answer at all (the fallback).
struct RandomPolicy(Stream);

impl Decider for RandomPolicy {
    fn decide(&mut self, asks: Vec<Ask>) -> Result<Vec<Decided>, PolicyFailure> {
        Ok(asks
            .iter()
            .map(|a| {
                let s = &mut self.0;
                if s.unit() < 0.05 {
                    return Decided::Fallback;
                }
                let obs: Json = serde_json::from_str(a.obs.text()).unwrap();
                let action = a.allowed[s.below(a.allowed.len() as u64) as usize];
                let mut raw = json!({"action": action, "belief": s.unit()});
                if action == "relay" {
                    let nb = obs["neighbours"].as_array().unwrap();
                    let cites: Vec<&Json> = obs["roots"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|_| s.unit() < 0.5)
                        .collect();
                    raw["to"] = nb[s.below(nb.len() as u64) as usize].clone();
                    raw["stance"] = json!(["supports", "refutes", "unsure"][s.below(3) as usize]);
                    raw["cites"] = json!(cites);
                }
                let checked = protocol::check(&a.key, a.allowed, a.obs.text(), &raw, &TURN)
                    .unwrap_or_else(|e| panic!("a valid random answer was refused: {e}"));
                Decided::Answer(checked)
            })
            .collect())
    }
}

fn col(m: &dyn DynModel, name: &str) -> usize {
    m.summary_columns()
        .iter()
        .position(|c| c.name == name)
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn identities_hold_for_any_parameters_and_any_policy(
        population in 4usize..80,
        rounds in 1u32..30,
        budget in 1u32..15,
        context in 0usize..10,
        report_fraction in 0.0f64..1.0,
        graph in 0usize..4,
        policy in 0usize..4,
        seed in 0u64..1_000_000,
        truth in any::<bool>(),
    ) {
        let m = model();
        let graph = ["ring", "small_world", "modular", "hub"][graph];
        let policy = ["echo", "dedupe", "prober", "external"][policy];
        let mut set = vec![
            ("population", Value::Int(population as i64)),
            ("rounds", Value::Int(i64::from(rounds))),
            ("budget", Value::Int(i64::from(budget))),
            ("context", Value::Int(context as i64)),
            ("report_fraction", Value::Float(report_fraction)),
            ("graph", Value::Str(graph.into())),
            ("policy", Value::Str(policy.into())),
            ("seed", Value::Int(seed as i64)),
            ("truth", Value::Bool(truth)),
        ];
        if graph == "modular" {
            set.push(("communities", Value::Int((population / 2).clamp(2, 5) as i64)));
        }
        let p = params(&set);
        let want = vec![true; m.tables().len()];
        let mut random = RandomPolicy(Stream::keyed(seed, &[7]));
        let decider = (policy == "external").then_some(&mut random as &mut dyn Decider);
        let out = m.run(&p, &want, decider).unwrap();
        prop_assert!(out.violation.is_none(), "{:?}", out.violation);
        prop_assert!(out.failure.is_none());
        let spent = out.summary[col(m, "spent")].as_i64().unwrap() as u64;
        prop_assert!(spent <= u64::from(budget) * population as u64);
        // One trajectory row a round, and one message row a relay.
        prop_assert_eq!(out.tables[0].rows() as u32, rounds + 1);
        let relays = out.summary[col(m, "relays")].as_i64().unwrap() as usize;
        prop_assert_eq!(out.tables[2].rows(), relays);
        // A run is a function of its parameters (and, external, of the answers).
        if policy != "external" {
            let again = m.run(&p, &want, None).unwrap();
            prop_assert_eq!(again.summary, out.summary);
            prop_assert_eq!(again.tables, out.tables);
        }
    }
}

#[test]
fn the_placebo_changes_only_the_turn_draws() {
    let m = model();
    let want = vec![true; m.tables().len()];
    let run = |replicate: i64| {
        let p = params(&[
            ("policy", Value::Str("dedupe".into())),
            ("replicate", Value::Int(replicate)),
        ]);
        m.run(&p, &want, None).unwrap()
    };
    let (a, b) = (run(0), run(1));
    // Round 0 (the report's recipients) is shared; the turns differ.
    assert_eq!(a.tables[0].row(0), b.tables[0].row(0));
    assert_ne!(a.tables[0], b.tables[0]);
}

#[test]
fn an_external_run_without_a_policy_fails_and_keeps_nothing() {
    let m = model();
    let p = params(&[("policy", Value::Str("external".into()))]);
    let out = m.run(&p, &vec![true; m.tables().len()], None).unwrap();
    let f = out.failure.expect("no decider: the run fails");
    assert_eq!(f.key, "r1/a0");
    assert!(out.tables.iter().all(|t| t.is_empty()));
    assert!(out.summary.iter().all(|v| *v == Value::Null));
}

#[test]
fn compare_gives_verdicts_on_harness_results_with_a_placebo() {
    use predicates::prelude::PredicateBooleanExt;
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("h.toml");
    std::fs::write(
        &m,
        "[experiment]\nname = \"h\"\nmodel = \"harness\"\n\
         [grid]\nseed = { from = 1, to = 8 }\ntruth = [false]\n\
         [[arm]]\nname = \"echo\"\npolicy = \"echo\"\nplacebo = true\n\
         [[arm]]\nname = \"prober\"\npolicy = \"prober\"\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    assert_cmd::Command::cargo_bin("witness")
        .unwrap()
        .args(["run", "-q"])
        .arg(&m)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    // Echo spreads the false report to nearly everyone; prober, which
    // probes first, is never mistaken: the answer changed on every seed.
    assert_cmd::Command::cargo_bin("witness")
        .unwrap()
        .args(["compare"])
        .arg(&out)
        .args(["--baseline", "echo"])
        .assert()
        .success()
        .stdout(predicates::str::is_match(r"prober\s+answer changed\s+8/8").unwrap())
        .stdout(predicates::str::contains("inconclusive").not());
}
