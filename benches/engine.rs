//! Agent-rounds per second of witness-engine/1, per policy: at N = 250
//! (the release default, one thread) and at N = 1,000,000 (one thread and
//! all cores, parallel rounds); and the seeding of sixteen agents' streams
//! one at a time and batched, on each path the CPU has (AVX-512, AVX2,
//! portable). Run: cargo bench --bench engine

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;
use witness::cascade::config::{Config, PARAMS};
use witness::cascade::engine::{simulate, Parallelism};
use witness::params::{Resolved, Value};
use witness::rng::{extend, Batch, Kernel, Stream, FIRST, LANES};

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

/// Sixteen streams' first five outputs, the draws of sixteen agent-rounds,
/// one at a time and on each batch path; the sum keeps the compiler from
/// dropping the work.
fn seeding(c: &mut Criterion) {
    let mut g = c.benchmark_group("seed16");
    g.throughput(Throughput::Elements(LANES as u64));
    let prefix = 0x1234_5678_9ABC_DEF0;
    let mut first = 0u64;
    g.bench_function("one_at_a_time", |b| {
        b.iter(|| {
            first = first.wrapping_add(LANES as u64);
            let mut sum = 0u64;
            for l in 0..LANES as u64 {
                let mut s = Stream::new(extend(prefix, first.wrapping_add(l)));
                for _ in 0..FIRST {
                    sum = sum.wrapping_add(s.below(u64::MAX));
                }
            }
            sum
        })
    });
    let mut batch = Batch::new();
    for path in Kernel::ALL.into_iter().filter(|p| p.available()) {
        g.bench_function(format!("batch_{path:?}").to_lowercase(), |b| {
            b.iter(|| {
                first = first.wrapping_add(LANES as u64);
                batch.fill_on(path, prefix, first);
                let mut sum = 0u64;
                for l in 0..LANES {
                    let mut d = batch.lane(l);
                    for _ in 0..FIRST {
                        sum = sum.wrapping_add(d.below(u64::MAX));
                    }
                }
                sum
            })
        });
    }
    g.finish();
}

criterion_group!(benches, small, large, seeding);
criterion_main!(benches);
