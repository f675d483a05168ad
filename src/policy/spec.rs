//! An arm's `external = { ... }` table: the process that decides for it
//! and how it is to be treated. Parsed in two stages like the rest of a
//! manifest: the shape as written (unknown keys refused), then checked
//! values. None of it is part of a run key: a command's paths differ
//! between machines, and what identifies a policy is what it says of
//! itself in `ready`.

use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// The largest batch the runner sends unless the manifest says otherwise.
pub const DEFAULT_MAX_BATCH: usize = 1024;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawExternal {
    #[serde(default)]
    pub command: Vec<String>,
    pub jobs: Option<i64>,
    pub timeout_s: Option<f64>,
    pub retries: Option<i64>,
    pub fallback: Option<String>,
    pub replay: Option<String>,
    pub max_batch: Option<i64>,
    pub breaker: Option<i64>,
}

/// What happens to a decision that could not be had after its retries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// The run is recorded as failed, with the error; other runs go on.
    FailRun,
    /// The model's named safe action is taken (checked against the model's
    /// decision point when the plan is made).
    Safe(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct External {
    /// Argument vector, never a shell string.
    pub command: Vec<String>,
    /// Where the process runs: the manifest's folder, so relative paths in
    /// the command resolve there.
    pub workdir: PathBuf,
    /// Processes started for the arm.
    pub jobs: usize,
    /// How long a batch may take.
    pub timeout: Duration,
    /// Further attempts per decision after a failed one.
    pub retries: u32,
    pub fallback: Fallback,
    /// Take every answer from the record log and start no process.
    pub replay: bool,
    /// The largest batch sent (the process may ask for smaller ones).
    pub max_batch: usize,
    /// Failed exchanges in a row after which the run stops asking the
    /// policy and stops (0: never).
    pub breaker: u32,
}

/// Failed exchanges in a row that stop a run unless the manifest says
/// otherwise: enough that a policy failing now and then never trips it,
/// few enough that a dead server or a revoked key costs seconds, not a
/// night of process restarts ending on fallbacks.
pub const DEFAULT_BREAKER: i64 = 10;

impl External {
    /// Checks the table's values; errors name the key, the value and what
    /// is allowed.
    pub fn new(raw: RawExternal, workdir: PathBuf) -> Result<External, String> {
        let replay = match raw.replay.as_deref() {
            None => false,
            Some("require") => true,
            Some(other) => {
                return Err(format!(
                    "replay = {other:?}: unknown; allowed: \"require\" (answers only from the record log), or leave it out"
                ))
            }
        };
        if raw.command.is_empty() && !replay {
            return Err(
                "command: missing or empty; give the program and its arguments as a list, e.g. command = [\"python3\", \"policies/cascade_endorsement.py\"]"
                    .into(),
            );
        }
        if raw.command.first().is_some_and(|c| c.trim().is_empty()) {
            return Err("command: the program name is empty".into());
        }
        let int = |key: &str, v: Option<i64>, default: i64, lo: i64, hi: i64| match v {
            None => Ok(default),
            Some(v) if (lo..=hi).contains(&v) => Ok(v),
            Some(v) => Err(format!("{key} = {v}: out of range; allowed: {lo} ..= {hi}")),
        };
        let jobs = int("jobs", raw.jobs, 1, 1, 64)? as usize;
        let retries = int("retries", raw.retries, 2, 0, 100)? as u32;
        let max_batch = int(
            "max_batch",
            raw.max_batch,
            DEFAULT_MAX_BATCH as i64,
            1,
            1_000_000,
        )? as usize;
        let breaker = int("breaker", raw.breaker, DEFAULT_BREAKER, 0, 1_000_000)? as u32;
        let timeout_s = raw.timeout_s.unwrap_or(60.0);
        if !(timeout_s.is_finite() && (0.001..=86_400.0).contains(&timeout_s)) {
            return Err(format!(
                "timeout_s = {timeout_s}: out of range; allowed: seconds in 0.001 ..= 86400"
            ));
        }
        let fallback = match raw.fallback.as_deref() {
            None | Some("fail_run") => Fallback::FailRun,
            Some("") => return Err("fallback = \"\": allowed: \"fail_run\" or the model's safe action (\"read\" for the cascade, \"silent\" for the hive, \"pass\" for the harness)".into()),
            Some(action) => Fallback::Safe(action.to_string()),
        };
        Ok(External {
            command: raw.command,
            workdir,
            jobs,
            timeout: Duration::from_secs_f64(timeout_s),
            retries,
            fallback,
            replay,
            max_batch,
            breaker,
        })
    }

    /// The command as one would type it, for messages.
    pub fn shown(&self) -> String {
        self.command.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Result<External, String> {
        let raw: RawExternal = toml::from_str(text).map_err(|e| e.to_string())?;
        External::new(raw, PathBuf::from("."))
    }

    #[test]
    fn defaults_and_ranges() {
        let e = raw("command = [\"python3\", \"p.py\"]").unwrap();
        assert_eq!((e.jobs, e.retries, e.max_batch), (1, 2, 1024));
        assert_eq!(e.breaker, 10);
        assert_eq!(raw("command = [\"x\"]\nbreaker = 0").unwrap().breaker, 0);
        assert!(raw("command = [\"x\"]\nbreaker = -1")
            .unwrap_err()
            .contains("breaker = -1: out of range; allowed: 0 ..= 1000000"));
        assert_eq!(e.timeout, Duration::from_secs(60));
        assert_eq!(e.fallback, Fallback::FailRun);
        assert!(raw("command = [\"x\"]\njobs = 0")
            .unwrap_err()
            .contains("jobs = 0: out of range; allowed: 1 ..= 64"));
        assert!(raw("command = [\"x\"]\ntimeout_s = -1.0")
            .unwrap_err()
            .contains("timeout_s = -1"));
        assert!(raw("command = []")
            .unwrap_err()
            .contains("command: missing or empty"));
        assert!(raw("command = [\"x\"]\nreplay = \"yes\"")
            .unwrap_err()
            .contains("allowed: \"require\""));
        assert!(raw("command = [\"x\"]\nshell = true")
            .unwrap_err()
            .contains("unknown field `shell`"));
        assert!(raw("replay = \"require\"").unwrap().replay);
        assert_eq!(
            raw("command = [\"x\"]\nfallback = \"read\"")
                .unwrap()
                .fallback,
            Fallback::Safe("read".into())
        );
    }
}
