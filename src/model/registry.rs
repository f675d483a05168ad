//! The models a command can use, by manifest name. The built-in registry
//! holds the cascade, hive, trust-sim and the harness; tests (or another program using
//! the library) can add models of their own without touching the runner.

use super::DynModel;

#[derive(Clone)]
pub struct Registry {
    models: Vec<&'static dyn DynModel>,
}

impl Registry {
    pub fn builtin() -> Registry {
        Registry {
            models: vec![
                &crate::cascade::MODEL,
                &crate::hive::MODEL,
                &crate::trustsim::MODEL,
                &crate::harness::MODEL,
            ],
        }
    }

    /// This registry and one more model.
    pub fn with(mut self, model: &'static dyn DynModel) -> Registry {
        self.models.push(model);
        self
    }

    pub fn all(&self) -> &[&'static dyn DynModel] {
        &self.models
    }

    /// The model a manifest names, by its name or an alias.
    pub fn find(&self, name: &str) -> Option<&'static dyn DynModel> {
        self.models
            .iter()
            .copied()
            .find(|m| m.name() == name || m.aliases().contains(&name))
    }

    /// The model whose results carry this version string.
    pub fn by_version(&self, version: &str) -> Option<&'static dyn DynModel> {
        self.models.iter().copied().find(|m| m.version() == version)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.models.iter().map(|m| m.name()).collect()
    }
}

/// Problems in a model's declarations that no compiler check sees: names
/// the capabilities use that are not columns, defaults outside their own
/// kinds, duplicate names. Empty for a sound model; every registered model
/// is checked by a test.
pub fn declaration_problems(m: &dyn DynModel) -> Vec<String> {
    let mut out = Vec::new();
    let summary: Vec<&str> = m.summary_columns().iter().map(|c| c.name).collect();
    let params: Vec<&str> = m.params().iter().map(|p| p.name).collect();
    for s in m.params() {
        if !s.kind.holds(&(s.default)()) {
            out.push(format!(
                "parameter {}: its default is not one of its values",
                s.name
            ));
        }
    }
    let mut names: Vec<&str> = ["run_id", "run_key", "arm", "failed", "failure"].to_vec();
    names.extend(&params);
    names.extend(&summary);
    let mut sorted = names.clone();
    sorted.sort_unstable();
    for w in sorted.windows(2).filter(|w| w[0] == w[1]) {
        out.push(format!(
            "runs.parquet would have two columns named {}",
            w[0]
        ));
    }
    for h in m.headline_metrics() {
        if !summary.contains(h) {
            out.push(format!("headline metric {h} is not a summary column"));
        }
    }
    if let Some((table, x, columns, _)) = m.curves() {
        match m.tables().iter().find(|t| t.name == table) {
            None => out.push(format!("curves: no table {table}")),
            Some(t) => {
                for c in std::iter::once(&x).chain(columns) {
                    if !t.columns.iter().any(|k| k.name == *c) {
                        out.push(format!("curves: {table} has no column {c}"));
                    }
                }
            }
        }
    }
    if let Some((_, show)) = m.ranking() {
        for (c, _) in show {
            if !summary.contains(c) {
                out.push(format!("ranking shows {c}, which is not a summary column"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_model_declares_itself_soundly() {
        for m in Registry::builtin().all() {
            assert_eq!(
                declaration_problems(*m),
                Vec::<String>::new(),
                "{}",
                m.name()
            );
        }
    }

    #[test]
    fn names_versions_and_aliases_are_unique() {
        let r = Registry::builtin();
        let mut seen = Vec::new();
        for m in r.all() {
            for n in std::iter::once(m.name()).chain(m.aliases().iter().copied()) {
                assert!(!seen.contains(&n), "{n} twice");
                seen.push(n);
            }
            assert!(std::ptr::addr_eq(r.by_version(m.version()).unwrap(), *m));
        }
    }
}
