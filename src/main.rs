//! The `witness` binary: parse the command line, run the verb, map the
//! outcome to an exit code (0 ok, 1 a check failed, 2 bad input, 128 + N
//! stopped by signal N).

use std::process::ExitCode;

use clap::Parser;
use witness::cli::{self, Cli};
use witness::model::Registry;

fn main() -> ExitCode {
    // SIGPIPE stays ignored (Rust's default): a closed pipe is an error
    // where it happens. Writing to a policy that died is a failed batch;
    // a reader that closed standard output (`witness summary DIR | head`)
    // ends the command quietly with 0, as it does for other Unix tools.
    let args = Cli::parse();
    match cli::run(args, &Registry::builtin()) {
        Ok(code) => ExitCode::from(code),
        Err(witness::Error::StdoutClosed) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            if let Some(hint) = err.hint() {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(err.exit_code())
        }
    }
}
