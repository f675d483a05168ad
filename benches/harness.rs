//! The harness's turn loop with its built-in scripted policies, 50 agents
//! (the default world): a whole run (graph, round 0, every turn, metrics and
//! identities) per iteration, throughput in turns taken (agent-turns:
//! probes, relays and passes), which is what an external policy would be
//! asked for.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use witness::harness::config::{Config, HarnessParams, Policy};
use witness::harness::engine;
use witness::params::{Params, Resolved};

fn config(policy: Policy) -> Config {
    let mut p = HarnessParams::from_resolved(&Resolved::defaults(HarnessParams::SPECS));
    p.policy = policy;
    Config::new(p).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("harness_50_agents");
    for policy in [Policy::Echo, Policy::Dedupe, Policy::Prober] {
        let cfg = config(policy);
        let run = engine::simulate(&cfg, None, false);
        assert!(run.violation.is_none());
        let turns = run.trajectory.last().unwrap().actions;
        g.throughput(Throughput::Elements(turns));
        g.bench_function(policy.name(), |b| {
            b.iter(|| engine::simulate(&cfg, None, false))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
