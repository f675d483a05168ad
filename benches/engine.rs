//! Agent-rounds per second of witness-engine/1, per policy: at N = 250
//! (the release default, one thread) and at N = 1,000,000 (one thread and
//! all cores, parallel rounds). Run: cargo bench --bench engine

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;
use witness::cascade::config::{Config, PARAMS};
use witness::cascade::engine::{simulate, Parallelism};
use witness::params::{Resolved, Value};

fn config(policy: &str, population: i64, rounds: i64) -> Config {
    let mut p = Resolved::defaults(PARAMS);
    p.set_named("policy", Value::Str(policy.into()));
    p.set_named("population", Value::Int(population));
    p.set_named("rounds", Value::Int(rounds));
    Config::from_resolved(&p).unwrap()
}

const POLICIES: [&str; 4] = ["endorsement", "source_aware", "reserved", "quorum"];

fn small(c: &mut Criterion) {
    let mut g = c.benchmark_group("n250_r60_one_thread");
    g.throughput(Throughput::Elements(250 * 60));
    for policy in POLICIES {
        let cfg = config(policy, 250, 60);
        g.bench_with_input(BenchmarkId::from_parameter(policy), &cfg, |b, cfg| {
            b.iter(|| simulate(cfg, Parallelism::Sequential))
        });
    }
    g.finish();
}

fn large(c: &mut Criterion) {
    // The default 60 rounds, graph build included, as a whole
    // `simulate --set population=1000000` runs them (an earlier version
    // timed 10 rounds, where the build weighed six times as much).
    let rounds = 60;
    let mut g = c.benchmark_group("n1m_r60");
    g.sample_size(10).measurement_time(Duration::from_secs(30));
    g.throughput(Throughput::Elements(1_000_000 * rounds as u64));
    for policy in POLICIES {
        let cfg = config(policy, 1_000_000, rounds);
        for (label, mode) in [
            ("one_thread", Parallelism::Sequential),
            ("all_cores", Parallelism::Parallel),
        ] {
            g.bench_with_input(BenchmarkId::new(label, policy), &cfg, |b, cfg| {
                b.iter(|| simulate(cfg, mode))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, small, large);
criterion_main!(benches);
