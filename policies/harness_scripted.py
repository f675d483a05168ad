#!/usr/bin/env python3
"""The harness's scripted control policies (echo, dedupe, prober) as an
external policy: `harness_scripted.py echo|dedupe|prober`.

Twins of the built-in `policy = "echo" | "dedupe" | "prober"`: run through
witness-policy/1 on the same seeds they must give exactly the built-in
results, which checks the harness's observation (everything a policy needs
is in it) and the protocol, not the rules. Standard library only. JSON
Lines on stdin/stdout; anything for a human goes to stderr.
"""

import decimal
import functools
import hashlib
import json
import sys

# witness's exponential and logarithm are correctly rounded, while
# `math.exp` and `math.log` are the C library's, whose last bit can differ.
# 40 digits: the published hardest cases of rounding either function of a
# double need about 120 bits (36 digits), so rounding the 40-digit value
# again, to a double, gives the exact value rounded.
EXACT = decimal.Context(prec=40)


@functools.lru_cache(maxsize=1 << 18)  # at most about 60 MB
def exp(x):
    return float(EXACT.exp(decimal.Decimal(x)))


DEDUPE_PROBE_CHANCE = 0.2
LOG_ODDS_STEP = float(EXACT.ln(decimal.Decimal(0.68 / 0.32)))


def identity(policy):
    with open(__file__, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return {"name": f"harness-{policy}-py", "version": "1", "digest": digest}


def clip(x):
    return min(0.99, max(0.01, x))


def stance_of(belief):
    if belief >= 0.65:
        return "supports"
    if belief <= 0.35:
        return "refutes"
    return "unsure"


def passed(text):
    """The test run passed when its last non-blank line reports no failure."""
    lines = [l for l in text.splitlines() if l.strip()]
    return bool(lines) and "passed" in lines[-1] and "failed" not in lines[-1]


def verdict(text):
    return 0.99 if passed(text) else 0.01


def picked(obs):
    return obs["neighbours"][obs["draws"]["pick"]]


def relay(obs, stance, belief, cites):
    return {"action": "relay", "to": picked(obs), "stance": stance,
            "belief": belief, "cites": cites}


def echo(obs):
    if not obs["recent"]:
        return {"action": "pass", "belief": obs["belief"]}
    m = obs["recent"][-1]
    return relay(obs, m["stance"], m["belief"], m["cites"])


def dedupe_belief(obs):
    if obs["latest_probe"] is not None:
        return verdict(obs["latest_probe"]["text"])
    seen = {}
    for m in reversed(obs["recent"]):
        for root in m["cites"]:
            seen.setdefault(root, m["stance"])
    sign = {"supports": 1, "refutes": -1, "unsure": 0}
    verified = sum(sign[s] for r, s in seen.items() if r.startswith("probe:"))
    if verified > 0:
        return 0.99
    if verified < 0:
        return 0.01
    steps = sum(sign[s] for r, s in seen.items() if not r.startswith("probe:"))
    log_odds = min(4.6, max(-4.6, steps * LOG_ODDS_STEP))
    return clip(1.0 / (1.0 + exp(-log_odds)))


def dedupe(obs):
    belief = dedupe_belief(obs)
    roots = obs["roots"]
    has_probe = any(r.startswith("probe:") for r in roots)
    if not has_probe and obs["draws"]["u"] < DEDUPE_PROBE_CHANCE:
        return {"action": "probe", "belief": belief}
    if not roots:
        return {"action": "pass", "belief": belief}
    return relay(obs, stance_of(belief), belief, roots)


def prober(obs):
    if obs["latest_probe"] is None:
        return {"action": "probe", "belief": obs["belief"]}
    belief = verdict(obs["latest_probe"]["text"])
    return relay(obs, stance_of(belief), belief, [f"probe:{obs['agent']}"])


POLICIES = {"echo": echo, "dedupe": dedupe, "prober": prober}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in POLICIES:
        print(f"usage: harness_scripted.py {'|'.join(POLICIES)}", file=sys.stderr)
        sys.exit(2)
    name = sys.argv[1]
    rule = POLICIES[name]
    out = sys.stdout
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "hello":
            reply = {"type": "ready", "protocol": msg["protocol"], "policy": identity(name)}
        elif kind == "decide":
            items = [dict(rule(it["obs"]), key=it["key"]) for it in msg["items"]]
            reply = {"type": "decisions", "batch": msg["batch"], "items": items}
        elif kind == "bye":
            return
        else:
            print(f"harness_scripted.py: unknown message {kind!r}", file=sys.stderr)
            continue
        out.write(json.dumps(reply, separators=(",", ":")) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
