//! The runner's own side of an external decision, per decision: the
//! cascade writing an agent's observation (canonical JSON), hashing and
//! sending the request, reading and checking the answer, and logging it.
//! A policy process's time is not in here (the loopback's rate is printed
//! by `witness run`); this is what witness adds to every decision.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::value::RawValue;
use serde_json::{json, Value as Json};
use witness::cascade::config::{CascadeParams, Config, Policy};
use witness::cascade::engine::round_zero;
use witness::cascade::external;
use witness::cascade::graph::Graph;
use witness::cascade::metrics::Counters;
use witness::model::{Answer, Ask, Decided};
use witness::params::Params;
use witness::policy::log::{Entry, Outcome};
use witness::policy::protocol::{self, Identity, Item, Usage};

/// An answered decision as the log keeps it.
fn entry(key: &str, obs: Box<RawValue>) -> Entry {
    Entry {
        key: key.to_string(),
        request_sha256: "0".repeat(64),
        obs,
        allowed: vec!["check".into(), "read".into()],
        outcome: Outcome::Answer,
        answer: Some(json!({"action": "read", "belief": 0.6123456789})),
        errors: Vec::new(),
        usage: Usage::default(),
        attempts: 1,
        replayed: false,
        check: String::new(),
    }
    .sealed()
}

fn config() -> Config {
    let mut p =
        CascadeParams::from_resolved(&witness::params::Resolved::defaults(CascadeParams::SPECS));
    p.policy = Policy::External;
    p.population = 1000;
    Config::new(p).unwrap()
}

/// Round 1 of a 1000-agent run: its asks, as the engine writes them.
fn round_asks(cfg: &Config) -> Vec<Ask> {
    let graph = Graph::build(cfg.seed, cfg.graph, cfg.population, &cfg.graph_params);
    let prev = round_zero(cfg);
    let mut next = prev.clone();
    let mut asks = Vec::new();
    let mut d = Counters::default();
    let mut keep = |a: Vec<Ask>| {
        let n = a.len();
        asks = a;
        Ok(vec![read(); n])
    };
    external::round(cfg, &graph, &prev, &mut next, 1, 7, &mut d, &mut keep).unwrap();
    asks
}

fn read() -> Decided {
    Decided::Answer(Answer {
        action: "read".into(),
        belief: Some(0.61),
        text: None,
        raw: json!({"action": "read", "belief": 0.61}),
    })
}

fn bench(c: &mut Criterion) {
    let cfg = config();
    let graph = Graph::build(cfg.seed, cfg.graph, cfg.population, &cfg.graph_params);
    let prev = round_zero(&cfg);
    let asks = round_asks(&cfg);
    let n = asks.len() as u64;
    let id = Identity {
        name: "bench".into(),
        version: "1".into(),
        digest: "0".repeat(64),
    };
    let keys: Vec<String> = asks
        .iter()
        .map(|a| format!("0123456789abcdef/{}", a.key))
        .collect();
    let texts: Vec<Box<RawValue>> = asks
        .iter()
        .map(|a| RawValue::from_string(a.obs.text().to_string()).unwrap())
        .collect();
    let params = json!({"population": 1000, "gain": 6.0});
    let reply: String = {
        let items: Vec<Json> = keys
            .iter()
            .map(|k| json!({"key": k, "action": "read", "belief": 0.6123456789}))
            .collect();
        json!({"type": "decisions", "batch": "b", "items": items}).to_string()
    };
    let mut g = c.benchmark_group("policy_per_decision");
    g.throughput(Throughput::Elements(n));
    g.bench_function("observe: the engine's round, observations written", |b| {
        b.iter(|| {
            let mut next = prev.clone();
            let mut d = Counters::default();
            let mut answer = |a: Vec<Ask>| Ok(vec![read(); a.len()]);
            external::round(&cfg, &graph, &prev, &mut next, 1, 7, &mut d, &mut answer).unwrap();
        })
    });
    g.bench_function("encode: request hashes and the decide line", |b| {
        b.iter(|| {
            let items: Vec<Item> = keys
                .iter()
                .zip(&texts)
                .zip(&asks)
                .map(|((k, t), a)| Item {
                    key: k,
                    obs: t,
                    allowed: a.allowed,
                })
                .collect();
            let hashes: Vec<String> = items
                .iter()
                .map(|i| protocol::request_sha256(i, &id))
                .collect();
            (
                hashes,
                protocol::decide("b", "0123456789abcdef", &params, &items),
            )
        })
    });
    let point = external::AGENT_ROUND;
    g.bench_function(
        "decode: the decisions line read and every answer checked",
        |b| {
            b.iter(|| {
                let msg: Json = serde_json::from_str(&reply).unwrap();
                let replies = protocol::decisions(&msg, "b").unwrap();
                replies
                    .iter()
                    .zip(&asks)
                    .map(|(r, a)| {
                        protocol::check(
                            &r.key,
                            a.allowed,
                            a.obs.text(),
                            r.answer.as_ref().unwrap(),
                            &point,
                        )
                        .unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        },
    );
    g.bench_function("log: entries sealed and written as lines (no sync)", |b| {
        b.iter(|| {
            let mut out = String::new();
            for (k, t) in keys.iter().zip(&texts) {
                out += &entry(k, t.clone()).line();
                out.push('\n');
            }
            out
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
