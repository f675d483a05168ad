//! Sampled designs and their analysis: drawing a Sobol' design of 2^20
//! base samples over 8 factors without second order (10,485,760 points:
//! what a design holds, its unit-cube rows), and Sobol' indices with
//! 1,000 bootstrap resamples over the outputs of 2^12 base samples and 5
//! factors (the Ishigami-sized case `witness sensitivity` meets most).
//! Run: cargo bench --bench design

// The Ishigami function's `sin` is a test input compared within tolerances,
// not a result: the platform's own is fine here (clippy.toml bans it in the
// crate, decision 151).
#![allow(clippy::disallowed_methods)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;
use witness::analysis::sensitivity::indices::sobol_report;
use witness::design::sobol::saltelli;

fn designs(c: &mut Criterion) {
    let mut g = c.benchmark_group("design");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let (base, d) = (1 << 20, 8);
    g.throughput(Throughput::Elements((base * (d + 2)) as u64));
    g.bench_function("sobol_10m_points", |b| b.iter(|| saltelli(base, d, false)));
    g.finish();
}

fn indices(c: &mut Criterion) {
    let mut g = c.benchmark_group("sensitivity");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let (base, d) = (1 << 12, 5);
    let y: Vec<f64> = saltelli(base, d, true)
        .chunks(d)
        .map(|x| {
            x[0].sin() + 7.0 * x[1].sin().powi(2) + 0.1 * x[2].powi(4) * x[0].sin() + x[3] * x[4]
        })
        .collect();
    g.throughput(Throughput::Elements(y.len() as u64));
    g.bench_function("sobol_1000_resamples", |b| {
        b.iter(|| sobol_report(&y, d, true, 1000, &[0]))
    });
    g.finish();
}

criterion_group!(benches, designs, indices);
criterion_main!(benches);
