//! One run into a folder: the chunks of this shard that are not done,
//! rung by rung for a raced plan (a shard waits for, or takes over, the
//! rest of each rung), then the assembly of the final tables, with one
//! more pass for chunks whose parts assembly found damaged.

use rayon::prelude::*;

use super::assemble::{assemble, chunk_problem, Assembly};
use super::kept::Kept;
use super::layout::Layout;
use super::stream::Streams;
use super::tables::Table;
use super::{
    chunk, interrupted, lock, race, table_names, Options, Progress, Report, RunError, Shard,
};
use crate::grid::Plan;
use crate::policy::Policies;
use crate::store::commit::Committer;

/// Chunks run again for damaged parts named on stderr, one line each.
const SAID: usize = 10;

/// What a run into a folder works with.
pub(super) struct Job<'a> {
    pub target: &'a Layout,
    pub work: &'a Layout,
    pub tables: &'a [Table],
    pub shard: Shard,
    pub policies: &'a Policies,
    /// The parts this process wrote, kept for assembly.
    pub kept: Kept,
    /// The final tables, fed the kept parts in chunk order as they come.
    pub streams: Streams,
    /// Puts the parts in place, durably, off the computing threads.
    pub committer: Committer,
    pub progress: &'a (dyn Fn(Progress) + Sync),
}

impl Job<'_> {
    fn mine(&self, c: u64) -> bool {
        self.shard.owns(c)
    }

    /// Runs the chunks of this shard not yet done, rung by rung for a
    /// raced plan, and assembles the results when they are all there.
    pub fn run(
        &self,
        plan: &mut Plan,
        opts: &Options,
        report: &mut Report,
    ) -> Result<(), RunError> {
        let threads = opts.threads.unwrap_or(0);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| RunError::Pool {
                threads,
                message: e.to_string(),
            })?;
        let mut seen = 0;
        loop {
            report.chunks = plan.chunk_count();
            let (mut resumed, mut todo): (Vec<u64>, Vec<u64>) = (seen..plan.chunk_count())
                .filter(|&c| self.mine(c))
                .partition(|&c| chunk::done(self.work, plan, c));
            if self.shard.count > 1 && !resumed.is_empty() {
                // A shard has no assembly to find a damaged part for it, so
                // it reads back the parts of the chunks it resumes, and
                // runs again any chunk with a part missing or damaged (as
                // a plain run's assembly does): `merge` then finds them
                // whole, and its advice to rerun the owning shard works.
                let damaged: Vec<(u64, String)> = pool.install(|| {
                    resumed
                        .par_iter()
                        .filter_map(|&c| {
                            chunk_problem(plan, self.work, self.tables, c).map(|why| (c, why))
                        })
                        .collect()
                });
                let redo = self.redo(plan, &damaged, report)?;
                resumed.retain(|c| !redo.contains(c));
                todo.extend(redo);
                todo.sort_unstable();
            }
            for &c in &resumed {
                report.chunks_resumed += 1;
                (self.progress)(Progress::Resumed(plan.chunk_runs(c).count() as u64));
            }
            seen = plan.chunk_count();
            if !self.chunks(&pool, plan, &todo, report)? {
                return Ok(());
            }
            if plan.schedule().is_none_or(|s| s.finished()) {
                break;
            }
            if self.shard.count > 1 && !self.wait_for_rung(&pool, plan, report)? {
                return Ok(());
            }
            let decided = plan.schedule().map(|s| s.decisions.len());
            race::grow(plan, self.work)?;
            if plan.schedule().map(|s| s.decisions.len()) == decided {
                return Err(RunError::Incomplete {
                    dir: self.work.dir.display().to_string(),
                    message: "a rung's runs are saved but cannot be read back to decide the race"
                        .into(),
                });
            }
            (self.progress)(Progress::Planned(plan.total));
        }
        let mine: Vec<u64> = (0..report.chunks).filter(|&c| self.mine(c)).collect();
        report.runs_in_shard = mine
            .iter()
            .map(|&c| plan.chunk_runs(c).count() as u64)
            .sum();
        if self.shard.count > 1 {
            return Ok(());
        }
        report.streamed = self.streams.reached();
        // A second pass reruns chunks whose parts assembly found damaged.
        for pass in 0..2 {
            match pool.install(|| assemble(plan, self.work, self.tables, &self.kept, &self.streams))
            {
                Ok(failures) => {
                    report.failures = failures;
                    report.assembled = true;
                    break;
                }
                Err(Assembly::Damaged(damaged)) if pass == 0 => {
                    let chunks = self.redo(plan, &damaged, report)?;
                    if !self.chunks(&pool, plan, &chunks, report)? {
                        return Ok(());
                    }
                }
                Err(Assembly::Damaged(damaged)) => {
                    let chunks: Vec<u64> = damaged.iter().map(|d| d.0).collect();
                    return Err(RunError::Incomplete {
                        dir: self.work.dir.display().to_string(),
                        message: format!(
                            "chunks {chunks:?} were damaged again after being run again"
                        ),
                    });
                }
                Err(Assembly::Failed(e)) => return Err(e),
            }
        }
        if self.work.is_staging() {
            self.target
                .promote(self.work, &table_names(self.tables), &plan.manifest.sources)?;
        }
        Ok(())
    }

    /// Says on stderr which chunks have damaged parts and why, and removes
    /// their parts so that they count as not done; returns the chunks, to
    /// be run again.
    fn redo(
        &self,
        plan: &Plan,
        damaged: &[(u64, String)],
        report: &mut Report,
    ) -> Result<Vec<u64>, RunError> {
        for (k, (c, why)) in damaged.iter().enumerate() {
            let runs = plan.chunk_runs(*c);
            match k {
                0..SAID => eprintln!(
                    "chunk {c} (runs {}..{}) is run again: {why}",
                    runs.start, runs.end
                ),
                SAID => eprintln!("and {} more chunk(s)", damaged.len() - SAID),
                _ => {}
            }
            chunk::remove(self.work, self.tables, *c, &self.kept)?;
        }
        let chunks: Vec<u64> = damaged.iter().map(|d| d.0).collect();
        report.redone.extend(&chunks);
        Ok(chunks)
    }

    /// Runs `todo` over the pool; false when Ctrl-C stopped it.
    fn chunks(
        &self,
        pool: &rayon::ThreadPool,
        plan: &Plan,
        todo: &[u64],
        report: &mut Report,
    ) -> Result<bool, RunError> {
        let executed: Result<Vec<Option<chunk::Failures>>, RunError> = pool.install(|| {
            // Chunks are handed out one at a time, in order: a thread that
            // runs out takes the next chunk (not half of a block the other
            // thread has begun), and the finished chunks form a growing
            // prefix that the final tables' streams can take as they come.
            let mut done = todo
                .iter()
                .enumerate()
                .par_bridge()
                .map(|(i, &c)| chunk::run(plan, self, c).map(|ran| (i, ran)))
                .collect::<Result<Vec<_>, _>>()?;
            done.sort_unstable_by_key(|d| d.0);
            Ok(done.into_iter().map(|d| d.1).collect())
        });
        // Every part handed over is in place (or failed) before anything
        // looks for it on disk; this also holds when a chunk failed.
        let committed = self.committer.wait();
        let executed = executed?;
        committed.map_err(|f| RunError::io(&f.path, f.error))?;
        for (&c, ran) in todo.iter().zip(&executed) {
            if ran.is_some() {
                report.runs_executed += plan.chunk_runs(c).count() as u64;
            }
        }
        // A chunk run just now is done (its parts are in place, as the
        // wait above says); only the others' footers need reading, which
        // was a serial pause of milliseconds before assembly on a fresh
        // run of many chunks.
        let ran: std::collections::HashSet<u64> = todo
            .iter()
            .zip(&executed)
            .filter(|(_, ran)| ran.is_some())
            .map(|(&c, _)| c)
            .collect();
        report.chunks_done = (0..plan.chunk_count())
            .filter(|&c| self.mine(c) && (ran.contains(&c) || chunk::done(self.work, plan, c)))
            .count() as u64;
        if executed.iter().any(Option::is_none) || interrupted() {
            report.interrupted = true;
            return Ok(false);
        }
        if self.shard.count > 1 {
            report
                .failures
                .extend(executed.into_iter().flatten().flatten());
        }
        Ok(true)
    }

    /// A shard of a raced plan waits for the other shards' chunks of the
    /// rung, and runs those of shards no process is running (so shards run
    /// one after another never wait on each other). False on Ctrl-C.
    fn wait_for_rung(
        &self,
        pool: &rayon::ThreadPool,
        plan: &Plan,
        report: &mut Report,
    ) -> Result<bool, RunError> {
        let mut said = false;
        // Earlier rungs are decided, so only the last one can be missing.
        let rung = plan
            .schedule()
            .map_or(0..plan.chunk_count(), |s| s.rung_chunks(s.rungs.len() - 1));
        loop {
            let missing: Vec<u64> = rung
                .clone()
                .filter(|&c| !chunk::done(self.work, plan, c))
                .collect();
            if missing.is_empty() {
                return Ok(true);
            }
            let owner = |c: u64| Shard {
                index: c % self.shard.count,
                count: self.shard.count,
            };
            let free: Vec<u64> = missing
                .iter()
                .copied()
                .filter(|&c| !lock::held(&self.target.dir, owner(c)))
                .collect();
            if !free.is_empty() {
                if !self.chunks(pool, plan, &free, report)? {
                    return Ok(false);
                }
                continue;
            }
            if !said {
                (self.progress)(Progress::Waiting(missing.len() as u64));
                said = true;
            }
            if interrupted() {
                report.interrupted = true;
                return Ok(false);
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
}
