"""Checks `witness report` in a real browser (chromium-headless-shell, from
Debian). Run by .ci/run, for experiments/compare-policies.toml (with its
verdicts) and experiments/hive-arms.toml:

- the page is one file under 1 MB, and the same folder gives the same bytes;
- loaded from file://, it logs nothing to the console (no script error, no
  Content-Security-Policy violation) and its own error box stays empty;
- the DOM, after the page's script ran, holds the verdict rows `compare`
  writes, the run count and the headline means and counts computed here
  from runs.parquet with pyarrow (the hive's ranked runs likewise);
- two fragments give two different, expected views (a scenario's charts, a
  run's drill-down) and the default view is a third;
- screenshots at 1280 x 800 are byte-identical across two loads;
- 100,000 runs give a page under 5 MB that says what it left out.

It prints the time the page took to become interactive, as the page itself
measures it (`performance.now()` when its script finished).

usage: python3 tests/interop/check_report.py path/to/witness
"""

import re
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
from checks import check, finish

ROOT = Path(__file__).resolve().parents[2]
BROWSER = shutil.which("chromium-headless-shell") or "/usr/lib/chromium/chromium-headless-shell"


def witness(binary, *args):
    return subprocess.run([binary, *map(str, args)], check=True, capture_output=True, text=True)


def browser(*args):
    cmd = [BROWSER, "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Tables(HTMLParser):
    """The text of every table cell, by the id of the section it is in, and
    each element with an id: its attributes and its text."""

    def __init__(self):
        super().__init__()
        self.section = None
        self.tables = {}
        self.row = None
        self.cell = None
        self.ids = {}
        self.open = []  # (tag, id or None) of every open element

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.section = a.get("id")
        if "id" in a:
            self.ids[a["id"]] = {"attrs": a, "text": ""}
        if tag not in VOID:
            self.open.append((tag, a.get("id")))
        if tag == "tr":
            self.row = []
        if tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        if tag == "tr" and self.row is not None:
            self.tables.setdefault(self.section, []).append(self.row)
            self.row = None
        while self.open:
            t, _ = self.open.pop()
            if t == tag:
                break

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
        for _, i in self.open:
            if i is not None:
                self.ids[i]["text"] += data


def load(page, fragment=""):
    """The DOM after the script ran, and the console lines it produced."""
    out = browser("--dump-dom", page.as_uri() + fragment)
    console = [l for l in out.stderr.splitlines() if ":CONSOLE" in l]
    dom = out.stdout
    t = Tables()
    t.feed(dom)
    ready = re.search(r'data-ready-ms="(\d+)"', dom)
    return t, console, dom, int(ready.group(1)) if ready else None


def loads_cleanly(name, page, fragment=""):
    t, console, dom, ready = load(page, fragment)
    problems = t.ids.get("problems", {})
    check(f"{name}{fragment}: no console message and no CSP violation", not console, "\n".join(console[:5]))
    check(f"{name}{fragment}: the page's error box is empty", "hidden" in problems.get("attrs", {}) and not problems.get("text"), problems)
    check(f"{name}{fragment}: the script ran", ready is not None and "id=\"summary\"" in dom)
    return t, ready


def number(text):
    return float(text) if text not in ("", None) else None


def compare_policies(binary, tmp):
    out = tmp / "cp"
    witness(binary, "run", "-q", ROOT / "experiments/compare-policies.toml", "--out", out)
    witness(binary, "report", out, "--baseline", "endorsement")
    page = out / "report.html"
    first = page.read_bytes()
    witness(binary, "report", out, "--baseline", "endorsement")
    check("compare-policies: the same folder gives the same bytes", page.read_bytes() == first)
    check(f"compare-policies: {len(first)} bytes, under 1 MB", len(first) < 1_000_000)
    t, ready = loads_cleanly("compare-policies", page)
    print(f"      compare-policies: interactive after {ready} ms (the page's own timing)")
    runs = pq.read_table(out / "runs.parquet").to_pandas()
    check(f"compare-policies: the header gives the {len(runs)} runs", f"{len(runs)} runs" in t.ids["facts"]["text"])
    # Verdicts: what `compare` writes, row for row.
    witness(binary, "compare", out, "--baseline", "endorsement")
    want = pd.read_csv(out / "compare.csv")
    got = [r[:3] for r in t.tables.get("verdicts", [])[1:]]
    words = {"confirmed": "answer changed", "inconclusive": "inconclusive", "not_confirmed": "answer unchanged"}
    expected = [[r.scenario, r.arm, words[r.verdict]] for r in want.itertuples()]
    check(f"compare-policies: {len(expected)} verdict rows as compare writes them, tiers in words", got == expected, f"{got[:3]} vs {expected[:3]}")
    # Who wins, by how much: the headline sentence and the forest plot.
    said = t.ids.get("headline", {}).get("text", "")
    check(
        "compare-policies: the headline says which arm is better and which worse",
        "trust is better in 2 of 2" in said and "source_aware is worse in 2 of 2" in said,
        said,
    )
    testable = want[want["testable"]]
    dom = load(page)[2]
    circles = re.findall(r'<circle[^>]*fill="(#[0-9A-Fa-f]{3,6})"', dom.split('id="forest"', 1)[-1].split("</svg>", 1)[0])
    colours = dict(zip(testable.itertuples(), circles))
    wrong = [(r.scenario, r.arm, c) for r, c in colours.items() if r.effect_verdict == "worse" and c.upper() != "#D55E00"]
    check(
        f"compare-policies: the forest plot draws the {len(testable)} testable effects, no worse one green",
        len(circles) == len(testable) and not wrong and "#009E73" in circles,
        (len(circles), wrong),
    )
    # The heatmap's scale runs as `witness plot`'s: low light, high dark.
    key = dom.split('aria-label="colour scale"', 1)[-1].split("</svg>", 1)[0]
    fills = re.findall(r'fill="(rgb\([^)]*\))"', key)
    check(
        "compare-policies: the heatmap's scale runs light (low) to dark (high), as witness plot's, with the direction",
        fills[:1] == ["rgb(253,231,37)"] and fills[-1:] == ["rgb(68,1,84)"] and "lower is better" in dom,
        fills[:1] + fills[-1:],
    )
    # Headline means and counts per arm and scenario, from the Parquet.
    # The full statistics table (the second table of the section).
    rows = t.tables["summary"]
    start = next(i for i, r in enumerate(rows) if r[:1] == ["arm"] and "mean" in r)
    head = rows[start]
    body = [dict(zip(head, r)) for r in rows[start + 1:]]
    means = runs.groupby(["arm", "truth", "graph"])["peak_mistaken"].agg(["mean", "count"])
    bad = []
    for r in body:
        key = (r["arm"], r["truth"] == "true", r["graph"])
        m, n = means.loc[key]
        if abs(number(r["mean"]) - m) > 5e-5 or int(r["n"]) != n:
            bad.append((key, r["mean"], m, r["n"], n))
    check(f"compare-policies: {len(body)} headline means and counts equal pandas over runs.parquet", len(body) == len(means) and not bad, bad[:3])
    # Two fragments, two views.
    default = t.ids["trajectory-title"]["text"]
    hub = "#" + urllib.parse.urlencode({"scenario": "truth=false, graph=hub"})
    t2, _ = loads_cleanly("compare-policies", page, hub)
    title = t2.ids["trajectory-title"]["text"]
    check("compare-policies: a scenario fragment draws that scenario", "truth=false, graph=hub" in title and title != default, (default, title))
    run = runs[runs.run_id == 17].iloc[0]
    t3, _ = loads_cleanly("compare-policies", page, "#run=17")
    place = t3.ids.get("run-place", {}).get("text", "")
    check("compare-policies: a run fragment opens that run", "run" in t3.ids and run.arm in place and f"seed {run.seed}" in place, place)
    check("compare-policies: the default view opens no run", "run" not in t.ids)
    # Screenshots at 1280 x 800, twice.
    shots = []
    for k in range(2):
        png = tmp / f"shot-{k}.png"
        browser("--window-size=1280,800", f"--screenshot={png}", page.as_uri())
        shots.append(png.read_bytes() if png.exists() else b"")
    check("compare-policies: two screenshots at 1280 x 800 are byte-identical", shots[0] and shots[0] == shots[1])


def hive_arms(binary, tmp):
    out = tmp / "ha"
    witness(binary, "run", "-q", ROOT / "experiments/hive-arms.toml", "--out", out)
    witness(binary, "report", out)
    page = out / "report.html"
    size = page.stat().st_size
    check(f"hive-arms: {size} bytes, under 1 MB", size < 1_000_000)
    t, ready = loads_cleanly("hive-arms", page)
    print(f"      hive-arms: interactive after {ready} ms (the page's own timing)")
    runs = pq.read_table(out / "runs.parquet").to_pandas()
    rows = t.tables.get("ranking", [])
    head = rows[0] if rows else []
    body = [dict(zip(head, r)) for r in rows[1:]]
    bad = [
        r for r in body
        if abs(float(r["correct_pct"]) - runs.loc[runs.run_id == int(r["run_id"]), "correct_pct"].iloc[0]) > 0.05
    ]
    check(f"hive-arms: the ranking lists its {len(runs)} runs with their correct_pct", len(body) == len(runs) and not bad, bad[:2])


def large(binary, tmp):
    out = tmp / "large"
    witness(binary, "run", "-q", ROOT / "benches/manifests/compare-100k.toml", "--out", out)
    witness(binary, "report", out, "--baseline", "endorsement")
    page = out / "report.html"
    size = page.stat().st_size
    runs = pq.read_metadata(out / "runs.parquet").num_rows
    t, ready = loads_cleanly("100,000 runs", page)
    _, _, dom, _ = load(page)
    said = "Reduced to stay small" in dom and "2000 of 100000 runs are listed" in dom
    check(f"{runs} runs: {size} bytes, under 5 MB, and the page says what it left out", runs == 100_000 and size < 5_000_000 and said)
    print(f"      100,000 runs: interactive after {ready} ms (the page's own timing)")


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        compare_policies(binary, tmp)
        hive_arms(binary, tmp)
        large(binary, tmp)
    finish("report in a browser")


if __name__ == "__main__":
    main()
