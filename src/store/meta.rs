//! The key-value metadata of every results file, as one typed struct
//! written and read in one place. Keys are fixed and written in a fixed
//! order, so the bytes of a file depend on its content alone.

use super::parquet::Metadata;

pub(crate) const MODEL: &str = "witness.model";
pub(crate) const ENGINE: &str = "witness.engine_version";
pub(crate) const CRATE: &str = "witness.crate_version";
pub(crate) const MANIFEST: &str = "witness.manifest";
pub(crate) const HASH: &str = "witness.manifest_sha256";
pub(crate) const RUNS: &str = "witness.runs_total";
pub(crate) const TABLE: &str = "witness.table";
pub(crate) const CHUNK: &str = "witness.chunk";
pub(crate) const SHARD: &str = "witness.shard";
pub(crate) const DIGEST: &str = "witness.digest";
pub(crate) const ROWS: &str = "witness.rows";

/// Metadata that is missing a key or holds a malformed value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MetaError(String);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMeta {
    pub model: String,
    pub engine_version: String,
    pub crate_version: String,
    /// The manifest text the file was written for.
    pub manifest: String,
    pub manifest_sha256: String,
    pub runs_total: u64,
    pub table: String,
    /// For a part: the chunk it holds and the shard (index, count) that wrote it.
    pub chunk: Option<u64>,
    pub shard: Option<(u64, u64)>,
    /// For a part: the content digest of its rows, and how many there are.
    pub digest: Option<String>,
    pub rows: Option<u64>,
}

impl FileMeta {
    pub fn to_kv(&self) -> Metadata {
        let mut kv = vec![
            (MODEL.to_string(), self.model.clone()),
            (ENGINE.to_string(), self.engine_version.clone()),
            (CRATE.to_string(), self.crate_version.clone()),
            (MANIFEST.to_string(), self.manifest.clone()),
            (HASH.to_string(), self.manifest_sha256.clone()),
            (RUNS.to_string(), self.runs_total.to_string()),
            (TABLE.to_string(), self.table.clone()),
        ];
        if let Some(c) = self.chunk {
            kv.push((CHUNK.to_string(), c.to_string()));
        }
        if let Some((k, n)) = self.shard {
            kv.push((SHARD.to_string(), format!("{k}/{n}")));
        }
        if let Some(d) = &self.digest {
            kv.push((DIGEST.to_string(), d.clone()));
        }
        if let Some(r) = self.rows {
            kv.push((ROWS.to_string(), r.to_string()));
        }
        kv
    }

    /// The metadata of a results file, or what is missing or malformed.
    pub fn from_kv(kv: &Metadata) -> Result<FileMeta, MetaError> {
        let get = |k: &str| kv.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        let need = |k: &str| {
            get(k)
                .map(str::to_string)
                .ok_or(MetaError(format!("no `{k}` in its metadata")))
        };
        let number = |k: &str, v: &str| {
            v.parse::<u64>()
                .map_err(|_| MetaError(format!("metadata `{k}` = {v:?} is not a whole number")))
        };
        let shard = match get(SHARD) {
            None => None,
            Some(v) => {
                let (k, n) = v
                    .split_once('/')
                    .ok_or(MetaError(format!("metadata `{SHARD}` = {v:?} is not K/N")))?;
                Some((number(SHARD, k)?, number(SHARD, n)?))
            }
        };
        Ok(FileMeta {
            model: need(MODEL)?,
            engine_version: need(ENGINE)?,
            crate_version: need(CRATE)?,
            manifest: need(MANIFEST)?,
            manifest_sha256: need(HASH)?,
            runs_total: number(RUNS, &need(RUNS)?)?,
            table: need(TABLE)?,
            chunk: get(CHUNK).map(|v| number(CHUNK, v)).transpose()?,
            shard,
            digest: get(DIGEST).map(str::to_string),
            rows: get(ROWS).map(|v| number(ROWS, v)).transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_and_missing_keys_are_named() {
        let m = FileMeta {
            model: "witness".into(),
            engine_version: "witness-engine/1".into(),
            crate_version: "0.1.0".into(),
            manifest: "[experiment]".into(),
            manifest_sha256: "ab".into(),
            runs_total: 12,
            table: "runs".into(),
            chunk: Some(3),
            shard: Some((1, 4)),
            digest: Some("0123456789abcdef".into()),
            rows: Some(7),
        };
        assert_eq!(FileMeta::from_kv(&m.to_kv()), Ok(m.clone()));
        let mut kv = m.to_kv();
        kv.retain(|(k, _)| k != HASH);
        assert!(FileMeta::from_kv(&kv)
            .unwrap_err()
            .to_string()
            .contains(HASH));
    }
}
