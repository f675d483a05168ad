#!/usr/bin/env python3
"""Runs the Python blocks of docs/models/cascade.md and checks them against
the golden vectors in tests/fixtures/vectors/.

Usage: check_cascade.py [REPO_ROOT]   (default: two folders above this file)

Prints one "ok: ..." line per check; exits 1 naming the first mismatch.
"""

import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_blocks  # noqa: E402 - beside this script
import time

TOLERANCE = 1e-12


class Mismatch(Exception):
    pass


def load_blocks(doc_path):
    return doc_blocks.load_blocks(doc_path, "cascade_doc", Mismatch)


def load(vectors, name):
    with open(os.path.join(vectors, name), encoding="utf-8") as f:
        return json.load(f)


def same(want, got, path="$", loose=()):
    """Discrete values exactly, floats within TOLERANCE. Objects must have
    the same keys, except that an object whose path is in `loose` may have
    keys beyond those of `want` (the run vectors predate a few export keys
    and summary fields)."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            raise Mismatch(f"{path}: expected an object, got {got!r}")
        for k, v in want.items():
            if k not in got:
                raise Mismatch(f"{path}.{k}: missing")
            same(v, got[k], f"{path}.{k}", loose)
        extra = set(got) - set(want)
        if extra and path not in loose:
            raise Mismatch(f"{path}: unexpected keys {sorted(extra)}")
    elif isinstance(want, list):
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            raise Mismatch(f"{path}: expected {len(want)} items, got {got!r}"[:300])
        for k, (w, g) in enumerate(zip(want, got)):
            same(w, g, f"{path}[{k}]", loose)
    elif isinstance(want, bool) or isinstance(got, bool) or want is None or isinstance(want, str):
        if want != got or type(want) is not type(got):
            raise Mismatch(f"{path}: expected {want!r}, got {got!r}")
    elif isinstance(want, float) or isinstance(got, float):
        if not isinstance(got, (int, float)) or not math.isfinite(got) or abs(want - got) > TOLERANCE:
            raise Mismatch(f"{path}: expected {want!r}, got {got!r}")
    elif want != got:
        raise Mismatch(f"{path}: expected {want!r}, got {got!r}")


def fresh(ns, k, draw, count=5):
    s = ns["Stream"](k)
    return [draw(s) for _ in range(count)]


def check_draws(ns, vectors):
    d = load(vectors, "draws.json")
    handled = {"note", "protocol", "vectors", "extra", "splitmix_expansion_of_key_42_3_1_0"}
    extra_fields = set(d) - handled
    if extra_fields:
        raise Mismatch(f"draws.json has fields this check does not know: {sorted(extra_fields)}")
    key, Stream = ns["key"], ns["Stream"]
    same(d["splitmix_expansion_of_key_42_3_1_0"], ns["seed_state"](key(42, 3, 1, 0)),
         "draws.json $.splitmix_expansion_of_key_42_3_1_0")
    per_vector = {
        "key": lambda k: k,
        "key_hex": lambda k: f"0x{k:016x}",
        "next_u64_first5": lambda k: fresh(ns, k, lambda s: s.next_u64()),
        "unit_first5_fresh_stream": lambda k: fresh(ns, k, lambda s: s.unit()),
    }
    for v in d["vectors"]:
        args = v["key_args"]
        k = key(args[0], *args[1:])
        for field, want in v.items():
            where = f"draws.json key_args {args} {field}"
            if field == "key_args":
                continue
            m = re.fullmatch(r"below(\d+)_first5_fresh_stream", field)
            if m:
                n = int(m.group(1))
                got = fresh(ns, k, lambda s: s.below(n))
            elif field in per_vector:
                got = per_vector[field](k)
            else:
                raise Mismatch(f"{where}: unknown field")
            if field == "unit_first5_fresh_stream":
                if got != want:  # units are exact, not just close
                    raise Mismatch(f"{where}: expected {want}, got {got}")
            else:
                same(want, got, where)
    extra = {
        "mix(0)": lambda: ns["mix"](0),
        "key(0)": lambda: key(0),
        "seed_from_u64(0).next_u64()": lambda: Stream(0).next_u64(),
    }
    for field, want in d["extra"].items():
        if field not in extra:
            raise Mismatch(f"draws.json extra {field}: unknown field")
        same(want, extra[field](), f"draws.json extra {field}")
    print(f"ok: draws.json, {len(d['vectors'])} streams (key, hex, seeding expansion, "
          f"next_u64, unit, below) and {len(d['extra'])} extra values")


def check_graphs(ns, vectors):
    d = load(vectors, "graphs_seed42_n250.json")
    seed, n, gp = d["seed"], d["population"], d["graph_params"]
    for family, want in d["families"].items():
        graph = ns["build_graph"](seed, family, n, gp)
        degrees = [len(nb) for nb in graph]
        hist = {}
        for deg in degrees:
            hist[str(deg)] = hist.get(str(deg), 0) + 1
        max_node = min(range(n), key=lambda i: (-degrees[i], i))
        got = {
            "graph_key": ns["key"](seed, ns["TAG_GRAPH"], ns["FAMILY_CODE"][family]),
            "edge_count": sum(degrees) // 2,
            "degree_histogram": hist,
            "neighbours_0_to_5_inclusive": {str(i): graph[i] for i in range(6)},
            "max_degree_node": max_node,
            "degree_sum_check": sum(degrees),
        }
        if "community_starts" in want:
            m = gp["communities"]
            got["community_starts"] = [ns["community_start"](c, n, m) for c in range(m + 1)]
        if "hubs" in want:
            got["hubs"] = ns["hub_nodes"](gp["hub_fraction"], n)
        unknown = set(want) - set(got)
        if unknown:
            raise Mismatch(f"graphs {family}: unknown fields {sorted(unknown)}")
        if hist.keys() != want["degree_histogram"].keys():
            raise Mismatch(f"graphs {family}: degree histogram {hist}, "
                           f"expected {want['degree_histogram']}")
        for i, nb in enumerate(graph):
            if i in nb or len(set(nb)) != len(nb) or nb != sorted(nb):
                raise Mismatch(f"graphs {family}: node {i} has a bad neighbour list")
        same(want, got, f"graphs {family}")
    print(f"ok: graphs_seed42_n250.json, {len(d['families'])} families "
          f"({', '.join(d['families'])}): keys, edges, histograms, neighbours")


def check_exposures(ns, vectors):
    d = load(vectors, "exposures_seed42_n250.json")
    cfg = ns["make_config"](seed=d["seed"], population=d["population"],
                            report_fraction=d["report_fraction"],
                            probe_fraction=d["probe_fraction"])
    agents = ns["round_zero"](cfg)
    report = [i for i, a in enumerate(agents) if ns["REPORT"] in a.ledger]
    probe = [i for i, a in enumerate(agents) if a.checked]
    s = ns["Stream"](ns["key"](cfg["seed"], ns["TAG_EXPOSURE"]))
    got = {
        "seed": cfg["seed"], "population": cfg["population"],
        "report_fraction": cfg["report_fraction"], "probe_fraction": cfg["probe_fraction"],
        "exposure_key": ns["key"](cfg["seed"], ns["TAG_EXPOSURE"]),
        "report_ids": report, "probe_ids": probe,
        "both_ids": [i for i in probe if i in set(report)],
        "report_count": len(report), "probe_count": len(probe),
        "first5_agents_a_b": [[s.unit(), s.unit()] for _ in range(len(d["first5_agents_a_b"]))],
    }
    want = {k: v for k, v in d.items() if k != "note"}
    unknown = set(want) - set(got)
    if unknown:
        raise Mismatch(f"exposures: unknown fields {sorted(unknown)}")
    same(want, got, "exposures")
    for i, a in enumerate(agents):
        expect = (0.01 if a.checked else 0.82 if ns["REPORT"] in a.ledger else 0.5)
        if a.p != expect:
            raise Mismatch(f"exposures: agent {i} starts at {a.p}, expected {expect}")
    print(f"ok: exposures_seed42_n250.json, {len(report)} reported, {len(probe)} probed")


def check_run(ns, vectors, name):
    want = load(vectors, name)
    want.pop("note", None)
    cfg = ns["config_from_json"](want["config"])
    t0 = time.time()
    got = ns["export_run"](cfg, ns["simulate"](cfg))
    unknown = set(want) - set(got)
    if unknown:
        raise Mismatch(f"{name}: fields the export lacks: {sorted(unknown)}")
    # The two oldest vectors predate the quorum knobs (config) and the
    # effective_parameters and failures keys; every vector predates three
    # summary fields. Everything else must match key for key.
    same(want, got, name, loose={name, f"{name}.config", f"{name}.summary"})
    s = got["summary"]
    print(f"ok: {name} ({cfg['policy']}, truth {str(cfg['truth']).lower()}): "
          f"{len(got['trajectory'])} snapshots, {len(got['agents'])} agents, "
          f"peak mistaken {s['peak_mistaken']:.3f}, first clear round "
          f"{s['first_clear_round']} ({time.time() - t0:.1f} s)")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(here))
    doc = os.path.join(root, "docs", "models", "cascade.md")
    vectors = os.path.join(root, "tests", "fixtures", "vectors")
    runs = ("run_endorsement_truth_false.json",
            "run_source_aware_truth_false.json",
            "policies/run_quorum_truth_false.json",
            "policies/run_trust_truth_true.json")
    stage = "docs/models/cascade.md"
    try:
        ns, count = load_blocks(doc)
        print(f"ok: {count} python blocks of docs/models/cascade.md ran")
        checks = [("draws.json", lambda: check_draws(ns, vectors)),
                  ("graphs_seed42_n250.json", lambda: check_graphs(ns, vectors)),
                  ("exposures_seed42_n250.json", lambda: check_exposures(ns, vectors))]
        checks += [(name, lambda name=name: check_run(ns, vectors, name)) for name in runs]
        for stage, check in checks:
            check()
    except Mismatch as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - the doc's code raised: a failure too
        print(f"FAILED while checking {stage}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
