//! The decision between rungs of a race: 864 candidates (the hive's policy
//! grid) with 10 seeds each, by paired t-tests with Holm's correction and
//! by halving, in memory (scores aggregated from the rung's runs, the
//! decision, the next rung scheduled); and a raced results folder read
//! back, which decides every rung again from `runs.parquet` (what each
//! analysis verb and `run`'s resume do). Run: cargo bench --bench search

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use witness::grid::Plan;
use witness::manifest::Manifest;
use witness::model::Registry;
use witness::runner::layout::Layout;
use witness::runner::{execute, Options};

/// experiments/hive-race.toml with its [search] replaced.
fn plan(search: &str, rooms: u64) -> Plan {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/hive-race.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let head = &text[..text.find("\n[search]").unwrap() + 1];
    let text =
        format!("{head}[search]\n{search}\n").replace("rooms = 500", &format!("rooms = {rooms}"));
    Plan::new(Manifest::parse(path, &text, &Registry::builtin()).unwrap()).unwrap()
}

/// A metric per run: each candidate its own level, each seed a wobble.
fn metric(n: u64) -> Vec<f64> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|run| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (run / 9) as f64 % 97.0 + (x >> 40) as f64 / (1u64 << 24) as f64
        })
        .collect()
}

fn decide(c: &mut Criterion) {
    let mut g = c.benchmark_group("search");
    let common = "metric = \"correct_pct\"\nmaximize = true\nresource = \"seed\"";
    // One rung of every candidate on 10 seeds (halving cuts only before
    // the last rung, so it decides on 9).
    for (method, seeds) in [("race", 10), ("halving", 9)] {
        let p = plan(
            &format!("method = \"{method}\"\n{common}\nfirst = {seeds}"),
            500,
        );
        assert_eq!(p.total, 864 * seeds);
        let values = metric(p.total);
        g.bench_function(
            format!("{method}_decision_864_candidates_{seeds}_seeds"),
            |b| {
                b.iter_batched(
                    || p.clone(),
                    |mut p| p.record_rung(&values),
                    BatchSize::LargeInput,
                )
            },
        );
    }
    // The shipped race, at 5 rooms a run, read back from its folder.
    let p = plan(
        "method = \"halving\"\nmetric = \"correct_pct\"\nmaximize = true\nresource = \"seed\"\nfirst = 1\neta = 3",
        5,
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("race");
    let opts = Options::default();
    execute(&p, &out, &opts, &|_| {}).unwrap();
    let layout = Layout::new(&out);
    g.bench_function("raced_folder_read_back_4_rungs", |b| {
        b.iter(|| layout.read_plan(&Registry::builtin()).unwrap())
    });
    g.finish();
}

criterion_group!(benches, decide);
criterion_main!(benches);
