//! Run keys: the stable name of a run, from its model and its resolved
//! parameters.

use crate::params::Resolved;

/// A stable name for a run: a hash of its model and every resolved
/// parameter, defaults included, so it survives edits to the manifest. A
/// parameter added later (`ParamSpec::added`) counts only away from its
/// default, so keys written before it existed stay valid.
pub fn run_key(model: &dyn crate::model::DynModel, p: &Resolved) -> String {
    // One buffer written in place: every run of a grid computes its key,
    // and a string per parameter was a tenth of a grid of small runs.
    let mut text = String::with_capacity(512);
    text.push_str("model=");
    text.push_str(model.name());
    text.push('\n');
    let quiet = p.quiet(model.params());
    for (i, (k, v)) in p.values.iter().enumerate() {
        if !quiet.contains(crate::params::ParamId(i)) {
            // What `{k}={v}` writes (`Value`'s Display writes floats as
            // `{:?}` does), without `fmt` for the common values.
            text.push_str(k);
            text.push('=');
            v.push_display(&mut text);
            text.push('\n');
        }
    }
    crate::manifest::sha256_hex_prefix(text.as_bytes(), 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::tests::plan;

    #[test]
    fn run_keys_depend_on_every_resolved_parameter_only() {
        let p = plan("[experiment]\nname = \"k\"\nmodel = \"witness\"\n[grid]\nseed = [1, 2]\n");
        let (a, b) = (p.run(0).params, p.run(1).params);
        let m = p.model();
        assert_ne!(run_key(m, &a), run_key(m, &b));
        // The same resolved parameters from a different manifest: same key.
        let p2 = plan(
            "[experiment]\nname = \"other\"\nmodel = \"witness\"\n[fixed]\nseed = 2\ngain = 6.0\n",
        );
        assert_eq!(run_key(m, &p2.run(0).params), run_key(m, &b));
    }
}
