//! Where an experiment's files live, and the rules for reusing a folder:
//! the same manifest resumes, another manifest is refused unless forced.

use std::fs;
use std::path::{Path, PathBuf};

use super::RunError;
use crate::grid::Plan;
use crate::manifest::{sha256_hex, Manifest};
use crate::model::Registry;

pub struct Layout {
    pub dir: PathBuf,
}

impl Layout {
    pub fn new(dir: &Path) -> Layout {
        Layout {
            dir: dir.to_path_buf(),
        }
    }

    pub fn manifest(&self) -> PathBuf {
        self.dir.join("manifest.toml")
    }

    /// The manifest a results folder was written from.
    pub fn read_manifest(&self, registry: &Registry) -> Result<Manifest, RunError> {
        let path = self.manifest();
        if !path.is_file() {
            return Err(RunError::NotResults {
                dir: self.dir.display().to_string(),
            });
        }
        let text = fs::read_to_string(&path).map_err(|e| RunError::io(&path, e))?;
        Ok(Manifest::parse(
            &path.display().to_string(),
            &text,
            registry,
        )?)
    }

    /// The plan of the manifest a results folder was written from.
    pub fn read_plan(&self, registry: &Registry) -> Result<Plan, RunError> {
        Ok(Plan::new(self.read_manifest(registry)?)?)
    }

    pub fn table(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.parquet"))
    }

    pub fn parts(&self) -> PathBuf {
        self.dir.join("parts")
    }

    pub fn part(&self, table: &str, chunk: u64) -> PathBuf {
        self.parts()
            .join(table)
            .join(format!("chunk-{chunk:08}.parquet"))
    }

    pub fn timing(&self, shard: Option<(u64, u64)>) -> PathBuf {
        match shard {
            None => self.dir.join("timing.json"),
            Some((k, n)) => self.dir.join(format!("timing-shard-{k}-of-{n}.json")),
        }
    }

    /// Makes the folder ready for `text`'s results: resume when it already
    /// holds them, refuse another manifest's results unless `force`.
    pub fn prepare(&self, text: &str, tables: &[&str], force: bool) -> Result<(), RunError> {
        let io = |e: std::io::Error| RunError::io(&self.dir, e);
        fs::create_dir_all(&self.dir).map_err(io)?;
        if let Ok(existing) = fs::read_to_string(self.manifest()) {
            if existing == text {
                return Ok(());
            }
            if !force {
                return Err(RunError::OtherManifest {
                    dir: self.dir.display().to_string(),
                    theirs: sha256_hex(existing.as_bytes())[..12].to_string(),
                    ours: sha256_hex(text.as_bytes())[..12].to_string(),
                });
            }
            self.clear(tables)?;
        }
        crate::store::atomic::write(&self.manifest(), text.as_bytes()).map_err(io)
    }

    /// Removes this project's files only; anything else in the folder stays.
    fn clear(&self, tables: &[&str]) -> Result<(), RunError> {
        let io = |e: std::io::Error| RunError::io(&self.dir, e);
        if self.parts().exists() {
            fs::remove_dir_all(self.parts()).map_err(io)?;
        }
        for t in tables {
            let _ = fs::remove_file(self.table(t));
        }
        for entry in fs::read_dir(&self.dir).map_err(io)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("timing") && name.ends_with(".json") {
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(())
    }
}
