//! trust-v1's scorer against the seed: its calibration note claim by claim
//! (each test finds the number the model needs by scoring more and more
//! evidence), every status rule, the anti-gaming defences, and
//! reproducibility from the inputs and `today` alone.

use std::collections::HashMap;

use witness::trust::evidence::Tables;
use witness::trust::input::RawTable;
use witness::trust::output::Report;
use witness::trust::score::Score;
use witness::trust::status::Status;

const TODAY: i64 = 1000;

fn table(file: &str, text: &str) -> RawTable {
    let mut lines = text.trim().lines();
    let split = |l: &str| {
        l.split(',')
            .map(|c| c.trim().to_string())
            .collect::<Vec<_>>()
    };
    RawTable {
        file: file.to_string(),
        columns: split(lines.next().unwrap()),
        rows: lines.map(split).collect(),
    }
}

/// A room for evidence: the author `alice` (email), one item `x` with
/// revision `x1`, and `extra` actor and signal rows.
struct World {
    actors: String,
    signals: String,
    relations: String,
    items: String,
}

impl World {
    fn new() -> World {
        World {
            actors: "id,kind,controller,verification,created\nalice,human,,email,0\n".into(),
            signals:
                "id,target,actor,kind,outcome,real_world,confidence,references_usage,day,status\n"
                    .into(),
            relations: "from,to,kind,strength,actor,day\n".into(),
            items: "revision,item,number,author,current\nx1,x,1,alice,true\n".into(),
        }
    }

    fn actor(&mut self, id: &str, verification: &str) -> &mut Self {
        self.actors += &format!("{id},human,,{verification},0\n");
        self
    }

    fn bot(&mut self, id: &str, controller: &str) -> &mut Self {
        self.actors += &format!("{id},ai,{controller},none,0\n");
        self
    }

    fn signal(&mut self, row: &str) -> &mut Self {
        self.signals += row;
        self.signals += "\n";
        self
    }

    fn report(&self) -> Report {
        let tables = Tables {
            actors: table("actors.csv", &self.actors),
            items: table("items.csv", &self.items),
            signals: table("signals.csv", &self.signals),
            relations: Some(table("relations.csv", &self.relations)),
            ..Tables::default()
        };
        Report::new(&tables, TODAY, &HashMap::new()).unwrap()
    }

    fn score(&self, target: &str) -> Score {
        self.report()
            .scores
            .into_iter()
            .find(|s| s.target == target)
            .unwrap()
    }
}

/// x1's score after `n` new actors of `verification`, actor k adding
/// `rows(actor, k)`.
fn with_actors(verification: &str, rows: &impl Fn(&str, usize) -> Vec<String>, n: usize) -> Score {
    let mut w = World::new();
    for k in 1..=n {
        let id = format!("a{k}");
        w.actor(&id, verification);
        for r in rows(&id, k) {
            w.signal(&r);
        }
    }
    w.score("x1")
}

/// How many such actors until `reached` holds, with the score then.
fn needed(
    verification: &str,
    rows: impl Fn(&str, usize) -> Vec<String>,
    reached: impl Fn(&Score) -> bool,
) -> (usize, Score) {
    (1..=40)
        .map(|n| (n, with_actors(verification, &rows, n)))
        .find(|(_, s)| reached(s))
        .expect("reached with at most 40 actors")
}

fn success(actor: &str, k: usize) -> Vec<String> {
    vec![format!(
        "s{k},x1,{actor},usage,success,true,,false,{TODAY},active"
    )]
}

#[test]
fn starting_reputations_are_048_03_and_06() {
    let mut w = World::new();
    w.actor("e", "email")
        .actor("n", "none")
        .actor("d", "domain")
        .actor("o", "organization");
    w.bot("b", "n");
    let rep: HashMap<String, f64> = w
        .report()
        .reputation
        .into_iter()
        .map(|r| (r.actor, r.reputation))
        .collect();
    for (actor, want) in [("e", 0.48), ("n", 0.3), ("d", 0.6), ("o", 0.6), ("b", 0.3)] {
        assert!((rep[actor] - want).abs() < 1e-12, "{actor}: {}", rep[actor]);
    }
}

#[test]
fn a_real_world_success_weighs_096_from_email_and_06_unverified() {
    for (v, want) in [("email", 0.96), ("none", 0.6)] {
        let (_, s) = needed(v, success, |_| true);
        assert!(
            (s.groups[0].weight - want).abs() < 1e-12,
            "{v}: {}",
            s.groups[0].weight
        );
    }
}

#[test]
fn high_confidence_takes_10_email_or_16_unverified_real_world_confirmations() {
    let high = |s: &Score| s.status == Status::HighConfidence;
    let (email, s) = needed("email", success, high);
    assert_eq!(email, 10);
    assert!(s.lower >= 0.75 && (s.alpha - (1.0 + 10.0 * 0.96)).abs() < 1e-12);
    let (unverified, _) = needed("none", success, high);
    assert_eq!(unverified, 16);
}

#[test]
fn the_alpha_threshold_is_10_413_not_10_4() {
    // The seed rounds: Beta(10.4, 1)'s 5th percentile is 0.7497 < 0.75.
    use witness::trust::beta::quantile;
    assert!(quantile(10.4, 1.0, 0.05) < 0.75);
    let exact = witness::math::ln(0.05) / witness::math::ln(0.75);
    assert!((exact - 10.4133).abs() < 1e-4);
    assert!(quantile(exact + 1e-9, 1.0, 0.05) >= 0.75);
    // Likewise `incorrect` needs beta >= 8.3991 with no support.
    let beta = witness::math::ln(0.05) / witness::math::ln(0.7);
    assert!((beta - 8.3991).abs() < 1e-4);
    assert!(quantile(1.0, beta + 1e-9, 0.95) < 0.3);
    assert!(quantile(1.0, 8.39, 0.95) > 0.3);
}

#[test]
fn one_confirmation_already_reaches_supported_not_three() {
    // The seed says three; value >= 0.6 with one independent group needs one.
    let supported = |s: &Score| s.status == Status::Supported;
    assert_eq!(needed("email", success, supported).0, 1);
    assert_eq!(needed("none", success, supported).0, 1);
    let plain = |a: &str, k: usize| {
        vec![format!(
            "s{k},x1,{a},usage,success,false,,false,{TODAY},active"
        )]
    };
    assert_eq!(
        needed("email", plain, supported).0,
        2,
        "without real-world use, two"
    );
}

fn failure_and_false_review(references_usage: bool) -> impl Fn(&str, usize) -> Vec<String> {
    move |a: &str, k: usize| {
        vec![
            format!("f{k},x1,{a},usage,failure,true,,false,{TODAY},active"),
            format!("r{k},x1,{a},review,false,false,,{references_usage},{TODAY},active"),
        ]
    }
}

#[test]
fn four_failing_actors_leave_it_unverified_below_02_and_seven_reach_incorrect() {
    for (refs, to_incorrect, value_after_four) in [(false, 7, 0.1504), (true, 6, 0.1392)] {
        let rows = failure_and_false_review(refs);
        let s = with_actors("email", &rows, 4);
        assert_eq!(s.status, Status::Unverified, "references_usage = {refs}");
        assert!(
            s.value < 0.2 && (s.value - value_after_four).abs() < 1e-4,
            "{}",
            s.value
        );
        let (n, s) = needed("email", &rows, |s| s.status == Status::Incorrect);
        assert_eq!(n, to_incorrect, "references_usage = {refs}");
        assert!(s.upper < 0.3 && s.beta >= 8.3991);
    }
    // Unverified actors: the value after four stays just above 0.2
    // unless the reviews reference the usage event.
    let s = with_actors("none", &failure_and_false_review(false), 4);
    assert!(s.value > 0.2 && s.value < 0.21, "{}", s.value);
    let s = with_actors("none", &failure_and_false_review(true), 4);
    assert!(s.value < 0.2, "{}", s.value);
}

#[test]
fn one_controller_alone_never_reaches_high_confidence() {
    let mut w = World::new();
    w.actor("owner", "domain");
    for k in 0..50 {
        w.bot(&format!("bot{k}"), "owner");
        w.signal(&format!(
            "s{k},x1,bot{k},usage,success,true,,false,{TODAY},active"
        ));
    }
    let s = w.score("x1");
    assert_eq!(s.independent_count, 1, "fifty bots are one party");
    assert_eq!(s.groups[0].weight, 2.0, "capped");
    assert_eq!(s.status, Status::Supported);
    assert!(s.alpha <= 3.0);
}

#[test]
fn self_confirmation_carries_no_weight() {
    let mut w = World::new();
    w.bot("alice-bot", "alice");
    for (k, a) in ["alice", "alice-bot"].iter().enumerate() {
        w.signal(&format!(
            "s{k},x1,{a},usage,success,true,,false,{TODAY},active"
        ));
    }
    let s = w.score("x1");
    assert_eq!((s.alpha, s.beta, s.independent_count), (1.0, 1.0, 0));
    assert_eq!(s.self_reported(), vec!["s0", "s1"]);
    assert_eq!(s.evidence_count, 2);
    assert_eq!(s.status, Status::Unverified);
}

#[test]
fn retracted_hidden_and_future_evidence_leave_the_calculation() {
    let mut w = World::new();
    w.actor("b", "email");
    w.signal(&format!(
        "s1,x1,b,usage,success,true,,false,{TODAY},retracted"
    ));
    w.signal(&format!("s2,x1,b,usage,success,true,,false,{TODAY},hidden"));
    w.signal(&format!(
        "s3,x1,b,usage,success,true,,false,{},active",
        TODAY + 1
    ));
    let s = w.score("x1");
    assert_eq!((s.alpha, s.evidence_count, s.buckets.inactive), (1.0, 0, 3));
    w.signal(&format!("s4,x1,b,usage,success,true,,false,{TODAY},active"));
    assert_eq!(w.score("x1").evidence_count, 1);
}

#[test]
fn derivative_sources_join_their_origins_family() {
    let mut w = World::new();
    w.actor("b", "email");
    w.relations += "origin,c,supports,0.6,b,10\nmirror,origin,mirrors,,b,10\n\
                    quote,mirror,quotes,,b,10\nquote,c,supports,0.9,b,10\nother,c,contradicts,,b,10\n";
    let s = w.score("c");
    let roots: Vec<String> = s.groups.iter().map(|g| s.root(g)).collect();
    let families: Vec<(&str, f64)> = roots
        .iter()
        .zip(&s.groups)
        .map(|(r, g)| (r.as_str(), g.weight))
        .collect();
    assert_eq!(
        families,
        vec![("family:origin", 0.5 * 0.9), ("family:other", 0.5 * 0.7)],
        "a quote of a mirror is the origin's family; W = 0.5 x its largest strength"
    );
    assert_eq!(
        (
            s.independent_count,
            s.contradiction_count,
            s.real_world_count
        ),
        (2, 1, 0)
    );
}

#[test]
fn a_burst_of_young_roots_is_halved_and_flagged() {
    let mut w = World::new();
    w.actors += "young,human,,email,998\n";
    for k in 0..5 {
        w.bot(&format!("y{k}"), "young");
        w.signal(&format!(
            "s{k},x1,y{k},usage,success,false,,false,999,active"
        ));
    }
    let s = w.score("x1");
    assert_eq!(s.flags, vec!["burst"]);
    let full = 5.0 * 0.48 * witness::math::powf(0.5, 1.0 / 730.0);
    assert!((s.groups[0].weight - (full / 2.0).min(2.0)).abs() < 1e-12);
    // Four signals, or five from an old root, are no burst.
    let mut w = World::new();
    w.actor("old", "email");
    for k in 0..5 {
        w.signal(&format!(
            "s{k},x1,old,usage,success,false,,false,999,active"
        ));
    }
    assert!(w.score("x1").flags.is_empty());
}

#[test]
fn outdated_needs_two_roots_after_the_last_positive_signal() {
    let mut w = World::new();
    w.actor("b", "email")
        .actor("c", "email")
        .actor("d", "email");
    w.signal("p,x1,b,usage,success,false,,false,900,active");
    w.signal("o1,x1,c,review,outdated,false,,false,950,active");
    assert_ne!(w.score("x1").status, Status::Outdated, "one root");
    w.signal("o2,x1,alice,review,outdated,false,,false,950,active");
    assert_ne!(
        w.score("x1").status,
        Status::Outdated,
        "the author does not count"
    );
    w.signal("o3,x1,d,review,outdated,false,,false,890,active");
    assert_ne!(
        w.score("x1").status,
        Status::Outdated,
        "before the last success"
    );
    w.signal("o4,x1,d,review,outdated,false,,false,960,active");
    assert_eq!(w.score("x1").status, Status::Outdated);
}

#[test]
fn disputed_and_incorrect_and_superseded() {
    let mut w = World::new();
    for a in ["b", "c", "d", "e"] {
        w.actor(a, "email");
    }
    w.signal("1,x1,b,usage,success,true,,false,999,active");
    w.signal("2,x1,c,usage,success,true,,false,999,active");
    w.signal("3,x1,d,usage,failure,true,,false,999,active");
    w.signal("4,x1,e,usage,failure,true,,false,999,active");
    assert_eq!(w.score("x1").status, Status::Disputed);
    // The author's root supersedes x by a new item y: superseded, with a pointer.
    w.items += "y1,y,1,alice,true\n";
    w.relations += "y1,x,supersedes,,alice,999\n";
    let s = w.score("x");
    assert_eq!(
        (s.status, s.superseded_by.clone()),
        (Status::Superseded, vec!["y1".to_string()])
    );
    assert_eq!(
        w.score("x1").status,
        Status::Superseded,
        "the current revision too"
    );
    // Someone else's supersedes counts only from a high_confidence target.
    let mut w = World::new();
    w.actor("b", "email");
    w.items += "y1,y,1,alice,true\n";
    w.relations += "y1,x1,supersedes,,b,999\n";
    assert_eq!(w.score("x1").status, Status::Unverified);
}

#[test]
fn revisions_inherit_half_the_previous_evidence() {
    let mut w = World::new();
    w.items = "revision,item,number,author,current\nx1,x,1,alice,false\nx2,x,2,alice,true\n".into();
    w.actor("b", "domain");
    w.signal(&format!("1,x1,b,usage,success,true,,false,{TODAY},active"));
    let s = w.score("x2");
    assert_eq!((s.alpha0, s.beta0), (1.0 + 0.5 * 1.2, 1.0));
    assert_eq!(s.inherited_from.as_deref(), Some("x1"));
    assert_eq!(
        w.score("x").value,
        s.value,
        "an item carries its current revision"
    );
}

#[test]
fn scores_depend_on_the_inputs_and_today_only() {
    let mut w = World::new();
    w.actor("b", "email");
    w.signal("1,x1,b,usage,success,true,,false,10,active");
    let a = w.score("x1");
    let b = w.score("x1");
    assert_eq!(a, b);
    let tables = Tables {
        actors: table("actors.csv", &w.actors),
        items: table("items.csv", &w.items),
        signals: table("signals.csv", &w.signals),
        ..Tables::default()
    };
    let later = Report::new(&tables, TODAY + 730, &HashMap::new()).unwrap();
    let s = later.scores.iter().find(|s| s.target == "x1").unwrap();
    assert!(
        (s.groups[0].weight - a.groups[0].weight / 2.0).abs() < 1e-12,
        "one half-life later"
    );
}

fn rated(ratings: &str) -> (witness::trust::evidence::Evidence, Vec<f64>) {
    let mut w = World::new();
    w.actor("b", "domain").actor("c", "domain");
    let tables = Tables {
        actors: table("actors.csv", &w.actors),
        items: table("items.csv", &w.items),
        signals: table("signals.csv", &w.signals),
        ratings: Some(table(
            "ratings.csv",
            &format!(
                "actor,target,context,dimension,score,confidence,references_usage,day\n{ratings}"
            ),
        )),
        ..Tables::default()
    };
    let ev = witness::trust::evidence::Evidence::new(&tables).unwrap();
    let reps = witness::trust::reputation::weights(&ev, &HashMap::new());
    (ev, reps)
}

#[test]
fn ratings_shrink_toward_the_mean_and_keep_only_the_latest() {
    use witness::trust::ratings::{compare, ratings};
    let (ev, reps) = rated(
        "b,x,os=linux;lang=rust,speed,20,,false,900\n\
         b,x,lang=rust;os=linux,speed,90,,true,1000\n\
         c,x,lang=go,speed,50,,false,1000\n\
         alice,x,lang=go,speed,100,,false,1000\n",
    );
    let rows = ratings(&ev, TODAY, &reps);
    let cell = |ctx: &str| rows.iter().find(|r| r.context == ctx).unwrap();
    // b's later 90 replaces its 20 (the facets are the same set).
    let rust = cell("lang=rust;os=linux");
    assert_eq!(rust.ratings, 1);
    // m = mean of non-self latest ratings (90, 50); W = 1.5 x 0.6.
    let m = (0.9 + 0.5) / 2.0;
    let w = 1.5 * 0.6;
    assert!((rust.value - (3.0 * m + w * 0.9) / (3.0 + w)).abs() < 1e-12);
    let go = cell("lang=go");
    assert_eq!(go.self_reported, vec!["alice"], "kept, weightless");
    assert_eq!((go.low, go.mid, go.high), (0, 1, 1));
    assert_eq!(cell("").ratings, 3, "the pooled row");
    let (r, fell_back) = compare(&ev, TODAY, &reps, "x", "speed", "lang=rust");
    assert!(!fell_back && r.ratings == 1);
    let (r, fell_back) = compare(&ev, TODAY, &reps, "x", "speed", "lang=java");
    assert!(fell_back && r.ratings == 3);
}

#[test]
fn reputation_follows_quality_and_review_accuracy() {
    let mut w = World::new();
    for a in ["b", "c", "d"] {
        w.actor(a, "email");
        w.signal(&format!(
            "u{a},x1,{a},usage,success,true,,false,{TODAY},active"
        ));
    }
    w.actor("wrong", "domain");
    w.signal(&format!(
        "r1,x1,wrong,review,false,false,,false,{TODAY},active"
    ));
    let report = w.report();
    let x1 = report.scores.iter().find(|s| s.target == "x1").unwrap();
    let rep = |id: &str| {
        report
            .reputation
            .iter()
            .find(|r| r.actor == id)
            .unwrap()
            .clone()
    };
    let alice = rep("alice");
    let q =
        (3.0 * 0.5 + x1.independent_count as f64 * x1.value) / (3.0 + x1.independent_count as f64);
    assert!((alice.quality - q).abs() < 1e-12 && alice.revisions == 1);
    let wrong = rep("wrong");
    let a = (1.5 + (1.0 - x1.value)) / 4.0;
    assert!((wrong.accuracy - a).abs() < 1e-12 && wrong.reviews == 1);
    assert!((wrong.reputation - (0.2 + 0.8 * (0.25 + 0.5 * a))).abs() < 1e-12);
    assert!(wrong.reputation < 0.6, "a wrong review costs reputation");
}

#[test]
fn ranking_uses_the_lower_bound_and_status() {
    let mut w = World::new();
    w.items += "y1,y,1,alice,true\n";
    for a in ["b", "c", "d"] {
        w.actor(a, "email");
        w.signal(&format!(
            "u{a},x1,{a},usage,success,true,,false,{TODAY},active"
        ));
    }
    w.signal(&format!(
        "one,y1,b,usage,success,true,,false,{TODAY},active"
    ));
    let ranking = w.report().ranking;
    let order: Vec<&str> = ranking.iter().map(|r| r.target.as_str()).collect();
    assert_eq!(order, vec!["x", "y"], "more evidence, higher lower bound");
    let x = &ranking[0];
    assert!((x.rank - (0.25 + 0.75 * x.lower) * 0.9 * 1.0).abs() < 1e-12);
}

#[test]
fn the_explanation_has_exactly_the_seeds_keys() {
    let mut w = World::new();
    w.actor("b", "email").actor("c", "none");
    w.signal(&format!("s1,x1,c,usage,success,true,,false,{TODAY},active"));
    w.signal(&format!(
        "s2,x1,b,review,false,false,0.5,false,{TODAY},active"
    ));
    w.signal(&format!(
        "s3,x1,alice,usage,success,true,,false,{TODAY},active"
    ));
    let s = w.score("x1");
    let e = witness::trust::explain::explanation(&s);
    let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        vec![
            "model_version",
            "prior",
            "support_mass",
            "opposition_mass",
            "groups",
            "self_reported",
            "flags",
            "superseded_by"
        ]
    );
    let groups = e["groups"].as_array().unwrap();
    let roots: Vec<&str> = groups.iter().map(|g| g["root"].as_str().unwrap()).collect();
    assert_eq!(roots, vec!["b", "c"], "sorted by root");
    let g_keys: Vec<&str> = groups[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        g_keys,
        vec!["root", "weight", "polarity", "signals", "real_world"]
    );
    assert_eq!(e["self_reported"], serde_json::json!(["s3"]));
    assert_eq!(e["prior"]["inherited_from"], serde_json::Value::Null);
    // Full precision: the weight reads back as the same f64.
    assert_eq!(groups[1]["weight"].as_f64().unwrap(), s.groups[1].weight);
}
