//! A fourth model, declared here in the test crate: a biased coin counted
//! over tosses. It goes through plan, run, verify, merge, summary, compare,
//! describe, simulate and replay by registering itself, with no change to
//! the runner, the analysis, the storage or the CLI. This is the proof that
//! the model boundary is closed.

use clap::Parser;
use std::path::Path;
use witness::cli::{self, Cli};
use witness::model::{
    Curves, DetailTable, Model, Position, Ran, Registered, Registry, RunContext, Stored, TableSpec,
    Violation,
};
use witness::params::{Kind, ParamError, ParamSet};
use witness::rng::Stream;
use witness::store::parquet;

witness::words! {
    /// How the coin is thrown.
    pub enum Hand {
        Fair = "fair",
        Loaded = "loaded",
    }
}

witness::params! {
    /// The coin's parameters.
    pub struct CoinParams {
        /// the run's seed
        seed: u64 = 1, Kind::int(0, i64::MAX), Seed;
        /// varies the tosses of a placebo rerun
        replicate: u64 = 0, Kind::int(0, i64::MAX), Replicate;
        /// fair tosses at `bias`; loaded ones at twice it, capped at 1
        hand: Hand = Hand::Fair, Kind::choice::<Hand>(), Arm;
        /// chance of heads
        bias: f64 = 0.5, Kind::float(0.0, 1.0);
        /// tosses per run
        tosses: u32 = 20, Kind::int(1, 10_000);
        /// the loaded hand's extra weight (a fair hand ignores it)
        weight: f64 = 2.0, Kind::float(1.0, 10.0);
    }
}

witness::record! {
    /// A run of tosses.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CoinSummary {
        /// tosses that came up heads
        heads: u64,
        /// heads / tosses
        share: f64 [0.0, 1.0],
    }
}

witness::record! {
    /// One toss.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Toss {
        /// toss number, from 0
        toss: u64,
        /// heads so far, this toss included
        heads: u64,
    }
}

const TOSSES: DetailTable<Toss> = DetailTable::new("tosses", true, "one row per run and toss");

struct Coin;

impl Model for Coin {
    const NAME: &'static str = "coin";
    const VERSION: &'static str = "coin/1";
    const DOC: &'static str = "a biased coin, tossed";
    type Params = CoinParams;
    type Config = CoinParams;
    type Summary = CoinSummary;
    const TABLES: &'static [TableSpec] = &[TOSSES.spec];

    fn configure(p: CoinParams) -> Result<CoinParams, ParamError> {
        if p.hand == Hand::Loaded && p.bias > 0.5 {
            return Err(ParamError::new(
                "bias",
                p.bias,
                "a loaded hand doubles the bias past 1",
                "0 ..= 0.5 with hand = loaded".into(),
            ));
        }
        Ok(p)
    }

    fn ignored(c: &CoinParams) -> ParamSet {
        match c.hand {
            Hand::Fair => ParamSet::of(&[CoinParams::weight]),
            Hand::Loaded => ParamSet::EMPTY,
        }
    }

    fn run(c: &CoinParams, cx: &mut RunContext) -> Ran<CoinSummary> {
        let chance = match c.hand {
            Hand::Fair => c.bias,
            Hand::Loaded => (c.bias * c.weight).min(1.0),
        };
        let mut s = Stream::keyed(c.seed, &[0xC0, c.replicate]);
        let mut rows = cx.table(&TOSSES);
        let mut heads = 0;
        for toss in 0..u64::from(c.tosses) {
            heads += u64::from(s.unit() < chance);
            if let Some(rows) = rows.as_mut() {
                rows.push(&Toss { toss, heads });
            }
        }
        Ran {
            summary: CoinSummary {
                heads,
                share: heads as f64 / f64::from(c.tosses),
            },
            violation: None,
        }
    }

    fn audit(c: &CoinParams, stored: &Stored) -> Option<Violation> {
        let rows = stored.rows(&TOSSES)?.ok()?;
        let fail = |at: u64, detail: String| {
            Some(Violation {
                identity: "heads grow by 0 or 1 a toss".into(),
                at: Some(Position::Round(at)),
                detail,
            })
        };
        if rows.len() != c.tosses as usize {
            return fail(0, format!("{} rows for {} tosses", rows.len(), c.tosses));
        }
        let mut last = 0;
        for r in &rows {
            if r.heads < last || r.heads > last + 1 {
                return fail(r.toss, format!("heads went from {last} to {}", r.heads));
            }
            last = r.heads;
        }
        None
    }
}

static COIN: Registered<Coin> = Registered::new().headline(&["share"]).curves(Curves {
    table: "tosses",
    x: "toss",
    columns: &["heads"],
    y_label: "heads per toss so far",
    scale: |p| f64::from(p.tosses),
});

const MANIFEST: &str = r#"
[experiment]
name = "coin"
model = "coin"
chunk_runs = 3

[fixed]
bias = 0.3
tosses = 50

[grid]
seed = { from = 1, to = 8 }

[[arm]]
name = "fair"
policy = "fair"
placebo = true

[[arm]]
name = "loaded"
policy = "loaded"
grid = { weight = [1.0, 3.0] }
"#;

fn registry() -> Registry {
    Registry::builtin().with(&COIN)
}

/// `witness ARGS...` in this process, with the coin registered.
fn witness(args: &[&str]) -> Result<u8, witness::Error> {
    cli::run(
        Cli::try_parse_from(std::iter::once("witness").chain(args.iter().copied())).unwrap(),
        &registry(),
    )
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_coin_declares_itself_soundly() {
    assert!(witness::model::declaration_problems(&COIN).is_empty());
}

#[test]
fn a_fourth_model_runs_through_every_verb() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("coin.toml");
    std::fs::write(&m, MANIFEST).unwrap();
    let out = tmp.path().join("out");
    assert_eq!(witness(&["plan", path(&m)]).unwrap(), 0);
    assert_eq!(
        witness(&["run", "-q", "--out", path(&out), path(&m)]).unwrap(),
        0
    );
    let runs =
        parquet::read_columns(&out.join("runs.parquet"), &["arm", "weight", "share"]).unwrap();
    // fair, fair:placebo, loaded x 2 weights: 8 seeds each.
    assert_eq!(runs[0].len(), 32);
    assert_eq!(witness(&["verify", "--all", path(&out)]).unwrap(), 0);

    // The same grid in three shards and a merge: the same bytes.
    let sharded = tmp.path().join("sharded");
    for k in 0..3 {
        let shard = format!("{k}/3");
        witness(&[
            "run",
            "-q",
            "--shard",
            &shard,
            "--out",
            path(&sharded),
            path(&m),
        ])
        .unwrap();
    }
    assert_eq!(witness(&["merge", "-q", path(&sharded)]).unwrap(), 0);
    for f in ["runs.parquet", "tosses.parquet"] {
        assert!(
            std::fs::read(out.join(f)).unwrap() == std::fs::read(sharded.join(f)).unwrap(),
            "{f} differs after shards and merge"
        );
    }

    assert_eq!(witness(&["summary", path(&out)]).unwrap(), 0);
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(
        summary.starts_with("arm,metric,n,mean,sd,ci95_low,ci95_high\n"),
        "{summary}"
    );
    assert!(summary.contains("loaded[weight=3.0],share,8,"), "{summary}");

    // compare defaults to the model's headline metric, `share`.
    assert_eq!(
        witness(&["compare", "--baseline", "fair", path(&out)]).unwrap(),
        0
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    assert_eq!(doc["comparator"], "share");
    assert_eq!(doc["placebo"], "fair:placebo");
    let arms: Vec<&str> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["arm"].as_str().unwrap())
        .collect();
    assert_eq!(arms, ["loaded[weight=1.0]", "loaded[weight=3.0]"]);
    // A loaded hand that ignores nothing is applied; the fair arm's weight
    // is ignored, which plan warns about only when an arm sets it.
    assert!(doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["applied"] == true));

    assert_eq!(witness(&["plot", path(&out)]).unwrap(), 0);
    assert!(out.join("plots/trajectories-all-runs.png").is_file());
    assert_eq!(witness(&["describe", "coin"]).unwrap(), 0);
    let reference = witness::model::reference::markdown(&COIN);
    assert!(
        reference.contains("| `weight` | float | 1.0 ..= 10.0 | 2.0 | knob | loaded |"),
        "{reference}"
    );
    assert!(
        reference.contains("| `heads` | int64 | no | >= 0 | heads so far, this toss included |")
    );

    let export = tmp.path().join("coin.json");
    let sim = [
        "simulate",
        "--model",
        "coin",
        "--set",
        "hand=loaded",
        "--set",
        "bias=0.25",
    ];
    assert_eq!(
        witness(&[&sim[..], &["--export", path(&export)]].concat()).unwrap(),
        0
    );
    let exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(exported["engine"], "coin/1");
    assert_eq!(exported["tables"]["tosses"].as_array().unwrap().len(), 20);
    assert_eq!(witness(&["replay", path(&export)]).unwrap(), 0);
    // An edited export no longer reproduces.
    let mut edited = exported.clone();
    edited["summary"]["heads"] =
        serde_json::json!(exported["summary"]["heads"].as_u64().unwrap() + 1);
    std::fs::write(&export, edited.to_string()).unwrap();
    assert_eq!(witness(&["replay", path(&export)]).unwrap(), 1);
}

#[test]
fn the_coin_s_rules_and_audit_are_the_runner_s() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("bad.toml");
    std::fs::write(&m, MANIFEST.replace("bias = 0.3", "bias = 0.8")).unwrap();
    let err = witness(&["plan", path(&m)]).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.to_string()
            .contains("a loaded hand doubles the bias past 1"),
        "{err}"
    );

    // A stored toss that jumps by two heads fails verify's audit.
    std::fs::write(&m, MANIFEST).unwrap();
    let out = tmp.path().join("out");
    witness(&["run", "-q", "--out", path(&out), path(&m)]).unwrap();
    let file = out.join("tosses.parquet");
    let reader = parquet::open(&file).unwrap();
    let kv = reader.metadata.clone();
    let mut columns = vec![witness::runner::tables::RUN_ID];
    columns.extend_from_slice(TOSSES.spec.columns);
    let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
    let mut rows: Vec<_> = reader
        .flat_map(|b| b.unwrap().rows(&names).unwrap())
        .collect();
    rows[10][2] = witness::params::Value::Int(40);
    parquet::write(&file, &columns, [parquet::batch(&columns, &rows)], &kv).unwrap();
    assert_eq!(
        witness(&["verify", "--replay", "0", path(&out)]).unwrap(),
        1
    );
}
