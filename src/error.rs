//! One error type for every command, which knows its exit code: 0 ok, 1 a
//! check failed (an identity broke, stored results do not verify, parts are
//! missing), 2 bad input (arguments, parameters, manifests, files and
//! folders that cannot be used). Each layer keeps its own error type with
//! its own messages; this only gathers them.

use std::path::Path;

/// A check ran and failed.
pub const EXIT_FAILED: u8 = 1;
/// The input was wrong: arguments, parameters, manifest, files, folders.
pub const EXIT_BAD_INPUT: u8 = 2;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    #[error(transparent)]
    Plan(#[from] crate::grid::PlanError),
    #[error(transparent)]
    Param(#[from] crate::params::ParamError),
    #[error(transparent)]
    Run(#[from] crate::runner::RunError),
    #[error(transparent)]
    Results(#[from] crate::results::ResultsError),
    #[error(transparent)]
    Shard(#[from] crate::runner::shard::ShardError),
    #[error(transparent)]
    Design(#[from] crate::analysis::design::DesignError),
    #[error(transparent)]
    Filter(#[from] crate::analysis::design::FilterError),
    #[error(transparent)]
    Compare(#[from] crate::analysis::compare::CompareError),
    #[error(transparent)]
    Summary(#[from] crate::analysis::summary::SummaryError),
    #[error(transparent)]
    Axis(#[from] crate::analysis::heatmap::AxisError),
    #[error(transparent)]
    Curve(#[from] crate::analysis::curves::CurveError),
    #[error(transparent)]
    TrustInput(#[from] crate::trust::input::InputError),
    /// A stored value that does not fit the model's record.
    #[error("{path}: {source}")]
    Record {
        path: String,
        source: crate::model::RecordError,
    },
    /// An argument, or a combination of them, that cannot be used.
    #[error("{0}")]
    Usage(String),
    /// The reader of standard output went away (`witness summary | head`):
    /// the command ends quietly and successfully, as Unix tools do.
    #[error("standard output was closed by its reader")]
    StdoutClosed,
    /// A file or folder the user named that cannot be read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A table that could not be written.
    #[error("{path}: {source}")]
    Store {
        path: String,
        source: crate::store::StoreError,
    },
}

impl Error {
    pub fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.display().to_string(),
            source,
        }
    }

    pub fn store(path: &Path, source: crate::store::StoreError) -> Error {
        Error::Store {
            path: path.display().to_string(),
            source,
        }
    }

    pub fn exit_code(&self) -> u8 {
        use crate::results::ResultsError as R;
        match self {
            Error::Run(e) | Error::Results(R::Run(e)) => e.exit_code(),
            Error::Results(R::Inconsistent { .. } | R::Store { .. })
            | Error::Curve(_)
            | Error::Record { .. } => EXIT_FAILED,
            Error::StdoutClosed => 0,
            _ => EXIT_BAD_INPUT,
        }
    }
}

/// What to do about an error the operating system raised: the message
/// names the path and the system's reason, and this adds the fix. Found by
/// walking the error's sources, so it holds for an I/O error under any
/// layer's wrapper.
impl Error {
    pub fn hint(&self) -> Option<&'static str> {
        let mut at: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(e) = at {
            let io = match e.downcast_ref::<crate::store::StoreError>() {
                // A transparent wrapper hands on its inner error's source,
                // not the inner error itself: look inside it here.
                Some(crate::store::StoreError::Io(io)) => Some(io),
                _ => e.downcast_ref::<std::io::Error>(),
            };
            if let Some(hint) = io.and_then(|io| io_hint(io.kind())) {
                return Some(hint);
            }
            at = e.source();
        }
        None
    }
}

fn io_hint(kind: std::io::ErrorKind) -> Option<&'static str> {
    use std::io::ErrorKind as K;
    Some(match kind {
        K::PermissionDenied => {
            "the system refused access: check the permissions of that path, or give another one"
        }
        K::ReadOnlyFilesystem => {
            "that path is on a read-only file system: give one on a writable disk \
             (results go where --out says)"
        }
        K::StorageFull | K::QuotaExceeded => {
            "the disk is full: free some space and run the same command again \
             (a run resumes from the chunks it finished)"
        }
        K::NotADirectory => "a parent of that path is a file, not a folder: give another path",
        K::InvalidFilename => {
            "the file system does not allow a name in that path (too long, or a character it \
             refuses): give a shorter or plainer one"
        }
        _ => return None,
    })
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error as Io, ErrorKind};

    #[test]
    fn an_io_error_under_any_wrapper_gets_its_fix() {
        let at = Path::new("out/runs.parquet");
        let direct = Error::io(at, Io::from(ErrorKind::PermissionDenied));
        assert!(direct.hint().unwrap().contains("permissions"));
        let store = crate::store::StoreError::Io(Io::from(ErrorKind::StorageFull));
        let nested = Error::Run(crate::runner::RunError::write(at, store));
        assert!(nested.hint().unwrap().contains("resumes"));
        let run = Error::Run(crate::runner::RunError::io(
            at,
            Io::from(ErrorKind::ReadOnlyFilesystem),
        ));
        assert!(run.hint().unwrap().contains("read-only"));
    }

    #[test]
    fn errors_without_a_known_fix_get_no_hint() {
        let at = Path::new("x");
        assert_eq!(Error::io(at, Io::from(ErrorKind::Interrupted)).hint(), None);
        assert_eq!(Error::Usage("bad".into()).hint(), None);
    }
}
