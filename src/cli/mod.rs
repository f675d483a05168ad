//! The command line: verb definitions (clap derive) and dispatch. Each verb
//! is argument parsing, one library call and a writer; nothing here
//! computes over runs.

// First, so that every verb's module sees its macros.
#[macro_use]
mod out;

mod compare;
mod describe;
mod design;
mod generate;
mod merge;
mod plan;
mod plot;
mod progress;
mod rank;
mod report;
mod run;
mod search;
mod sensitivity;
mod set;
mod shards;
mod simulate;
mod summary;
mod trust;
mod verify;

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::manifest::Manifest;
use crate::model::Registry;

pub use run::RunArgs;

const AFTER_HELP: &str = "Examples:
  witness run experiments/default.toml      run a grid into results/default/
  witness plan experiments/sweep-540.toml   check a manifest, see its size and cost
  witness verify results/default            re-check stored results
  witness simulate --set policy=source_aware --export run.json
  witness describe hive                     a model's parameters and columns

Exit codes: 0 ok, 1 a check failed, 2 bad input, 130/143/129 `run` stopped by SIGINT/SIGTERM/SIGHUP (rerun to resume).";

pub const DEFAULT_MAX_RUNS: u64 = 10_000_000;

#[derive(Parser, Debug)]
#[command(
    name = "witness",
    version,
    about = "Seeded batch experiments on how AI agents spread, check and trust claims",
    after_help = AFTER_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one configuration of a model and print its summary.
    Simulate(simulate::SimulateArgs),
    /// Re-run a single-run export and check it reproduces (exit 1 if not).
    Replay {
        /// A file written by `witness simulate --export`.
        export: PathBuf,
        /// Refuse a run that would hold more than this many GB in memory
        /// [default: half the machine's memory].
        #[arg(long, value_name = "GB", value_parser = plan::parse_gigabytes)]
        max_memory: Option<f64>,
    },
    /// A model's parameters (kind, allowed values, default, doc, which
    /// policies read it), output columns, tables, outcomes and ranking.
    Describe {
        /// The model [default: every model].
        model: Option<String>,
        /// Print the reference as Markdown (docs/reference/models.md).
        #[arg(long)]
        markdown: bool,
    },
    /// Check a manifest and show its runs, axes, arms, warnings and estimates.
    Plan {
        /// The experiment manifest (TOML), e.g. experiments/default.toml.
        manifest: PathBuf,
        /// Refuse grids with more runs than this.
        #[arg(long, default_value_t = DEFAULT_MAX_RUNS)]
        max_runs: u64,
        /// Refuse work that would hold more than this many GB in memory at
        /// once [default: half the machine's memory].
        #[arg(long, value_name = "GB", value_parser = plan::parse_gigabytes)]
        max_memory: Option<f64>,
        /// Start each external arm's policy once, check its handshake, and
        /// time one of its runs (answers go to a scratch folder).
        #[arg(long)]
        probe_policy: bool,
    },
    /// A manifest's [design] points as CSV (each point's parameter values,
    /// or with --unit its place in the unit cube).
    Design(design::DesignArgs),
    /// Run every run of a manifest into a results folder (resumes if interrupted).
    // `--shard -1/2` reaches witness's own check of K/N, which says what is
    // allowed, instead of clap's "unexpected argument '-1'".
    #[command(mut_arg("shard", |a| a.allow_hyphen_values(true)))]
    Run(RunArgs),
    /// Check a results folder: manifest hash, run keys, identities re-derived
    /// from stored detail tables, and a replay of a sample of runs (or all).
    Verify {
        /// A results folder written by `witness run` (or `merge`).
        dir: PathBuf,
        /// How many runs to re-run, spread evenly over the grid.
        #[arg(long, default_value_t = 32, conflicts_with = "all")]
        replay: u64,
        /// Re-run every run.
        #[arg(long)]
        all: bool,
    },
    /// Arm verdicts against a baseline arm, per scenario, with paired effects.
    Compare(compare::CompareArgs),
    /// Mean, standard deviation and 95 % interval of metrics per cell over seeds.
    Summary(summary::SummaryArgs),
    /// Which factors of a sampled [design] drive a metric: Sobol' indices
    /// (S1, ST, S2) or Morris's mu, mu*, sigma, with bootstrap intervals,
    /// per scenario and arm; writes DIR/sensitivity.csv and .json.
    Sensitivity(sensitivity::SensitivityArgs),
    /// Runs ordered by the model's ranking key, best first (ties in grid
    /// order); writes DIR/rank.csv.
    Rank {
        /// A results folder.
        dir: PathBuf,
        /// How many runs to print (rank.csv holds all).
        #[arg(long, default_value_t = 12)]
        top: usize,
        /// Keep the manifest's run order instead of sorting (the rank
        /// column still gives each run's place).
        #[arg(long)]
        grid_order: bool,
        /// Only these runs, e.g. "noise=90,arm=hive+".
        #[arg(long = "where", value_name = "KEY=VALUE,...")]
        filter: Option<String>,
    },
    /// What a [search] race decided: survivors, the rung and test that
    /// removed each other candidate, runs spent against the full grid;
    /// writes DIR/search.csv and .json.
    Search {
        /// The results folder of a manifest with [search].
        dir: PathBuf,
        /// How many candidates to print (search.csv holds all).
        #[arg(long, default_value_t = 12)]
        top: usize,
    },
    /// One self-contained HTML page of a results folder (provenance, design,
    /// headline metrics, verdicts, trajectories, heatmap, ranking, runs),
    /// opened by double-click with no network: DIR/report.html.
    Report(report::ReportArgs),
    /// Charts as SVG and PNG in DIR/plots: trajectories per scenario and a
    /// heatmap of a summary metric over two grid axes.
    Plot(plot::PlotArgs),
    /// trust-v1: score evidence tables, or compare contextual ratings.
    #[command(subcommand)]
    Trust(trust::TrustCommand),
    /// Assemble the final tables from the parts written by every shard.
    Merge {
        /// The shared results folder the shards wrote their parts into.
        dir: PathBuf,
        #[arg(long, short)]
        quiet: bool,
    },
    /// Which shards of a sharded run are complete, partial or missing, and
    /// the commands that finish them; exit 0 when every chunk is in.
    Shards {
        /// The shared results folder the shards write into.
        dir: PathBuf,
        /// The shard count N (default: the one the finished shards recorded).
        #[arg(long)]
        count: Option<u64>,
        /// Print the state and the commands as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Generated files: the reference pages of docs/reference, man pages,
    /// shell completions. For packagers and the docs check.
    #[command(hide = true)]
    Generate(generate::GenerateArgs),
}

/// Runs a verb; the exit code on success (1 when a check failed).
pub fn run(cli: Cli, registry: &Registry) -> Result<u8> {
    let code = match cli.command {
        Command::Simulate(a) => simulate::simulate(&a, registry),
        Command::Replay { export, max_memory } => simulate::replay(&export, max_memory, registry),
        Command::Describe { model, markdown } => {
            describe::describe(model.as_deref(), markdown, registry)
        }
        Command::Plan {
            manifest,
            max_runs,
            max_memory,
            probe_policy,
        } => plan::plan(&manifest, max_runs, max_memory, probe_policy, registry),
        Command::Run(args) => run::run(&args, registry),
        Command::Design(a) => design::design(&a, registry),
        Command::Merge { dir, quiet } => merge::merge(&dir, quiet, registry),
        Command::Shards { dir, count, json } => shards::shards(&dir, count, json, registry),
        Command::Verify { dir, replay, all } => verify::verify(&dir, replay, all, registry),
        Command::Compare(a) => compare::compare(&a, registry),
        Command::Summary(a) => summary::summary(&a, registry),
        Command::Sensitivity(a) => sensitivity::sensitivity(&a, registry),
        Command::Rank {
            dir,
            top,
            grid_order,
            filter,
        } => rank::rank(&dir, top, grid_order, filter.as_deref(), registry),
        Command::Search { dir, top } => search::search(&dir, top, registry),
        Command::Report(a) => report::report(&a, registry),
        Command::Plot(a) => plot::plot(&a, registry),
        Command::Trust(t) => trust::run(t),
        Command::Generate(a) => generate::generate(&a, registry),
    }?;
    out::flush()?;
    Ok(code)
}

/// Reads and validates a manifest file.
pub fn load(path: &Path, registry: &Registry) -> Result<Manifest> {
    if path.is_dir() {
        let inside = path.join("manifest.toml");
        return Err(Error::Usage(if inside.is_file() {
            format!(
                "{}: a results folder, not a manifest; give the manifest it was run from, or its copy {}",
                path.display(),
                inside.display()
            )
        } else {
            format!(
                "{}: a folder, not a manifest; give a TOML file such as experiments/default.toml",
                path.display()
            )
        }));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Usage(format!("{}: cannot read the manifest: {e}", path.display())))?;
    Ok(Manifest::parse(
        &path.display().to_string(),
        &text,
        registry,
    )?)
}

/// Prints the problems a check found, at most 20 of them.
fn print_problems(problems: &[String]) -> Result<()> {
    for p in problems.iter().take(20) {
        outln!("  {p}")?;
    }
    if problems.len() > 20 {
        outln!("  ... and {} more", problems.len() - 20)?;
    }
    Ok(())
}
