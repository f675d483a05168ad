//! The decider a run of an external arm is given. For each barrier it
//! answers from the record log what the log holds for the same request,
//! asks the arm's processes only for the rest (splitting, retrying and
//! checking answers), logs every new outcome before returning it, and
//! counts usage from the log entries alone, so a run answered from the log
//! is the same run, row for row, as the one that asked. Asking the
//! processes, batch by batch, is in `ask`.

mod ask;

use serde_json::value::RawValue;
use serde_json::{json, Value as Json};

use super::log::{ChunkLog, Entry, Outcome, Writer};
use super::protocol::{self, Identity, Item, Usage};
use super::usage::{CallRow, PolicyUsage};
use super::{ArmPolicy, Mode};
use crate::model::{Ask, Decided, Decider, PolicyFailure};

/// One external arm's log for the chunk being run: the chunk's own, or
/// (replaying another folder, whose chunks may be cut differently) all of
/// that folder's.
pub struct ChunkArm {
    pub log: std::sync::Arc<ChunkLog>,
    /// Where new outcomes are written (none when verifying).
    pub writer: Option<Writer>,
}

pub struct Client<'a> {
    pub arm: &'a ArmPolicy,
    pub log: &'a mut ChunkArm,
    pub run_key: String,
    pub params: Json,
    pub usage: PolicyUsage,
    /// Rows of `policy_calls`, when the manifest asks for them.
    pub calls: Option<Vec<CallRow>>,
    /// A decision of this run that had fallen back was asked again: what
    /// the log holds for its later rounds grew from the fallback, so a
    /// request that no longer matches is asked anew, not an error.
    reasked: bool,
}

/// A decision being asked: its place among the asks, the request, and
/// what its attempts have gathered.
struct Pending {
    at: usize,
    key: String,
    sha: String,
    errors: Vec<String>,
    usage: Usage,
    attempts: u32,
    /// The policy said not to try again.
    given_up: bool,
    done: Option<(Outcome, Option<Json>)>,
}

impl Pending {
    fn new(at: usize, key: &str, sha: String) -> Pending {
        Pending {
            at,
            key: key.to_string(),
            sha,
            errors: Vec::new(),
            usage: Usage::default(),
            attempts: 0,
            given_up: false,
            done: None,
        }
    }
}

impl<'a> Client<'a> {
    pub fn new(arm: &'a ArmPolicy, log: &'a mut ChunkArm, run_key: String, params: Json) -> Self {
        Client {
            arm,
            log,
            run_key,
            params,
            usage: PolicyUsage {
                decisions: Some(0),
                policy_errors: Some(0),
                fallbacks: Some(0),
                ..PolicyUsage::default()
            },
            calls: None,
            reasked: false,
        }
    }

    fn fail(&self, key: &str, message: String) -> PolicyFailure {
        PolicyFailure {
            key: key.to_string(),
            message,
        }
    }
}

impl Decider for Client<'_> {
    fn decide(&mut self, asks: Vec<Ask>) -> Result<Vec<Decided>, PolicyFailure> {
        if asks.is_empty() {
            return Ok(Vec::new());
        }
        let arm = self.arm;
        let keys: Vec<String> = asks
            .iter()
            .map(|a| format!("{}/{}", self.run_key, a.key))
            .collect();
        let identity: Identity = arm.identity().map_err(|e| self.fail(&keys[0], e))?;
        // Each observation was written out once, canonically, by the model:
        // the request hash, the message and the log all use that text.
        let mut texts: Vec<Box<RawValue>> = asks
            .iter()
            .map(|a| RawValue::from_string(a.obs.text().to_string()).expect("canonical JSON"))
            .collect();
        let mut entries: Vec<Option<Entry>> = vec![None; asks.len()];
        let mut pending = Vec::new();
        for (at, a) in asks.iter().enumerate() {
            let item = Item {
                key: &keys[at],
                obs: &texts[at],
                allowed: a.allowed,
            };
            let sha = protocol::request_sha256(&item, &identity);
            match self.log.log.entries.get(&keys[at]) {
                // A decision that fell back (or failed its run) in a chunk
                // that was never saved is asked again when the chunk is
                // run again: the policy may answer now (a server back up).
                // A saved chunk's outcomes are final; replay reads them.
                Some(e)
                    if e.request_sha256 == sha
                        && (e.outcome == Outcome::Answer || arm.mode != Mode::Live) =>
                {
                    entries[at] = Some(e.clone())
                }
                Some(e) if e.request_sha256 == sha => {
                    self.reasked = true;
                    pending.push(Pending::new(at, &keys[at], sha))
                }
                Some(_) if self.reasked && arm.mode == Mode::Live => {
                    pending.push(Pending::new(at, &keys[at], sha))
                }
                Some(e) => {
                    let why = changed_request(e, &texts[at], a.allowed);
                    let message = format!("the request no longer matches the logged one: {why}");
                    return Err(match arm.mode {
                        Mode::Live => {
                            let m = format!(
                                "{}: {message}; the record log was written by another build or model; \
                                 run into a new folder (--out), or rerun it with --policy-replay to list every change",
                                keys[at]
                            );
                            arm.stop(m.clone());
                            self.fail(&keys[at], m)
                        }
                        _ => self.fail(&keys[at], message),
                    });
                }
                None if arm.mode != Mode::Live => {
                    return Err(
                        self.fail(&keys[at], "no answer in the record log for this key".into())
                    )
                }
                None => pending.push(Pending::new(at, &keys[at], sha)),
            }
        }
        if !pending.is_empty() {
            let asked = self.ask(&asks, &texts, &keys, &mut pending);
            // What was had is logged even when the run is stopping.
            let fresh: Vec<Entry> = pending
                .iter()
                .filter_map(|p| {
                    let (outcome, answer) = p.done.clone()?;
                    let obs = std::mem::replace(&mut texts[p.at], empty_text());
                    Some(
                        Entry {
                            key: p.key.clone(),
                            request_sha256: p.sha.clone(),
                            obs,
                            allowed: asks[p.at].allowed.iter().map(|s| s.to_string()).collect(),
                            outcome,
                            answer,
                            errors: p.errors.clone(),
                            usage: p.usage.clone(),
                            attempts: p.attempts,
                            replayed: false,
                            check: String::new(),
                        }
                        .sealed(),
                    )
                })
                .collect();
            if let Some(w) = self.log.writer.as_mut() {
                if let Err(e) = w.append(&fresh) {
                    let m = format!("cannot write the record log: {e}");
                    arm.stop(m.clone());
                    return Err(self.fail(&keys[0], m));
                }
            }
            asked?;
            for (p, e) in pending.iter().zip(fresh) {
                entries[p.at] = Some(e);
            }
        }
        if let Some(w) = self
            .log
            .writer
            .as_mut()
            .filter(|_| arm.mode == Mode::ReplayInto)
        {
            // A replay into a new folder keeps its own copy of what it used.
            let used: Vec<Entry> = entries
                .iter()
                .flatten()
                .map(|e| {
                    let mut e = e.clone();
                    e.replayed = true;
                    e.sealed()
                })
                .collect();
            if let Err(e) = w.append(&used) {
                let m = format!("cannot write the record log: {e}");
                arm.stop(m.clone());
                return Err(self.fail(&keys[0], m));
            }
        }
        let mut out = Vec::with_capacity(asks.len());
        for (e, a) in entries.into_iter().zip(&asks) {
            let mut e = e.expect("every ask has an entry");
            if arm.mode == Mode::ReplayInto {
                e.replayed = true;
            }
            self.usage.count(&e);
            if let Some(calls) = self.calls.as_mut() {
                calls.push(CallRow::of(&e, &self.run_key));
            }
            out.push(match e.outcome {
                Outcome::Answer => {
                    let raw = e.answer.clone().unwrap_or(Json::Null);
                    let answer = protocol::check(&e.key, a.allowed, a.obs.text(), &raw, arm.point)
                        .map_err(|m| {
                            self.fail(&e.key, format!("the logged answer is not valid: {m}"))
                        })?;
                    Decided::Answer(answer)
                }
                Outcome::Fallback => Decided::Fallback,
                Outcome::Failed => {
                    let last = e.errors.last().cloned().unwrap_or_default();
                    return Err(self.fail(
                        &e.key,
                        format!(
                            "no usable answer after {} attempt(s); last: {last}",
                            e.attempts
                        ),
                    ));
                }
            });
        }
        Ok(out)
    }
}

fn empty_text() -> Box<RawValue> {
    RawValue::from_string("null".into()).expect("JSON")
}

/// The first field where a request differs from the logged one.
fn changed_request(logged: &Entry, obs: &RawValue, allowed: &[&str]) -> String {
    let parse = |t: &RawValue| serde_json::from_str::<Json>(t.get()).unwrap_or(Json::Null);
    let old = json!({"obs": parse(&logged.obs), "allowed": logged.allowed});
    let new = json!({"obs": parse(obs), "allowed": allowed});
    crate::jsondiff::first_difference(&old, &new, 0.0, false)
        .unwrap_or_else(|| "the policy identity differs".into())
}
