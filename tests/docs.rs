//! The committed model reference is what `witness describe --markdown`
//! prints, so a new parameter or column cannot ship undocumented or with a
//! stale description; and the README names every verb.

use witness::model::{reference, Registry};

fn read(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn the_committed_model_reference_is_describes_output() {
    let want = reference::markdown_all(Registry::builtin().all());
    let have = read("docs/reference/models.md");
    assert!(
        have == want,
        "docs/reference/models.md is stale; regenerate it with\n  cargo run --release -- describe --markdown > docs/reference/models.md"
    );
}

#[test]
fn the_reference_names_every_parameter_and_column_of_its_own_model() {
    let text = read("docs/reference/models.md");
    for model in Registry::builtin().all() {
        // Each model's section, so a name shared by two models must be
        // documented in both.
        let start = text
            .find(&format!("## `{}`", model.name()))
            .unwrap_or_else(|| panic!("no section for {}", model.name()));
        let section = &text[start..];
        let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
        let section = &section[..end];
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
                section.contains(&format!("| `{name}` |")),
                "the {} section does not document `{name}`",
                model.name()
            );
        }
    }
}

#[test]
fn every_verb_is_in_the_readme() {
    use clap::CommandFactory;
    let text = read("README.md");
    for verb in witness::cli::Cli::command().get_subcommands() {
        assert!(
            text.contains(&format!("`witness {}", verb.get_name())),
            "README lacks `witness {}`",
            verb.get_name()
        );
    }
}
