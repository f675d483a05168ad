//! The runner end to end, manifest to Parquet files (expansion, runs,
//! parts, assembly, seal): the recorded 540-run sweep on all cores and on
//! one thread, and 10,000 small runs (50 agents × 20 rounds) on all cores,
//! the grids of the performance report's runner rows. Run:
//! cargo bench --bench runner

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use witness::grid::Plan;
use witness::manifest::Manifest;
use witness::model::Registry;
use witness::runner::{execute, Options};

fn plan(relative: &str) -> Plan {
    let path = format!("{}/{relative}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let manifest = Manifest::parse(&path, &text, &Registry::builtin()).unwrap();
    Plan::new(manifest).unwrap()
}

fn grids(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("runner");
    g.sample_size(10);
    let cases = [
        (
            "sweep_540_to_parquet_all_cores",
            "experiments/sweep-540.toml",
            None,
        ),
        (
            "sweep_540_to_parquet_one_thread",
            "experiments/sweep-540.toml",
            Some(1),
        ),
        (
            "small_runs_10000_all_cores",
            "benches/manifests/small-runs-10000.toml",
            None,
        ),
    ];
    for (name, manifest, threads) in cases {
        let plan = plan(manifest);
        let out = tmp.path().join(name);
        let opts = Options {
            threads,
            ..Options::default()
        };
        g.throughput(Throughput::Elements(plan.total));
        g.bench_function(name, |b| {
            b.iter(|| {
                // Each iteration writes a fresh folder, as a new run does.
                let _ = std::fs::remove_dir_all(&out);
                execute(&plan, &out, &opts, &|_| {}).unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, grids);
criterion_main!(benches);
