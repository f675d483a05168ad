//! The processes of one external arm: up to `jobs` of them, started when
//! first needed and shared by every thread of the run. A thread borrows an
//! idle process for one batch and gives it back; a process that fails a
//! batch (no answer in time, a crash, a malformed message) is killed and a
//! fresh one takes its slot. Every process must report the same identity.
//! A process that cannot be started at all stops the whole run: that is a
//! broken command, not a bad answer.

use serde_json::Value as Json;
use std::path::PathBuf;
use std::sync::{Condvar, Mutex};

use super::process::Process;
use super::protocol::Identity;
use super::spec::External;

/// Why a batch got no usable reply.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchError {
    /// The policy cannot be run at all; the whole `witness run` stops.
    Fatal(String),
    /// This batch failed; its decisions are retried on a fresh process.
    /// `timed_out`: for want of time (a slow policy is slow for all its
    /// decisions) rather than a broken reply (which one decision may cause).
    Failed { message: String, timed_out: bool },
}

struct Slots {
    idle: Vec<(usize, Process)>,
    /// Slots with no process, started or not.
    free: Vec<usize>,
}

pub struct Pool {
    arm: String,
    ext: External,
    hello: String,
    /// Where stderr goes: `<logs>/<arm>-<slot>.log`.
    logs: PathBuf,
    slots: Mutex<Slots>,
    returned: Condvar,
    /// The identity and batch size of the first process started.
    first: Mutex<Option<(Identity, usize)>>,
    /// Time processes spent on batches (from request to reply), summed
    /// over processes.
    pub busy_ns: std::sync::atomic::AtomicU64,
}

impl Pool {
    pub fn new(arm: &str, ext: &External, hello: String, logs: PathBuf) -> Pool {
        Pool {
            arm: arm.to_string(),
            ext: ext.clone(),
            hello,
            logs,
            slots: Mutex::new(Slots {
                idle: Vec::new(),
                free: (0..ext.jobs).rev().collect(),
            }),
            returned: Condvar::new(),
            first: Mutex::new(None),
            busy_ns: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The policy's identity and the batch size to send, starting a process
    /// if none has been.
    pub fn identity(&self) -> Result<(Identity, usize), String> {
        if let Some(f) = self.first.lock().expect("pool lock").clone() {
            return Ok(f);
        }
        let (slot, p) = self.borrow()?;
        self.give_back(slot, p);
        Ok(self
            .first
            .lock()
            .expect("pool lock")
            .clone()
            .expect("set by the start"))
    }

    /// Sends one `decide` line and reads its reply, which `accept` checks
    /// before the process is trusted with another batch.
    pub fn send<T>(
        &self,
        line: &str,
        accept: impl FnOnce(&Json) -> Result<T, String>,
    ) -> Result<T, BatchError> {
        let (slot, mut p) = self.borrow().map_err(BatchError::Fatal)?;
        let started = std::time::Instant::now();
        let reply = p.exchange(line, self.ext.timeout);
        self.busy_ns.fetch_add(
            started.elapsed().as_nanos() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        let reply = reply.and_then(|m| accept(&m));
        match reply {
            Ok(v) => {
                self.give_back(slot, p);
                Ok(v)
            }
            Err(e) => {
                let timed_out = p.timed_out;
                p.kill();
                let tail = p.stderr_tail();
                drop(p);
                self.release(slot);
                Err(BatchError::Failed {
                    message: format!("{e}{tail}"),
                    timed_out,
                })
            }
        }
    }

    fn borrow(&self) -> Result<(usize, Process), String> {
        let mut s = self.slots.lock().expect("pool lock");
        loop {
            if let Some(p) = s.idle.pop() {
                return Ok(p);
            }
            if let Some(slot) = s.free.pop() {
                drop(s);
                return self.start(slot).inspect_err(|_| self.release(slot));
            }
            s = self.returned.wait(s).expect("pool lock");
        }
    }

    fn start(&self, slot: usize) -> Result<(usize, Process), String> {
        let log = self.logs.join(format!("{}-{slot}.log", self.arm));
        let p = Process::start(&self.ext, &self.hello, log)
            .map_err(|e| format!("arm {}: {e}", self.arm))?;
        let batch = p
            .max_batch
            .unwrap_or(self.ext.max_batch)
            .min(self.ext.max_batch);
        let mut first = self.first.lock().expect("pool lock");
        match &*first {
            None => *first = Some((p.identity.clone(), batch)),
            Some((id, _)) if *id != p.identity => {
                return Err(format!(
                    "arm {}: a second process of `{}` reports policy {:?} {:?} ({}), the first reported {:?} {:?} ({}); \
                     every process of an arm must run the same policy",
                    self.arm,
                    self.ext.shown(),
                    p.identity.name,
                    p.identity.version,
                    p.identity.digest,
                    id.name,
                    id.version,
                    id.digest
                ))
            }
            Some(_) => {}
        }
        Ok((slot, p))
    }

    fn give_back(&self, slot: usize, p: Process) {
        self.slots.lock().expect("pool lock").idle.push((slot, p));
        self.returned.notify_one();
    }

    fn release(&self, slot: usize) {
        self.slots.lock().expect("pool lock").free.push(slot);
        self.returned.notify_one();
    }

    /// Says `bye` to every process and waits for them to end, in parallel.
    pub fn shutdown(&self) {
        let idle = std::mem::take(&mut self.slots.lock().expect("pool lock").idle);
        std::thread::scope(|s| {
            for (_, p) in idle {
                s.spawn(move || p.stop());
            }
        });
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shutdown();
    }
}
