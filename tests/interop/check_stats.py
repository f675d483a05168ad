"""Checks witness's p-values against statsmodels and scipy, independent
implementations. Run by .ci/run:

- `compare --adjust holm` and `--adjust bh`: the adjusted p-values in
  compare.csv equal `statsmodels.stats.multitest.multipletests` (methods
  "holm" and "fdr_bh") of the raw p-values of its testable rows, to 1e-12;
- `compare` on compare-policies: each exact p-value equals
  `scipy.stats.permutation_test` with exact enumeration (sign flips of the
  per-seed differences read from runs.parquet with pyarrow), to 1e-12, and
  each equivalence p equals `statsmodels.stats.weightstats.ttost_paired`
  against +-sesoi, to 1e-9 relative;
- `compare --baseline-rule fisher`: each arm's placebo Fisher p-value
  equals `scipy.stats.fisher_exact(..., alternative="greater")` of the
  flip counts, Holm-adjusted by statsmodels (relative 1e-9: they are tiny);
- `search` of a race: each removed candidate's p-value equals
  `scipy.stats.ttest_rel(..., alternative="greater")` of the per-seed
  scores read from runs.parquet with pyarrow, to 1e-12;
- `summary --by arm`: each 95 % interval's half-width equals
  `scipy.stats.t.ppf(0.975, n - 1)` times the sample sd over the square
  root of n, from the runs read with pyarrow, to 1e-13 relative (statrs's
  t quantile, used before decision 152, was 2.1e-13 off at 59 degrees
  of freedom).

usage: python3 tests/interop/check_stats.py path/to/witness
"""

import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
from scipy.stats import fisher_exact, permutation_test, t as student_t, ttest_rel
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_paired
from checks import check, finish

TOL = 1e-12

QUORUM = Path(__file__).resolve().parents[2] / "experiments" / "quorum-knobs.toml"
POLICIES = Path(__file__).resolve().parents[2] / "experiments" / "compare-policies.toml"
DEFAULT = Path(__file__).resolve().parents[2] / "experiments" / "default.toml"

PLACEBO = """
[experiment]
name = "fisher"
model = "witness"
[fixed]
population = 50
rounds = 20
[grid]
seed = { from = 1, to = 60 }
graph = ["small_world", "hub"]
[[arm]]
name = "endorsement"
policy = "endorsement"
placebo = true
[[arm]]
name = "source_aware"
policy = "source_aware"
[[arm]]
name = "reserved"
policy = "reserved"
"""

RACE = (Path(__file__).resolve().parents[1] / "fixtures" / "race.toml").read_text()


def witness(binary, *args):
    subprocess.run([binary, *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def adjusted(binary, tmp):
    out = tmp / "quorum"
    witness(binary, "run", "-q", QUORUM, "--out", out)
    for adjust, method in [("holm", "holm"), ("bh", "fdr_bh")]:
        witness(binary, "compare", out, "--baseline", "endorsement", "--adjust", adjust)
        d = pd.read_csv(out / "compare.csv")
        rows = d[d["testable"]]
        want = multipletests(rows["p_value"].to_numpy(), method=method)[1]
        got = rows["p_adjusted"].to_numpy()
        gap = float(np.max(np.abs(want - got)))
        check(
            f"compare --adjust {adjust}: {len(rows)} adjusted p-values equal multipletests({method!r})",
            len(rows) >= 40 and gap <= TOL and d[~d["testable"]]["p_adjusted"].isna().all(),
            f"max gap {gap}",
        )


def exact(binary, tmp):
    out = tmp / "policies"
    witness(binary, "run", "-q", POLICIES, "--out", out)
    witness(binary, "compare", out, "--baseline", "endorsement")
    d = pd.read_csv(out / "compare.csv")
    runs = pq.read_table(out / "runs.parquet").to_pandas()
    base = runs[runs["arm"] == "endorsement"]
    worst_p, worst_tost, checked = 0.0, 0.0, 0
    for r in d[d["testable"]].itertuples():
        scenario = dict(kv.split("=") for kv in r.scenario.split(", "))
        truth = scenario["truth"] == "true"

        def values(frame):
            s = frame[(frame["truth"] == truth) & (frame["graph"] == scenario["graph"])]
            return s.sort_values("seed")["peak_mistaken"].to_numpy()

        x, y = values(runs[runs["arm"] == r.arm]), values(base)
        diff = x - y
        want = permutation_test(
            (diff,), np.sum, permutation_type="samples", n_resamples=np.inf,
            alternative="two-sided",
        ).pvalue
        worst_p = max(worst_p, abs(want - r.p_value))
        tost = ttost_paired(x, y, -r.sesoi, r.sesoi)[0]
        worst_tost = max(worst_tost, abs(math.log(tost) - math.log(r.tost_p)))
        checked += 1
    check(
        f"compare: {checked} exact p-values equal scipy's permutation_test (exact)",
        checked == 8 and worst_p <= TOL and (d["p_method"][d["testable"]] == "exact-enumeration").all(),
        f"worst gap {worst_p}",
    )
    check(
        f"compare: {checked} equivalence p-values equal statsmodels' ttost_paired",
        checked == 8 and worst_tost <= 1e-9,
        f"worst relative gap {worst_tost}",
    )


def fisher(binary, tmp):
    path = tmp / "fisher.toml"
    path.write_text(PLACEBO)
    out = tmp / "fisher"
    witness(binary, "run", "-q", path, "--out", out)
    witness(binary, "compare", out, "--baseline", "endorsement", "--baseline-rule", "fisher")
    d = pd.read_csv(out / "compare.csv")
    rows = d[d["placebo_fisher_p"].notna()]
    raw = [
        fisher_exact(
            [[r.flips, r.samples - r.flips], [r.placebo_flips, r.samples - r.placebo_flips]],
            alternative="greater",
        ).pvalue
        for r in rows.itertuples()
    ]
    want = multipletests(raw, method="holm")[1] if raw else []
    got = rows["placebo_fisher_p"].to_numpy()
    close = all(
        (w == g) or (w > 0 and g > 0 and abs(math.log(w) - math.log(g)) <= 1e-9)
        for w, g in zip(want, got)
    )
    check(
        f"compare --baseline-rule fisher: {len(rows)} placebo p-values equal fisher_exact(greater), Holm-adjusted",
        len(rows) >= 2 and close,
        f"want {list(want)} got {list(got)}",
    )


def race(binary, tmp):
    path = tmp / "race.toml"
    path.write_text(RACE)
    out = tmp / "race"
    witness(binary, "run", "-q", path, "--out", out)
    witness(binary, "search", out)
    runs = pq.read_table(out / "runs.parquet").to_pandas()
    runs["candidate"] = runs.apply(lambda r: f"{r['arm']}[gain={r['gain']:.1f}]", axis=1)
    # A candidate's score on a seed: the metric's mean over the truths.
    scores = runs.groupby(["candidate", "seed"])["mean_mistaken"].mean()
    removed = pd.read_csv(out / "search.csv")
    removed = removed[removed["outcome"] == "tested"]
    gaps = []
    for r in removed.itertuples():
        mine = scores.loc[r.candidate]
        best = scores.loc[r.against].loc[mine.index]
        # Lower is better: the removed one's scores are greater. Equal
        # differences have no variance: witness then uses the exact sign
        # test (scipy's t is infinite there).
        d = mine.to_numpy() - best.to_numpy()
        if np.all(d == d[0]):
            p = 0.5 ** len(d) if d[0] > 0 else 1.0
        else:
            p = ttest_rel(mine.to_numpy(), best.to_numpy(), alternative="greater").pvalue
        gaps.append(abs(p - r.p_value))
    check(
        f"search: {len(gaps)} removed candidates' p-values equal ttest_rel(greater)",
        len(gaps) >= 2 and max(gaps) <= TOL,
        f"gaps {gaps}",
    )


def intervals(binary, tmp):
    out = tmp / "default"
    witness(binary, "run", "-q", DEFAULT, "--out", out)
    witness(binary, "summary", out, "--by", "arm")
    runs = pq.read_table(out / "runs.parquet").to_pandas()
    table = pd.read_csv(out / "summary.csv")
    worst, n = 0.0, 0
    for r in table.itertuples():
        xs = runs.loc[runs["arm"] == r.arm, r.metric].dropna().to_numpy(dtype=float)
        sd = xs.std(ddof=1)
        if len(xs) < 2 or sd == 0:
            continue
        want = student_t.ppf(0.975, len(xs) - 1) * sd / math.sqrt(len(xs))
        got = (r.ci95_high - r.ci95_low) / 2
        worst = max(worst, abs(got - want) / want)
        n += 1
    check(
        f"summary --by arm: {n} interval half-widths equal t.ppf(0.975) sd / sqrt(n) (worst {worst:.1e})",
        n >= 6 and worst <= 1e-13,
        f"worst relative gap {worst:.2e}",
    )


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        adjusted(binary, tmp)
        exact(binary, tmp)
        fisher(binary, tmp)
        race(binary, tmp)
        intervals(binary, tmp)
    finish("statsmodels and scipy")


if __name__ == "__main__":
    main()
