//! Progress of a long run on a terminal: runs done of the total, the rate
//! of the runs this process executed (runs an earlier process saved count
//! as done but not toward the rate), and the time left. Nothing on a pipe
//! or with `--quiet`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use crate::runner::Progress;

/// Runs per second of this process's own runs.
#[derive(Default)]
pub struct Rate {
    started: OnceLock<Instant>,
    ran: AtomicU64,
}

impl Rate {
    pub fn on(&self, p: Progress) {
        if let Progress::Ran(n) = p {
            self.started.get_or_init(Instant::now);
            self.ran.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The rate at `now`; 0 before the first run of this process.
    pub fn per_sec_at(&self, now: Instant) -> f64 {
        match self.started.get() {
            None => 0.0,
            Some(t) => {
                let secs = now.duration_since(*t).as_secs_f64().max(1e-3);
                self.ran.load(Ordering::Relaxed) as f64 / secs
            }
        }
    }
}

fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        s if s >= 3600 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        s if s >= 60 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{s}s"),
    }
}

pub fn bar(total: u64, quiet: bool) -> (ProgressBar, Arc<Rate>) {
    let rate = Arc::new(Rate::default());
    if quiet || !std::io::stderr().is_terminal() {
        return (ProgressBar::hidden(), rate);
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let (r1, r2) = (rate.clone(), rate.clone());
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {rate}  ETA {left}")
            .expect("a valid template")
            .with_key(
                "rate",
                move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = write!(w, "{:.0} runs/s", r1.per_sec_at(Instant::now()));
                },
            )
            .with_key(
                "left",
                move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let per_sec = r2.per_sec_at(Instant::now());
                    let left = s.len().unwrap_or(0).saturating_sub(s.pos());
                    let _ = match per_sec > 0.0 {
                        true => write!(w, "{}", duration(left as f64 / per_sec)),
                        false => write!(w, "-"),
                    };
                },
            ),
    );
    (bar, rate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn resumed_runs_do_not_count_toward_the_rate() {
        let r = Rate::default();
        r.on(Progress::Resumed(10_000));
        assert_eq!(r.per_sec_at(Instant::now()), 0.0);
        r.on(Progress::Ran(10));
        let later = *r.started.get().unwrap() + Duration::from_secs(2);
        assert!((r.per_sec_at(later) - 5.0).abs() < 1e-9);
        assert_eq!(duration(3725.0), "1h02m");
        assert_eq!(duration(75.0), "1m15s");
    }
}
