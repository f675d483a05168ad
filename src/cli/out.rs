//! Standard output for the verbs. `println!` panics when stdout cannot be
//! written (`witness describe > /dev/full`, a full disk); these macros
//! return the failure as bad input instead, so every verb exits 2 with a
//! message rather than 101 with a backtrace hint.

use std::fmt;
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes `args` to standard output.
pub(crate) fn text(args: fmt::Arguments) -> Result<()> {
    std::io::stdout().lock().write_fmt(args).map_err(failed)
}

/// Writes `args` and a newline to standard output.
pub(crate) fn line(args: fmt::Arguments) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(failed)
}

/// Flushes standard output; its buffer is otherwise flushed at exit, where
/// a failure would be lost.
pub(crate) fn flush() -> Result<()> {
    std::io::stdout().lock().flush().map_err(failed)
}

fn failed(e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return Error::StdoutClosed;
    }
    Error::io(Path::new("standard output"), e)
}

/// `print!` that returns `Result<()>` instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::text(format_args!($($arg)*))
    };
}

/// `println!` that returns `Result<()>` instead of panicking.
macro_rules! outln {
    () => {
        $crate::cli::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::line(format_args!($($arg)*))
    };
}
