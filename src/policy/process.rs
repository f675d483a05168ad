//! One policy process: started with its argument vector in the manifest's
//! folder, greeted with `hello`, and spoken to one line at a time. Reading
//! and writing happen on their own threads so a process that stops reading,
//! never answers or floods its output cannot block the runner: every wait
//! has a deadline, lines have a length limit, the queue of lines read is
//! bounded, and its stderr is copied (up to a limit) to its own file.
//! Stopping is `bye`, then SIGTERM after 5 s, then SIGKILL after 10 s.

use serde_json::Value as Json;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::{Duration, Instant};

use super::protocol::{self, Identity};
use super::spec::External;

/// The longest line read from a policy: past it, the process is broken.
pub const MAX_LINE: usize = 64 << 20;
/// Stderr kept per process; the rest is read and dropped.
pub const MAX_STDERR: u64 = 64 << 20;

/// A line read, or why no more will come.
type Line = Result<String, String>;

pub struct Process {
    child: Child,
    /// Lines to write; dropping it closes the process's stdin.
    writer: Option<Sender<String>>,
    lines: Receiver<Line>,
    pub identity: Identity,
    /// The batch size the process asked for in `ready`.
    pub max_batch: Option<usize>,
    pub stderr: PathBuf,
    /// Closed, or sent to, once all of its stderr is in the file.
    stderr_done: Receiver<()>,
    /// The last exchange ended for want of time, not a broken reply.
    pub timed_out: bool,
}

/// The least time a policy gets to answer `hello`.
const HANDSHAKE_FLOOR: std::time::Duration = std::time::Duration::from_secs(5);

impl Process {
    /// Starts the process and completes the handshake within `ext.timeout`,
    /// but never less than `HANDSHAKE_FLOOR`: starting an interpreter or a
    /// client is a one-time cost a loaded machine can stretch, and a short
    /// per-batch timeout is not meant to refuse it.
    pub fn start(ext: &External, hello: &str, stderr: PathBuf) -> Result<Process, String> {
        let program = &ext.command[0];
        let mut command = Command::new(program);
        command
            .args(&ext.command[1..])
            .current_dir(&ext.workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so a Ctrl-C meant for witness does not
            // kill it mid-answer, and stopping it reaches its children.
            .process_group(0);
        let mut child = crate::shutdown::spawn(&mut command).map_err(|e| {
            format!(
                "cannot start `{}` in {}: {e}",
                ext.shown(),
                ext.workdir.display()
            )
        })?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let err = child.stderr.take().expect("piped");
        let (writer, to_write) = mpsc::channel::<String>();
        std::thread::spawn(move || write_lines(stdin, to_write));
        let (line_tx, lines) = mpsc::sync_channel::<Line>(4);
        std::thread::spawn(move || read_lines(stdout, line_tx));
        let log = stderr.clone();
        let (copied, stderr_done) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            copy_stderr(err, &log);
            let _ = copied.send(());
        });
        let mut p = Process {
            child,
            writer: Some(writer),
            lines,
            identity: Identity::default(),
            max_batch: None,
            stderr,
            stderr_done,
            timed_out: false,
        };
        let ready = p
            .exchange(hello, ext.timeout.max(HANDSHAKE_FLOOR))
            .map_err(|e| format!("`{}` did not complete the handshake: {e}", ext.shown()));
        let ready = match ready.and_then(|m| {
            protocol::ready(&m).map_err(|e| format!("`{}` answered hello badly: {e}", ext.shown()))
        }) {
            Ok(r) => r,
            Err(e) => {
                p.kill();
                return Err(format!("{e}{}", p.stderr_tail()));
            }
        };
        (p.identity, p.max_batch) = ready;
        Ok(p)
    }

    /// Writes one line and reads one back within `timeout`.
    pub fn exchange(&mut self, line: &str, timeout: Duration) -> Result<Json, String> {
        let sent = self
            .writer
            .as_ref()
            .is_some_and(|w| w.send(line.to_string()).is_ok());
        if !sent {
            return Err(self.gone("its input is closed"));
        }
        match self.lines.recv_timeout(timeout) {
            Ok(Ok(text)) => serde_json::from_str(&text).map_err(|e| {
                let shown: String = text.chars().take(80).collect();
                format!("wrote a line that is not JSON ({e}): {shown:?}")
            }),
            Ok(Err(why)) => Err(self.gone(&why)),
            Err(RecvTimeoutError::Timeout) => {
                self.timed_out = true;
                Err(format!(
                    "no answer within {} s (timeout_s)",
                    timeout.as_secs_f64()
                ))
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.gone("its output closed")),
        }
    }

    /// Why the process stopped answering: its exit status, if it has one.
    fn gone(&mut self, why: &str) -> String {
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return format!("{why}: it exited ({status})"),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => return why.to_string(),
            }
        }
    }

    /// The last lines of the process's stderr, for an error message; called
    /// once it is killed, so the copy ends as soon as the pipe is drained
    /// (a child it left behind holding the pipe gets half a second).
    pub fn stderr_tail(&self) -> String {
        let _ = self.stderr_done.recv_timeout(Duration::from_millis(500));
        let text = std::fs::read(&self.stderr).unwrap_or_default();
        let text = String::from_utf8_lossy(&text[text.len().saturating_sub(2000)..]).into_owned();
        let tail: Vec<&str> = text.lines().rev().take(3).collect();
        if tail.is_empty() {
            format!(" (its stderr, in {}, is empty)", self.stderr.display())
        } else {
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            format!(
                "; its stderr ({}) ends: {}",
                self.stderr.display(),
                tail.join(" | ")
            )
        }
    }

    /// Ends the process politely: `bye`, then SIGTERM after 5 s, SIGKILL
    /// after 10 s.
    pub fn stop(mut self) {
        if let Some(w) = self.writer.take() {
            let _ = w.send(protocol::bye());
        }
        if self.wait_for(Duration::from_secs(5)) {
            // What it started and left behind in its group (a worker, a
            // local server) goes with it. The group id is not reused while
            // any member lives.
            self.signal(libc::SIGTERM);
            return;
        }
        self.signal(libc::SIGTERM);
        if self.wait_for(Duration::from_secs(5)) {
            return;
        }
        self.kill();
    }

    /// Ends the process now (it failed a batch, or witness is stopping).
    pub fn kill(&mut self) {
        self.writer = None;
        self.signal(libc::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn signal(&self, sig: libc::c_int) {
        // The whole group: the process and anything it started.
        let pid = self.child.id() as libc::pid_t;
        unsafe {
            libc::kill(-pid, sig);
        }
    }

    fn wait_for(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
        // What it started outside its group, now re-parented to witness,
        // goes with it.
        crate::shutdown::ended(self.child.id());
    }
}

fn write_lines(mut stdin: std::process::ChildStdin, lines: Receiver<String>) {
    for mut line in lines {
        line.push('\n');
        if stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.flush())
            .is_err()
        {
            return;
        }
    }
}

fn read_lines(stdout: std::process::ChildStdout, lines: SyncSender<Line>) {
    let mut r = BufReader::with_capacity(1 << 16, stdout);
    loop {
        let mut buf = Vec::new();
        let read = (&mut r)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf);
        let line = match read {
            Ok(0) => Err("its output ended".to_string()),
            Err(e) => Err(format!("reading its output failed: {e}")),
            Ok(_) if !buf.ends_with(b"\n") && buf.len() > MAX_LINE => Err(format!(
                "it wrote a line longer than {} MiB",
                MAX_LINE >> 20
            )),
            Ok(_) => {
                while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    buf.pop();
                }
                String::from_utf8(buf).map_err(|_| "it wrote a line that is not UTF-8".into())
            }
        };
        let last = line.is_err();
        if lines.send(line).is_err() || last {
            return;
        }
    }
}

fn copy_stderr(mut err: std::process::ChildStderr, log: &Path) {
    let mut file = log
        .parent()
        .and_then(|d| std::fs::create_dir_all(d).ok())
        .and_then(|_| OpenOptions::new().create(true).append(true).open(log).ok());
    let mut kept = 0u64;
    let mut buf = [0u8; 1 << 16];
    while let Ok(n) = err.read(&mut buf) {
        if n == 0 {
            break;
        }
        if let Some(f) = file.as_mut() {
            let room = MAX_STDERR.saturating_sub(kept) as usize;
            if room > 0 {
                let _ = f.write_all(&buf[..n.min(room)]);
                kept += n.min(room) as u64;
                if n > room {
                    let _ = writeln!(f, "\n[witness: stderr cut at {} MiB]", MAX_STDERR >> 20);
                }
            }
        }
    }
}
