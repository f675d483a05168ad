//! One process per shard of a results folder. Two different shards may
//! write into one folder at once (their chunks differ, and every file is
//! written whole); the same shard twice would do the same work twice and
//! race on its chunks, so a lock file `.shard-K-of-N.lock` names the host
//! and process that holds it. A lock left by a process that is gone (same
//! host, its pid no longer running since the recorded start) is taken
//! over. The holder also touches the file every few seconds, so a lock
//! from another host (a crashed array task on another node of a shared
//! filesystem) counts as abandoned once it has not been touched for a
//! minute.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{RunError, Shard};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Holder {
    host: String,
    pid: u32,
    /// The process's start time in clock ticks since boot (from
    /// /proc/PID/stat), so a reused pid is not mistaken for the holder.
    start: u64,
    /// Seconds since the epoch when it took the lock.
    since: u64,
}

/// How often the holder touches its lock, and how long an untouched lock
/// from another host is trusted.
const HEARTBEAT: Duration = Duration::from_secs(10);
const ABANDONED: Duration = Duration::from_secs(60);

/// A held shard lock, released when dropped.
pub struct ShardLock {
    path: PathBuf,
    me: Holder,
    stop: Option<std::sync::mpsc::Sender<()>>,
    beat: Option<std::thread::JoinHandle<()>>,
}

impl Drop for ShardLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(b) = self.beat.take() {
            let _ = b.join();
        }
        if read(&self.path).as_ref() == Some(&self.me) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Touches `path` every `HEARTBEAT` until the sender is dropped.
fn heartbeat(path: PathBuf) -> (std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let beat = std::thread::spawn(move || {
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(HEARTBEAT)
        {
            if let Ok(f) = OpenOptions::new().write(true).open(&path) {
                let _ = f.set_modified(std::time::SystemTime::now());
            }
        }
    });
    (stop, beat)
}

/// A lock nobody has touched for `ABANDONED`.
fn untouched(path: &Path) -> bool {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > ABANDONED)
}

pub fn path(dir: &Path, shard: Shard) -> PathBuf {
    dir.join(format!(".shard-{}-of-{}.lock", shard.index, shard.count))
}

/// Takes the lock of `shard` in `dir`; if another live process holds it,
/// waits for it (`wait`) or says who holds it.
pub fn acquire(dir: &Path, shard: Shard, wait: bool) -> Result<ShardLock, RunError> {
    let path = path(dir, shard);
    let me = Holder {
        host: hostname(),
        pid: std::process::id(),
        start: start_ticks(std::process::id()).unwrap_or(0),
        since: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let (mut said, mut unreadable) = (false, 0);
    loop {
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                let text = serde_json::to_string(&me).expect("JSON");
                f.write_all(text.as_bytes())
                    .and_then(|_| f.sync_all())
                    .map_err(|e| RunError::io(&path, e))?;
                let _ = File::open(dir).and_then(|d| d.sync_all());
                let (stop, beat) = heartbeat(path.clone());
                return Ok(ShardLock {
                    path,
                    me,
                    stop: Some(stop),
                    beat: Some(beat),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(RunError::io(&path, e)),
        }
        let holder = read(&path);
        match &holder {
            // Being written this instant (or gone since): look again; one
            // unreadable for two seconds is not a lock witness wrote.
            None if path.exists() => {
                unreadable += 1;
                if unreadable > 40 {
                    let _ = fs::remove_file(&path);
                    unreadable = 0;
                }
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            None => continue,
            Some(h)
                if (h.host == me.host && !alive(h)) || (h.host != me.host && untouched(&path)) =>
            {
                let _ = fs::remove_file(&path);
                continue;
            }
            Some(h) if wait => {
                if !said {
                    eprintln!(
                        "waiting for shard {}/{} of {}: pid {} on {} runs it",
                        shard.index,
                        shard.count,
                        dir.display(),
                        h.pid,
                        h.host
                    );
                    said = true;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            Some(h) => {
                return Err(RunError::Busy {
                    message: format!(
                    "{}: shard {}/{} is being run by pid {} on {}; wait for it (or pass --wait); \
                         if that process is gone, remove {} (a lock from another host counts as \
                         abandoned once it goes a minute untouched)",
                    dir.display(),
                    shard.index,
                    shard.count,
                    h.pid,
                    h.host,
                    path.display()
                ),
                })
            }
        }
    }
}

/// Whether a live process (or one on another host that touched the lock
/// within `ABANDONED`) holds `shard`'s lock in `dir`.
pub fn held(dir: &Path, shard: Shard) -> bool {
    let path = path(dir, shard);
    match read(&path) {
        Some(h) if h.host == hostname() => alive(&h),
        Some(_) => !untouched(&path),
        // Being written this instant, or not there.
        None => path.exists(),
    }
}

/// Refuses `verb` (`merge`) while any shard of `dir`, or the whole run,
/// is being run: assembling under a live run would take its chunks from
/// under it, and the run would then fail on files that moved.
pub fn refuse_while_running(dir: &Path, verb: &str) -> Result<(), RunError> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(shard) = shard_of(&name) else {
            continue;
        };
        if held(dir, shard) {
            let who = read(&entry.path()).map_or("another process".into(), |h| {
                format!("pid {} on {}", h.pid, h.host)
            });
            return Err(RunError::Busy {
                message: format!(
                    "{}: shard {}/{} is being run by {who}; {verb} once it has finished \
                     (a run that is not sharded assembles its folder itself)",
                    dir.display(),
                    shard.index,
                    shard.count
                ),
            });
        }
    }
    Ok(())
}

/// The shard a lock file's name is for (`.shard-K-of-N.lock`).
fn shard_of(name: &str) -> Option<Shard> {
    let (k, n) = name
        .strip_prefix(".shard-")?
        .strip_suffix(".lock")?
        .split_once("-of-")?;
    Some(Shard {
        index: k.parse().ok()?,
        count: n.parse().ok()?,
    })
}

fn read(path: &Path) -> Option<Holder> {
    serde_json::from_slice(&fs::read(path).ok()?).ok()
}

/// Whether the holder is still running on this host.
fn alive(h: &Holder) -> bool {
    match start_ticks(h.pid) {
        Some(start) => h.start == 0 || start == h.start,
        None => false,
    }
}

/// Field 22 of /proc/PID/stat: when the process started; `None` when it
/// is not running (gone, or a zombie its parent has not reaped yet).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields after it do not.
    let mut after = stat[stat.rfind(')')? + 1..].split_whitespace();
    if matches!(after.next(), Some("Z" | "X")) {
        return None;
    }
    after.nth(18)?.parse().ok()
}

fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown-host".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_is_refused_while_a_shard_runs() {
        let dir = tempfile::tempdir().unwrap();
        assert!(refuse_while_running(dir.path(), "merge").is_ok());
        let shard = Shard { index: 1, count: 3 };
        assert_eq!(shard_of(".shard-1-of-3.lock"), Some(shard));
        assert_eq!(shard_of("shard-1-of-3.lock"), None);
        let held = acquire(dir.path(), shard, false).unwrap();
        let e = refuse_while_running(dir.path(), "merge").unwrap_err();
        let pid = std::process::id();
        assert!(
            e.to_string()
                .contains(&format!("shard 1/3 is being run by pid {pid}")),
            "{e}"
        );
        drop(held);
        assert!(refuse_while_running(dir.path(), "merge").is_ok());
    }

    #[test]
    fn a_lock_is_exclusive_released_on_drop_and_taken_over_from_the_dead() {
        let dir = tempfile::tempdir().unwrap();
        let shard = Shard { index: 1, count: 3 };
        let held = acquire(dir.path(), shard, false).unwrap();
        let e = acquire(dir.path(), shard, false).err().unwrap().to_string();
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        assert!(e.contains(".shard-1-of-3.lock"), "{e}");
        // Another shard is another lock.
        let other = acquire(dir.path(), Shard { index: 2, count: 3 }, false).unwrap();
        drop((held, other));
        assert!(!path(dir.path(), shard).exists());
        // A lock left by a process of this host that is gone.
        let dead = Holder {
            host: hostname(),
            pid: u32::MAX - 7,
            start: 1,
            since: 0,
        };
        fs::write(path(dir.path(), shard), serde_json::to_vec(&dead).unwrap()).unwrap();
        drop(acquire(dir.path(), shard, false).unwrap());
        // Another host's: trusted while touched, abandoned once not.
        let away = Holder {
            host: "elsewhere".into(),
            ..dead
        };
        let p = path(dir.path(), shard);
        fs::write(&p, serde_json::to_vec(&away).unwrap()).unwrap();
        assert!(acquire(dir.path(), shard, false).is_err());
        let old = std::time::SystemTime::now() - Duration::from_secs(120);
        File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
        assert!(acquire(dir.path(), shard, false).is_ok());
    }

    #[test]
    fn our_own_start_time_reads_back() {
        let me = std::process::id();
        assert!(start_ticks(me).is_some());
        assert_eq!(start_ticks(me), start_ticks(me));
    }
}
