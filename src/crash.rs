//! A test hook for crash safety: with `WITNESS_CRASH_AFTER=N` in the
//! environment, the process kills itself with SIGKILL at the N-th crash
//! point it passes, so a test can stop `run` or `merge` at every phase
//! (after each part, each final table, the seal, each removal) without
//! depending on timing. `WITNESS_CRASH_LIST=1` prints each point's name to
//! stderr as it is passed. Without these variables a point costs one
//! relaxed atomic load.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

static PASSED: AtomicU64 = AtomicU64::new(0);

struct Hook {
    after: Option<u64>,
    list: bool,
}

fn hook() -> &'static Hook {
    static HOOK: OnceLock<Hook> = OnceLock::new();
    HOOK.get_or_init(|| Hook {
        after: std::env::var("WITNESS_CRASH_AFTER")
            .ok()
            .and_then(|v| v.trim().parse().ok()),
        list: std::env::var_os("WITNESS_CRASH_LIST").is_some(),
    })
}

/// A point where a crash must lose nothing.
pub fn point(name: &str) {
    let h = hook();
    if h.after.is_none() && !h.list {
        return;
    }
    let n = PASSED.fetch_add(1, Ordering::SeqCst) + 1;
    if h.list {
        eprintln!("crash point {n}: {name}");
    }
    if h.after == Some(n) {
        // SIGKILL, as a power cut or the OOM killer would: no unwinding,
        // no destructors, no flush.
        #[cfg(unix)]
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        std::process::abort();
    }
}
