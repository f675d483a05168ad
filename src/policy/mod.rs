//! External policies (witness-policy/1): a model's decision point answered
//! by an outside process, without giving up a promise of the runner.
//! Results do not depend on threads, process counts or batch sizes (keys,
//! not batches, carry answers, and rounds are barriers); a crash loses no
//! answer (each is logged and synced before it is applied); a finished
//! experiment replays offline from its record log.
//!
//! - `spec`: the manifest's `external = { ... }` table;
//! - `protocol`: the messages, answer checks and request hashes (pure);
//! - `process`, `pool`: the processes of an arm;
//! - `log`: the record log;
//! - `client`: the decider a run is given;
//! - `usage`: the columns of cost and reliability;
//! - `probe`: checks before a run.

pub mod client;
pub mod log;
pub mod pool;
pub mod probe;
pub mod process;
pub mod protocol;
pub mod spec;
pub mod usage;

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use crate::model::DecisionPoint;
use client::{ChunkArm, Client};
use log::ChunkLog;
use pool::Pool;
use protocol::Identity;
pub use spec::{External, Fallback};
use std::sync::Arc;

/// Where an arm's answers come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The log first, then the processes; new answers are logged.
    Live,
    /// The log only (`replay = "require"`, `verify`).
    Replay,
    /// Another folder's log only, copied into this folder's
    /// (`run --policy-replay DIR`).
    ReplayInto,
}

/// How a `witness run` or `verify` treats its external arms.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Source {
    /// Run the policies (arms with `replay = "require"` read their log).
    #[default]
    Live,
    /// Answers from this folder's log, copied into the new results.
    ReplayFrom(PathBuf),
    /// Answers from the results' own log, nothing written (`verify`).
    Verify,
}

/// One external arm for the length of a `witness run` or `verify`.
pub struct ArmPolicy {
    pub arm: String,
    pub ext: External,
    pub point: &'static DecisionPoint,
    pub mode: Mode,
    pub pool: Option<Pool>,
    /// The results folder whose log is read.
    pub source: PathBuf,
    /// The results folder whose log is written (none when verifying).
    pub target: Option<PathBuf>,
    recorded: Mutex<Option<Identity>>,
    stopped: Mutex<Option<String>>,
    /// Another folder's whole log, read once, for a replay from it.
    whole: std::sync::OnceLock<Result<Arc<ChunkLog>, String>>,
    /// Decisions asked of the processes in this `witness run`, for the
    /// rate `run` and `plan` report.
    pub asked: AtomicU64,
    /// Exchanges in a row that gave no usable answer, over every thread
    /// (the circuit breaker's count).
    failing: std::sync::atomic::AtomicU32,
}

impl ArmPolicy {
    pub fn new(
        arm: &str,
        ext: &External,
        point: &'static DecisionPoint,
        model: (&str, &str),
        dir: &Path,
        source: &Source,
    ) -> ArmPolicy {
        let (mode, from, target) = match source {
            Source::Live if ext.replay => {
                (Mode::Replay, dir.to_path_buf(), Some(dir.to_path_buf()))
            }
            Source::Live => (Mode::Live, dir.to_path_buf(), Some(dir.to_path_buf())),
            Source::ReplayFrom(d) => (Mode::ReplayInto, d.clone(), Some(dir.to_path_buf())),
            Source::Verify => (Mode::Replay, dir.to_path_buf(), None),
        };
        let pool = (mode == Mode::Live).then(|| {
            let hello = protocol::hello(model.0, model.1, point.name, ext.max_batch);
            Pool::new(arm, ext, hello, dir.join("policy-logs"))
        });
        ArmPolicy {
            arm: arm.to_string(),
            ext: ext.clone(),
            point,
            mode,
            pool,
            source: from,
            target,
            recorded: Mutex::new(None),
            stopped: Mutex::new(None),
            whole: std::sync::OnceLock::new(),
            asked: AtomicU64::new(0),
            failing: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// The identity answers are hashed with: the one the log records, or
    /// (for a new log) the one the first process reports, recorded now.
    /// Without it no answer can be had or checked, so an error stops the
    /// run (it is about the folder or the policy, not one decision).
    pub fn identity(&self) -> Result<Identity, String> {
        self.find_identity().inspect_err(|e| self.stop(e.clone()))
    }

    fn find_identity(&self) -> Result<Identity, String> {
        let mut recorded = self.recorded.lock().expect("identity lock");
        if let Some(id) = &*recorded {
            return Ok(id.clone());
        }
        let logged = log::read_identity(&self.source, &self.arm).map_err(|e| e.to_string())?;
        let id = match (logged, self.mode) {
            // A process started later is compared with it (`Client::ask`).
            (Some(r), _) => r.policy,
            (None, Mode::Live) => {
                let (id, _) = self.pool.as_ref().expect("live").identity()?;
                id
            }
            (None, _) => {
                return Err(format!(
                    "arm {}: {} records no policy (it has no record log for this arm); \
                     replay needs the results of a run of this arm",
                    self.arm,
                    log::arm_dir(&self.source, &self.arm)
                        .join(log::IDENTITY)
                        .display()
                ))
            }
        };
        if let Some(t) = &self.target {
            let r = log::Recorded {
                policy: id.clone(),
                decision: self.point.name.to_string(),
            };
            if log::read_identity(t, &self.arm)
                .map_err(|e| e.to_string())?
                .as_ref()
                != Some(&r)
            {
                log::write_identity(t, &self.arm, &r).map_err(|e| e.to_string())?;
            }
        }
        *recorded = Some(id.clone());
        Ok(id)
    }

    /// Stops the whole run: the policy cannot be used.
    pub fn stop(&self, why: String) {
        self.stopped.lock().expect("stop lock").get_or_insert(why);
    }

    pub fn stopped(&self) -> Option<String> {
        self.stopped.lock().expect("stop lock").clone()
    }

    /// Counts one exchange with the processes: `Ok` when it gave at least
    /// one usable answer, else the reason. After `breaker` failures in a
    /// row (over every thread) the run stops: a policy that fails every
    /// time (a server down, a key revoked) is not asked again and again
    /// until the run ends on fallbacks. Returns the stop's reason.
    pub fn exchanged(&self, outcome: Result<(), &str>) -> Option<String> {
        use std::sync::atomic::Ordering::Relaxed;
        let Err(why) = outcome else {
            self.failing.store(0, Relaxed);
            return None;
        };
        let n = self.failing.fetch_add(1, Relaxed) + 1;
        if self.ext.breaker == 0 || n < self.ext.breaker {
            return None;
        }
        let m = format!(
            "arm {}: the policy gave no usable answer {n} times in a row (breaker = {}), so witness \
             stopped asking it; the last failure: {why}. Fix the policy (its stderr is in {}), \
             then run the same command to resume: answers had so far are kept, and decisions \
             that fell back in the unfinished chunks are asked again",
            self.arm,
            self.ext.breaker,
            self.target
                .as_ref()
                .unwrap_or(&self.source)
                .join("policy-logs")
                .display()
        );
        self.stop(m.clone());
        Some(m)
    }

    /// Decisions asked of the processes and the decisions per second of a
    /// process's time on them (reading, deciding, writing back).
    pub fn rate(&self) -> (u64, f64) {
        let asked = self.asked.load(std::sync::atomic::Ordering::Relaxed);
        let busy = self
            .pool
            .as_ref()
            .map_or(0, |p| p.busy_ns.load(std::sync::atomic::Ordering::Relaxed))
            as f64
            / 1e9;
        (asked, if busy > 0.0 { asked as f64 / busy } else { 0.0 })
    }
}

/// The external arms of an experiment, by arm index.
pub struct Policies {
    arms: Vec<Option<ArmPolicy>>,
}

impl Policies {
    pub fn new(arms: Vec<Option<ArmPolicy>>) -> Policies {
        Policies { arms }
    }

    pub fn none() -> Policies {
        Policies { arms: Vec::new() }
    }

    pub fn arm(&self, i: usize) -> Option<&ArmPolicy> {
        self.arms.get(i).and_then(Option::as_ref)
    }

    /// The external arms.
    pub fn arms(&self) -> impl Iterator<Item = &ArmPolicy> {
        self.arms.iter().flatten()
    }

    /// Why the run must stop, if an arm's policy cannot be used.
    pub fn stopped(&self) -> Option<String> {
        self.arms.iter().flatten().find_map(ArmPolicy::stopped)
    }

    /// Every external arm's log of `chunk`, read back.
    pub fn chunk(&self, chunk: u64) -> Result<ChunkLogs, String> {
        let arms = self
            .arms
            .iter()
            .map(|a| {
                a.as_ref()
                    .map(|a| {
                        let log = match a.mode {
                            Mode::ReplayInto => a
                                .whole
                                .get_or_init(|| {
                                    log::load_arm(&a.source, &a.arm)
                                        .map(Arc::new)
                                        .map_err(|e| e.to_string())
                                })
                                .clone()?,
                            _ => Arc::new(
                                log::load(&log::part(&a.source, &a.arm, chunk))
                                    .map_err(|e| e.to_string())?,
                            ),
                        };
                        Ok(ChunkArm {
                            log,
                            writer: a
                                .target
                                .as_ref()
                                .map(|t| log::Writer::new(log::part(t, &a.arm, chunk))),
                        })
                    })
                    .transpose()
            })
            .collect::<Result<_, String>>()?;
        Ok(ChunkLogs { arms })
    }

    /// Says `bye` to every process.
    pub fn shutdown(&self) {
        for a in self.arms.iter().flatten() {
            if let Some(p) = &a.pool {
                p.shutdown();
            }
        }
    }
}

/// The logs of one chunk, by arm index.
pub struct ChunkLogs {
    arms: Vec<Option<ChunkArm>>,
}

impl ChunkLogs {
    /// The decider for a run of arm `i`, if the arm is external. The run's
    /// key and parameters are made only then: a built-in arm's run pays
    /// nothing for them.
    pub fn client<'a>(
        &'a mut self,
        policies: &'a Policies,
        i: usize,
        run: impl FnOnce() -> (String, Json),
    ) -> Option<Client<'a>> {
        let arm = policies.arm(i)?;
        let log = self.arms.get_mut(i)?.as_mut()?;
        let (run_key, params) = run();
        Some(Client::new(arm, log, run_key, params))
    }
}
