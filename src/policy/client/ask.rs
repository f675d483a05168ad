//! Asking an arm's processes for the decisions the log does not hold:
//! checking that the running policy is the one the log was written by,
//! cutting the asks into batches, retrying failed ones, and logging each
//! outcome before it is used.

use serde_json::value::RawValue;
use serde_json::{Map, Value as Json};
use std::collections::HashMap;
use std::sync::atomic::Ordering;

use super::{Client, Pending};
use crate::model::{Ask, PolicyFailure};
use crate::policy::log::Outcome;
use crate::policy::pool::BatchError;
use crate::policy::protocol::Usage;
use crate::policy::protocol::{self, Item};
use crate::policy::Fallback;

impl Client<'_> {
    /// Asks the processes for `pending`, retrying each decision up to the
    /// arm's `retries`; fills in every outcome.
    pub(super) fn ask(
        &mut self,
        asks: &[Ask],
        texts: &[Box<RawValue>],
        keys: &[String],
        pending: &mut [Pending],
    ) -> Result<(), PolicyFailure> {
        let arm = self.arm;
        let pool = arm.pool.as_ref().expect("a live arm has processes");
        let (running, mut batch_size) = pool.identity().map_err(|e| {
            arm.stop(e.clone());
            self.fail(&pending[0].key, e)
        })?;
        let logged = arm.identity().map_err(|e| self.fail(&pending[0].key, e))?;
        if running != logged {
            let e = format!(
                "arm {}: `{}` now reports policy {:?} {:?} ({}), but the record log was written by {:?} {:?} ({}); \
                 restore that policy to resume, or run into a new folder (--out)",
                arm.arm,
                arm.ext.shown(),
                running.name,
                running.version,
                running.digest,
                logged.name,
                logged.version,
                logged.digest
            );
            arm.stop(e.clone());
            return Err(self.fail(&pending[0].key, e));
        }
        let prefix = keys[pending[0].at]
            .rsplit_once('/')
            .map_or(keys[pending[0].at].as_str(), |(p, _)| p)
            .to_string();
        let mut sent = 0usize;
        loop {
            let todo: Vec<usize> = (0..pending.len())
                .filter(|&i| pending[i].done.is_none())
                .collect();
            if todo.is_empty() {
                return Ok(());
            }
            for group in todo.chunks(batch_size) {
                let batch = format!("{prefix}/b{sent}");
                sent += 1;
                let items: Vec<Item> = group
                    .iter()
                    .map(|&i| {
                        let at = pending[i].at;
                        Item {
                            key: &pending[i].key,
                            obs: &texts[at],
                            allowed: asks[at].allowed,
                        }
                    })
                    .collect();
                let line = protocol::decide(&batch, &self.run_key, &self.params, &items);
                drop(items);
                let wanted: HashMap<String, usize> =
                    group.iter().map(|&i| (pending[i].key.clone(), i)).collect();
                let reply = pool.send(&line, |m| {
                    let replies = protocol::decisions(m, &batch)?;
                    let mut seen = std::collections::HashSet::new();
                    for r in &replies {
                        if !wanted.contains_key(r.key.as_str()) {
                            return Err(format!("answered key {} (not in batch {batch})", r.key));
                        }
                        if !seen.insert(r.key.clone()) {
                            return Err(format!("answered key {} twice", r.key));
                        }
                    }
                    Ok(replies)
                });
                arm.asked.fetch_add(group.len() as u64, Ordering::Relaxed);
                let (replies, batch_failed) = match reply {
                    Ok(r) => (r, false),
                    Err(BatchError::Fatal(e)) => {
                        arm.stop(e.clone());
                        return Err(self.fail(&pending[group[0]].key, e));
                    }
                    // Witness stopped the process itself: no attempt was
                    // made, so none is counted or logged; a rerun asks again.
                    Err(BatchError::Failed { message, .. }) if crate::shutdown::requested() => {
                        return Err(self.fail(&pending[group[0]].key, message));
                    }
                    Err(BatchError::Failed {
                        message: e,
                        timed_out,
                    }) => {
                        // One decision may be what breaks the policy (it
                        // crashes, writes a bad line): from then on each is
                        // asked alone, so the others' outcomes do not
                        // depend on the batch they shared with it. A
                        // timeout is retried as it was: a slow policy is
                        // slow for every decision.
                        if !timed_out {
                            batch_size = 1;
                        }
                        for &i in group {
                            pending[i].attempts += 1;
                            pending[i]
                                .errors
                                .push(format!("{}: batch {batch}: {e}", pending[i].key));
                        }
                        (Vec::new(), true)
                    }
                };
                let mut answered = vec![false; pending.len()];
                for r in replies {
                    let i = wanted[r.key.as_str()];
                    answered[i] = true;
                    let p = &mut pending[i];
                    p.attempts += 1;
                    add_usage(&mut p.usage, &r.usage);
                    let a = &asks[p.at];
                    match r.answer {
                        Ok(raw) => {
                            match protocol::check(&p.key, a.allowed, a.obs.text(), &raw, arm.point)
                            {
                                Ok(_) => {
                                    p.done = Some((Outcome::Answer, Some(stored_answer(&raw))))
                                }
                                Err(e) => p.errors.push(e),
                            }
                        }
                        Err(e) => {
                            p.errors.push(format!(
                                "{}: the policy reported {}: {}",
                                p.key, e.kind, e.message
                            ));
                            p.given_up |= !e.retryable;
                        }
                    }
                }
                // The breaker counts exchanges: one that gave any usable
                // answer resets it.
                let usable = group
                    .iter()
                    .any(|&i| matches!(pending[i].done, Some((Outcome::Answer, _))));
                let why = match usable {
                    true => Ok(()),
                    false => Err(group
                        .iter()
                        .find_map(|&i| pending[i].errors.last())
                        .map_or("no answer", String::as_str)),
                };
                if let Some(m) = arm.exchanged(why) {
                    return Err(self.fail(&pending[group[0]].key, m));
                }
                for &i in group {
                    let p = &mut pending[i];
                    if !batch_failed && !answered[i] {
                        p.attempts += 1;
                        p.errors
                            .push(format!("{}: no answer in batch {batch}", p.key));
                    }
                    if p.done.is_none() && (p.given_up || p.attempts > arm.ext.retries) {
                        p.done = Some((
                            match arm.ext.fallback {
                                Fallback::FailRun => Outcome::Failed,
                                Fallback::Safe(_) => Outcome::Fallback,
                            },
                            None,
                        ));
                    }
                }
            }
        }
    }
}

/// The answer as kept in the log: what the policy said, without the key
/// and usage the log keeps elsewhere.
fn stored_answer(raw: &Json) -> Json {
    let mut m = Map::new();
    if let Some(obj) = raw.as_object() {
        for (k, v) in obj {
            if !matches!(k.as_str(), "key" | "usage") {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    Json::Object(m)
}

fn add_usage(total: &mut Usage, u: &Usage) {
    let add = |a: &mut Option<u64>, b: Option<u64>| {
        if let Some(b) = b {
            *a = Some(a.unwrap_or(0).saturating_add(b));
        }
    };
    add(&mut total.input_tokens, u.input_tokens);
    add(&mut total.output_tokens, u.output_tokens);
    add(&mut total.cached_tokens, u.cached_tokens);
    add(&mut total.cost_microusd, u.cost_microusd);
    add(&mut total.latency_ms, u.latency_ms);
    if u.model.is_some() {
        total.model.clone_from(&u.model);
    }
}
