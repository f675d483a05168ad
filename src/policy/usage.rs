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

crate::record! {
    /// One decision of an external arm: a row of `policy_calls.parquet`
    /// (`[output] policy_calls = true`), from its record log entry.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CallRow {
        /// the decision's key within its run: r<round>/a<agent> (cascade), e<episode>/t<turn>/m<member> (hive)
        place: String,
        /// answer, fallback (the safe action stood in) or failed (the run failed here)
        outcome: String,
        /// the action answered; null unless the outcome is answer
        action: Option<String>,
        /// the belief answered, if any
        belief: Option<f64> [0.0, 1.0],
        /// attempts made
        attempts: u64,
        /// attempts that failed
        errors: u64,
        /// what the last failed attempt said
        last_error: Option<String>,
        /// input tokens reported, over every attempt
        input_tokens: Option<u64>,
        /// output tokens reported
        output_tokens: Option<u64>,
        /// cached input tokens reported
        cached_tokens: Option<u64>,
        /// cost reported, millionths of a US dollar
        cost_microusd: Option<u64>,
        /// latency reported, milliseconds
        latency_ms: Option<u64>,
        /// the model the policy said answered
        usage_model: Option<String>,
        /// copied from another experiment's record log (`run --policy-replay`)
        replayed: bool,
    }
}

impl CallRow {
    pub fn of(e: &Entry, run_key: &str) -> CallRow {
        let place = e
            .key
            .strip_prefix(run_key)
            .and_then(|k| k.strip_prefix('/'))
            .unwrap_or(&e.key);
        let answer = e.answer.as_ref();
        CallRow {
            place: place.to_string(),
            outcome: match e.outcome {
                Outcome::Answer => "answer",
                Outcome::Fallback => "fallback",
                Outcome::Failed => "failed",
            }
            .to_string(),
            action: answer
                .and_then(|a| a["action"].as_str())
                .map(str::to_string),
            belief: answer.and_then(|a| a["belief"].as_f64()),
            attempts: u64::from(e.attempts),
            errors: e.errors.len() as u64,
            last_error: e.errors.last().cloned(),
            input_tokens: e.usage.input_tokens,
            output_tokens: e.usage.output_tokens,
            cached_tokens: e.usage.cached_tokens,
            cost_microusd: e.usage.cost_microusd,
            latency_ms: e.usage.latency_ms,
            usage_model: e.usage.model.clone(),
            replayed: e.replayed,
        }
    }
}
