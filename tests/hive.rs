//! hive-rooms/1 against hive-rooms/1: the two worked examples turn by turn, the
//! 500-room arms table at noise 90 (all six arms, to the printed digit, with
//! ending counts), the threshold-2 variants, and the published figures out
//! of `witness run` + `witness rank` on a shipped manifest.

mod common;

use witness::hive::episode::{play, Ending};
use witness::hive::model::{EpisodeRow, HiveSummary, MODEL};
use witness::hive::policy::{hive_plus, RoomPolicy};
use witness::hive::room::Room;
use witness::model::{DynModel, Record, Row, Stored};
use witness::params::{Resolved, Value};

/// The marker part of a post, without the signature after " — ".
fn marker(text: &str) -> &str {
    text.split(" — ").next().unwrap()
}

fn plus_ref() -> RoomPolicy {
    let mut p = hive_plus(5);
    p.fold.refutation_cap = Some(2);
    p
}

#[test]
fn room_0_under_hive_plus_turn_by_turn() {
    let room = Room::new(1, 0, 5, 4, 90);
    let o = play(&room, &hive_plus(5), true);
    assert_eq!(o.ending, Ending::Converged(2), "revert");
    assert_eq!(o.turns, 6);
    let got: Vec<(usize, bool, bool, &str)> = o
        .transcript
        .iter()
        .map(|t| (t.speaker, t.blind, t.commit, marker(&t.text)))
        .collect();
    assert_eq!(
        got,
        vec![
            (0, true, false, "!propose #shadow"),
            (1, true, false, "!propose #revert"),
            (2, true, false, "!propose #revert"),
            (3, true, false, "!propose #revert"),
            (4, true, true, "!propose #revert"),
            (0, false, true, "!commit #revert ^3"),
        ]
    );
    let thresholds: Vec<Vec<i64>> = o.transcript[1..]
        .iter()
        .map(|t| t.thresholds.clone())
        .collect();
    assert_eq!(
        thresholds,
        vec![
            vec![500, -250, -250, -250, -250],
            vec![250, 250, -500, -500, -500],
            vec![0, 0, 0, -750, -750],
            vec![-250, -250, -250, -250, -1000],
            vec![-500, -500, -500, -500, -500],
        ]
    );
}

#[test]
fn room_2_under_hive_plus_ref_turn_by_turn() {
    let room = Room::new(1, 2, 5, 4, 90);
    assert_eq!(room.truth, 2, "revert");
    assert_eq!(room.favourite[..5], [2, 2, 2, 0, 2], "scout favours stage");
    let o = play(&room, &plus_ref(), true);
    assert_eq!(o.ending, Ending::Converged(2));
    assert_eq!(o.turns, 8);
    let got: Vec<(usize, bool, bool, String)> = o
        .transcript
        .iter()
        .map(|t| {
            let prose = !t.text.contains('!');
            let m = if prose { "prose" } else { marker(&t.text) };
            (t.speaker, t.blind, t.commit, m.to_string())
        })
        .collect();
    let want = [
        (0, true, false, "!propose #revert"),
        (1, true, false, "prose"),
        (2, true, false, "!propose #revert"),
        (3, true, false, "!propose #stage"),
        (4, true, false, "!propose #revert"),
        (0, false, true, "!refute #stage ^5"),
        (3, false, true, "prose"),
        (3, false, true, "!commit #revert ^2"),
    ];
    let want: Vec<(usize, bool, bool, String)> = want
        .iter()
        .map(|(s, b, c, m)| (*s, *b, *c, m.to_string()))
        .collect();
    assert_eq!(got, want);
}

fn params(pairs: &[(&'static str, Value)]) -> Resolved {
    let mut p = Resolved::defaults(MODEL.params());
    for (k, v) in pairs {
        p.set_named(k, v.clone());
    }
    p
}

/// (turns/episode, decided %, correct %, converged, deadlocked, exhausted)
/// as hive-rooms/1 prints them.
fn figures(pairs: &[(&'static str, Value)]) -> (String, String, String, Vec<i64>) {
    let out = MODEL.run(&params(pairs), &[false], None).unwrap();
    assert_eq!(out.violation, None);
    let s = HiveSummary::from_values(&out.summary).unwrap();
    (
        format!("{:.2}", s.turns_per_episode),
        format!("{:.1}", s.decided_pct),
        format!("{:.1}", s.correct_pct),
        vec![s.converged as i64, s.deadlocked as i64, s.exhausted as i64],
    )
}

fn s(x: &str) -> Value {
    Value::Str(x.into())
}

#[test]
fn the_500_room_arms_table_at_noise_90() {
    let cap = ("refutation_cap", Value::Int(2));
    let ev = ("evidential", Value::Bool(true));
    let rows = [
        (
            vec![("policy", s("ladder"))],
            ("1.00", "100.0", "57.6", [500, 0, 0]),
        ),
        (
            vec![("policy", s("vote"))],
            ("15.00", "100.0", "75.8", [500, 0, 0]),
        ),
        (
            vec![("policy", s("hive"))],
            ("6.17", "91.0", "71.0", [455, 45, 0]),
        ),
        (
            vec![("policy", s("hive+"))],
            ("6.84", "99.0", "78.8", [495, 0, 5]),
        ),
        (
            vec![("policy", s("hive+")), cap.clone()],
            ("8.95", "88.2", "72.8", [441, 0, 59]),
        ),
        (
            vec![("policy", s("hive+")), cap.clone(), ev.clone()],
            ("10.28", "59.6", "53.8", [298, 0, 202]),
        ),
    ];
    for (pairs, (turns, decided, correct, ends)) in rows {
        let got = figures(&pairs);
        let want = (
            turns.to_string(),
            decided.to_string(),
            correct.to_string(),
            ends.to_vec(),
        );
        assert_eq!(got, want, "{pairs:?}");
    }
}

#[test]
fn threshold_2_makes_hive_plus_equal_hive() {
    let two = ("threshold", Value::Int(2));
    let cap = ("refutation_cap", Value::Int(2));
    let ev = ("evidential", Value::Bool(true));
    assert_eq!(figures(std::slice::from_ref(&two)).2, "71.0");
    assert_eq!(figures(&[two.clone(), cap.clone()]).2, "65.0");
    assert_eq!(figures(&[two, cap, ev]).2, "56.8");
    let noise = |n: i64, pairs: &[(&'static str, Value)]| {
        let mut all = pairs.to_vec();
        all.push(("noise", Value::Int(n)));
        figures(&all).2
    };
    assert_eq!(noise(120, &[]), "68.4");
    assert_eq!(
        noise(120, &[("refutation_cap", Value::Int(2))]),
        "53.2",
        "about 15 points of damage from the cap at noise 120"
    );
    assert_eq!(noise(30, &[("refutation_cap", Value::Int(2))]), "100.0");
}

#[test]
fn the_arms_manifest_gives_the_published_table_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("experiments/hive-arms.toml")
        .unwrap()
        .replace("rooms = 5000", "rooms = 500");
    let manifest = dir.path().join("arms.toml");
    std::fs::write(&manifest, text).unwrap();
    let out = dir.path().join("out");
    common::witness()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&manifest)
        .assert()
        .success();
    let rank = common::witness()
        .args(["rank", "--grid-order"])
        .arg(&out)
        .assert()
        .success();
    let text = String::from_utf8(rank.get_output().stdout.clone()).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .take(6)
        .map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            // The rank column keeps each arm's place (it gave the row number).
            [&cells[..1], &cells[2..6]].concat()
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            vec!["5", "ladder", "1.00", "100.0", "57.6"],
            vec!["2", "vote", "15.00", "100.0", "75.8"],
            vec!["4", "hive", "6.17", "91.0", "71.0"],
            vec!["1", "hive+", "6.84", "99.0", "78.8"],
            vec!["3", "hive+ref", "8.95", "88.2", "72.8"],
            vec!["6", "hive+ev", "10.28", "59.6", "53.8"],
        ]
    );
    common::witness()
        .args(["verify", "--all"])
        .arg(&out)
        .assert()
        .success();
}

const EPISODES: &str = r#"
[experiment]
name = "hive-small"
model = "hive"
chunk_runs = 2

[fixed]
rooms = 40

[grid]
noise = [60, 120]

[[arm]]
name = "vote"
policy = "vote"

[[arm]]
name = "hive+ev"
policy = "hive+"
fixed = { refutation_cap = 2, evidential = true }
grid = { window = [30, 100] }

[output]
episodes = true
"#;

#[test]
fn hive_results_are_byte_identical_across_threads_and_verify_their_episodes() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("m.toml");
    std::fs::write(&manifest, EPISODES).unwrap();
    let mut snaps = Vec::new();
    for threads in ["1", "3"] {
        let out = dir.path().join(format!("t{threads}"));
        common::witness()
            .args(["run", "-q", "--threads", threads, "--out"])
            .arg(&out)
            .arg(&manifest)
            .assert()
            .success();
        snaps.push(common::data_files(&out));
        let verify = common::witness()
            .args(["verify", "--all"])
            .arg(&out)
            .assert()
            .success();
        let said = String::from_utf8(verify.get_output().stdout.clone()).unwrap();
        assert!(
            said.contains("identities re-derived from the stored rows of 6 runs"),
            "{said}"
        );
    }
    assert!(
        snaps[0] == snaps[1],
        "results differ between 1 and 3 threads"
    );
    assert!(snaps[0].keys().any(|k| k.contains("episodes.parquet")));
}

#[test]
fn the_episode_audit_catches_a_tampered_row() {
    let p = params(&[("rooms", Value::Int(30)), ("refutation_cap", Value::Int(2))]);
    let out = MODEL.run(&p, &[true], None).unwrap();
    let rows = &out.tables[0].to_rows();
    assert_eq!(rows.len(), 30);
    let audit = |rows: &[Row]| {
        let stored = Stored {
            specs: MODEL.tables(),
            rows: vec![Some(rows)],
        };
        MODEL.audit(&p, &stored).unwrap()
    };
    let edited = |k: usize, edit: &dyn Fn(&mut EpisodeRow)| {
        let mut rows = rows.clone();
        let mut r = EpisodeRow::from_values(&rows[k]).unwrap();
        edit(&mut r);
        rows[k] = r.to_row();
        rows
    };
    assert_eq!(audit(rows), None);
    let flipped = edited(7, &|r| r.correct = !r.correct);
    assert!(audit(&flipped).is_some(), "correct flag flipped");
    let long = edited(3, &|r| r.turns = 16);
    assert!(audit(&long).is_some(), "16 turns with budget 15");
    assert!(audit(&rows[1..]).is_some(), "a room missing");
}

#[test]
fn summary_groups_follow_the_manifests_value_order() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("noise.toml");
    std::fs::write(
        &manifest,
        "[experiment]\nname = \"n\"\nmodel = \"hive\"\n[fixed]\nrooms = 10\n[grid]\nnoise = [30, 120, 60]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    common::witness()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&manifest)
        .assert()
        .success();
    let said = common::witness()
        .args(["summary", "--by", "noise", "--metrics", "correct_pct"])
        .arg(&out)
        .assert()
        .success();
    let text = String::from_utf8(said.get_output().stdout.clone()).unwrap();
    let noises: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .filter(|n| n.parse::<i64>().is_ok())
        .collect();
    assert_eq!(
        noises,
        vec!["30", "120", "60"],
        "as the manifest lists them"
    );
}

#[test]
fn compare_and_plot_work_on_hive_results_with_the_models_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("arms.toml");
    std::fs::write(
        &manifest,
        r#"
[experiment]
name = "arms"
model = "hive"
[fixed]
rooms = 40
[grid]
seed = { from = 1, to = 4 }
noise = [30, 120]
[[arm]]
name = "hive+"
policy = "hive+"
[[arm]]
name = "vote"
policy = "vote"
[[arm]]
name = "ladder"
policy = "ladder"
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let bin = || assert_cmd::Command::cargo_bin("witness").unwrap();
    bin()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&manifest)
        .assert()
        .success();
    bin()
        .args(["compare", "--baseline", "hive+"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains("effect on correct_pct"));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    assert_eq!(doc["comparator"], "correct_pct");
    assert!(doc["placebo"]
        .as_str()
        .unwrap()
        .contains("no replicate parameter"));
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "vote and ladder in two noise scenarios");
    for r in rows {
        // The baseline reruns identically, so it is stable, with floor 1.
        assert_eq!(
            (r["placebo_flips"].as_u64(), r["floor_min"].as_f64()),
            (Some(0), Some(1.0))
        );
        // Similarity is on correct_pct's declared 0..=100 scale.
        let sim = r["similarity_mean"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&sim), "{sim}");
    }
    bin().arg("plot").arg(&out).assert().success();
    assert!(out.join("plots").read_dir().unwrap().next().is_some());
    bin()
        .args(["simulate", "--model", "hive", "--set", "rooms=10"])
        .assert()
        .success()
        .stdout(predicates::str::contains("correct_pct"));
}
