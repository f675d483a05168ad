#!/usr/bin/env python3
"""Checks that the pseudo-code of docs/models/hive.md is a working
implementation of hive-rooms/1.

Usage: python3 tests/docs/check_hive.py [REPO_ROOT]

Every ```python block of the document is run, in order, in one namespace.
Then:

1. the random numbers reproduce the check values pinned by the tests of
   src/hive/rng.rs (read from the Rust source);
2. room construction reproduces room 0 of seed 1 as pinned by
   src/hive/room.rs (`room_0_of_seed_1_matches_hive_md`) and by the
   `room_0_of_seed_1` test of src/hive/rng.rs;
3. whole episodes reproduce the worked examples of tests/hive.rs turn by
   turn, and the 500-room arms table of tests/hive.rs;
4. if a witness binary and pyarrow are available, every episode row and
   run summary written by the binary for a manifest of varied arms equals
   the document's Python (otherwise this check is skipped, and says so).

Prints "ok: ..." per check; exits 1 on the first mismatch, 0 when all pass.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def ok(message):
    print("ok: " + message)


def python_blocks(markdown):
    blocks, current = [], None
    for number, line in enumerate(markdown.splitlines(), 1):
        if current is None:
            if line.strip() == "```python":
                current = (number, [])
        elif line.strip() == "```":
            blocks.append((current[0], "\n".join(current[1]) + "\n"))
            current = None
        else:
            current[1].append(line)
    if current is not None:
        fail("unterminated ```python block starting at line %d" % current[0])
    return blocks


def rust_int(text):
    return int(text.replace("_", ""), 0)


def int_list(text):
    return [int(x) for x in re.findall(r"-?\d+", text)]


def main():
    start = time.time()
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
    doc = root / "docs" / "models" / "hive.md"
    if not doc.is_file():
        fail("%s not found" % doc)

    # Run the document.
    ns = {"__name__": "hive_doc"}
    blocks = python_blocks(doc.read_text(encoding="utf-8"))
    if not blocks:
        fail("no ```python blocks in %s" % doc)
    for line, code in blocks:
        try:
            exec(compile(code, "%s:%d" % (doc.name, line), "exec"), ns)
        except Exception as e:  # an assertion of the document itself, or a bug
            fail("the ```python block at %s line %d raised %s: %s"
                 % (doc.name, line, type(e).__name__, e))
    ok("%d python blocks of %s ran" % (len(blocks), doc.relative_to(root)))
    for name in ("Stream", "mix", "Room", "parse", "standings", "play", "hive", "hive_plus",
                 "run", "ladder", "OPTIONS", "LADDER_SALT"):
        if name not in ns:
            fail("the document defines no `%s`" % name)
    Stream, mix, Room, OPTIONS = ns["Stream"], ns["mix"], ns["Room"], ns["OPTIONS"]

    # 1. Random numbers, against src/hive/rng.rs's check_values_of_hive_md.
    rng = (root / "src" / "hive" / "rng.rs").read_text(encoding="utf-8")
    firsts = re.findall(r"Stream::new\((\d+)\)\.next_u64\(\),\s*(0x[0-9A-Fa-f_]+)", rng)
    mixes = re.findall(r"mix\((\d+),\s*(\d+)\),\s*(0x[0-9A-Fa-f_]+)", rng)
    if not firsts or not mixes:
        fail("could not read the check values of src/hive/rng.rs")
    for seed, want in firsts:
        got = Stream(int(seed)).next_u64()
        if got != rust_int(want):
            fail("Stream(%s) first draws %#x, rng.rs pins %s" % (seed, got, want))
    for a, b, want in mixes:
        got = mix(int(a), int(b))
        if got != rust_int(want):
            fail("mix(%s, %s) = %#x, rng.rs pins %s" % (a, b, got, want))
    # Independent: the offset start. Plain SplitMix64 from state 0 (Vigna's
    # reference) first returns 0xE220A8397B1DCDAF, which must not be what a
    # stream seeded 0 gives here; it is the finalizer of G, one step earlier.
    plain = Stream(0)
    plain.state = 0
    if plain.next_u64() != 0xE220A8397B1DCDAF:
        fail("the finalizer does not match textbook SplitMix64")
    if Stream(0).next_u64() == 0xE220A8397B1DCDAF:
        fail("the stream lacks the offset start")
    z = Stream(7)
    before = Stream(7).next_u64()
    if z.below(0) != 0 or z.next_u64() != before:
        fail("below(0) must give 0 and draw nothing")
    ok("random numbers: %d first draws and %d mix values of rng.rs, below(0)"
       % (len(firsts), len(mixes)))

    # 2. Room 0 of seed 1.
    # Values of rng.rs `room_0_of_seed_1` and room.rs
    # `room_0_of_seed_1_matches_hive_md`, listed here and also read from
    # the Rust source when it still has this shape.
    want_eval = [[-3, -19, 71, 81], [-11, 111, 171, 85], [-13, -10, 122, 94],
                 [-13, -1, 159, 43], [2, -6, 71, 70]]
    want_fav, want_prose, want_truth, want_ladder = [3, 2, 2, 2, 2], [552, 674, 543, 237, 514], 2, 2
    parsed = {}
    for k, vec in re.findall(r"assert_eq!\(evaluate\((\d)\),\s*vec!\[([^\]]*)\]", rng):
        parsed[int(k)] = int_list(vec)
    room_rs = (root / "src" / "hive" / "room.rs").read_text(encoding="utf-8")
    test = room_rs[room_rs.find("fn room_0_of_seed_1_matches_hive_md"):]
    for k, vec in re.findall(r"r\.evaluation\[(\d)\]\[\.\.4\],\s*\[([^\]]*)\]", test):
        parsed[int(k)] = int_list(vec)
    for k, vec in parsed.items():
        if vec != want_eval[k]:
            fail("the Rust tests pin evaluations %s for member %d, this script %s"
                 % (vec, k, want_eval[k]))
    fav = re.search(r"r\.favourite\[\.\.5\],\s*\[([^\]]*)\]", test)
    if fav and int_list(fav.group(1)) != want_fav:
        fail("room.rs pins favourites %s" % fav.group(1))
    prose = re.search(r"first,\s*vec!\[([^\]]*)\]", test)
    if prose and int_list(prose.group(1)) != want_prose:
        fail("room.rs pins first prose draws %s" % prose.group(1))
    if not parsed or not fav or not prose:
        print("note: some room-0 values were not found in the Rust source; "
              "using the values listed in this script")
    room = Room(1, 0, 5, 4, 90)
    got = (room.truth, room.evaluation, room.favourite,
           [room.prose_stream(k).below(1000) for k in range(5)])
    if got != (want_truth, want_eval, want_fav, want_prose):
        fail("room 0 of seed 1: got truth, evaluations, favourites, prose %r" % (got,))
    if ns["ladder"](room) != want_ladder:
        fail("room 0 of seed 1: the ladder answers %s, not revert" % ns["ladder"](room))
    ok("room 0 of seed 1: truth revert, evaluations, favourites, prose draws, ladder")

    # 2b. Markers, the fold and decay, on the cases of the unit tests in
    # src/hive/markers.rs, src/hive/fold.rs and src/hive/episode.rs.
    check_markers_and_fold(ns)

    # 3a. Worked examples, from tests/hive.rs room_0_under_hive_plus_turn_by_turn
    # and room_2_under_hive_plus_ref_turn_by_turn.
    def transcript(episode, policy):
        record = []
        result = ns["play"](Room(1, episode, 5, 4, 90), policy, record)
        rows = [(s, b, c, t.split(" \u2014 ")[0] if "!" in t else "prose")
                for s, b, c, t, _ in record]
        return result, rows, [th for *_, th in record]

    result, rows, thresholds = transcript(0, ns["hive_plus"](5))
    want_rows = [(0, True, False, "!propose #shadow"), (1, True, False, "!propose #revert"),
                 (2, True, False, "!propose #revert"), (3, True, False, "!propose #revert"),
                 (4, True, True, "!propose #revert"), (0, False, True, "!commit #revert ^3")]
    want_thresholds = [[500, -250, -250, -250, -250], [250, 250, -500, -500, -500],
                       [0, 0, 0, -750, -750], [-250, -250, -250, -250, -1000],
                       [-500, -500, -500, -500, -500]]
    if result != ("converged", "revert", 6) or rows != want_rows \
            or thresholds[1:] != want_thresholds:
        fail("room 0 under hive+: %r\n%r\n%r" % (result, rows, thresholds))
    plus_ref = ns["hive_plus"](5)
    plus_ref.refutation_cap = 2
    result, rows, _ = transcript(2, plus_ref)
    want_rows = [(0, True, False, "!propose #revert"), (1, True, False, "prose"),
                 (2, True, False, "!propose #revert"), (3, True, False, "!propose #stage"),
                 (4, True, False, "!propose #revert"), (0, False, True, "!refute #stage ^5"),
                 (3, False, True, "prose"), (3, False, True, "!commit #revert ^2")]
    if result != ("converged", "revert", 8) or rows != want_rows:
        fail("room 2 under hive+ref: %r\n%r" % (result, rows))
    ok("worked examples: room 0 under hive+ and room 2 under hive+ref, turn by turn")

    # 3b. tests/hive.rs the_500_room_arms_table_at_noise_90:
    # (turns/episode, decided %, correct %, converged, deadlocked, exhausted).
    table = [
        (dict(policy="ladder"), ("1.00", "100.0", "57.6", 500, 0, 0)),
        (dict(policy="vote"), ("15.00", "100.0", "75.8", 500, 0, 0)),
        (dict(policy="hive"), ("6.17", "91.0", "71.0", 455, 45, 0)),
        (dict(policy="hive+"), ("6.84", "99.0", "78.8", 495, 0, 5)),
        (dict(policy="hive+", refutation_cap=2), ("8.95", "88.2", "72.8", 441, 0, 59)),
        (dict(policy="hive+", refutation_cap=2, evidential=True),
         ("10.28", "59.6", "53.8", 298, 0, 202)),
    ]
    for params, want in table:
        s, _ = ns["run"](dict(params, rooms=500))
        got = ("%.2f" % s["turns_per_episode"], "%.1f" % s["decided_pct"],
               "%.1f" % s["correct_pct"], s["converged"], s["deadlocked"], s["exhausted"])
        if got != want:
            fail("500 rooms at noise 90, %s: got %s, tests/hive.rs pins %s" % (params, got, want))
    ok("the 500-room arms table at noise 90 (six arms, with ending counts)")

    # 4. Against the binary.
    binary = None
    for candidate in (sys.argv[2] if len(sys.argv) > 2 else None, os.environ.get("WITNESS_BIN"),
                      root / "target" / "release" / "witness",
                      root / "target" / "debug" / "witness", shutil.which("witness")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            binary = str(candidate)
            break
    try:
        import pyarrow.parquet as pq
    except ImportError:
        pq = None
    if binary is None or pq is None:
        print("skip: episode rows against the binary (%s)"
              % ("no witness binary; set WITNESS_BIN" if binary is None else "pyarrow missing"))
    else:
        check_binary(ns, binary, pq)
    print("all hive checks passed in %.1f s" % (time.time() - start))


def check_markers_and_fold(ns):
    parse, standings, Policy, decay = ns["parse"], ns["standings"], ns["Policy"], ns["decay"]
    fence = "`" * 3
    # markers.rs fields_are_parsed_and_the_offset_is_the_bang
    t = parse(7, 1, "prose first\n  !support #ship >3 ^2 ^5 ^2 because #later >9 ^x")
    if [(x.kind, x.topic, x.target, x.cites, x.offset) for x in t] != \
            [("support", "ship", 3, [2, 5], len("prose first\n  "))]:
        fail("marker fields, citations or offset")
    # markers.rs markers_inside_fences_and_mid_line_do_not_count
    text = (fence + "\n!propose #a\n" + fence + "\n~~~ rust\n!propose #b\n~~~\n"
            "see !propose #c\n!propose #d")
    if [x.topic for x in parse(7, 1, text)] != ["d"]:
        fail("fenced or mid-line markers counted")
    if parse(7, 1, fence + "\n!propose #a\n!propose #b"):
        fail("an unclosed fence must run to the end of the message")
    if len(parse(7, 1, fence + "\n~~~\n!propose #a\n" + fence + "\n!propose #b")) != 1:
        fail("only the same kind of fence closes a block")
    # markers.rs unicode_text_keeps_byte_offsets
    text = "h\u00e9llo \u2713\n!propose #caf\u00e9 ^1"
    t = parse(7, 1, text)
    if t[0].topic != "caf\u00e9" or text.encode("utf-8")[t[0].offset:t[0].offset + 1] != b"!":
        fail("unicode topic or byte offset")
    # markers.rs unknown_kinds_and_bare_refutes_give_nothing_and_16_is_the_limit
    if parse(7, 1, "!shout #a\n!refute #a\n!refute ^3"):
        fail("unknown kinds and bare refutes must give nothing")
    t = parse(7, 1, "".join("!support #t%d ^1\n" % i for i in range(20)))
    if len(t) != 16 or t[15].topic != "t15":
        fail("at most the first 16 traces of a message")

    def room(messages):
        return [x for i, (m, text) in enumerate(messages) for x in parse(i + 2, m, text)]

    def policy(threshold, evidential=False, cap=None):
        return Policy(budget=15, blind=True, dominance=40, repetition=2, threshold=threshold,
                      window=100, grounded=True, refutation_cap=cap, evidential=evidential)

    # fold.rs room_0_under_hive_plus_carries_revert_at_the_fifth_turn
    traces = room([(0, "!propose #shadow"), (1, "!propose #revert"), (2, "!propose #revert"),
                   (3, "!propose #revert")])
    table, consensus = standings(traces, 5, policy(3))
    if consensus != ("quorum", "revert") or [x.topic for x in table] != ["shadow", "revert"] \
            or table[1].supporters != [1, 2, 3] or table[1].support != 2700:
        fail("fold of room 0's proposals at 5")
    if standings(traces, 4, policy(3))[1] != ("deliberating", None):
        fail("fold of room 0's proposals at 4")
    # fold.rs objections_silence_advocates_and_refutations_cap_support
    traces = room([(0, "!propose #a"), (1, "!support #a ^2"), (2, "!object >2 ^3"),
                   (3, "!refute #a ^2"), (4, "!support #a ^2")])
    a = standings(traces, 6, policy(2))[0][0]
    if (a.silenced, a.supporters, a.refuted_by, a.carried) != ([0], [1, 4], [3], True):
        fail("silencing and refutation: %r" % ((a.silenced, a.supporters, a.refuted_by),))
    if standings(traces, 6, policy(2, cap=1))[0][0].carried:
        fail("a refutation cap of 1 must block the topic")
    # The order and duplicates of the input do not matter.
    shuffled = list(reversed(traces)) + traces
    b = standings(shuffled, 6, policy(2))[0][0]
    if (b.silenced, b.supporters, b.refuted_by, b.support) != \
            (a.silenced, a.supporters, a.refuted_by, a.support):
        fail("the fold depends on the order or duplication of its input")
    # An objection never silences its own author (fold.rs, step 5).
    own = standings(room([(0, "!propose #a"), (0, "!object >2 ^2")]), 3, policy(1))[0][0]
    if own.silenced or own.supporters != [0]:
        fail("an objector must not silence itself")
    # fold.rs the_evidential_walk_follows_chains_and_ends_on_cycles
    linked = room([(0, "!propose #a"), (1, "!evidence ^2"), (2, "!support #a ^3"),
                   (3, "!support #a ^4")])
    if standings(linked, 5, policy(1, evidential=True))[0][0].supporters != [0, 2, 3]:
        fail("the evidential walk must follow citation chains")
    cyclic = room([(0, "!propose #a"), (1, "!support #a ^4"), (2, "!support #a ^3"),
                   (3, "!support #a ^5")])
    if standings(cyclic, 5, policy(1, evidential=True))[0][0].supporters != [0]:
        fail("citation cycles must not reach evidence")
    if standings(cyclic, 5, policy(1))[0][0].supporters != [0, 1, 2, 3]:
        fail("without evidential, grounded supports count")
    # episode.rs decay_check_values
    if [decay(d) for d in (0, 1, 10, 20, 30, 60, 70)] != [1000, 975, 750, 500, 375, 125, 94] \
            or decay(63 * 20) != 0:
        fail("decay check values")
    ok("markers, the fold and decay on the cases of markers.rs, fold.rs and episode.rs")


# Arms that reach every ending and every rule: presets, overrides, no
# grounds, no blind round, tiny windows, caps above 8, 2 to 8 members.
ARMS = [
    ("ladder", dict(policy="ladder")),
    ("vote", dict(policy="vote")),
    ("vote7", dict(policy="vote", budget=7, agents=3)),
    ("hive", dict(policy="hive")),
    ("hive+", dict(policy="hive+")),
    ("hive+ref", dict(policy="hive+", refutation_cap=2)),
    ("hive+ev", dict(policy="hive+", refutation_cap=2, evidential=True)),
    ("evonly", dict(policy="hive+", evidential=True, window=30)),
    ("open", dict(policy="hive", blind=False, window=5, grounded=False, dominance=0,
                  repetition=1)),
    ("wide", dict(policy="hive+", agents=8, topics=8, noise=200, refutation_cap=1, window=3)),
    ("pair", dict(policy="hive", agents=2, topics=2, noise=300, threshold=1,
                  refutation_cap=3)),
    ("seven", dict(policy="hive+", agents=7, topics=6, noise=120, seed=12345,
                   dominance=100, threshold=5, budget=30)),
    ("cap9", dict(policy="hive+", refutation_cap=9, dominance=20, blind=False)),
    ("loose-ev", dict(policy="hive+", evidential=True, grounded=False, refutation_cap=3,
                      noise=150, budget=25)),
    ("quiet", dict(policy="hive", agents=4, topics=3, noise=0, seed=0, budget=1)),
    ("recent", dict(policy="hive", topics=8, seed=65, blind=False, window=8, dominance=20,
                    repetition=7, threshold=5, budget=40, refutation_cap=3)),
]
ROOMS = 150


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"%s"' % v
    return str(v)


def check_binary(ns, binary, pq):
    lines = ['[experiment]', 'name = "check-hive"', 'model = "hive"', '[fixed]',
             'rooms = %d' % ROOMS]
    for name, params in ARMS:
        lines += ['[[arm]]', 'name = "%s"' % name, 'policy = "%s"' % params["policy"]]
        rest = ["%s = %s" % (k, toml_value(v)) for k, v in params.items() if k != "policy"]
        if rest:
            lines.append("fixed = { %s }" % ", ".join(rest))
    lines += ['[output]', 'episodes = true']
    with tempfile.TemporaryDirectory() as tmp:
        manifest = Path(tmp) / "check-hive.toml"
        manifest.write_text("\n".join(lines) + "\n")
        out = Path(tmp) / "out"
        done = subprocess.run([binary, "run", "-q", "--threads", "2", "--out", str(out),
                               str(manifest)], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            print("skip: %s run failed (exit %d): %s"
                  % (binary, done.returncode, done.stderr.strip()[:300]))
            return
        runs = pq.read_table(out / "runs.parquet").to_pylist()
        episodes = pq.read_table(out / "episodes.parquet").to_pylist()
    by_run = {}
    for row in episodes:
        by_run.setdefault(row["run_id"], []).append(row)
    arms = dict(ARMS)
    columns = ("episode", "truth", "ending", "decided", "correct", "turns")
    endings = {}
    for r in runs:
        params = dict(arms[r["arm"]], rooms=ROOMS)
        summary, rows = ns["run"](params)
        theirs = sorted(by_run.get(r["run_id"], []), key=lambda x: x["episode"])
        if len(theirs) != len(rows):
            fail("arm %s: the binary wrote %d episode rows, the document %d"
                 % (r["arm"], len(theirs), len(rows)))
        for mine, row in zip(rows, theirs):
            a = tuple(mine[c] for c in columns)
            b = tuple(row[c] for c in columns)
            if a != b:
                fail("arm %s (%s), episode %d: document %s, binary %s"
                     % (r["arm"], params, mine["episode"], a, b))
            endings[mine["ending"]] = endings.get(mine["ending"], 0) + 1
        for c in ("turns", "converged", "correct", "deadlocked", "exhausted", "idle",
                  "turns_per_episode", "decided_pct", "correct_pct"):
            if summary[c] != r[c]:
                fail("arm %s: %s is %r in the document, %r in runs.parquet"
                     % (r["arm"], c, summary[c], r[c]))
    if len(runs) != len(ARMS):
        fail("the binary wrote %d runs for %d arms" % (len(runs), len(ARMS)))
    ok("%d arms x %d rooms: every episode row and summary equals %s (endings %s)"
       % (len(ARMS), ROOMS, binary, dict(sorted(endings.items()))))


if __name__ == "__main__":
    main()
