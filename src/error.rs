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
            _ => EXIT_BAD_INPUT,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
