#!/usr/bin/env python3
"""witness's correctly rounded `exp` against mpmath (decision 151).

- Each input of the `HARD` table in src/math/mod.rs, where glibc's FMA `exp`
  is one bit off, must map to mpmath's 300-bit value rounded to nearest;
  the unit test beside the table holds `math::exp` to the same bits.
- The Python twins in policies/ round `exp` (and `ln`) with `decimal` at
  40 digits; over 20,000 seeded inputs and the table's, they must give
  mpmath's bits too, so the loopbacks compare like with like.

Usage: python3 tests/interop/check_math.py   (run from the repository)
"""
import importlib.util
import random
import re
import struct
import sys

import mpmath

mpmath.mp.prec = 300


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def exact_exp(x):
    return float(mpmath.exp(mpmath.mpf(x)))


def exact_ln(x):
    return float(mpmath.log(mpmath.mpf(x)))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    text = open("src/math/mod.rs").read()
    table = re.search(r"const HARD: \[\(f64, u64\); \d+\] = \[(.*?)\];", text, re.S)
    pairs = re.findall(r"\(([-0-9.e]+), (0x[0-9a-f]+)\)", table.group(1))
    if len(pairs) < 8:
        sys.exit(f"FAIL: found {len(pairs)} entries in src/math/mod.rs's HARD table")
    failures = 0
    for x, want in pairs:
        got = bits(exact_exp(float(x)))
        if got != int(want, 16):
            print(f"FAIL: HARD entry exp({x}): table {want}, mpmath {got:#018x}")
            failures += 1
    rng = random.Random(151)
    inputs = [float(x) for x, _ in pairs] + [rng.uniform(-50.0, 50.0) for _ in range(20_000)]
    twins = [load("policies/cascade_endorsement.py", "cascade_twin"),
             load("policies/harness_scripted.py", "harness_twin")]
    for twin in twins:
        for x in inputs:
            if bits(twin.exp(x)) != bits(exact_exp(x)):
                print(f"FAIL: {twin.__name__}.exp({x!r}) is not the exact value rounded")
                failures += 1
    step = twins[1].LOG_ODDS_STEP
    if bits(step) != bits(exact_ln(0.68 / 0.32)):
        print(f"FAIL: harness twin's ln(0.68 / 0.32) = {step!r}")
        failures += 1
    if failures:
        sys.exit(f"{failures} failures")
    print(f"ok: {len(pairs)} table entries and {len(inputs)} twin inputs per twin match mpmath")


if __name__ == "__main__":
    main()
