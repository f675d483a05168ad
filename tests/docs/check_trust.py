#!/usr/bin/env python3
"""Runs the Python blocks of docs/models/trust.md and checks them against the
witness binary: the worked example of experiments/trust/ (all four output
tables and `trust compare`), the Beta quantile references and Parquet
variants in tests/fixtures/trust/, bad inputs, a reputation fed back, the
calibration scenarios, and trust-sim runs of every attack.

Usage: check_trust.py [REPO_ROOT [WITNESS]]
  REPO_ROOT defaults to two folders above this file; WITNESS to `witness` on
  PATH, else REPO_ROOT/target/release/witness.

Prints one "ok: ..." line per check; exits 1 naming the first mismatch.
"""

import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_blocks  # noqa: E402 - beside this script
import tempfile

TOLERANCE = 1e-10
TABLES = ["actors", "items", "signals", "relations", "sources", "ratings"]


class Mismatch(Exception):
    pass


def load_blocks(doc_path):
    return doc_blocks.load_blocks(doc_path, "trust_doc", Mismatch)


def same(want, got, path):
    """`want` from the binary, `got` from the document: discrete values
    exactly, floats within TOLERANCE, objects with the same keys in order."""
    if isinstance(want, dict):
        if not isinstance(got, dict) or list(want) != list(got):
            raise Mismatch(f"{path}: keys {list(want)} expected, got {got!r}"[:400])
        for k in want:
            same(want[k], got[k], f"{path}.{k}")
    elif isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            raise Mismatch(f"{path}: expected {want!r}, got {got!r}"[:400])
        for k, (w, g) in enumerate(zip(want, got)):
            same(w, g, f"{path}[{k}]")
    elif isinstance(want, float) and not isinstance(got, bool):
        if not isinstance(got, (int, float)) or not math.isfinite(got) or abs(want - got) > TOLERANCE:
            raise Mismatch(f"{path}: expected {want!r}, got {got!r}")
    elif want != got or type(want) is not type(got):
        raise Mismatch(f"{path}: expected {want!r}, got {got!r}")


def typed(cell, like):
    """A CSV cell of the binary's output, typed like the document's value."""
    if isinstance(like, (dict, list)):
        return json.loads(cell)
    if isinstance(like, bool):
        return cell == "true"
    if isinstance(like, int):
        return int(cell)
    if isinstance(like, float):
        return float(cell)
    return cell


def same_table(csv_path, rows, name):
    with open(csv_path, newline="", encoding="utf-8") as f:
        got = list(csv.DictReader(f))
    if len(got) != len(rows):
        raise Mismatch(f"{name}: binary wrote {len(got)} rows, the document gives {len(rows)}")
    for i, (g, mine) in enumerate(zip(got, rows)):
        if set(g) - set(mine):
            raise Mismatch(f"{name} row {i + 1}: columns {sorted(set(g) - set(mine))} missing in the document")
        for col, cell in g.items():
            same(typed(cell, mine[col]), mine[col], f"{name}[{i + 1}].{col}")


def run(witness, args, cwd, code=0):
    p = subprocess.run([witness] + args, cwd=cwd, capture_output=True, text=True)
    if p.returncode != code:
        raise Mismatch(f"witness {' '.join(args)}: exit {p.returncode}, expected {code}\n{p.stderr}")
    return p


def score_args(files, today, out):
    args = ["trust", "score"]
    for name, path in files.items():
        args += [f"--{name}", path]
    return args + ["--today", str(today), "--out", out, "--csv"]


def check_outputs(ns, witness, tmp, files, today, label, tables=None, previous=None, rep_flag=None):
    """Scores `files` with the binary and `tables` (default: the same CSV
    files) with the document; compares the four tables."""
    out = os.path.join(tmp, "out-" + re.sub(r"\W", "_", label))
    args = score_args(files, today, out)
    if rep_flag:
        args += ["--reputation", rep_flag]
    run(witness, args, tmp)
    if tables is None:
        tables = {n: ns["read_csv"](p) for n, p in files.items()}
    mine = ns["trust_score"](tables, today, previous)
    for t in ("scores", "ratings", "reputation", "ranking"):
        same_table(os.path.join(out, f"{t}.csv"), mine[t], f"{label}: {t}")
    return out, mine


def check_beta(ns, root):
    path = os.path.join(root, "tests/fixtures/trust/beta_quantiles.csv")
    worst, n = 0.0, 0
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            a, b, p, x = (float(r[k]) for k in ("a", "b", "p", "x"))
            err = abs(ns["beta_quantile"](a, b, p) - x)
            if not err <= 1e-9:
                raise Mismatch(f"beta_quantile({a}, {b}, {p}) = {ns['beta_quantile'](a, b, p)!r}, reference {x!r}")
            worst, n = max(worst, err), n + 1
    print(f"ok: {n} Beta quantiles of tests/fixtures/trust/beta_quantiles.csv within 1e-9 (worst {worst:.1e})")


def check_example(ns, witness, root, tmp):
    ex = os.path.join(root, "experiments/trust")
    files = {n: os.path.join(ex, f"{n}.csv") for n in TABLES}
    out, mine = check_outputs(ns, witness, tmp, files, 1000, "worked example")
    print("ok: worked example: scores, ratings, reputation and ranking match the binary")
    # The headline numbers the document quotes.
    by = {r["target"]: r for r in mine["scores"]}
    for target, status, value in [("parser-r1", "supported", 0.676), ("parser", "supported", 0.886),
                                  ("cache", "unverified", 0.144), ("old-guide", "superseded", 0.532),
                                  ("new-guide", "unverified", 0.5), ("claim:tests-pass", "disputed", 0.509)]:
        if by[target]["status"] != status or round(by[target]["value"], 3) != value:
            raise Mismatch(f"worked example: {target} is {by[target]['status']} {by[target]['value']}")
    print("ok: worked example: the statuses and values quoted in the document")
    # trust compare
    ev, rep = mine["_evidence"], mine["_reputation"]
    common = []
    for n, p in files.items():
        common += [f"--{n}", p]
    for context in ["lang=rust", "lang=go", "", "os=linux;lang=rust"]:
        p = run(witness, ["trust", "compare"] + common + ["--today", "1000", "--target", "parser",
                                                          "--dimension", "speed", "--context", context], tmp)
        facets = ns["normalize_context"](context)
        r, fell_back = ns["compare"](ev, 1000, rep, "parser", "speed", facets)
        lines = []
        if fell_back:
            lines.append(f"no rating of parser has every facet of {json.dumps(facets)}; using all contexts")
        lines.append(f"parser speed: {r['value']:.3f} from {r['ratings']} rating(s) (mean {r['mean']:.3f}; "
                     f"low {r['low']}, mid {r['mid']}, high {r['high']})")
        failures = sum(1 for s in ev["signals"] if s["active"] and s["day"] <= 1000 and s["outcome"] == "failure"
                       and s["target"][0] == "revision"
                       and "parser" in (ev["revisions"][s["target"][1]]["id"], ev["revisions"][s["target"][1]]["item"]))
        lines.append(f"usage failures reported on parser: {failures}")
        if p.stdout.splitlines() != lines:
            raise Mismatch(f"trust compare --context {context!r}: binary printed\n{p.stdout}document gives\n"
                           + "\n".join(lines))
        print(f"ok: trust compare --context {context!r}: {r['value']:.3f} from {r['ratings']} ratings")
    # Reputation fed back into a second run.
    rep_csv = os.path.join(out, "reputation.csv")
    previous = ns["read_previous"](ns["read_csv"](rep_csv))
    check_outputs(ns, witness, tmp, files, 1000, "second run", previous=previous, rep_flag=rep_csv)
    print("ok: worked example with --reputation from the first run: all four tables match")
    # A later day: decay, freshness and the outdated window move.
    check_outputs(ns, witness, tmp, files, 1400, "today 1400")
    print("ok: worked example at --today 1400: all four tables match")
    return files


def check_parquet(ns, witness, root, tmp, files):
    base = os.path.join(root, "tests/fixtures/trust/pyarrow")
    if not os.path.isdir(base):
        return
    tables = {n: ns["read_csv"](p) for n, p in files.items()}
    for variant in sorted(os.listdir(base)):
        pq = {n: os.path.join(base, variant, f"{n}.parquet") for n in TABLES}
        check_outputs(ns, witness, tmp, pq, 1000, f"parquet {variant}", tables=tables)
        print(f"ok: Parquet fixture {variant}: the binary's outputs equal the document's scoring of the CSV tables")


BAD = [
    ("signals", "u3,parser-r2,acme-bot-1,", "u3,parser-r2,nobody,"),
    ("actors", "acme,organization,,domain,0", "acme,ai,acme-bot-1,domain,0"),
    ("actors", "sybil-1,ai,fleet-owner,", "sybil-1,ai,ghost,"),
    ("actors", "dave,human,,none,200", "dave,robot,,none,200"),
    ("signals", "usage,success,true,,false,950", "usage,fine,true,,false,950"),
    ("signals", "true,false,0.9,true,981", "true,false,1.9,true,981"),
    ("signals", "u4,parser-r2", "u3,parser-r2"),
    ("signals", "s1,claim:tests-pass", "s1,parser"),
    ("signals", "u1,parser-r1,bob,usage,success,true,,false,700,active",
     "u1,parser-r1,bob,usage,success,yes,,false,700,active"),
    ("signals", "u2,parser-r1,carol,usage,success,false,,false,720,active",
     "u2,parser-r1,carol,usage,success,false,,false,,active"),
    ("signals", "r5,guide-r1,carol,review,true,false,,false,600,active",
     "r5,guide-r1,carol,opinion,true,false,,false,600,active"),
    ("items", "cache-r1,cache,1,alice,true", "cache-r1,cache,1,alice,false"),
    ("items", "parser-r2,parser,2,alice,true", "parser-r2,parser,1,alice,true"),
    ("items", "parser-r1,parser,1,alice,false", "parser-r1,parser,one,alice,false"),
    ("relations", "guide2-r1,old-guide,supersedes,,bob,990", "guide2-r1,old-guide,supersedes,,,990"),
    ("relations", "paper-1,claim:tests-pass,contradicts", "paper-1,parser-r1,contradicts"),
    ("relations", "blog-a-copy,blog-a,mirrors", "blog-a-copy,blog-a,copies"),
    ("relations", "blog-a-copy,claim:tests-pass,supports,0.9", "blog-a,blog-a-copy,mirrors,0.9"),
    ("sources", "paper-1,journal", "blog-a,journal"),
    ("ratings", "carol,parser,lang=rust;os=linux", "carol,parser,lang=rust;linux"),
    ("ratings", "dave,parser,lang=python,speed,35", "dave,parser,lang=python,speed,135"),
    ("ratings", "dave,parser,lang=python,speed,35", "dave,parser,lang=python,speed,"),
    ("actors", "id,kind,controller,verification,created", "id,kind,controller,verification,born"),
    ("signals", "u16,claim:tests-pass,carol,usage,failure,false,,false,999,active",
     "u16,claim:tests-pass,carol,usage,failure,false,,false,1000000001,active"),
]


def check_bad_input(ns, witness, root, tmp):
    ex = os.path.join(root, "experiments/trust")
    for k, (table, old, new) in enumerate(BAD):
        d = os.path.join(tmp, f"bad{k}")
        os.makedirs(d)
        for n in TABLES:
            shutil.copy(os.path.join(ex, f"{n}.csv"), d)
        path = os.path.join(d, f"{table}.csv")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if old not in text:
            raise Mismatch(f"bad input case {k}: {old!r} not in {table}.csv")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        files = {n: os.path.join(d, f"{n}.csv") for n in TABLES}
        out = os.path.join(d, "out")
        p = run(witness, score_args(files, 1000, out), tmp, code=2)
        if os.path.exists(out):
            raise Mismatch(f"bad input case {k}: the binary wrote {out}")
        try:
            ns["trust_score"]({n: ns["read_csv"](q) for n, q in files.items()}, 1000)
        except ns["InputError"] as e:
            mine = f"error: {e}"
        else:
            raise Mismatch(f"bad input {new!r}: the document accepts it; the binary says {p.stderr.strip()}")
        if p.stderr.strip() != mine:
            raise Mismatch(f"bad input {new!r}:\n  binary:   {p.stderr.strip()}\n  document: {mine}")
        print(f"ok: bad input refused with the same message: {mine}")


def write_tables(tables, d):
    os.makedirs(d, exist_ok=True)
    files = {}
    for name, t in tables.items():
        path = os.path.join(d, f"{name}.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(t["columns"])
            w.writerows(t["rows"])
        files[name] = path
    return files


def check_calibration(ns, witness, tmp):
    cases = [("email", "success", ns["success"], [1, 9, 10]),
             ("none", "success", ns["success"], [1, 15, 16]),
             ("email", "plain success", lambda a, k: ns["success"](a, k, "false"), [1, 2]),
             ("email", "failure + false review", ns["failure_and_false_review"]("false"), [4, 6, 7]),
             ("email", "failure + false review (references)", ns["failure_and_false_review"]("true"), [4, 5, 6]),
             ("none", "failure + false review", ns["failure_and_false_review"]("false"), [4, 10, 11]),
             ("none", "failure + false review (references)", ns["failure_and_false_review"]("true"), [4, 9, 10])]
    for k, (verification, what, rows, ns_) in enumerate(cases):
        for n in ns_:
            tables = ns["calibration_tables"](verification, n, rows)
            files = write_tables(tables, os.path.join(tmp, f"cal{k}-{n}"))
            tables = {name: ns["read_csv"](p) for name, p in files.items()}
            _, mine = check_outputs(ns, witness, tmp, files, 1000, f"calibration {k} {n}", tables=tables)
            s = mine["scores"][0]
            print(f"ok: calibration, {n} {verification} actor(s), {what}: x1 {s['status']} value {s['value']:.4f}")


# A synthetic set for the rules the worked example does not reach: outdated
# reviews, supersession by a high_confidence target of someone else, a
# claims table with authors, weight-0 groups, hidden and future signals,
# quotes of mirrors, three revisions of carry-over, an ai under an ai, and
# the edges of the outdated window (same day as the last positive signal;
# 366 days old) and of the burst rule (a root exactly 7 days
# old; old ai accounts of young roots).
RULES = {
    "actors": """id,kind,controller,verification,created
ann,human,,email,0
org,organization,,organization,0
bot,ai,org,none,0
subbot,ai,bot,email,0
b1,human,,email,0
b2,human,,domain,0
b3,human,,none,0
b4,human,,email,0
b5,human,,organization,10
b6,human,,email,0
y1,human,,none,395
y2,human,,none,395
y3,human,,none,396
y4,human,,email,397
y5,human,,none,392
ybot1,ai,y2,none,0
ybot2,ai,y3,organization,0
""",
    "items": """revision,item,number,author,current
lib-3,lib,3,ann,true
lib-1,lib,1,ann,false
lib-2,lib,2,ann,false
tool-1,tool,1,b1,true
doc-1,doc,1,b2,true
old-1,old,1,ann,true
old2-1,old2,1,ann,true
""",
    "claims": """id,author
claim:a,ann
claim:b,
claim:c,
claim:d,b1
""",
    "signals": """id,target,actor,kind,outcome,real_world,confidence,references_usage,day,status
s1,lib-1,b1,usage,success,true,0.2,false,100,active
s2,lib-1,b2,review,false,false,0.4,true,200,active
s3,lib-2,subbot,usage,failure,true,,false,300,active
s4,lib-3,b3,usage,success,false,,false,390,active
s5,lib-3,b4,review,outdated,false,,false,395,active
s6,lib-3,b5,review,outdated,false,,false,399,active
s7,lib-3,ann,review,outdated,false,,false,399,active
s8,tool-1,b2,usage,success,true,,false,399,active
s9,tool-1,b4,usage,success,true,,false,399,active
s10,tool-1,b5,usage,success,true,,false,399,active
s11,tool-1,b6,usage,success,true,,false,399,active
s12,tool-1,bot,usage,success,true,,false,399,active
s13,tool-1,b3,usage,unknown,true,,false,399,active
s14,tool-1,b1,usage,success,true,,false,399,active
s15,doc-1,b1,review,cannot_verify,false,,false,390,active
s16,doc-1,b3,usage,success,true,,false,380,hidden
s17,doc-1,b4,usage,success,true,,false,401,active
s18,claim:a,ann,usage,success,true,,false,398,active
s19,claim:a,b6,review,true,false,0.95,false,398,retracted
s20,claim:b,b2,review,true,false,,true,399,active
s21,claim:b,b3,review,false,false,,false,399,active
s22,lib-3,b2,usage,success,true,,false,380,active
s23,tool-1,b2,usage,success,true,,false,398,active
s24,tool-1,b4,usage,success,true,,false,398,active
s25,tool-1,b5,usage,success,true,,false,398,active
s26,tool-1,b6,usage,success,true,,false,398,active
s27,tool-1,subbot,usage,success,true,,false,398,active
s28,old-1,b4,usage,success,false,,false,200,active
s29,old-1,b5,review,outdated,false,,false,200,active
s30,old-1,b6,review,outdated,false,,false,250,active
s31,old2-1,b1,review,outdated,false,,false,35,active
s32,old2-1,b2,review,outdated,false,,false,34,active
s33,claim:c,y1,usage,success,false,,false,399,active
s34,claim:c,y2,usage,success,false,,false,399,active
s35,claim:c,y3,usage,success,false,,false,399,active
s36,claim:c,y4,review,true,false,,false,399,active
s37,claim:c,y5,usage,success,false,,false,399,active
s38,claim:c,y4,usage,success,true,,false,398,active
s39,claim:d,y1,usage,success,true,,false,399,active
s40,claim:d,y2,review,true,false,,false,399,active
s41,claim:d,ybot1,usage,failure,true,,false,399,active
s42,claim:d,ybot2,usage,success,true,,false,399,active
s43,claim:d,y3,usage,unknown,false,,false,399,active
s44,claim:d,b1,usage,success,true,,false,399,active
""",
    "relations": """from,to,kind,strength,actor,day
tool-1,doc,supersedes,,b4,399
doc-1,lib-1,corrects,,b2,398
src-a,claim:b,supports,0.3,,390
mirror-a,src-a,mirrors,,,390
quote-a,mirror-a,quotes,,,390
quote-a,claim:b,contradicts,0.6,,390
src-z,claim:b,supports,0.0,,390
src-late,claim:b,contradicts,1.0,,500
""",
    "sources": """id,family
src-a,alpha
quote-a,ignored
""",
    "ratings": """actor,target,context,dimension,score,confidence,references_usage,day
b1,lib,os=mac,ease,10,,false,300
b1,lib,os=mac,ease,60,0.5,true,300
ann,lib,os=mac,ease,99,,false,350
bot,lib,os=linux,ease,40,,true,390
subbot,lib,os=linux,ease,80,,false,391
b3,tool,,ease,55,,false,399
b4,tool,,ease,70,,false,500
""",
}


def check_rules(ns, witness, tmp):
    d = os.path.join(tmp, "rules")
    os.makedirs(d)
    files = {}
    for name, text in RULES.items():
        files[name] = os.path.join(d, f"{name}.csv")
        with open(files[name], "w", encoding="utf-8") as f:
            f.write(text)
    _, mine = check_outputs(ns, witness, tmp, files, 400, "rules")
    statuses = {r["target"]: r["status"] for r in mine["scores"]}
    want = {"lib-3": "outdated", "tool-1": "high_confidence", "doc": "superseded", "doc-1": "superseded",
            "old": "unverified", "old2": "unverified"}
    flags = {r["target"]: r["explanation"]["flags"] for r in mine["scores"]}
    if flags["claim:c"] != [] or flags["tool-1"] != []:
        raise Mismatch("rules: claim:c (one of five roots 7 days old) was built to be no burst")
    if flags["claim:d"] != ["burst"]:
        raise Mismatch("rules: claim:d (old ai accounts of young roots) was built to be a burst")
    for target, status in want.items():
        if statuses[target] != status:
            raise Mismatch(f"rules: {target} is {statuses[target]}, the case was built for {status}")
    print(f"ok: synthetic rules set (outdated, supersedes from high_confidence, claims table, families, "
          f"carry-over): all four tables match; statuses {sorted(set(statuses.values()))}")
    rep = os.path.join(d, "previous.csv")
    with open(rep, "w", encoding="utf-8") as f:
        f.write("actor,reputation,note\nb1,0.9,x\nbot,0.05,y\n")
    previous = ns["read_previous"](ns["read_csv"](rep))
    check_outputs(ns, witness, tmp, files, 400, "rules with reputation", previous=previous, rep_flag=rep)
    print("ok: synthetic rules set with a partial --reputation file: all four tables match")


SIM_CASES = [
    {"claims": 40, "honest": 12, "attack": "none", "evidence": 4, "seed": 3},
    {"claims": 40, "honest": 12, "attack": "none", "evidence": 20, "honest_accuracy": 1.0, "seed": 4},
    {"claims": 40, "honest": 12, "attack": "sybil", "fleet": 7, "evidence": 2, "seed": 5},
    {"claims": 40, "honest": 12, "attack": "throwaway", "fleet": 20, "evidence": 2, "seed": 6},
    {"claims": 40, "honest": 12, "attack": "burst", "fleet": 6, "evidence": 3, "seed": 7, "replicate": 2},
    {"claims": 40, "honest": 12, "attack": "self_promotion", "fleet": 5, "evidence": 4, "seed": 8},
    {"claims": 40, "honest": 12, "attack": "copy_sources", "fleet": 4, "evidence": 3, "seed": 9},
    {"claims": 40, "honest": 12, "attack": "collusion", "colluders": 12, "evidence": 2, "seed": 10},
    {"claims": 60, "honest": 20, "attack": "sybil", "verified_share": 0.2, "good_share": 0.3,
     "attacker_share": 0.8, "evidence": 6, "seed": 11},
    {},
]


def check_sim(ns, witness, tmp):
    for k, setup in enumerate(SIM_CASES):
        export = os.path.join(tmp, f"sim{k}.json")
        args = ["simulate", "--model", "trust-sim", "--export", export]
        for name, v in setup.items():
            args += ["--set", f"{name}={json.dumps(v)}"]
        run(witness, args, tmp)
        with open(export, encoding="utf-8") as f:
            want = json.load(f)["summary"]
        mine = ns["simulate"](setup)
        for col, v in want.items():
            if col not in mine:
                raise Mismatch(f"trust-sim {setup}: the document has no column {col}")
            same(None if v == "none" else v, mine[col], f"trust-sim {setup}: {col}")
        if not mine["identities_hold"]:
            raise Mismatch(f"trust-sim {setup}: the document's signal buckets do not add up")
        print(f"ok: trust-sim {setup or 'defaults'}: all {len(want)} summary columns match")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    if len(sys.argv) > 2:
        witness = sys.argv[2]
    else:
        witness = shutil.which("witness") or os.path.join(root, "target/release/witness")
    witness = os.path.abspath(witness) if os.path.exists(witness) else witness
    try:
        ns, n = load_blocks(os.path.join(root, "docs/models/trust.md"))
        print(f"ok: {n} python blocks of docs/models/trust.md ran")
        check_beta(ns, root)
        with tempfile.TemporaryDirectory() as tmp:
            files = check_example(ns, witness, root, tmp)
            check_parquet(ns, witness, root, tmp, files)
            check_bad_input(ns, witness, root, tmp)
            check_rules(ns, witness, tmp)
            check_calibration(ns, witness, tmp)
            check_sim(ns, witness, tmp)
    except Mismatch as e:
        print(f"MISMATCH: {e}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"MISMATCH: cannot run the check: {e}", file=sys.stderr)
        return 1
    print("all trust checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
