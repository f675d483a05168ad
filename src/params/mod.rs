//! Model parameters as the runner sees them: a typed value, a declared kind
//! with its allowed range, a role, and a resolved set in declaration order.
//! Models declare their parameters once with `params!` (name, type,
//! default, kind, doc); manifests, `--set` and exports are all checked
//! against that one declaration, and the model reads a typed struct.

mod error;
mod kind;
mod resolved;
mod spec;
mod typed;
mod value;

pub use error::ParamError;
pub use kind::{parse_word, show, Kind};
pub use resolved::{ParamSet, Resolved};
pub use spec::{lookup, with_role, ParamId, ParamSpec, Role};
pub use typed::{ParamType, Params};
pub use value::Value;

#[cfg(test)]
mod tests {
    use super::*;

    crate::params! {
        struct TestParams {
            /// a gain
            gain: f64 = 6.0, Kind::float(0.0, 100.0);
            /// a cap
            cap: Option<u32> = None, Kind::int_or_none(1, 9);
            /// rounds
            rounds: Vec<u32> = vec![2, 3], Kind::int_list(1, 10);
            /// the seed
            seed: u64 = 7, Kind::int(0, i64::MAX), Seed;
        }
    }

    fn gain() -> &'static ParamSpec {
        &TestParams::SPECS[0]
    }

    #[test]
    fn integers_are_accepted_for_floats_and_ranges_are_inclusive() {
        assert_eq!(
            gain().accept(&toml::Value::Integer(100)),
            Ok(Value::Float(100.0))
        );
        let err = gain().accept(&toml::Value::Float(100.5)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "parameter `gain` = 100.5: out of range; allowed: a number in 0.0 ..= 100.0"
        );
    }

    #[test]
    fn wrong_type_names_the_type() {
        let err = gain().accept(&toml::Value::String("x".into())).unwrap_err();
        assert!(err.problem.contains("wrong type (string)"), "{err}");
    }

    #[test]
    fn the_struct_round_trips_and_ids_follow_declaration_order() {
        let p = Resolved::defaults(TestParams::SPECS);
        let t = TestParams::from_resolved(&p);
        assert_eq!(
            t,
            TestParams {
                gain: 6.0,
                cap: None,
                rounds: vec![2, 3],
                seed: 7
            }
        );
        assert_eq!(t.to_resolved(), p);
        assert_eq!(TestParams::seed, ParamId(3));
        assert_eq!(TestParams::SPECS[3].role, Role::Seed);
        assert_eq!(TestParams::SPECS[0].doc(), "a gain");
        assert_eq!(
            with_role(TestParams::SPECS, Role::Seed),
            Some(TestParams::seed)
        );
        let set = ParamSet::of(&[TestParams::cap, TestParams::seed]);
        assert!(set.contains(TestParams::cap) && !set.contains(TestParams::gain));
        assert_eq!(
            set.ids(4).collect::<Vec<_>>(),
            [TestParams::cap, TestParams::seed]
        );
    }

    #[test]
    fn every_default_is_a_value_of_its_kind() {
        for s in TestParams::SPECS {
            assert!(s.kind.holds(&(s.default)()), "{}", s.name);
        }
    }
}
