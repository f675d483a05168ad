//! The command line: verb definitions (clap derive) and dispatch. Verbs are
//! thin: they read files, call the pure core, print and write results.

mod set;
mod simulate;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// A check ran and failed (identities, replay, verify).
pub const EXIT_FAILED: u8 = 1;
/// The input was wrong: arguments, parameters, manifest.
pub const EXIT_BAD_INPUT: u8 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "witness",
    version,
    about = "Seeded batch experiments on how AI agents spread, check and trust claims"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one cascade configuration and print its summary.
    Simulate {
        /// A parameter in TOML syntax, e.g. `--set truth=true --set graph=hub
        /// --set corrections=[10,20]`. Repeatable; defaults fill the rest.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Write the single-run export (config, trajectory, agents) as JSON.
        #[arg(long, value_name = "FILE")]
        export: Option<PathBuf>,
    },
    /// Re-run a single-run export and check it reproduces (exit 1 if not).
    Replay {
        /// A file written by `witness simulate --export`.
        export: PathBuf,
    },
}

pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Simulate { set, export } => simulate::simulate(&set, export.as_deref()),
        Command::Replay { export } => simulate::replay(&export),
    }
}

/// Input errors exit 2 so scripts can tell a typo from a failed check.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    let input = err
        .chain()
        .any(|e| e.is::<InputError>() || e.is::<crate::params::ParamError>());
    if input {
        EXIT_BAD_INPUT
    } else {
        EXIT_FAILED
    }
}

/// Marks an error as the user's input being wrong (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);
