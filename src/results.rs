//! A results folder opened for analysis: where its files are, the manifest
//! it was written from and its plan, and typed access to its tables by
//! column name. Every analysis verb starts here, so "is this a results
//! folder, and is it whole?" is answered in one place.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::grid::Plan;
use crate::model::{DynModel, Registry, Row};
use crate::params::Value;
use crate::runner::layout::Layout;
use crate::runner::RunError;
use crate::store::seal::{self, Seal};
use crate::store::{parquet, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{dir}: not a results folder (no manifest.toml); give a folder written by `witness run` or `witness merge`")]
    NotResults { dir: String },
    #[error("{dir}: no {table}.parquet; {hint}")]
    MissingTable {
        dir: String,
        table: String,
        hint: String,
    },
    #[error("{path}: {source}")]
    Store { path: String, source: StoreError },
    #[error("{path}: holds {found} runs, not runs 0..{total} of its manifest; run `witness verify {dir}`")]
    Inconsistent {
        path: String,
        dir: String,
        found: usize,
        total: u64,
    },
    /// The folder no longer holds what its seal records: an edited
    /// manifest, a changed table, a missing seal.
    #[error("{problem}; {fix}")]
    Unsealed { problem: String, fix: String },
    #[error(transparent)]
    Run(#[from] RunError),
}

pub struct ResultsDir {
    pub layout: Layout,
    pub plan: Plan,
    seal: Seal,
    /// Tables whose bytes have been checked against the seal.
    checked: Mutex<BTreeSet<String>>,
}

impl ResultsDir {
    pub fn open(dir: &Path, registry: &Registry) -> Result<ResultsDir, ResultsError> {
        let layout = Layout::new(dir);
        if !layout.manifest().is_file() {
            return Err(ResultsError::NotResults {
                dir: dir.display().to_string(),
            });
        }
        if let Some(copy) = layout.lost_copy() {
            return Err(ResultsError::Unsealed {
                problem: crate::runner::layout::lost_copy_problem(&copy),
                fix: rebuild_fix(dir),
            });
        }
        let plan = layout.read_plan(registry)?;
        if !plan.finished() {
            if let Some(problem) = damaged_race_table(&layout) {
                return Err(ResultsError::Unsealed {
                    problem,
                    fix: rebuild_fix(dir),
                });
            }
            return Err(ResultsError::Run(RunError::Incomplete {
                dir: dir.display().to_string(),
                message:
                    "the race of its [search] is not finished; rerun `witness run` to resume it, \
                          or `witness merge` the shards"
                        .into(),
            }));
        }
        let seal = read_seal(&layout, &plan)?;
        Ok(ResultsDir {
            layout,
            plan,
            seal,
            checked: Mutex::default(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.layout.dir
    }

    pub fn model(&self) -> &'static dyn DynModel {
        self.plan.model()
    }

    /// A file in the folder (`compare.csv`, `plots/`).
    pub fn file(&self, name: &str) -> PathBuf {
        self.layout.dir.join(name)
    }

    /// Whether the run wrote the table: its seal lists it (a sealed table
    /// that is gone is damage, which `table` reports, not an output left
    /// off).
    pub fn has_table(&self, name: &str) -> bool {
        self.seal.table(name).is_some()
    }

    /// The path of a table, which must exist and hold the bytes sealed.
    pub fn table(&self, name: &str) -> Result<PathBuf, ResultsError> {
        let path = self.layout.table(name);
        if path.is_file() {
            self.check_table(name, &path)?;
            return Ok(path);
        }
        if self.has_table(name) {
            return Err(self.unsealed(format!(
                "{}: missing, though the seal lists it",
                path.display()
            )));
        }
        let hint = if name == "runs" {
            "finish the run (rerun `witness run` to resume) or `witness merge` the shards".into()
        } else {
            format!("set [output] {name} = true in the manifest and run it again")
        };
        Err(ResultsError::MissingTable {
            dir: self.dir().display().to_string(),
            table: name.into(),
            hint,
        })
    }

    /// A table's bytes against the seal, once per table: an analysis must
    /// not quietly read a changed byte that `verify` would refuse.
    fn check_table(&self, name: &str, path: &Path) -> Result<(), ResultsError> {
        let mut checked = self.checked.lock().expect("not poisoned");
        if checked.contains(name) {
            return Ok(());
        }
        let Some(sealed) = self.seal.table(name) else {
            return Err(self.unsealed(format!("{}: not listed in the seal", path.display())));
        };
        let problem =
            seal::differs(path, sealed.bytes, &sealed.sha256).map_err(|e| RunError::io(path, e))?;
        if let Some(problem) = problem {
            return Err(self.unsealed(format!("{}: {problem}", path.display())));
        }
        checked.insert(name.to_string());
        Ok(())
    }

    fn unsealed(&self, problem: String) -> ResultsError {
        ResultsError::Unsealed {
            problem,
            fix: rebuild_fix(self.dir()),
        }
    }

    fn store_err(path: &Path) -> impl Fn(StoreError) -> ResultsError + '_ {
        move |e| ResultsError::Store {
            path: path.display().to_string(),
            source: e,
        }
    }

    /// The named columns of `runs.parquet`, one list of values per name,
    /// indexed by run id; the table must hold runs 0..total in order.
    pub fn runs_columns(&self, names: &[&str]) -> Result<Vec<Vec<Value>>, ResultsError> {
        let path = self.table("runs")?;
        let mut asked = vec!["run_id"];
        asked.extend_from_slice(names);
        let mut cols = parquet::read_columns(&path, &asked).map_err(Self::store_err(&path))?;
        let ids = cols.remove(0);
        let in_order = ids
            .iter()
            .enumerate()
            .all(|(i, v)| *v == Value::Int(i as i64));
        if ids.len() as u64 != self.plan.total || !in_order {
            return Err(ResultsError::Inconsistent {
                path: path.display().to_string(),
                dir: self.dir().display().to_string(),
                found: ids.len(),
                total: self.plan.total,
            });
        }
        Ok(cols)
    }

    /// Every run's summary row, in the model's summary column order.
    pub fn summary_rows(&self) -> Result<Vec<Row>, ResultsError> {
        let names: Vec<&str> = self
            .model()
            .summary_columns()
            .iter()
            .map(|c| c.name)
            .collect();
        let cols = self.runs_columns(&names)?;
        let n = self.plan.total as usize;
        Ok((0..n)
            .map(|i| cols.iter().map(|c| c[i].clone()).collect())
            .collect())
    }

    /// Calls `f` with the named columns of every row of a table.
    pub fn scan(
        &self,
        table: &str,
        names: &[&str],
        f: impl FnMut(&[Value]),
    ) -> Result<(), ResultsError> {
        let path = self.table(table)?;
        parquet::scan_columns(&path, names, f).map_err(Self::store_err(&path))
    }
}

/// How to get whole results back into `dir`.
fn rebuild_fix(dir: &Path) -> String {
    format!(
        "`witness verify {0}` lists every problem; run the manifest into {0} again \
         (`witness run MANIFEST --out {0}`) to rebuild the results",
        dir.display()
    )
}

/// A sealed folder whose race stopped short: its rungs are read back
/// from `runs.parquet`, which the race trusts only as sealed, so a table
/// changed since is the problem, not an unfinished run.
fn damaged_race_table(layout: &Layout) -> Option<String> {
    if layout.parts().exists() {
        return None;
    }
    let seal = Seal::read(&layout.dir).ok()??;
    let table = layout.table("runs");
    let problem = match seal.tables.iter().find(|t| t.name == "runs") {
        None => "not listed in the seal".to_string(),
        Some(t) => match seal::differs(&table, t.bytes, &t.sha256) {
            Ok(problem) => problem?,
            Err(e) => e.to_string(),
        },
    };
    Some(format!(
        "{}: {problem}, and the race's rungs are read from it",
        table.display()
    ))
}

/// The folder's seal, which must be there and be for this manifest.
fn read_seal(layout: &Layout, plan: &Plan) -> Result<Seal, ResultsError> {
    let dir = &layout.dir;
    let seal = Seal::read(dir).map_err(|e| ResultsError::Unsealed {
        problem: e.to_string(),
        fix: rebuild_fix(dir),
    })?;
    let Some(seal) = seal else {
        if layout.parts().exists() {
            return Err(ResultsError::Run(RunError::Incomplete {
                dir: dir.display().to_string(),
                message: "the run is not finished (parts are waiting to be assembled); rerun \
                          `witness run` to resume it, or `witness merge` the shards"
                    .into(),
            }));
        }
        return Err(ResultsError::Unsealed {
            problem: format!(
                "{}: missing, so nothing records what was written",
                layout.seal().display()
            ),
            fix: rebuild_fix(dir),
        });
    };
    if seal.manifest_sha256 == plan.manifest.hash && seal.runs != plan.total {
        return Err(ResultsError::Unsealed {
            problem: format!(
                "{}: records {} runs where its manifest has {}",
                layout.seal().display(),
                seal.runs,
                plan.total
            ),
            fix: rebuild_fix(dir),
        });
    }
    if seal.manifest_sha256 != plan.manifest.hash {
        // The manifest's hash covers the files it reads, kept beside it.
        let read: Vec<&str> = plan
            .manifest
            .sources
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        let what = match read.is_empty() {
            true => format!("{}:", layout.manifest().display()),
            false => format!(
                "{}, or the copy of {} beside it,",
                layout.manifest().display(),
                read.join(", ")
            ),
        };
        return Err(ResultsError::Unsealed {
            problem: format!(
                "{what} changed since the results were written (the seal is for manifest {}…, \
                 this one is {}…)",
                &seal.manifest_sha256[..12.min(seal.manifest_sha256.len())],
                &plan.manifest.hash[..12]
            ),
            fix: "put back the manifest the results were run from (running it into the folder \
                  again restores its files' copies), or run the edited one into a new folder"
                .into(),
        });
    }
    Ok(seal)
}
