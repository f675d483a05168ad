//! The `witness` binary: parse the command line, run the verb, map the
//! outcome to an exit code (0 ok, 1 a check failed, 2 bad input).

use std::process::ExitCode;

use clap::Parser;
use witness::cli::{self, Cli};
use witness::model::Registry;

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`witness summary DIR | head`), as Unix
    // tools do, instead of panicking in println!.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = Cli::parse();
    match cli::run(args, &Registry::builtin()) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err}");
            if let Some(hint) = err.hint() {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(err.exit_code())
        }
    }
}
