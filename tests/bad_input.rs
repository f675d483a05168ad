//! Every kind of bad manifest gets a clear error (file, line, key, value,
//! what is allowed), exit code 2, and leaves an existing results folder
//! exactly as it was.

mod common;

use common::{run_ok, snapshot, witness, write_manifest, SMALL};
use predicates::prelude::PredicateBooleanExt;

const HEAD: &str = "[experiment]\nname = \"small\"\nmodel = \"witness\"\n";
/// Three seeds, then the `[search]` header (line 6).
const SEARCH: &str = "[grid]\nseed = [1, 2, 3]\n[search]\n";

/// (what is wrong, manifest text, pieces the message must contain)
fn cases() -> Vec<(&'static str, String, Vec<&'static str>)> {
    vec![
        ("unknown key", format!("{HEAD}colour = \"red\"\n"), vec![":4:", "unknown field `colour`", "expected"]),
        (
            "unknown parameter",
            format!("{HEAD}[fixed]\ngrain = 2.0\n"),
            vec![":5:", "`grain`", "unknown parameter", "gain"],
        ),
        (
            "wrong type",
            format!("{HEAD}[fixed]\ntruth = \"yes\"\n"),
            vec![":5:", "`truth` = \"yes\"", "wrong type (string)", "true or false"],
        ),
        (
            "out-of-range value",
            format!("{HEAD}[grid]\ncommunication = [0.5, 1.5]\n"),
            vec![":5:", "`communication` = 1.5", "out of range", "0.0 ..= 1.0"],
        ),
        (
            "seed beyond TOML's integers",
            format!("{HEAD}[grid]\nseed = [1, 9223372036854775808]\n"),
            vec![":5:", "9223372036854775808: too large", "at most 9223372036854775807"],
        ),
        (
            "arm name like a variant's label",
            format!("{HEAD}[[arm]]\nname = \"e[gain=3.0]\"\npolicy = \"endorsement\"\n"),
            vec![":5:", "name = \"e[gain=3.0]\"", "'[' is kept for arm variants' labels", "without [ ] = , or ;"],
        ),
        (
            "arm name with a comma",
            format!("{HEAD}[[arm]]\nname = \"endorse, strong\"\npolicy = \"endorsement\"\n"),
            vec![":5:", "',' is kept"],
        ),
        (
            "unknown model",
            "[experiment]\nname = \"x\"\nmodel = \"wtness\"\n".to_string(),
            vec![":3:", "model = \"wtness\"", "unknown model", "witness"],
        ),
        (
            "no model",
            "# a study\n[experiment]\nname = \"x\"\n".to_string(),
            vec![":2:", "[experiment] model: missing", "add model = \"witness\"", "hive"],
        ),
        (
            "no name",
            "[experiment]\nmodel = \"witness\"\n".to_string(),
            vec![":1:", "[experiment] name: missing", "add name = ", "results/<name>"],
        ),
        (
            "no [experiment]",
            "[fixed]\ngain = 2.0\n".to_string(),
            vec![":1:", "[experiment]: missing", "model = \"witness\""],
        ),
        (
            "unknown policy",
            format!("{HEAD}[[arm]]\nname = \"a\"\npolicy = \"pooling\"\n"),
            vec![":6:", "`policy` = \"pooling\"", "endorsement, source_aware, reserved"],
        ),
        (
            "unknown graph",
            format!("{HEAD}[grid]\ngraph = [\"ring\", \"tree\"]\n"),
            vec![":5:", "`graph` = \"tree\"", "ring, small_world, modular, hub"],
        ),
        ("empty grid axis", format!("{HEAD}[grid]\nseed = []\n"), vec![":5:", "seed = []", "at least one value"]),
        (
            "duplicate arm names",
            format!("{HEAD}[[arm]]\nname = \"a\"\npolicy = \"reserved\"\n[[arm]]\nname = \"a\"\npolicy = \"endorsement\"\n"),
            vec![":8:", "name = \"a\"", "duplicate arm name"],
        ),
        (
            "malformed range",
            format!("{HEAD}[grid]\nseed = {{ from = 9, to = 1 }}\n"),
            vec![":5:", "seed", "malformed range", "`from` is above `to`", "from = A, to = B"],
        ),
        (
            "range on a float",
            format!("{HEAD}[grid]\ngain = {{ from = 1, to = 3 }}\n"),
            vec![":5:", "gain", "say how to space them", "step = S", "count = N"],
        ),
        (
            "a range on a choice",
            format!("{HEAD}[grid]\ngraph = {{ from = 1, to = 3 }}\n"),
            vec![":5:", "graph", "ranges are for numeric parameters"],
        ),
        (
            "a step of zero",
            format!("{HEAD}[grid]\ngain = {{ from = 1.0, to = 3.0, step = 0 }}\n"),
            vec![":5:", "gain", "`step` must be above 0"],
        ),
        (
            "an unknown design kind",
            format!("{HEAD}[design]\nkind = \"halton\"\n"),
            vec![":5:", "kind = \"halton\"", "unknown design", "\"sobol\", \"morris\""],
        ),
        (
            "a key of another design kind",
            format!("{HEAD}[design]\nkind = \"sobol\"\nsamples = 10\n[design.factors]\ngain = {{ from = 1, to = 9 }}\n"),
            vec![":6:", "samples", "not a key of kind = \"sobol\"", "base, second_order, factors"],
        ),
        (
            "a Sobol' base that is not a power of two",
            format!("{HEAD}[design]\nkind = \"sobol\"\nbase = 100\n[design.factors]\ngain = {{ from = 1, to = 9 }}\n"),
            vec![":6:", "base = 100", "power of two", "try 64 or 128"],
        ),
        (
            "a Sobol' base too small to vary every factor",
            format!("{HEAD}[design]\nkind = \"sobol\"\nbase = 2\n[design.factors]\ngain = {{ from = 1, to = 9 }}\ncommunication = {{ from = 0.1, to = 0.9 }}\n"),
            vec![":6:", "base = 2", "the same gain, communication", "0 by construction", "use base = 8 or more"],
        ),
        (
            "odd Morris levels",
            format!("{HEAD}[design]\nkind = \"morris\"\ntrajectories = 4\nlevels = 5\n[design.factors]\ngain = {{ from = 1, to = 9 }}\n"),
            vec![":7:", "levels = 5", "must be even", "try 6"],
        ),
        (
            "a factor also on the grid",
            format!("{HEAD}[grid]\ngain = [1.0, 2.0]\n[design]\nkind = \"lhs\"\nsamples = 4\n[design.factors]\ngain = {{ from = 1, to = 9 }}\n"),
            vec![":10:", "gain", "already set"],
        ),
        (
            "a factor that is not a number",
            format!("{HEAD}[design]\nkind = \"lhs\"\nsamples = 4\n[design.factors]\ngraph = {{ from = 1, to = 9 }}\n"),
            vec![":8:", "graph", "a factor must be a number", "[grid]"],
        ),
        (
            "a factor range outside its parameter",
            format!("{HEAD}[design]\nkind = \"lhs\"\nsamples = 4\n[design.factors]\ncommunication = {{ from = 0.5, to = 2 }}\n"),
            vec![":8:", "communication", "out of range", "0.0 ..= 1.0"],
        ),
        (
            "an unknown search method",
            format!("{HEAD}{SEARCH}method = \"anneal\"\nmetric = \"peak_mistaken\"\nmaximize = false\nresource = \"seed\"\n"),
            vec![":7:", "method = \"anneal\"", "\"race\", \"halving\""],
        ),
        (
            "a search metric that is not a summary column",
            format!("{HEAD}{SEARCH}method = \"race\"\nmetric = \"peak\"\nmaximize = false\nresource = \"seed\"\n"),
            vec![":8:", "metric = \"peak\"", "numeric summary column", "peak_mistaken"],
        ),
        (
            "a search resource that is not a grid axis",
            format!("{HEAD}{SEARCH}method = \"race\"\nmetric = \"peak_mistaken\"\nmaximize = false\nresource = \"gain\"\n"),
            vec![":10:", "resource = \"gain\"", "not a [grid] axis", "seed"],
        ),
        (
            "a search max beyond the resource axis",
            format!("{HEAD}{SEARCH}method = \"race\"\nmetric = \"peak_mistaken\"\nmaximize = false\nresource = \"seed\"\nmax = 5\n"),
            vec![":11:", "max = 5", "has 3 values", "1 ..= 3"],
        ),
        (
            "alpha for halving",
            format!("{HEAD}{SEARCH}method = \"halving\"\nmetric = \"peak_mistaken\"\nmaximize = false\nresource = \"seed\"\nalpha = 0.1\n"),
            vec![":11:", "alpha", "tests nothing", "method = \"race\""],
        ),
        (
            "a search without its direction",
            format!("{HEAD}{SEARCH}method = \"race\"\nmetric = \"peak_mistaken\"\nresource = \"seed\"\n"),
            vec![":6:", "missing field `maximize`"],
        ),
        (
            "a search metric that may be null",
            format!("{HEAD}{SEARCH}method = \"race\"\nmetric = \"first_clear_round\"\nmaximize = false\nresource = \"seed\"\n"),
            vec![":8:", "metric = \"first_clear_round\"", "that every run has", "peak_mistaken"],
        ),
        (
            "a search floor that no candidate can go below",
            format!("{HEAD}{SEARCH}method = \"halving\"\nmetric = \"peak_mistaken\"\nmaximize = false\nresource = \"seed\"\nkeep_at_least = 2\n[[arm]]\nname = \"e\"\npolicy = \"endorsement\"\ngrid = {{ gain = [1.0, 3.0] }}\n"),
            vec![":11:", "keep_at_least = 2", "2 candidate(s)", "set it below 2"],
        ),
        (
            "a defaulted first above max",
            format!("{HEAD}{SEARCH}method = \"halving\"\nmetric = \"peak_mistaken\"\nmaximize = false\nresource = \"seed\"\nmax = 1\n[[arm]]\nname = \"e\"\npolicy = \"endorsement\"\ngrid = {{ gain = [1.0, 3.0] }}\n"),
            vec![":6:", "first = 2 (the default)", "set first to 1 ..= 1"],
        ),
        (
            "a search with a design",
            format!("{HEAD}[design]\nkind = \"list\"\npoints = [{{ gain = 3.0 }}]\n{SEARCH}method = \"race\"\nmetric = \"peak_mistaken\"\nmaximize = false\nresource = \"seed\"\n"),
            vec![":9:", "[search] with a [design]", "remove the [design]"],
        ),
        (
            "a log factor from zero",
            format!("{HEAD}[design]\nkind = \"lhs\"\nsamples = 4\n[design.factors]\ngain = {{ from = 0, to = 9, log = true }}\n"),
            vec![":8:", "gain", "log factor needs `from` above 0"],
        ),
        (
            "a sampled design without factors",
            format!("{HEAD}[design]\nkind = \"lhs\"\nsamples = 4\n"),
            vec![":5:", "no factors", "[design.factors]"],
        ),
        (
            "listed points that set different parameters",
            format!("{HEAD}[design]\nkind = \"list\"\npoints = [{{ gain = 3.0 }}, {{ communication = 0.5 }}]\n"),
            vec![":6:", "point 2 sets communication", "first point sets gain"],
        ),
        (
            "a listed point out of range",
            format!("{HEAD}[design]\nkind = \"list\"\npoints = [{{ gain = 3.0 }}, {{ gain = -1.0 }}]\n"),
            vec![":6:", "point 2", "`gain` = -1.0", "out of range"],
        ),
        (
            "a points file outside the manifest's folder",
            format!("{HEAD}[design]\nkind = \"list\"\nfile = \"../points.csv\"\n"),
            vec![":6:", "../points.csv", "inside the manifest's folder"],
        ),
        (
            "a step whose values repeat once rounded",
            format!("{HEAD}[grid]\ngain = {{ from = 1e-20, to = 5e-20, step = 1e-20 }}\n"),
            vec![":5:", "gain", "repeat or leave the range"],
        ),
        (
            "a count over an empty span",
            format!("{HEAD}[grid]\ncheck_delay = {{ from = 2, to = 2, count = 3 }}\n"),
            vec![":5:", "check_delay", "distinct integers do not fit"],
        ),
        (
            "a points file named like a result",
            format!("{HEAD}[design]\nkind = \"list\"\nfile = \"summary.csv\"\n"),
            vec![":6:", "summary.csv", "witness writes in a results folder", "design/points.csv"],
        ),
        (
            "a Sobol' design of one base sample",
            format!("{HEAD}[design]\nkind = \"sobol\"\nbase = 1\n[design.factors]\ngain = {{ from = 1, to = 9 }}\n"),
            vec![":6:", "base = 1", "2 ..= 16777216"],
        ),
        (
            "one Morris trajectory",
            format!("{HEAD}[design]\nkind = \"morris\"\ntrajectories = 1\n[design.factors]\ngain = {{ from = 1, to = 9 }}\n"),
            vec![":6:", "trajectories = 1", "2 ..= 1000000"],
        ),
        (
            "a factor with from >= to",
            format!("{HEAD}[design]\nkind = \"lhs\"\nsamples = 4\n[design.factors]\ngain = {{ from = 9, to = 9 }}\n"),
            vec![":8:", "gain", "`from` must be below `to`"],
        ),
        (
            "a factor the model lacks",
            format!("{HEAD}[design]\nkind = \"lhs\"\nsamples = 4\n[design.factors]\ngrain = {{ from = 1, to = 9 }}\n"),
            vec![":8:", "`grain`", "unknown parameter", "gain"],
        ),
        (
            "a listed point with an unknown parameter",
            format!("{HEAD}[design]\nkind = \"list\"\npoints = [{{ grain = 3.0 }}]\n"),
            vec![":6:", "`grain`", "unknown parameter"],
        ),
        (
            "a missing points file",
            format!("{HEAD}[design]\nkind = \"list\"\nfile = \"nowhere.csv\"\n"),
            vec![":6:", "nowhere.csv", "cannot read"],
        ),
        ("not TOML", format!("{HEAD}[grid\nseed = 1\n"), vec![":4:", "docs/reference/manifest.md"]),
        (
            "a cross-parameter rule",
            format!("{HEAD}[fixed]\ngraph = \"modular\"\n[grid]\npopulation = [100, 8]\n"),
            vec!["run 1", "population = 8", "`communities` = 5", "2 ..= 4"],
        ),
        (
            "a parameter set twice",
            format!("{HEAD}[fixed]\nseed = 1\n[grid]\nseed = [1, 2]\n"),
            vec![":7:", "seed", "already set"],
        ),
        (
            "listed points 0.0 and -0.0 (issue #47)",
            format!("{HEAD}[design]\nkind = \"list\"\npoints = [{{ gain = 0.0 }}, {{ gain = -0.0 }}]\n"),
            vec![":6:", "point 2 repeats point 1", "list each point once"],
        ),
        (
            "grid values 0.0 and -0.0 (issue #47)",
            format!("{HEAD}[grid]\ngain = [0.0, -0.0]\n"),
            vec![":5:", "gain = [0.0, -0.0]", "the values 0.0 and -0.0 are the same setting", "list each value once"],
        ),
        (
            "a name too long for a folder (issue #47)",
            format!("[experiment]\nname = \"{}\"\nmodel = \"witness\"\n", "x".repeat(300)),
            vec![":2:", "300 characters, too long for a folder name", "at most 255"],
        ),
        (
            "hive: too many members",
            "[experiment]\nname = \"small\"\nmodel = \"hive\"\n[fixed]\nagents = 9\n".to_string(),
            vec![":5:", "`agents` = 9", "out of range", "2 ..= 8"],
        ),
        (
            "hive: a threshold above the members",
            "[experiment]\nname = \"small\"\nmodel = \"hive\"\n[fixed]\nagents = 3\n[grid]\nthreshold = [2, 4]\n".to_string(),
            vec!["run 1", "`threshold` = 4", "3 members", "1 ..= agents (3)"],
        ),
    ]
}

#[test]
fn bad_manifests_are_refused_clearly_and_touch_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let good = write_manifest(tmp.path(), "good.toml", SMALL);
    let out = tmp.path().join("results");
    run_ok(&good, &out);
    let before = snapshot(&out);
    for (what, text, needles) in cases() {
        let m = write_manifest(tmp.path(), "bad.toml", &text);
        for verb in [
            &["run", "-q", "--out", out.to_str().unwrap()][..],
            &["plan"][..],
        ] {
            let assert = witness().args(verb).arg(&m).assert().code(2);
            let err = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
            assert!(
                err.contains("bad.toml"),
                "{what}: the message does not name the file: {err}"
            );
            for n in &needles {
                assert!(err.contains(n), "{what}: expected {n:?} in: {err}");
            }
        }
        assert!(
            snapshot(&out) == before,
            "{what}: the results folder was touched"
        );
    }
}

#[test]
fn another_manifest_into_a_used_folder_is_refused_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let good = write_manifest(tmp.path(), "good.toml", SMALL);
    let out = tmp.path().join("results");
    run_ok(&good, &out);
    let before = snapshot(&out);
    let other = write_manifest(
        tmp.path(),
        "other.toml",
        &SMALL.replace("rounds = 20", "rounds = 10"),
    );
    witness()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&other)
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("holds the results of another manifest")
                .and(predicates::str::contains("--force")),
        );
    assert!(snapshot(&out) == before);
    witness()
        .args(["run", "-q", "--force", "--out"])
        .arg(&out)
        .arg(&other)
        .assert()
        .success();
    assert_ne!(
        std::fs::read(out.join("manifest.toml")).unwrap(),
        before["manifest.toml"]
    );
}

#[test]
fn grids_over_the_limit_need_an_explicit_override() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    witness()
        .args(["plan", "--max-runs", "10"])
        .arg(&m)
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("64 runs, over the limit of 10")
                .and(predicates::str::contains("--max-runs 64")),
        );
    witness()
        .args(["plan", "--max-runs", "64"])
        .arg(&m)
        .assert()
        .success();
}

#[test]
fn a_folder_that_is_not_a_results_folder_is_bad_input_for_every_verb() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("notes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("readme.txt"), "not results").unwrap();
    let verbs: [&[&str]; 9] = [
        &["verify"],
        &["merge"],
        &["summary"],
        &["compare", "--baseline", "endorsement"],
        &["plot"],
        &["rank"],
        &["search"],
        &["report"],
        &["sensitivity"],
    ];
    for verb in verbs {
        witness().args(verb).arg(&dir).assert().code(2).stderr(
            predicates::str::contains(dir.display().to_string())
                .and(predicates::str::contains("not a results folder")),
        );
    }
}

#[test]
fn a_shard_count_without_shard_auto_is_refused_not_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let out = tmp.path().join("out");
    for extra in [
        &["--shard-count", "4"][..],
        &["--shard", "1/4", "--shard-count", "4"],
    ] {
        witness()
            .args(["run", "-q", "--out"])
            .arg(&out)
            .args(extra)
            .arg(&m)
            .assert()
            .code(2)
            .stderr(predicates::str::contains("only with --shard auto"));
    }
    assert!(!out.exists(), "nothing was run");
}

#[test]
fn an_out_link_to_nowhere_is_named_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let link = tmp.path().join("results");
    std::os::unix::fs::symlink(tmp.path().join("gone/results"), &link).unwrap();
    witness()
        .args(["run", "-q", "--out"])
        .arg(&link)
        .arg(&m)
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains("a symbolic link to").and(predicates::str::contains(
                "which does not exist; create that folder, or give another --out",
            )),
        );
}

#[test]
fn a_folder_of_the_users_files_is_not_run_into() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let out = tmp.path().join("mine");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("runs.parquet"), "precious").unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    witness()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&m)
        .assert()
        .code(2)
        .stderr(
            predicates::str::contains(
                "holds runs.parquet, a name witness writes, but no manifest.toml",
            )
            .and(predicates::str::contains(
                "give --out a new or empty folder",
            )),
        );
    assert_eq!(
        std::fs::read(out.join("runs.parquet")).unwrap(),
        b"precious"
    );
    assert!(!out.join("manifest.toml").exists());
    // A folder of other files is fine: they stay.
    std::fs::remove_file(out.join("runs.parquet")).unwrap();
    run_ok(&m, &out);
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
}

/// Issue #47: a points file whose header is not one name per column, or
/// that is a folder, is named as such; and -0.0 repeats 0.0 there as in
/// `points`.
#[test]
fn points_files_are_refused_for_what_is_wrong_with_them() {
    let tmp = tempfile::tempdir().unwrap();
    let good = write_manifest(tmp.path(), "good.toml", SMALL);
    let out = tmp.path().join("results");
    run_ok(&good, &out);
    let before = snapshot(&out);
    std::fs::create_dir(tmp.path().join("design")).unwrap();
    // (what, the points file's text, `file =`, pieces of the message)
    let cases: [(&str, &str, &str, &[&str]); 6] = [
        (
            "a column twice",
            "gain,gain\n1.0,2.0\n",
            "points.csv",
            &["points.csv: column `gain` appears twice in the header (columns 1 and 2); keep one"],
        ),
        (
            "a trailing comma",
            "gain,communication,\n1.0,0.5,\n",
            "points.csv",
            &[
                "points.csv: column 3 of the header has no name: the header ends with a comma",
                "remove the trailing comma",
            ],
        ),
        (
            "an empty column inside",
            "gain,,communication\n1.0,2,0.5\n",
            "points.csv",
            &["column 2 of the header has no name; name it after the parameter it sets"],
        ),
        (
            "zero and minus zero",
            "gain\n0.0\n-0.0\n",
            "points.csv",
            &["points.csv: point 2 (line 3) repeats point 1 (line 2)"],
        ),
        (
            "the manifest's folder",
            "",
            ".",
            &[
                "file = \".\": a folder, not a file",
                "e.g. file = \"points.csv\"",
            ],
        ),
        (
            "a folder inside it",
            "",
            "design",
            &[
                "file = \"design\": a folder, not a file",
                "e.g. file = \"design/points.csv\"",
            ],
        ),
    ];
    for (what, points, file, needles) in cases {
        std::fs::write(tmp.path().join("points.csv"), points).unwrap();
        let m = write_manifest(
            tmp.path(),
            "bad.toml",
            &format!("{HEAD}[design]\nkind = \"list\"\nfile = \"{file}\"\n"),
        );
        for verb in [
            &["run", "-q", "--out", out.to_str().unwrap()][..],
            &["plan"][..],
        ] {
            let assert = witness().args(verb).arg(&m).assert().code(2);
            let err = String::from_utf8_lossy(&assert.get_output().stderr).to_string();
            assert!(err.contains("bad.toml:6:"), "{what}: {err}");
            for n in needles {
                assert!(err.contains(n), "{what}: expected {n:?} in: {err}");
            }
            assert!(
                !err.contains("already set elsewhere") && !err.contains("unknown parameter"),
                "{what}: {err}"
            );
        }
        assert!(
            snapshot(&out) == before,
            "{what}: the results folder was touched"
        );
    }
}

/// Issue #47: `run` without --out names its folder after the experiment;
/// a name no file system takes is refused by `plan` too, with the same
/// message, and `run` creates nothing.
#[test]
fn a_name_too_long_for_a_folder_is_refused_alike_by_plan_and_run() {
    let tmp = tempfile::tempdir().unwrap();
    let text = SMALL.replace(
        "name = \"small\"",
        &format!("name = \"{}\"", "x".repeat(300)),
    );
    write_manifest(tmp.path(), "long.toml", &text);
    let refused = |verb: &[&str]| {
        let a = witness()
            .current_dir(tmp.path())
            .args(verb)
            .arg("long.toml")
            .assert()
            .code(2);
        String::from_utf8_lossy(&a.get_output().stderr).to_string()
    };
    let plan = refused(&["plan"]);
    let run = refused(&["run", "-q"]);
    assert!(
        plan.starts_with("error: long.toml:3:8: [experiment] name = \"xxx")
            && plan.contains(
                "300 characters, too long for a folder name (results/<name>); allowed: at most 255"
            ),
        "{plan}"
    );
    assert_eq!(run, plan);
    assert!(!tmp.path().join("results").exists(), "run made a folder");
    // The longest allowed name runs.
    let fits = write_manifest(
        tmp.path(),
        "fits.toml",
        &SMALL.replace(
            "name = \"small\"",
            &format!("name = \"{}\"", "x".repeat(255)),
        ),
    );
    witness()
        .current_dir(tmp.path())
        .args(["run", "-q"])
        .arg(&fits)
        .assert()
        .success();
}

/// Issue #47: a negative shard number reaches witness's own check of
/// K/N, not clap's "unexpected argument".
#[test]
fn a_negative_shard_gets_the_shard_message() {
    let tmp = tempfile::tempdir().unwrap();
    let m = write_manifest(tmp.path(), "small.toml", SMALL);
    let out = tmp.path().join("out");
    for (args, says) in [
        (
            &["--shard", "-1/2"][..],
            "--shard -1/2: `-1` is not a whole number",
        ),
        (
            &["--shard=-1/2"][..],
            "--shard -1/2: `-1` is not a whole number",
        ),
        (
            &["--shard", "1/-2"][..],
            "--shard 1/-2: `-2` is not a whole number",
        ),
    ] {
        witness()
            .args(["run", "-q", "--out"])
            .arg(&out)
            .args(args)
            .arg(&m)
            .assert()
            .code(2)
            .stderr(
                predicates::str::contains(says)
                    .and(predicates::str::contains("unexpected argument").not()),
            );
    }
    assert!(!out.exists(), "nothing was run");
}

/// Issue #47: `design` refuses, before writing a point, a manifest that
/// `plan` refuses as over --max-runs, and takes the same flag.
#[test]
fn design_refuses_what_plan_refuses_as_too_many_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let big = write_manifest(
        tmp.path(),
        "big.toml",
        &format!(
            "{HEAD}[grid]\nseed = [1, 2]\n[design]\nkind = \"lhs\"\nsamples = 6000000\n\
             [design.factors]\ngain = {{ from = 1.0, to = 9.0 }}\n"
        ),
    );
    let csv = tmp.path().join("points.csv");
    let says = "the grid has 12000000 runs, over the limit of 10000000; pass --max-runs 12000000";
    witness()
        .arg("plan")
        .arg(&big)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(says));
    witness()
        .arg("design")
        .arg(&big)
        .arg("--out")
        .arg(&csv)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicates::str::contains(says));
    assert!(!csv.exists(), "design wrote its CSV");
    // A small design under a lower limit: refused, then let through.
    let small = write_manifest(
        tmp.path(),
        "small.toml",
        &format!(
            "{HEAD}[grid]\nseed = [1, 2, 3]\n[design]\nkind = \"list\"\n\
             points = [{{ gain = 1.0 }}, {{ gain = 2.0 }}]\n"
        ),
    );
    witness()
        .args(["design", "--max-runs", "5"])
        .arg(&small)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicates::str::contains(
            "6 runs, over the limit of 5; pass --max-runs 6",
        ));
    witness()
        .args(["design", "--max-runs", "6"])
        .arg(&small)
        .assert()
        .success()
        .stdout("design_point,gain\n0,1.0\n1,2.0\n");
}
