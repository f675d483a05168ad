//! `witness describe`: a model's reference from its own declarations.

use crate::error::{Error, Result};
use crate::model::{reference, Registry};

pub fn describe(model: Option<&str>, markdown: bool, registry: &Registry) -> Result<u8> {
    let models = match model {
        None => registry.all().to_vec(),
        Some(name) => vec![registry.find(name).ok_or_else(|| {
            Error::Usage(format!(
                "{name}: unknown model; allowed: one of {}",
                registry.names().join(", ")
            ))
        })?],
    };
    let text = if model.is_none() {
        reference::markdown_all(&models)
    } else {
        reference::markdown(models[0])
    };
    if markdown {
        out!("{text}")?;
    } else {
        out!("{}", reference::plain(&text))?;
    }
    Ok(0)
}
