//! What an external arm's run cost and how reliable its policy was, as
//! columns of `runs.parquet` (present when a manifest has an external arm;
//! null for the runs of built-in arms). Counted from the record log's
//! entries only, so a resumed or replayed run counts exactly as the run
//! that asked. Usage is kept apart from a model's abstract effort: a
//! decision that cost 10,000 tokens is still one decision.

use super::log::{Entry, Outcome};
use super::protocol::Identity;

crate::record! {
    /// An external arm's usage in one run.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct PolicyUsage {
        /// decisions the external policy was asked for (null: a built-in arm)
        decisions: Option<u64>,
        /// failed attempts: bad answers, errors the policy reported, batches that timed out or broke
        policy_errors: Option<u64>,
        /// decisions that took the safe action after their retries
        fallbacks: Option<u64>,
        /// input tokens the policy reported (null: never reported)
        input_tokens: Option<u64>,
        /// output tokens the policy reported
        output_tokens: Option<u64>,
        /// cost in millionths of a US dollar, as reported
        cost_microusd: Option<u64>,
        /// seconds of latency the policy reported, summed
        policy_seconds: Option<f64>,
        /// the policy's name, as it reported in `ready`
        policy_name: Option<String>,
        /// the policy's version
        policy_version: Option<String>,
        /// the policy's digest (of its code, prompt or weights)
        policy_digest: Option<String>,
        /// why the run failed, when a decision could not be had and the arm fails the run
        policy_failure: Option<String>,
    }
}

impl PolicyUsage {
    /// Counts one decision as logged.
    pub fn count(&mut self, e: &Entry) {
        let inc = |x: &mut Option<u64>, by: u64| *x = Some(x.unwrap_or(0) + by);
        inc(&mut self.decisions, 1);
        inc(&mut self.policy_errors, e.errors.len() as u64);
        inc(
            &mut self.fallbacks,
            u64::from(e.outcome == Outcome::Fallback),
        );
        let add = |x: &mut Option<u64>, v: Option<u64>| {
            if let Some(v) = v {
                *x = Some(x.unwrap_or(0).saturating_add(v));
            }
        };
        add(&mut self.input_tokens, e.usage.input_tokens);
        add(&mut self.output_tokens, e.usage.output_tokens);
        add(&mut self.cost_microusd, e.usage.cost_microusd);
        if let Some(ms) = e.usage.latency_ms {
            self.policy_seconds = Some(self.policy_seconds.unwrap_or(0.0) + ms as f64 / 1000.0);
        }
    }

    pub fn identify(&mut self, id: &Identity) {
        self.policy_name = Some(id.name.clone());
        self.policy_version = Some(id.version.clone());
        self.policy_digest = Some(id.digest.clone());
    }
}
