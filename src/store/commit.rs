//! Making files durable on a thread of their own. A worker stages a file
//! (writes its temporary sibling) and hands it over; the committer thread
//! syncs it, renames it into place and, once nothing else is waiting,
//! syncs each folder it renamed into just once. The guarantee is
//! `atomic::write`'s: a name shows a whole file or none, even after a
//! power cut. What changes is who waits: the disk's flushes no longer stop
//! the threads that compute, and many renames share one folder sync.
//!
//! A group of files is renamed in the order given, after all of them are
//! synced, so the file that marks a set done can go last. The crash
//! points are all on this one thread, so a test that stops the process at
//! the N-th point stops it at the same place every time.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::atomic::{self, Staged};

/// Why a file could not be made durable.
#[derive(Debug)]
pub struct Failure {
    pub path: PathBuf,
    pub error: io::Error,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Vec<Staged>>,
    busy: bool,
    closed: bool,
    /// The first failure: (path, kind, message), kept to report it to
    /// every later caller.
    failed: Option<(PathBuf, io::ErrorKind, String)>,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the committer thread: work queued, or closing.
    work: Condvar,
    /// Wakes waiters: the queue is empty and nothing is in hand.
    idle: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A thread that commits staged files; dropped, it commits what it holds
/// and stops.
pub struct Committer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

fn failure(f: &Option<(PathBuf, io::ErrorKind, String)>) -> Result<(), Failure> {
    match f {
        None => Ok(()),
        Some((path, kind, message)) => Err(Failure {
            path: path.clone(),
            error: io::Error::new(*kind, message.clone()),
        }),
    }
}

impl Committer {
    pub fn start() -> Committer {
        let shared = Arc::new(Shared::default());
        let mine = shared.clone();
        let thread = std::thread::Builder::new()
            .name("witness-commit".into())
            .spawn(move || serve(&mine))
            .expect("a thread can be started");
        Committer {
            shared,
            thread: Some(thread),
        }
    }

    /// Queues a group of staged files, to be renamed in order once all are
    /// synced. Fails with an earlier group's failure (this group is then
    /// dropped, which removes its temporaries).
    pub fn commit(&self, group: Vec<Staged>) -> Result<(), Failure> {
        let mut s = self.shared.lock();
        failure(&s.failed)?;
        s.queue.push_back(group);
        self.shared.work.notify_one();
        Ok(())
    }

    /// Waits until every group queued so far is in place and its folders
    /// synced; the first failure, if any.
    pub fn wait(&self) -> Result<(), Failure> {
        let mut s = self.shared.lock();
        while !s.queue.is_empty() || s.busy {
            s = self.shared.idle.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        failure(&s.failed)
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.work.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(shared: &Shared) {
    loop {
        let groups: Vec<Vec<Staged>> = {
            let mut s = shared.lock();
            while s.queue.is_empty() && !s.closed {
                s = shared.work.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            if s.queue.is_empty() {
                return;
            }
            s.busy = true;
            if s.failed.is_some() {
                // Dropping them removes their temporaries.
                s.queue.clear();
                Vec::new()
            } else {
                s.queue.drain(..).collect()
            }
        };
        let result = commit_all(groups);
        let mut s = shared.lock();
        if let Err(f) = result {
            s.failed
                .get_or_insert((f.path, f.error.kind(), f.error.to_string()));
        }
        s.busy = false;
        if s.queue.is_empty() {
            shared.idle.notify_all();
        }
    }
}

/// Syncs and renames each group in turn, then syncs every folder renamed
/// into, once.
fn commit_all(groups: Vec<Vec<Staged>>) -> Result<(), Failure> {
    fn at(path: &Path) -> impl FnOnce(io::Error) -> Failure + '_ {
        move |error| Failure {
            path: path.to_path_buf(),
            error,
        }
    }
    // Each folder renamed into, with a file in it (`sync_dir` syncs a
    // file's folder).
    let mut folders = BTreeMap::new();
    for group in groups {
        for f in &group {
            f.sync().map_err(at(f.path()))?;
        }
        crate::crash::point("staged files synced");
        for f in group {
            let path = f.path().to_path_buf();
            f.rename().map_err(at(&path))?;
            crate::crash::point("file in place");
            folders.insert(path.parent().map(Path::to_path_buf), path);
        }
    }
    for path in folders.values() {
        atomic::sync_dir(path).map_err(at(path))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn staged(path: &Path, text: &str) -> Staged {
        atomic::stage(path, |f| f.write_all(text.as_bytes())).unwrap()
    }

    #[test]
    fn files_appear_once_waited_for_and_no_temporary_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let c = Committer::start();
        for i in 0..20 {
            let group = (0..3)
                .map(|k| staged(&dir.path().join(format!("{i}-{k}")), &format!("{i}{k}")))
                .collect();
            c.commit(group).unwrap();
        }
        c.wait().unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 60);
        assert_eq!(std::fs::read(dir.path().join("7-2")).unwrap(), b"72");
    }

    #[test]
    fn a_failure_is_reported_and_later_groups_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let c = Committer::start();
        let bad = staged(&dir.path().join("a"), "x");
        // Renaming onto a non-empty folder fails.
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a").join("in"), "").unwrap();
        c.commit(vec![bad]).unwrap();
        let err = c.wait().unwrap_err();
        assert_eq!(err.path, dir.path().join("a"));
        let later = c.commit(vec![staged(&dir.path().join("b"), "y")]);
        assert!(later.is_err());
        drop(c);
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("a")], "{left:?}");
    }
}
