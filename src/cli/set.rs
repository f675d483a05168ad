//! `--set key=value` overrides: the value is TOML (`true`, `[10, 20]`,
//! `"hub"`), and a bare word is taken as a string so `graph=hub` works.

use crate::params::{
    lookup, parse_word as parse_value, Kind, ParamError, ParamId, ParamSpec, Resolved,
};

pub fn apply(specs: &[ParamSpec], p: &mut Resolved, sets: &[String]) -> Result<(), ParamError> {
    // Each parameter's `--set` so far: a second one is refused, not left
    // to silently replace the first.
    let mut given: Vec<(ParamId, &str)> = Vec::new();
    for s in sets {
        let (k, v) = s.split_once('=').ok_or_else(|| {
            ParamError::new(
                s,
                "(missing)",
                "`--set` needs KEY=VALUE",
                "e.g. --set truth=true".into(),
            )
        })?;
        let id = lookup(specs, k.trim())?;
        let spec = id.spec(specs);
        let word = v.trim();
        if let Some((_, first)) = given.iter().find(|(g, _)| *g == id) {
            return Err(ParamError::new(
                spec.name,
                word,
                &format!("set twice (first by --set {first})"),
                format!("one --set {} per run; keep the one you mean", spec.name),
            ));
        }
        given.push((id, s));
        // An integer too large for TOML's 64 bits is no TOML value, so it
        // would become the bare word "18446744073709551615" and be called
        // text; for a number it is out of range, and says so.
        let numeric = matches!(
            spec.kind,
            Kind::Int { .. } | Kind::IntOrNone { .. } | Kind::Float { .. }
        );
        let raw = parse_value(word);
        if numeric && is_integer_literal(word) && raw.is_str() {
            return Err(ParamError::new(
                spec.name,
                word,
                "out of range",
                spec.kind.allowed(),
            ));
        }
        p.set(id, spec.accept(&raw)?);
    }
    Ok(())
}

/// Whether `s` is written as an integer: an optional sign, then digits.
fn is_integer_literal(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_values_and_bare_words() {
        assert_eq!(parse_value("true"), toml::Value::Boolean(true));
        assert_eq!(parse_value("hub"), toml::Value::String("hub".into()));
        assert_eq!(parse_value("\"hub\""), toml::Value::String("hub".into()));
        assert_eq!(parse_value("[10,20]").as_array().unwrap().len(), 2);
    }

    #[test]
    fn an_integer_too_large_for_toml_is_out_of_range_but_a_quoted_one_is_text() {
        let specs = crate::cascade::config::PARAMS;
        let mut p = Resolved::defaults(specs);
        let set = |text: &str, p: &mut Resolved| apply(specs, p, &[text.to_string()]);
        let err = set("seed=18446744073709551615", &mut p).unwrap_err();
        assert_eq!(
            err.to_string(),
            "parameter `seed` = 18446744073709551615: out of range; allowed: an integer in 0 ..= 9223372036854775807"
        );
        let err = set("population=\"300\"", &mut p).unwrap_err();
        assert!(err.problem.contains("wrong type (string)"), "{err}");
        set("population=300", &mut p).unwrap();
    }

    #[test]
    fn a_parameter_set_twice_is_refused_naming_both() {
        let specs = crate::cascade::config::PARAMS;
        let mut p = Resolved::defaults(specs);
        let sets = ["population=50".to_string(), " population = 60".to_string()];
        let err = apply(specs, &mut p, &sets).unwrap_err();
        assert_eq!(
            err.to_string(),
            "parameter `population` = 60: set twice (first by --set population=50); allowed: one --set population per run; keep the one you mean"
        );
    }
}
