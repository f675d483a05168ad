#!/usr/bin/env python3
"""Finds inputs where this machine's C library `exp` is not correctly
rounded, and prints them with the correctly rounded result for the `HARD`
table of src/math/mod.rs.

The exact value comes from mpmath at 300 bits, rounded to the nearest
double: an implementation independent of the C library and of witness.
Usage: python3 tests/golden/exp_cr.py [COUNT]   (needs `pip install mpmath`)
"""
import math
import random
import struct
import sys

import mpmath

mpmath.mp.prec = 300


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def correctly_rounded_exp(x):
    # mpmath's float() rounds its 300-bit value to the nearest double.
    return float(mpmath.exp(mpmath.mpf(x)))


def main():
    want = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    rng = random.Random(151)
    found = []
    while len(found) < want:
        # The range the cascade's logistic step uses: -gain * (m - 0.5).
        x = rng.uniform(-6.0, 6.0)
        cr = correctly_rounded_exp(x)
        if math.exp(x) != cr:
            found.append((x, cr))
    print(f"const HARD: [(f64, u64); {len(found)}] = [")
    for x, cr in found:
        print(f"    ({x!r}, {bits(cr):#018x}),")
    print("];")


if __name__ == "__main__":
    main()
