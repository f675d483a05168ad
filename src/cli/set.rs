//! `--set key=value` overrides: the value is TOML (`true`, `[10, 20]`,
//! `"hub"`), and a bare word is taken as a string so `graph=hub` works.

use crate::params::{lookup, parse_word as parse_value, ParamError, ParamSpec, Resolved};

pub fn apply(specs: &[ParamSpec], p: &mut Resolved, sets: &[String]) -> Result<(), ParamError> {
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
        p.set(id, id.spec(specs).accept(&parse_value(v.trim()))?);
    }
    Ok(())
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
}
