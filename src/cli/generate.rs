//! `witness generate` (hidden): writes the reference pages and man pages,
//! or prints a shell's completion script. The pages are built by
//! `crate::reference`; this only writes them.

use clap::{Args, Subcommand};
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::model::Registry;
use crate::reference;

#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand, Debug)]
enum What {
    /// The Markdown reference and man pages, into DIR (docs/reference).
    Reference {
        #[arg(default_value = "docs/reference")]
        dir: PathBuf,
    },
    /// The man pages alone, into DIR (e.g. /usr/local/share/man/man1).
    Man { dir: PathBuf },
    /// A completion script on stdout, e.g. `witness generate completions bash`.
    Completions { shell: clap_complete::Shell },
}

pub fn generate(a: &GenerateArgs, registry: &Registry) -> Result<u8> {
    match &a.what {
        What::Reference { dir } => write_pages(dir, reference::pages(registry)),
        What::Man { dir } => write_pages(
            dir,
            reference::cli::man_pages()
                .into_iter()
                .map(|(path, bytes)| reference::Page { path, bytes })
                .collect(),
        ),
        What::Completions { shell } => {
            let script = reference::cli::completions(*shell);
            out!("{}", String::from_utf8_lossy(&script))?;
            Ok(0)
        }
    }
}

fn write_pages(dir: &std::path::Path, pages: Vec<reference::Page>) -> Result<u8> {
    for page in pages {
        let path = dir.join(&page.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        crate::store::atomic::write(&path, &page.bytes).map_err(|e| Error::io(&path, e))?;
        outln!("wrote {}", path.display())?;
    }
    Ok(0)
}
