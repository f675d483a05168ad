//! The runs of a raced plan, rung by rung. Run ids are numbered in the
//! order rungs are run (rung 0's runs first, each rung in grid order), so
//! a raced results folder holds runs 0..n like any other; each run keeps
//! the grid point (and so the parameters and the results) it has in the
//! full grid. Each rung starts a new chunk, so no chunk waits on a
//! decision. The next rung is a function of the scores recorded so far.

use std::ops::Range;

use super::{decide, Decision, Method, Search};

#[derive(Clone, Debug, PartialEq)]
pub struct Rung {
    /// The rung's first run id.
    pub start: u64,
    /// The candidates it runs, ascending.
    pub candidates: Vec<usize>,
    /// The resource values it adds (positions on the resource axis).
    pub values: Range<usize>,
}

/// Where candidates sit in the full grid: candidate k's runs are the grid
/// ids `starts[k] .. starts[k] + per_candidate`, its common-axis points in
/// order; the resource axis steps every `stride` of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    pub starts: Vec<u64>,
    /// Candidates that run every resource value and are never removed (a
    /// placebo and its arm).
    pub exempt: Vec<bool>,
    pub per_candidate: u64,
    pub stride: u64,
    pub values: u64,
}

impl Geometry {
    /// The resource value of a run at common-axis point `ci`.
    fn value_of(&self, ci: u64) -> usize {
        ((ci / self.stride) % self.values) as usize
    }
}

#[derive(Clone, Debug)]
pub struct Schedule {
    pub search: Search,
    geometry: Geometry,
    /// The grid id of each run, by run id.
    grid: Vec<u64>,
    pub rungs: Vec<Rung>,
    /// One per decided rung.
    pub decisions: Vec<Decision>,
    chunk_starts: Vec<u64>,
    chunk_runs: u64,
    /// Per candidate, its score on each resource value it was run on.
    pub scores: Vec<Vec<f64>>,
}

impl Schedule {
    /// A race at its start: every candidate on the first rung's values.
    pub fn new(search: Search, geometry: Geometry, chunk_runs: u64) -> Schedule {
        let all: Vec<usize> = (0..geometry.starts.len()).collect();
        let first = search.budgets()[0];
        let mut s = Schedule {
            scores: vec![Vec::new(); all.len()],
            search,
            geometry,
            grid: Vec::new(),
            rungs: Vec::new(),
            decisions: Vec::new(),
            chunk_starts: Vec::new(),
            chunk_runs,
        };
        s.push_rung(all, 0..first);
        s
    }

    fn push_rung(&mut self, candidates: Vec<usize>, values: Range<usize>) {
        let start = self.grid.len() as u64;
        let g = &self.geometry;
        for &c in &candidates {
            let base = g.starts[c];
            self.grid.extend(
                (0..g.per_candidate)
                    .filter(|&ci| values.contains(&g.value_of(ci)))
                    .map(|ci| base + ci),
            );
        }
        let end = self.grid.len() as u64;
        self.chunk_starts
            .extend((start..end).step_by(self.chunk_runs as usize));
        self.rungs.push(Rung {
            start,
            candidates,
            values,
        });
    }

    /// Runs scheduled so far.
    pub fn len(&self) -> u64 {
        self.grid.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.grid.is_empty()
    }

    pub fn candidates(&self) -> usize {
        self.geometry.starts.len()
    }

    /// The full grid's id of a candidate's first run.
    pub fn candidate_start(&self, candidate: usize) -> u64 {
        self.geometry.starts[candidate]
    }

    /// Runs of a candidate per resource value (the other common axes).
    pub fn runs_per_value(&self) -> u64 {
        self.geometry.per_candidate / self.geometry.values
    }

    /// The full grid's id of a run.
    pub fn grid_id(&self, run: u64) -> u64 {
        self.grid[run as usize]
    }

    pub fn rung_of(&self, run: u64) -> usize {
        self.rungs.partition_point(|r| r.start <= run) - 1
    }

    /// The run ids of rung `k`.
    pub fn rung_runs(&self, k: usize) -> Range<u64> {
        let end = self.rungs.get(k + 1).map_or(self.len(), |r| r.start);
        self.rungs[k].start..end
    }

    pub fn chunk_count(&self) -> u64 {
        self.chunk_starts.len() as u64
    }

    pub fn chunk_runs(&self, chunk: u64) -> Range<u64> {
        let start = self.chunk_starts[chunk as usize];
        let rung = self.rung_runs(self.rung_of(start));
        start..(start + self.chunk_runs).min(rung.end)
    }

    pub fn chunk_of(&self, run: u64) -> u64 {
        self.chunk_starts.partition_point(|&s| s <= run) as u64 - 1
    }

    /// The chunks of rung `k`.
    pub fn rung_chunks(&self, k: usize) -> Range<u64> {
        let runs = self.rung_runs(k);
        let first = self.chunk_starts.partition_point(|&s| s < runs.start) as u64;
        let end = self.chunk_starts.partition_point(|&s| s < runs.end) as u64;
        first..end
    }

    /// Every rung is decided and no further rung is due.
    pub fn finished(&self) -> bool {
        self.decisions.len() == self.rungs.len()
    }

    /// The candidate and resource value of a grid id.
    pub fn place(&self, grid_id: u64) -> (usize, usize) {
        let g = &self.geometry;
        let c = g.starts.partition_point(|&s| s <= grid_id) - 1;
        (c, g.value_of(grid_id - g.starts[c]))
    }

    /// Records the metric of every run of the undecided rung, in run
    /// order, decides it, and schedules the next rung if one is due. A
    /// candidate's score on a resource value is its metric's mean over
    /// the other common axes.
    pub fn record(&mut self, metric: &[f64]) {
        assert!(!self.finished(), "every rung is decided");
        let k = self.decisions.len();
        let runs = self.rung_runs(k);
        assert_eq!(
            metric.len() as u64,
            runs.end - runs.start,
            "one value per run"
        );
        let (candidates, values) = (&self.rungs[k].candidates, self.rungs[k].values.clone());
        let width = values.len();
        let mut sums = vec![0.0; candidates.len() * width];
        let mut counts = vec![0u32; candidates.len() * width];
        for (run, &x) in runs.zip(metric) {
            let (c, v) = self.place(self.grid[run as usize]);
            let at = candidates
                .binary_search(&c)
                .expect("a candidate of the rung")
                * width
                + (v - values.start);
            sums[at] += x;
            counts[at] += 1;
        }
        for (j, &c) in candidates.iter().enumerate() {
            let row = (0..width).map(|v| sums[j * width + v] / f64::from(counts[j * width + v]));
            self.scores[c].extend(row);
        }
        let budgets = self.search.budgets();
        let last = k + 1 == budgets.len();
        let (free, kept): (Vec<usize>, Vec<usize>) =
            candidates.iter().partition(|&&c| !self.geometry.exempt[c]);
        let mut decision = if free.is_empty() {
            Decision {
                alive: Vec::new(),
                removed: Vec::new(),
                best: candidates[0],
            }
        } else {
            let seen: Vec<Vec<f64>> = free.iter().map(|&c| self.scores[c].clone()).collect();
            decide(&self.search, &free, &seen, last)
        };
        let racing = decision.alive.len();
        decision.alive.extend(kept);
        decision.alive.sort_unstable();
        // Halving gives its survivors the whole budget; a race is over
        // once no more than the floor is left.
        let due = match self.search.method {
            Method::Halving => !last,
            Method::Race => !last && racing > self.search.keep_at_least,
        };
        let next = due.then(|| (decision.alive.clone(), budgets[k]..budgets[k + 1]));
        self.decisions.push(decision);
        if let Some((alive, values)) = next {
            self.push_rung(alive, values);
        }
    }

    /// The candidates still in after the last decided rung.
    pub fn survivors(&self) -> &[usize] {
        self.decisions
            .last()
            .map_or(&self.rungs[0].candidates, |d| &d.alive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four candidates of six runs each: seeds 0..3 (the resource, outer)
    /// times two truths (inner).
    fn schedule(method: Method) -> Schedule {
        let search = Search {
            method,
            metric: "m",
            maximize: true,
            resource: 0,
            first: 1,
            eta: 2,
            max: 3,
            alpha: 0.05,
            keep_at_least: 1,
        };
        let geometry = Geometry {
            starts: vec![0, 6, 12, 18],
            exempt: vec![false; 4],
            per_candidate: 6,
            stride: 2,
            values: 3,
        };
        Schedule::new(search, geometry, 3)
    }

    #[test]
    fn rungs_take_the_next_resource_values_of_the_survivors() {
        let mut s = schedule(Method::Halving);
        assert_eq!(s.len(), 8);
        assert_eq!(
            (0..8).map(|r| s.grid_id(r)).collect::<Vec<_>>(),
            [0, 1, 6, 7, 12, 13, 18, 19]
        );
        assert_eq!(s.chunk_count(), 3);
        assert_eq!(s.chunk_runs(2), 6..8);
        // Candidate 2 then 3 score best; halving keeps two of four.
        s.record(&[1.0, 1.0, 2.0, 2.0, 5.0, 5.0, 4.0, 4.0]);
        assert_eq!(s.survivors(), [2, 3]);
        assert_eq!(s.rungs[1].values, 1..2);
        assert_eq!(s.rung_runs(1), 8..12);
        assert_eq!(s.grid_id(8), 14);
        // Rung 1 starts a chunk of its own.
        assert_eq!(s.chunk_count(), 5);
        assert_eq!(s.chunk_runs(3), 8..11);
        assert_eq!(s.rung_chunks(1), 3..5);
        assert_eq!(s.rung_of(11), 1);
        // The truths average into one score per seed.
        s.record(&[1.0, 3.0, 9.0, 9.0]);
        assert_eq!(s.scores[2], [5.0, 2.0]);
        assert_eq!(s.survivors(), [3]);
        // Halving gives its survivor the rest of the budget.
        assert!(!s.finished());
        assert_eq!(s.rungs[2].values, 2..3);
        s.record(&[7.0, 7.0]);
        assert!(s.finished());
        assert_eq!(s.scores[3], [4.0, 9.0, 7.0]);
    }

    #[test]
    fn a_race_is_over_once_the_floor_is_reached() {
        let mut s = schedule(Method::Race);
        // One value tests nothing: all four go on.
        s.record(&[1.0, 1.0, 2.0, 2.0, 5.0, 5.0, 4.0, 4.0]);
        assert_eq!(s.survivors(), [0, 1, 2, 3]);
        // Candidate 2 stays ahead by about 4, 3 and 1 with little spread:
        // paired t on 1 df rejects each below 0.05 after Holm.
        s.record(&[0.9, 0.9, 1.9, 1.9, 5.0, 5.0, 3.9, 3.9]);
        assert_eq!(s.survivors(), [2]);
        // One left at the floor: no third rung, budget or not.
        assert!(s.finished());
        assert_eq!(s.rungs.len(), 2);
    }

    #[test]
    fn place_finds_candidate_and_resource_value() {
        let s = schedule(Method::Race);
        assert_eq!(s.place(0), (0, 0));
        assert_eq!(s.place(11), (1, 2));
        assert_eq!(s.place(14), (2, 1));
    }
}
