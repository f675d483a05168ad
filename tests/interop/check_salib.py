"""Checks witness's sampled designs and sensitivity indices against SALib,
an independent implementation. Run by .ci/run:

- the Sobol' design's points (`witness design`) equal
  `SALib.sample.sobol.sample(problem, N, calc_second_order=..., scramble=False)`
  exactly, for D = 2, 5 and 12 factors, in the unit cube and scaled;
- given witness's own points and outputs (a cascade experiment run here),
  `witness sensitivity` equals `SALib.analyze.sobol.analyze` (S1, ST, S2)
  and `SALib.analyze.morris.analyze` (mu, mu_star, sigma) to 1e-12.

usage: python3 tests/interop/check_salib.py path/to/witness
"""

import csv
import io
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from SALib.analyze import morris as morris_analyze
from SALib.analyze import sobol as sobol_analyze
from SALib.sample import sobol as sobol_sample
from checks import check, finish

TOL = 1e-12

# Cascade parameters used as factors: (name, from, to, float?).
FACTORS = [
    ("communication", 0.1, 0.9, True),
    ("gain", 1.0, 9.0, True),
    ("report_fraction", 0.05, 0.6, True),
    ("probe_fraction", 0.0, 0.05, True),
    ("shortcut_prob", 0.0, 0.3, True),
    ("within_prob", 0.5, 1.0, True),
    ("hub_fraction", 0.01, 0.2, True),
    ("check_delay", 0, 6, False),
    ("module_links", 1, 4, False),
    ("hub_links", 1, 4, False),
    ("threshold", 1, 5, False),
    ("window", 1, 6, False),
]



def manifest(factors, design, fixed="", arms=""):
    lines = [
        "[experiment]",
        'name = "salib"',
        'model = "witness"',
        "[fixed]",
        "population = 60",
        "rounds = 15",
        fixed,
        "[grid]",
        "seed = [1, 2]",
        "[design]",
        design,
        "[design.factors]",
    ]
    for name, lo, hi, is_float in factors:
        if is_float:
            lines.append(f"{name} = {{ from = {lo!r}, to = {hi!r} }}")
        else:
            lines.append(f"{name} = {{ from = {lo}, to = {hi} }}")
    return "\n".join(lines) + "\n" + arms


def witness(bin_, *args):
    out = subprocess.run([bin_, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"witness {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout


def read_points(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0][1:], np.array([[float(x) for x in r[1:]] for r in rows[1:]])


def problem(factors, unit):
    return {
        "num_vars": len(factors),
        "names": [f[0] for f in factors],
        "bounds": [[0.0, 1.0] if unit else [float(f[1]), float(f[2])] for f in factors],
    }


def sobol_points(bin_, tmp):
    for d, base, second in [(2, 64, True), (5, 32, False), (5, 16, True), (12, 16, True)]:
        fs = FACTORS[:d]
        path = tmp / f"sobol-{d}-{second}.toml"
        path.write_text(
            manifest(fs, f'kind = "sobol"\nbase = {base}\nsecond_order = {str(second).lower()}')
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want_unit = sobol_sample.sample(
                problem(fs, True), base, calc_second_order=second, scramble=False
            )
            want = sobol_sample.sample(
                problem(fs, False), base, calc_second_order=second, scramble=False
            )
        _, unit = read_points(witness(bin_, "design", "--unit", str(path)))
        check(
            f"Sobol' design D={d} N={base} second_order={second}: unit points equal SALib's",
            unit.shape == want_unit.shape and np.array_equal(unit, want_unit),
            f"shapes {unit.shape} {want_unit.shape}",
        )
        _, scaled = read_points(witness(bin_, "design", str(path)))
        floats = [j for j, f in enumerate(fs) if f[3]]
        check(
            f"Sobol' design D={d}: scaled float factors equal SALib's exactly",
            np.array_equal(scaled[:, floats], want[:, floats]),
        )


def outputs(bin_, path, out, metric):
    witness(bin_, "run", "-q", "--out", str(out), str(path))
    runs = pd.read_parquet(out / "runs.parquet")
    y = runs.groupby("design_point")[metric].mean().sort_index().to_numpy()
    return y


def close(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    both_nan = np.isnan(a) & np.isnan(b)
    return a.shape == b.shape and bool(np.all(both_nan | (np.abs(a - b) <= TOL)))


def sobol_indices(bin_, tmp):
    fs = FACTORS[:4]
    path = tmp / "sobol-run.toml"
    path.write_text(manifest(fs, 'kind = "sobol"\nbase = 64', arms='[[arm]]\nname = "e"\npolicy = "endorsement"\n'))
    out = tmp / "sobol-out"
    y = outputs(bin_, path, out, "peak_mistaken")
    witness(bin_, "sensitivity", str(out), "--metric", "peak_mistaken")
    got = pd.read_csv(out / "sensitivity.csv")
    si = sobol_analyze.analyze(problem(fs, False), y, calc_second_order=True, seed=1)
    names = [f[0] for f in fs]
    for index in ["S1", "ST"]:
        ours = [got[(got["index"] == index) & (got["factor"] == n)]["estimate"].item() for n in names]
        check(f"Sobol' {index} equals SALib's to {TOL}", close(ours, si[index]), f"{ours} vs {si[index]}")
    ours2, theirs2 = [], []
    for j in range(len(names)):
        for k in range(j + 1, len(names)):
            row = got[(got["index"] == "S2") & (got["factor"] == names[j]) & (got["with"] == names[k])]
            ours2.append(row["estimate"].item())
            theirs2.append(si["S2"][j][k])
    check(f"Sobol' S2 equals SALib's to {TOL}", close(ours2, theirs2), f"{ours2} vs {theirs2}")


def morris_indices(bin_, tmp):
    fs = FACTORS[:5]
    levels = 6
    path = tmp / "morris-run.toml"
    path.write_text(
        manifest(fs, f'kind = "morris"\ntrajectories = 30\nlevels = {levels}\nseed = 5',
                 arms='[[arm]]\nname = "e"\npolicy = "endorsement"\n')
    )
    out = tmp / "morris-out"
    y = outputs(bin_, path, out, "mean_mistaken")
    witness(bin_, "sensitivity", str(out), "--metric", "mean_mistaken")
    got = pd.read_csv(out / "sensitivity.csv")
    _, x = read_points(witness(bin_, "design", "--unit", str(path)))
    si = morris_analyze.analyze(problem(fs, True), x, y, num_levels=levels, seed=1)
    names = [f[0] for f in fs]
    for index in ["mu", "mu_star", "sigma"]:
        ours = [got[(got["index"] == index) & (got["factor"] == n)]["estimate"].item() for n in names]
        check(f"Morris {index} equals SALib's to {TOL}", close(ours, si[index]), f"{ours} vs {list(si[index])}")


def main():
    bin_ = sys.argv[1]
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        sobol_points(bin_, tmp)
        sobol_indices(bin_, tmp)
        morris_indices(bin_, tmp)
    finish("salib")


if __name__ == "__main__":
    main()
