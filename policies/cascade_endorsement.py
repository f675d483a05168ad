#!/usr/bin/env python3
"""The cascade's built-in endorsement rule as an external policy.

A loopback: run through witness-policy/1 it must give exactly the results
of `policy = "endorsement"`, which is what makes it a check of the protocol
(draws, barriers, float transport, the record log) rather than of a rule.
Standard library only. Speaks JSON Lines on stdin/stdout; anything for a
human goes to stderr.
"""

import decimal
import functools
import hashlib
import json
import sys

# 40 digits: the published hardest cases of rounding a double's exponential
# need about 120 bits (36 digits), so rounding the 40-digit value again, to
# a double, gives the exact value rounded.
EXACT = decimal.Context(prec=40)


@functools.lru_cache(maxsize=1 << 18)  # at most about 60 MB
def exp(x):
    """e^x correctly rounded, as witness computes it: `math.exp` is the C
    library's, whose last bit can differ from the exact value rounded."""
    return float(EXACT.exp(decimal.Decimal(x)))


def identity():
    with open(__file__, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"name": "cascade-endorsement-py", "version": "1", "digest": digest}


def clip(x):
    return min(0.99, max(0.01, x))


def check_probability(params, belief):
    c = params["communication"]
    if params["allocation"] == "fixed":
        return 1.0 - c
    q = 2.0 * abs(belief - 0.5)
    return (1.0 - c) * (1.0 - 0.85 * q)


def decide(params, item):
    obs = item["obs"]
    u = obs["draws"]["check"]
    if u is not None and u < check_probability(params, obs["belief"]):
        return {"key": item["key"], "action": "check"}
    h = [m["belief"] for m in obs["messages"]]
    m = (((h[0] + h[1]) + h[2]) + h[3]) / 4.0
    social = 1.0 / (1.0 + exp(-params["gain"] * (m - 0.5)))
    belief = clip(0.55 * obs["belief"] + 0.45 * social)
    return {"key": item["key"], "action": "read", "belief": belief}


def main():
    out = sys.stdout
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            reply = {"type": "ready", "protocol": msg["protocol"], "policy": identity()}
        elif kind == "decide":
            params = msg["run"]["params"]
            items = [decide(params, it) for it in msg["items"]]
            reply = {"type": "decisions", "batch": msg["batch"], "items": items}
        elif kind == "bye":
            return
        else:
            print(f"cascade_endorsement.py: unknown message {kind!r}", file=sys.stderr)
            continue
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
