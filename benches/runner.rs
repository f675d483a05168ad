//! The runner end to end: the recorded 540-run sweep from manifest to
//! Parquet files (expansion, runs, parts, assembly). Run:
//! cargo bench --bench runner

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use witness::grid::Plan;
use witness::manifest::Manifest;
use witness::model::Registry;
use witness::runner::{execute, Options};

fn sweep(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/sweep-540.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let manifest = Manifest::parse(path, &text, &Registry::builtin()).unwrap();
    let plan = Plan::new(manifest).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let opts = Options::default();
    let mut g = c.benchmark_group("runner");
    g.sample_size(10)
        .throughput(Throughput::Elements(plan.total));
    g.bench_function("sweep_540_to_parquet_all_cores", |b| {
        b.iter(|| {
            let _ = std::fs::remove_dir_all(&out);
            execute(&plan, &out, &opts, &|_| {}).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, sweep);
criterion_main!(benches);
