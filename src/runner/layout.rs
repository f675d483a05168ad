//! Where an experiment's files live, and the rules for reusing a folder:
//! the same manifest resumes; another manifest is refused unless forced,
//! and a forced run works in a staging folder that replaces the old
//! results only once it is complete.

use std::fs;
use std::path::{Path, PathBuf};

use super::RunError;
use crate::grid::Plan;
use crate::manifest::{sha256_hex, Manifest};
use crate::model::Registry;
use crate::store::{atomic, seal};

/// Files the analysis verbs write beside the results; a replaced result
/// set takes them along, since they describe the old results.
const ANALYSIS_FILES: &[&str] = &[
    "compare.csv",
    "compare.json",
    "summary.csv",
    "rank.csv",
    "sensitivity.csv",
    "sensitivity.json",
    "search.csv",
    "search.json",
    "report.html",
];
const ANALYSIS_DIRS: &[&str] = &["plots"];
/// The record logs of external arms and their processes' stderr: part of
/// the results, replaced with them.
const POLICY_DIRS: &[&str] = &["policy-log", "policy-logs"];

#[derive(Clone, Debug)]
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
        Manifest::parse(&path.display().to_string(), &text, registry).map_err(|e| {
            match self.lost_copy() {
                Some(copy) => RunError::Incomplete {
                    dir: self.dir.display().to_string(),
                    message: lost_copy_problem(&copy),
                },
                None => e.into(),
            }
        })
    }

    /// The copy of a `[design] file` the folder should keep and does not.
    pub fn lost_copy(&self) -> Option<PathBuf> {
        let text = fs::read_to_string(self.manifest()).ok()?;
        let raw: toml::Table = text.parse().ok()?;
        let file = raw.get("design")?.get("file")?.as_str()?;
        let copy = self.dir.join(file);
        (!copy.exists()).then_some(copy)
    }

    /// Whether the folder's seal is for the manifest (text and read files)
    /// that hashes to `hash`.
    fn sealed_for(&self, hash: &str) -> bool {
        matches!(seal::Seal::read(&self.dir), Ok(Some(s)) if s.manifest_sha256 == hash)
    }

    /// The plan of the manifest a results folder was written from; a
    /// raced plan holds the rungs the folder's runs decide.
    pub fn read_plan(&self, registry: &Registry) -> Result<Plan, RunError> {
        let mut plan = Plan::new(self.read_manifest(registry)?)?;
        super::race::grow(&mut plan, self)?;
        Ok(plan)
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

    pub fn seal(&self) -> PathBuf {
        self.dir.join(seal::FILE)
    }

    /// Whether the folder holds results witness wrote (sealed, or parts
    /// of a run under way): a file another verb writes into it could
    /// replace one of them.
    pub fn holds_results(&self) -> bool {
        self.manifest().is_file() && (self.seal().is_file() || self.parts().is_dir())
    }

    pub fn timing(&self, shard: Option<(u64, u64)>) -> PathBuf {
        match shard {
            None => self.dir.join("timing.json"),
            Some((k, n)) => self.dir.join(format!("timing-shard-{k}-of-{n}.json")),
        }
    }

    /// The staging folder a forced run of `hash` works in.
    fn staging(&self, hash: &str) -> Layout {
        Layout::new(&self.dir.join(format!(".staging-{}", &hash[..12])))
    }

    /// Whether the folder holds `m`'s text and a copy of every file it
    /// reads, and nothing a run would tidy (parts, a staging folder,
    /// temporaries): what a finished run of `m` leaves. Reads only, so a
    /// run can tell a complete folder before it writes or locks anything.
    pub fn settled_for(&self, m: &Manifest) -> bool {
        let tidy = |d: &Path| {
            fs::read_dir(d).is_ok_and(|entries| {
                entries.flatten().all(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    !atomic::is_temporary(&name) && !name.starts_with(".staging-")
                })
            })
        };
        let logs = self.dir.join("policy-log");
        fs::read_to_string(self.manifest()).ok().as_deref() == Some(m.text.as_str())
            && self.changed_source(m).is_none()
            && !self.parts().exists()
            && tidy(&self.dir)
            && fs::read_dir(&logs).map_or(true, |sub| {
                sub.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .all(|p| tidy(&p))
            })
    }

    /// The first file `m` reads whose copy here is missing or differs.
    fn changed_source<'m>(&self, m: &'m Manifest) -> Option<&'m crate::manifest::Source> {
        m.sources.iter().find(|s| !self.has_copy(s))
    }

    /// Whether the folder holds `s` as the manifest read it.
    fn has_copy(&self, s: &crate::manifest::Source) -> bool {
        fs::read(self.dir.join(&s.name)).ok().as_deref() == Some(&s.bytes[..])
    }

    /// Writes the files the manifest reads beside `manifest.toml`, so the
    /// folder can be re-read on its own.
    fn write_sources(&self, m: &Manifest) -> Result<(), RunError> {
        for s in &m.sources {
            if self.has_copy(s) {
                continue;
            }
            let path = self.dir.join(&s.name);
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(|e| RunError::io(parent, e))?;
            }
            atomic::write(&path, &s.bytes).map_err(|e| RunError::io(&path, e))?;
        }
        Ok(())
    }

    /// Makes the folder ready for `m`'s results and returns where the run
    /// works: the folder itself when it is new or holds these results, or a
    /// staging folder when `force` replaces another manifest's results.
    pub fn prepare(&self, m: &Manifest, force: bool, sharded: bool) -> Result<Layout, RunError> {
        let text = m.text.as_str();
        if self.dir.exists() && !self.dir.is_dir() {
            return Err(RunError::NotAFolder {
                path: self.dir.display().to_string(),
            });
        }
        fs::create_dir_all(&self.dir).map_err(|e| RunError::io(&self.dir, e))?;
        let hash = m.hash.clone();
        let work = match fs::read_to_string(self.manifest()) {
            Ok(existing) if existing == text => match self.changed_source(m) {
                None => self.clone(),
                // Sealed for this very manifest and its files: the folder's
                // copy was lost or edited, not the results; it is put back.
                Some(_) if self.sealed_for(&hash) => self.clone(),
                Some(changed) if !force => {
                    return Err(RunError::OtherSource {
                        dir: self.dir.display().to_string(),
                        file: changed.name.clone(),
                    })
                }
                Some(_) if sharded => {
                    return Err(RunError::ForceSharded {
                        dir: self.dir.display().to_string(),
                    })
                }
                Some(_) => self.staging(&hash),
            },
            Ok(existing) if !force => {
                return Err(RunError::OtherManifest {
                    dir: self.dir.display().to_string(),
                    theirs: sha256_hex(existing.as_bytes())[..12].to_string(),
                    ours: hash[..12].to_string(),
                })
            }
            Ok(_) if sharded => {
                return Err(RunError::ForceSharded {
                    dir: self.dir.display().to_string(),
                })
            }
            Ok(_) => self.staging(&hash),
            Err(_) => {
                self.refuse_if_occupied()?;
                self.clone()
            }
        };
        self.clear_stagings(&work, &hash)?;
        fs::create_dir_all(&work.dir).map_err(|e| RunError::io(&work.dir, e))?;
        work.write_sources(m)?;
        if fs::read_to_string(work.manifest()).ok().as_deref() != Some(text) {
            atomic::write(&work.manifest(), text.as_bytes())
                .map_err(|e| RunError::io(&work.manifest(), e))?;
        }
        Ok(work)
    }

    /// A folder without a manifest is not witness's: one that holds a file
    /// of a name a run or an analysis writes (a table, the seal, a timing
    /// record, a summary, the plots) is the user's, and running into it
    /// would replace or, later, with `--force`, remove that file. Parts and
    /// logs are left out: another shard starting this moment may have
    /// made them just after its manifest.
    fn refuse_if_occupied(&self) -> Result<(), RunError> {
        let entries = fs::read_dir(&self.dir).map_err(|e| RunError::io(&self.dir, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let ours = name.ends_with(".parquet")
                || name == seal::FILE
                || (name.starts_with("timing") && name.ends_with(".json"))
                || ANALYSIS_FILES.contains(&name.as_str())
                || ANALYSIS_DIRS.contains(&name.as_str())
                || crate::analysis::filter::is_filtered_output(&name);
            if ours {
                return Err(RunError::Occupied {
                    dir: self.dir.display().to_string(),
                    file: name,
                });
            }
        }
        Ok(())
    }

    /// Staging folders other than `work`: one for this manifest left by a
    /// promotion that was interrupted after the manifest moved is finished
    /// (its remaining files move in); any other is an abandoned forced run
    /// and goes.
    fn clear_stagings(&self, work: &Layout, hash: &str) -> Result<(), RunError> {
        let ours = self.staging(hash);
        for e in fs::read_dir(&self.dir)
            .map_err(|e| RunError::io(&self.dir, e))?
            .flatten()
        {
            let p = e.path();
            let staging = Layout::new(&p);
            if !staging.is_staging() || !p.is_dir() || p == work.dir {
                continue;
            }
            if p == ours.dir && work.dir == self.dir && staging.seal().is_file() {
                for f in fs::read_dir(&p).map_err(|e| RunError::io(&p, e))?.flatten() {
                    let name = f.file_name();
                    if name.to_string_lossy().ends_with(".parquet") {
                        fs::rename(f.path(), self.dir.join(&name))
                            .map_err(|e| RunError::io(&f.path(), e))?;
                    }
                }
                fs::rename(staging.seal(), self.seal())
                    .map_err(|e| RunError::io(&self.seal(), e))?;
            }
            fs::remove_dir_all(&p).map_err(|e| RunError::io(&p, e))?;
        }
        Ok(())
    }

    pub fn is_staging(&self) -> bool {
        self.dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(".staging-"))
    }

    /// Removes the temporaries a killed writer left in the folder and its
    /// parts, so they neither pile up nor end up among the results.
    pub fn remove_temporaries(&self) {
        let mut dirs = vec![self.dir.clone()];
        for holder in [self.parts(), self.dir.join("policy-log")] {
            if let Ok(sub) = fs::read_dir(holder) {
                dirs.extend(sub.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
            }
        }
        for d in dirs {
            for e in fs::read_dir(&d).into_iter().flatten().flatten() {
                if atomic::is_temporary(&e.file_name().to_string_lossy()) {
                    let _ = fs::remove_file(e.path());
                }
            }
        }
    }

    /// Moves a complete staging folder's results into this folder: the old
    /// seal goes first (so the old results stop counting as complete), then
    /// the old results and what was computed from them, then the new tables,
    /// the manifest, and the seal last.
    pub fn promote(
        &self,
        staging: &Layout,
        tables: &[&str],
        sources: &[crate::manifest::Source],
    ) -> Result<(), RunError> {
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |e| RunError::io(&p, e)
        };
        // The old results' files, as their seal lists them (or, for results
        // written before seals, the tables of this experiment).
        let old: Vec<String> = match seal::Seal::read(&self.dir) {
            Ok(Some(s)) => s.tables.iter().map(|t| t.file.clone()).collect(),
            _ => tables.iter().map(|t| format!("{t}.parquet")).collect(),
        };
        remove_file(&self.seal())?;
        crate::crash::point("old seal removed");
        self.remove_results(&old)?;
        crate::crash::point("old results removed");
        for t in tables {
            fs::rename(staging.table(t), self.table(t)).map_err(io(&self.table(t)))?;
            crate::crash::point("table promoted");
        }
        for d in POLICY_DIRS {
            let from = staging.dir.join(d);
            if from.is_dir() {
                fs::rename(&from, self.dir.join(d)).map_err(io(&self.dir.join(d)))?;
            }
        }
        for s in sources {
            let to = self.dir.join(&s.name);
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(io(parent))?;
            }
            fs::rename(staging.dir.join(&s.name), &to).map_err(io(&to))?;
        }
        fs::rename(staging.manifest(), self.manifest()).map_err(io(&self.manifest()))?;
        crate::crash::point("manifest promoted");
        fs::rename(staging.seal(), self.seal()).map_err(io(&self.seal()))?;
        crate::crash::point("seal promoted");
        fs::remove_dir_all(&staging.dir).map_err(io(&staging.dir))?;
        Ok(())
    }

    /// Removes this project's files only (the given tables, parts, timing
    /// and analysis outputs); anything else in the folder stays.
    fn remove_results(&self, tables: &[String]) -> Result<(), RunError> {
        let io = |p: PathBuf| move |e| RunError::io(&p, e);
        if self.parts().exists() {
            fs::remove_dir_all(self.parts()).map_err(io(self.parts()))?;
        }
        for entry in fs::read_dir(&self.dir)
            .map_err(io(self.dir.clone()))?
            .flatten()
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            let ours = tables.contains(&name)
                || (name.starts_with("timing") && name.ends_with(".json"))
                || ANALYSIS_FILES.contains(&name.as_str())
                || crate::analysis::filter::is_filtered_output(&name);
            if ours && entry.path().is_file() {
                remove_file(&entry.path())?;
            }
            let dir =
                ANALYSIS_DIRS.contains(&name.as_str()) || POLICY_DIRS.contains(&name.as_str());
            if dir && entry.path().is_dir() {
                fs::remove_dir_all(entry.path()).map_err(io(entry.path()))?;
            }
        }
        Ok(())
    }
}

fn remove_file(path: &Path) -> Result<(), RunError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(RunError::io(path, e)),
        _ => Ok(()),
    }
}

/// What a lost copy of a points file means, and the fix.
pub fn lost_copy_problem(copy: &Path) -> String {
    format!(
        "{}: the folder's copy of the design's points file is gone, so its manifest cannot be read; \
         put the file back, or run the manifest into the folder again, which restores it",
        copy.display()
    )
}
