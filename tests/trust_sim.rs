//! trust-sim: its accounting identities hold for every attack and random
//! settings (every signal counted once; masses equal the sums over
//! groups), and the structural defences hold whatever the attack's size.

use proptest::prelude::*;
use witness::model::DynModel;
use witness::params::{Resolved, Value};
use witness::trustsim::MODEL;

const ATTACKS: [&str; 7] = [
    "none",
    "sybil",
    "throwaway",
    "burst",
    "self_promotion",
    "copy_sources",
    "collusion",
];

fn run(pairs: &[(&'static str, Value)]) -> Vec<Value> {
    let mut p = Resolved::defaults(MODEL.params());
    for (k, v) in pairs {
        p.set_named(k, v.clone());
    }
    let out = MODEL.run(&p, &[], None).unwrap();
    assert_eq!(out.violation, None, "{pairs:?}");
    out.summary
}

fn column(name: &str) -> usize {
    MODEL
        .summary_columns()
        .iter()
        .position(|c| c.name == name)
        .unwrap()
}

#[test]
fn a_fleet_under_one_controller_is_one_party_at_any_size() {
    for fleet in [1, 10, 200] {
        let s = run(&[
            ("attack", Value::Str("sybil".into())),
            ("fleet", Value::Int(fleet)),
            ("evidence", Value::Int(0)),
        ]);
        assert_eq!(
            s[column("attacker_groups_max")],
            Value::Int(1),
            "fleet {fleet}"
        );
        assert_eq!(s[column("attack_high")], Value::Float(0.0), "fleet {fleet}");
    }
    let s = run(&[
        ("attack", Value::Str("copy_sources".into())),
        ("fleet", Value::Int(50)),
    ]);
    assert_eq!(
        s[column("attacker_groups_max")],
        Value::Int(1),
        "one family"
    );
    let s = run(&[
        ("attack", Value::Str("self_promotion".into())),
        ("fleet", Value::Int(50)),
    ]);
    assert_eq!(s[column("attacker_groups_max")], Value::Int(0), "all self");
}

#[test]
fn independent_colluders_do_count_separately() {
    let s = run(&[
        ("attack", Value::Str("collusion".into())),
        ("colluders", Value::Int(12)),
        ("evidence", Value::Int(0)),
    ]);
    assert_eq!(s[column("attacker_groups_max")], Value::Int(12));
    assert_eq!(
        s[column("attack_high")],
        Value::Float(1.0),
        "12 x 0.96 with no opposition"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn identities_hold_for_every_attack(
        attack in 0usize..7,
        seed in 0i64..1000,
        fleet in 1i64..30,
        colluders in 1i64..10,
        evidence in 0i64..10,
        verified in 0.0f64..1.0,
    ) {
        run(&[
            ("attack", Value::Str(ATTACKS[attack].into())),
            ("seed", Value::Int(seed)),
            ("claims", Value::Int(40)),
            ("honest", Value::Int(12)),
            ("fleet", Value::Int(fleet)),
            ("colluders", Value::Int(colluders)),
            ("evidence", Value::Int(evidence)),
            ("verified_share", Value::Float(verified)),
        ]);
    }
}
