//! Sampled designs and `witness sensitivity`, end to end through a model
//! declared here: the Ishigami function, whose Sobol' indices are known in
//! closed form. A Sobol' design at N = 2^12 must give indices whose
//! bootstrap intervals hold the known values; a Morris design must rank
//! the factors as the function does; the design and the indices must not
//! depend on threads or shards.

// The Ishigami function's `sin` is a test input compared within tolerances,
// not a result: the platform's own is fine here (clippy.toml bans it in the
// crate, decision 151).
#![allow(clippy::disallowed_methods)]

use clap::Parser;
use std::path::Path;
use witness::cli::{self, Cli};
use witness::model::{Model, Ran, Registered, Registry, RunContext};
use witness::params::{Kind, ParamError};

witness::params! {
    /// The Ishigami function's inputs and constants.
    pub struct IshigamiParams {
        /// first input
        x1: f64 = 0.0, Kind::float(-4.0, 4.0);
        /// second input
        x2: f64 = 0.0, Kind::float(-4.0, 4.0);
        /// third input
        x3: f64 = 0.0, Kind::float(-4.0, 4.0);
        /// weight of sin^2 x2
        a: f64 = 7.0, Kind::float(0.0, 100.0);
        /// weight of x3^4 sin x1
        b: f64 = 0.1, Kind::float(0.0, 10.0);
        /// repeats (the analysis averages over it)
        seed: u64 = 1, Kind::int(0, 1000), Seed;
    }
}

witness::record! {
    /// The function's value.
    #[derive(Clone, Debug, PartialEq)]
    pub struct IshigamiOut {
        /// sin x1 + a sin^2 x2 + b x3^4 sin x1
        y: f64,
    }
}

struct Ishigami;

impl Model for Ishigami {
    const NAME: &'static str = "ishigami";
    const VERSION: &'static str = "ishigami/test";
    const DOC: &'static str = "the Ishigami function, a test of sensitivity indices";
    type Params = IshigamiParams;
    type Config = IshigamiParams;
    type Summary = IshigamiOut;

    fn configure(p: IshigamiParams) -> Result<IshigamiParams, ParamError> {
        Ok(p)
    }

    fn run(p: &IshigamiParams, _cx: &mut RunContext) -> Ran<IshigamiOut> {
        let y = p.x1.sin() + p.a * p.x2.sin().powi(2) + p.b * p.x3.powi(4) * p.x1.sin();
        Ran {
            summary: IshigamiOut { y },
            violation: None,
        }
    }
}

static ISHIGAMI: Registered<Ishigami> = Registered::new().headline(&["y"]);

fn witness(args: &[&str]) -> u8 {
    let registry = Registry::builtin().with(&ISHIGAMI);
    cli::run(
        Cli::try_parse_from(std::iter::once("witness").chain(args.iter().copied())).unwrap(),
        &registry,
    )
    .unwrap_or_else(|e| panic!("witness {args:?}: {e}"))
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

const PI: &str = "3.141592653589793";

fn manifest(design: &str) -> String {
    format!(
        "[experiment]\nname = \"ishigami\"\nmodel = \"ishigami\"\nchunk_runs = 4096\n\
         [design]\n{design}\n[design.factors]\n\
         x1 = {{ from = -{PI}, to = {PI} }}\nx2 = {{ from = -{PI}, to = {PI} }}\nx3 = {{ from = -{PI}, to = {PI} }}\n"
    )
}

fn rows(dir: &Path) -> Vec<serde_json::Value> {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sensitivity.json")).unwrap())
            .unwrap();
    doc["rows"].as_array().unwrap().clone()
}

fn find<'a>(rows: &'a [serde_json::Value], index: &str, factor: &str) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| r["index"] == index && r["factor"] == factor && r["with"].is_null())
        .unwrap_or_else(|| panic!("no {index} {factor}"))
}

#[test]
fn sobol_indices_of_the_ishigami_function_hold_the_known_values() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("ishigami.toml");
    std::fs::write(&m, manifest("kind = \"sobol\"\nbase = 4096")).unwrap();
    let out = tmp.path().join("out");
    assert_eq!(witness(&["run", "-q", "--out", path(&out), path(&m)]), 0);
    assert_eq!(witness(&["sensitivity", path(&out)]), 0);
    let rows = rows(&out);
    // Closed form for a = 7, b = 0.1 (Ishigami and Homma, 1990).
    let known = [
        ("S1", "x1", 0.3139),
        ("S1", "x2", 0.4424),
        ("S1", "x3", 0.0),
        ("ST", "x1", 0.5576),
        ("ST", "x2", 0.4424),
        ("ST", "x3", 0.2437),
    ];
    for (index, factor, want) in known {
        let r = find(&rows, index, factor);
        let (est, lo, hi) = (
            r["estimate"].as_f64().unwrap(),
            r["ci_low"].as_f64().unwrap(),
            r["ci_high"].as_f64().unwrap(),
        );
        assert!(
            lo <= want && want <= hi,
            "{index}({factor}) = {est} [{lo}, {hi}] misses the known {want}"
        );
        assert!(
            (est - want).abs() < 0.05,
            "{index}({factor}) = {est}, known {want}"
        );
    }
    // The only interaction is x1 with x3: S13 = ST1 - S1 = 0.2437.
    let s13 = rows
        .iter()
        .find(|r| r["index"] == "S2" && r["factor"] == "x1" && r["with"] == "x3")
        .unwrap();
    assert!(
        (s13["estimate"].as_f64().unwrap() - 0.2437).abs() < 0.08,
        "{s13}"
    );
}

#[test]
fn morris_ranks_the_ishigami_factors_and_designs_ignore_threads_and_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("ishigami.toml");
    std::fs::write(
        &m,
        manifest("kind = \"morris\"\ntrajectories = 200\nlevels = 8\nseed = 3"),
    )
    .unwrap();
    let one = tmp.path().join("one");
    let sharded = tmp.path().join("sharded");
    assert_eq!(
        witness(&["run", "-q", "--threads", "1", "--out", path(&one), path(&m)]),
        0
    );
    for k in ["0/2", "1/2"] {
        witness(&["run", "-q", "--shard", k, "--out", path(&sharded), path(&m)]);
    }
    assert_eq!(witness(&["merge", "-q", path(&sharded)]), 0);
    assert_eq!(
        std::fs::read(one.join("runs.parquet")).unwrap(),
        std::fs::read(sharded.join("runs.parquet")).unwrap()
    );
    for dir in [&one, &sharded] {
        assert_eq!(witness(&["sensitivity", path(dir)]), 0);
    }
    assert_eq!(
        std::fs::read(one.join("sensitivity.csv")).unwrap(),
        std::fs::read(sharded.join("sensitivity.csv")).unwrap()
    );
    let rows = rows(&one);
    let get = |index: &str, f: &str| find(&rows, index, f)["estimate"].as_f64().unwrap();
    // x1 acts through sin x1 (1 + b x3^4), the largest effect over this
    // range; x3 only through x3^4 sin x1, which averages to zero over x1,
    // so its effects are large in size but cancel in sign: mu near 0, mu*
    // and sigma large. x2 acts alone (a sin^2 x2): no interaction.
    assert!(get("mu_star", "x1") > get("mu_star", "x2"), "{rows:?}");
    assert!(get("mu_star", "x1") > get("mu_star", "x3"), "{rows:?}");
    assert!(
        get("mu", "x3").abs() < 0.1 * get("mu_star", "x3"),
        "{rows:?}"
    );
    assert!(get("sigma", "x3") > get("mu_star", "x3"), "{rows:?}");
}
