//! `witness report`'s work on 100,000 stored runs (benches/manifests/
//! compare-100k.toml: 12,500 seeds x 2 graphs x 4 arms, 50 agents x 20
//! rounds): every section gathered from the folder (the trajectory table's
//! 2.1 million rows streamed once per use) and the page assembled, with and
//! without `compare`'s verdicts. Run: cargo bench --bench report

use criterion::{criterion_group, criterion_main, Criterion};
use witness::analysis::report::{build, Request};
use witness::grid::Plan;
use witness::manifest::Manifest;
use witness::model::Registry;
use witness::results::ResultsDir;
use witness::runner::{execute, Options};

fn report(c: &mut Criterion) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/manifests/compare-100k.toml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let registry = Registry::builtin();
    let plan = Plan::new(Manifest::parse(path, &text, &registry).unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("runs");
    let opts = Options::default();
    execute(&plan, &out, &opts, &|_| {}).unwrap();
    let mut g = c.benchmark_group("report");
    g.sample_size(10);
    for (name, baseline) in [
        ("100k_runs", None),
        ("100k_runs_with_verdicts", Some("endorsement")),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let results = ResultsDir::open(&out, &registry).unwrap();
                let doc = build(&results, &Request { baseline }).unwrap();
                witness::store::html::page(&results.plan.manifest.name, &doc).len()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, report);
criterion_main!(benches);
