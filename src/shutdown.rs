//! Stopping a run cleanly on SIGINT, SIGTERM or SIGHUP, and leaving no
//! process behind. Ctrl-C, `kill`, `timeout`, Slurm and Kubernetes all
//! end a run with one of these signals; each takes the same path: the run
//! stops starting work (what is saved stays saved), every external
//! policy's process group is stopped at once (a hung policy would
//! otherwise keep the run waiting for its timeout, and outlive it), and
//! the command exits with 128 + the signal's number after printing how to
//! resume. A second signal of the same kind gets the default action.
//!
//! A policy may start helpers that leave its process group (`setsid`, a
//! daemonising server). On Linux the `run` command makes itself a child
//! subreaper, so such a helper is re-parented to witness once its policy
//! ends, and every child that is not a live policy is stopped when a
//! policy is stopped and at shutdown. Elsewhere only the process group is
//! reached.
//!
//! The signal handler only records the signal and writes one byte to a
//! pipe; a watcher thread does the stopping, so nothing but async-signal-
//! safe calls runs in the handler.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The first stopping signal received, 0 before any.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The pipe the handler wakes the watcher through (its write end).
static WAKE: AtomicI32 = AtomicI32::new(-1);
/// Set by `install`: this process owns every child it has (the CLI), so
/// children that are not live policies may be stopped.
static OWNS_CHILDREN: AtomicBool = AtomicBool::new(false);
/// The live policy processes, each the leader of its own process group.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// How long stopped policies get between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_millis(200);

/// Whether a stopping signal has arrived: no new work should start.
pub fn requested() -> bool {
    SIGNAL.load(Ordering::Relaxed) != 0
}

/// Asks the run to stop as a signal would, without one (the crash tests
/// and library callers).
pub fn request(signal: i32) {
    let _ = SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
}

/// The exit status a shell reports for a process ended by the signal that
/// stopped the run (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP).
pub fn exit_code() -> u8 {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => 130,
        s => 128u8.saturating_add(s as u8),
    }
}

/// The signal's name, for the message that says why the run stopped.
pub fn signal_name() -> &'static str {
    match SIGNAL.load(Ordering::Relaxed) {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "Ctrl-C (SIGINT)",
    }
}

/// Installs the handlers and the watcher; for the command that runs
/// policies, once, before any is started.
pub fn install() {
    OWNS_CHILDREN.store(true, Ordering::SeqCst);
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    WAKE.store(fds[1], Ordering::SeqCst);
    let read_end = fds[0];
    let watcher = std::thread::Builder::new()
        .name("witness-signals".into())
        .spawn(move || watch(read_end));
    if watcher.is_err() {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_CHILD_SUBREAPER takes one integer argument and
    // changes only this process's attributes.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only calls async-signal-safe functions
        // (atomics, write(2), signal(2)).
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    let fd = WAKE.load(Ordering::SeqCst);
    // SAFETY: write(2) and signal(2) are async-signal-safe; the byte is on
    // this frame's stack.
    unsafe {
        if fd >= 0 {
            let byte = 1u8;
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
        // The next signal of this kind ends the process as usual.
        libc::signal(sig, libc::SIG_DFL);
    }
}

/// Waits for the handler's byte, then stops every policy.
fn watch(read_end: libc::c_int) {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads one byte into a local of this frame.
        let n = unsafe { libc::read(read_end, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 || (n < 0 && !interrupted_call()) {
            break;
        }
    }
    stop_all();
}

fn interrupted_call() -> bool {
    std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
}

fn live() -> MutexGuard<'static, Vec<i32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts a policy process and records it as live, unless the run is
/// stopping. Holding the list while the process starts keeps the sweep
/// from taking a just-started policy for a leftover.
pub(crate) fn spawn(cmd: &mut std::process::Command) -> std::io::Result<std::process::Child> {
    let mut live = live();
    if requested() {
        return Err(std::io::Error::other(format!(
            "witness is stopping ({})",
            signal_name()
        )));
    }
    let child = cmd.spawn()?;
    live.push(child.id() as i32);
    Ok(child)
}

/// Forgets a policy process that has ended (and been waited for), then
/// stops whatever it left behind outside its group.
pub(crate) fn ended(pid: u32) {
    let mut live = live();
    live.retain(|&p| p != pid as i32);
    sweep(&live, Instant::now() + GRACE);
}

/// Stops every live policy's process group: SIGTERM, a short grace, then
/// SIGKILL; then every other child this process has.
fn stop_all() {
    let live = live();
    for &pid in live.iter() {
        signal_group(pid, libc::SIGTERM);
    }
    std::thread::sleep(GRACE);
    for &pid in live.iter() {
        signal_group(pid, libc::SIGKILL);
    }
    sweep(&live, Instant::now() + Duration::from_millis(800));
}

fn signal_group(pid: i32, sig: libc::c_int) {
    // SAFETY: kill(2) with a negative pid signals that process group; the
    // group id is not reused while any member (or the unreaped leader)
    // remains.
    unsafe {
        libc::kill(-pid, sig);
    }
}

/// Kills and reaps every child of this process that is not a live policy
/// (helpers re-parented here by the subreaper), until none is left or
/// `until` passes. Only in a process that owns its children.
fn sweep(live: &[i32], until: Instant) {
    if !OWNS_CHILDREN.load(Ordering::SeqCst) {
        return;
    }
    loop {
        let strays: Vec<i32> = children()
            .into_iter()
            .filter(|p| !live.contains(p))
            .collect();
        if strays.is_empty() || Instant::now() >= until {
            return;
        }
        for &pid in &strays {
            // SAFETY: `pid` is a child of this process (not yet reaped, so
            // not reused); waitpid with WNOHANG only reaps it if it ended.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The pids whose parent is this process, read from /proc (empty where
/// there is none).
fn children() -> Vec<i32> {
    let me = std::process::id() as i32;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| parent_of(&s))
                == Some(me)
        })
        .collect()
}

/// The parent pid in a /proc/PID/stat line: the field after the state,
/// which follows the command name's closing parenthesis (a name may hold
/// spaces and parentheses of its own).
fn parent_of(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_past_a_name_with_spaces_and_parentheses() {
        assert_eq!(parent_of("42 (a (b) c) S 7 42 42 0"), Some(7));
        assert_eq!(parent_of("1 (init) S 0 1 1"), Some(0));
        assert_eq!(parent_of("garbage"), None);
    }

    #[test]
    fn this_process_is_the_parent_of_a_child_it_started() {
        let mut c = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let listed = children().contains(&(c.id() as i32));
        c.kill().unwrap();
        c.wait().unwrap();
        assert!(listed);
    }
}
