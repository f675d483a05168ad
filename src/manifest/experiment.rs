//! The `[experiment]` table: the study's name (its results folder), its
//! model and its chunk size. Every key a manifest cannot do without is
//! here, so a missing one is named with an example to copy rather than
//! left to serde's "missing field".

use toml::Spanned;

use super::raw::RawExperiment;
use super::{Ctx, ManifestError};
use crate::model::{DynModel, Registry};

/// The longest experiment name: it names the results folder, and most
/// file systems allow 255 bytes in one name (the name is ASCII).
const MAX_NAME: usize = 255;

/// Runs per chunk when the manifest does not say.
pub const DEFAULT_CHUNK_RUNS: usize = 32;

/// `[experiment]`, validated.
pub(super) struct Header {
    pub name: String,
    pub model: &'static dyn DynModel,
    pub description: String,
    pub chunk_runs: usize,
}

pub(super) fn header(
    cx: &Ctx,
    raw: Option<&Spanned<RawExperiment>>,
    registry: &Registry,
) -> Result<Header, ManifestError> {
    let models = registry.names().join(", ");
    let Some(table) = raw else {
        return Err(cx.err(
            0..0,
            format!(
                "[experiment]: missing; every manifest starts with it, e.g. \
                 [experiment] name = \"my-study\" model = \"witness\" (models: {models})"
            ),
        ));
    };
    let exp = table.get_ref();
    let required = |key: &str, example: &str| {
        cx.err(
            table.span(),
            format!("[experiment] {key}: missing; add {key} = {example}"),
        )
    };
    let name = exp.name.as_ref().ok_or_else(|| {
        required(
            "name",
            "\"my-study\" (it names the results folder, results/<name>)",
        )
    })?;
    let model = exp.model.as_ref().ok_or_else(|| {
        required(
            "model",
            &format!("\"witness\" (one of {models}; see `witness describe`)"),
        )
    })?;
    let folder = name.get_ref().trim();
    let usable = !folder.is_empty()
        && folder
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && !folder.starts_with('.');
    if !usable {
        return Err(cx.err(
            name.span(),
            format!(
                "[experiment] name = {:?}: not usable as a folder name; allowed: letters, digits, '-', '_', '.'",
                name.get_ref()
            ),
        ));
    }
    if folder.len() > MAX_NAME {
        return Err(cx.err(
            name.span(),
            format!(
                "[experiment] name = {:?}: {} characters, too long for a folder name (results/<name>); allowed: at most {MAX_NAME}",
                name.get_ref(),
                folder.len()
            ),
        ));
    }
    let found = registry.find(model.get_ref()).ok_or_else(|| {
        cx.err(
            model.span(),
            format!(
                "[experiment] model = {:?}: unknown model; allowed: one of {models}",
                model.get_ref(),
            ),
        )
    })?;
    let chunk_runs = match &exp.chunk_runs {
        None => DEFAULT_CHUNK_RUNS,
        Some(c) if (1..=1_000_000).contains(c.get_ref()) => *c.get_ref() as usize,
        Some(c) => {
            return Err(cx.err(
                c.span(),
                format!(
                    "[experiment] chunk_runs = {}: out of range; allowed: 1 ..= 1000000",
                    c.get_ref()
                ),
            ))
        }
    };
    Ok(Header {
        name: folder.to_string(),
        model: found,
        description: exp.description.clone(),
        chunk_runs,
    })
}
