//! The generated reference under `docs/reference/`: every page is built
//! here from the code it describes (models, manifest keys, output schema,
//! the command line and its man pages), so `witness generate reference`
//! writes them and a test holds the committed copies equal to them.

pub mod cli;
pub mod manifest;
pub mod output;

use crate::model::{reference, Registry};

/// One generated file: its path under the reference folder and its bytes.
pub struct Page {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// Every page of the reference, in a fixed order.
pub fn pages(registry: &Registry) -> Vec<Page> {
    let text = |path: &str, s: String| Page {
        path: path.to_string(),
        bytes: s.into_bytes(),
    };
    let mut out = vec![
        text("README.md", index()),
        text("models.md", reference::markdown_all(registry.all())),
        text("manifest.md", manifest::markdown()),
        text("output.md", output::markdown()),
        text("cli.md", cli::markdown()),
    ];
    out.extend(cli::man_pages().into_iter().map(|(name, bytes)| Page {
        path: format!("man/{name}"),
        bytes,
    }));
    out
}

/// The folder's index page.
fn index() -> String {
    "# Reference\n\n\
     Generated from the code by `witness generate reference docs/reference`; \
     `tests/docs.rs` fails when a page here differs from what the code generates.\n\n\
     | page | what it lists |\n|---|---|\n\
     | [models.md](models.md) | every model's parameters (kind, allowed values, default, role, which policies read it), summary columns, detail tables, outcomes and ranking (also `witness describe --markdown`) |\n\
     | [manifest.md](manifest.md) | every manifest table and key, with kinds and defaults |\n\
     | [output.md](output.md) | a results folder's files, the runner's columns, file metadata |\n\
     | [cli.md](cli.md) | every verb's `--help` |\n\
     | [man/](man/) | man pages: `witness.1` and `witness-<verb>.1` (install with `witness generate man DIR`) |\n\n\
     Shell completions: `witness generate completions bash` (or zsh, fish, elvish, powershell) \
     prints a script, e.g. `witness generate completions bash > ~/.local/share/bash-completion/completions/witness`.\n"
        .to_string()
}
