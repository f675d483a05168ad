//! The README documents every parameter, every output column and every verb,
//! so a new parameter or column cannot ship undocumented.

use witness::models;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap()
}

#[test]
fn every_parameter_and_column_is_in_the_readme() {
    let text = readme();
    for model in models::ALL {
        let names = model
            .params()
            .iter()
            .map(|p| p.name)
            .chain(model.summary_columns().iter().map(|c| c.name))
            .chain(
                model
                    .tables()
                    .iter()
                    .flat_map(|t| t.columns.iter().map(|c| c.name)),
            );
        for name in names {
            assert!(
                text.contains(&format!("`{name}`")),
                "README does not document `{name}`"
            );
        }
    }
    for fixed in ["`run_id`", "`run_key`", "`arm`", "`failed`", "`failure`"] {
        assert!(text.contains(fixed), "README does not document {fixed}");
    }
}

#[test]
fn every_verb_is_in_the_readme() {
    use clap::CommandFactory;
    let text = readme();
    for verb in witness::cli::Cli::command().get_subcommands() {
        assert!(
            text.contains(&format!("`witness {}", verb.get_name())),
            "README lacks `witness {}`",
            verb.get_name()
        );
    }
}
