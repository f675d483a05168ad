//! The command line: verb definitions (clap derive) and dispatch. Verbs are
//! thin: they read files, call the pure core, print and write results.

mod analyze;
mod estimate;
pub mod experiment;
mod plot;
mod rank;
mod set;
mod simulate;
mod trust;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

const AFTER_HELP: &str = "Examples:
  witness run experiments/default.toml      run a grid into results/default/
  witness plan experiments/sweep-540.toml   check a manifest, see its size and cost
  witness verify results/default            re-check stored results
  witness simulate --set policy=source_aware --export run.json

Exit codes: 0 ok, 1 a check failed, 2 bad input.";

/// A check ran and failed (identities, replay, verify).
pub const EXIT_FAILED: u8 = 1;
/// The input was wrong: arguments, parameters, manifest.
pub const EXIT_BAD_INPUT: u8 = 2;

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
    /// Check a manifest and show its runs, axes, arms, warnings and estimates.
    Plan {
        /// The experiment manifest (TOML), e.g. experiments/default.toml.
        manifest: PathBuf,
        /// Refuse grids with more runs than this.
        #[arg(long, default_value_t = experiment::DEFAULT_MAX_RUNS)]
        max_runs: u64,
    },
    /// Run every run of a manifest into a results folder (resumes if interrupted).
    Run(experiment::RunArgs),
    /// Check a results folder: manifest hash, run keys, identities re-derived
    /// from stored trajectories, and a replay of a sample of runs (or all).
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
    Compare {
        /// A results folder whose manifest marks the baseline `placebo = true`.
        dir: PathBuf,
        /// The baseline arm (its placebo arm must have run).
        #[arg(long)]
        baseline: String,
        /// A summary metric in [0, 1]: the answer compared, and the effect size.
        #[arg(long, default_value = "peak_mistaken")]
        metric: String,
        /// A categorical outcome instead (e.g. cleared, terminal_majority):
        /// any difference is a flip and the noise band does not gate.
        #[arg(long)]
        outcome: Option<String>,
        /// A metric similarity 1 - |x - y| below this is a flip.
        #[arg(long, default_value_t = 0.8)]
        flip_below: f64,
    },
    /// Mean, standard deviation and 95 % interval of metrics per cell over seeds.
    Summary {
        /// A results folder.
        dir: PathBuf,
        /// Comma-separated grouping: `arm` and/or parameter names
        /// [default: arm and every common grid axis but seed and replicate].
        #[arg(long)]
        by: Option<String>,
        /// Comma-separated summary columns [default: the model's headline metrics].
        #[arg(long)]
        metrics: Option<String>,
    },
    /// Runs ordered by the model's ranking key, best first (the hive
    /// benchmark: correct, then decided, then fewer turns; ties in grid
    /// order); writes DIR/rank.csv.
    Rank {
        /// A results folder.
        dir: PathBuf,
        /// How many runs to print (rank.csv holds all).
        #[arg(long, default_value_t = 12)]
        top: usize,
        /// Keep the manifest's run order instead of sorting.
        #[arg(long)]
        grid_order: bool,
    },
    /// Charts as SVG and PNG in DIR/plots: trajectories per scenario and a
    /// heatmap of a summary metric over two grid axes.
    Plot {
        /// A results folder.
        dir: PathBuf,
        /// Draw only this scenario, e.g. "truth=false, graph=hub".
        #[arg(long)]
        scenario: Option<String>,
        /// The summary metric of the heatmap.
        #[arg(long, default_value = "peak_mistaken")]
        metric: String,
        /// Heatmap x axis [default: the first grid axis with several values].
        #[arg(long)]
        x: Option<String>,
        /// Heatmap y axis [default: the second such axis].
        #[arg(long)]
        y: Option<String>,
    },
    /// trust-v1: score evidence tables, or compare contextual ratings.
    #[command(subcommand)]
    Trust(TrustCommand),
    /// Assemble the final tables from the parts written by every shard.
    Merge {
        /// The shared results folder the shards wrote their parts into.
        dir: PathBuf,
        #[arg(long, short)]
        quiet: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum TrustCommand {
    /// Score every revision, item and claim; write scores, ratings,
    /// reputation and ranking (Parquet, and CSV with --csv) into --out.
    Score {
        #[command(flatten)]
        inputs: trust::Inputs,
        /// The output folder.
        #[arg(long)]
        out: PathBuf,
        /// Also write each table as CSV.
        #[arg(long)]
        csv: bool,
    },
    /// A target's ratings of one dimension in the contexts holding every
    /// facet asked for (all contexts, said so, when none does), with its
    /// usage failures next to the score.
    Compare {
        #[command(flatten)]
        inputs: trust::Inputs,
        /// The rated target.
        #[arg(long)]
        target: String,
        /// The rated dimension.
        #[arg(long)]
        dimension: String,
        /// Facets key=value joined by `;`, e.g. "lang=rust;os=linux".
        #[arg(long, default_value = "")]
        context: String,
    },
}

pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Simulate { set, export } => simulate::simulate(&set, export.as_deref()),
        Command::Replay { export } => simulate::replay(&export),
        Command::Plan { manifest, max_runs } => experiment::plan(&manifest, max_runs),
        Command::Run(args) => experiment::run(&args),
        Command::Merge { dir, quiet } => experiment::merge(&dir, quiet),
        Command::Compare {
            dir,
            baseline,
            metric,
            outcome,
            flip_below,
        } => analyze::compare(
            &dir,
            &analyze::CompareArgs {
                baseline: &baseline,
                metric: &metric,
                outcome: outcome.as_deref(),
                flip_below,
            },
        ),
        Command::Plot {
            dir,
            scenario,
            metric,
            x,
            y,
        } => plot::plot(
            &dir,
            &plot::PlotArgs {
                scenario: scenario.as_deref(),
                metric: &metric,
                x: x.as_deref(),
                y: y.as_deref(),
            },
        ),
        Command::Summary { dir, by, metrics } => {
            analyze::summary(&dir, by.as_deref(), metrics.as_deref())
        }
        Command::Rank {
            dir,
            top,
            grid_order,
        } => rank::rank(&dir, top, grid_order),
        Command::Trust(TrustCommand::Score { inputs, out, csv }) => {
            trust::score(&inputs, &out, csv)
        }
        Command::Trust(TrustCommand::Compare {
            inputs,
            target,
            dimension,
            context,
        }) => trust::compare(&inputs, &target, &dimension, &context),
        Command::Verify { dir, replay, all } => experiment::verify(&dir, replay, all),
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
