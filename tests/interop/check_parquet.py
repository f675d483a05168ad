"""Reads witness results with independent Parquet readers (pyarrow, DuckDB,
pandas, polars) and checks row counts, column types and the manifest hash in
the file metadata. Run by .ci/run; the loading snippets of
docs/guide/loading-results.md and docs/guide/clusters.md (their ```python
interop blocks) are executed here, so they are exercised on every CI run.

usage: python3 tests/interop/check_parquet.py path/to/witness
"""

import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from checks import check, finish

RESULTS = None  # set in main: the results folder



def doc_blocks(doc, results):
    """Runs the ```python interop blocks of a guide page, in order, in one
    namespace with `results` set: the page's snippets are what runs here."""
    text = (Path(__file__).resolve().parents[2] / doc).read_text()
    ns = {"results": str(results)}
    blocks = re.findall(r"^```python interop\n(.*?)^```", text, re.S | re.M)
    check(f"{doc}: has interop snippets", len(blocks) > 0, len(blocks))
    for code in blocks:
        exec(code, ns)
    return ns


def snippets(results):
    ns = doc_blocks("docs/guide/loading-results.md", results)
    return ns["runs"], ns["by_arm"], ns["curve"], ns["table"]


def shard_snippets(results):
    ns = doc_blocks("docs/guide/clusters.md", results)
    return ns["runs_so_far"], ns["rounds_so_far"]


def main():
    witness = sys.argv[1]
    root = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "default"
        subprocess.run([witness, "run", "-q", "--out", str(out), str(root / "experiments/default.toml")], check=True)
        manifest_hash = hashlib.sha256((out / "manifest.toml").read_bytes()).hexdigest()

        for name, rows in [("runs", 180), ("trajectories", 180 * 61)]:
            f = pq.ParquetFile(out / f"{name}.parquet")
            md = f.metadata.metadata
            check(f"pyarrow {name}: {rows} rows", f.metadata.num_rows == rows, f.metadata.num_rows)
            check(f"pyarrow {name}: manifest hash in metadata",
                  md[b"witness.manifest_sha256"].decode() == manifest_hash)
            check(f"pyarrow {name}: engine version", md[b"witness.engine_version"] == b"witness-engine/1")
            check(f"pyarrow {name}: zstd", f.metadata.row_group(0).column(0).compression == "ZSTD")

        schema = pq.read_schema(out / "runs.parquet")
        expected = {
            "run_id": pa.int64(), "run_key": pa.string(), "arm": pa.string(), "population": pa.int64(),
            "truth": pa.bool_(), "graph": pa.string(), "communication": pa.float64(),
            "corrections": pa.list_(pa.int64()), "peak_mistaken": pa.float64(),
            "first_clear_round": pa.int64(), "failed": pa.bool_(),
        }
        for col, ty in expected.items():
            check(f"runs.{col} is {ty}", schema.field(col).type == ty, schema.field(col).type)

        runs, by_arm, curve, table = snippets(out)
        check("pandas: 3 arms", sorted(by_arm.index) == ["endorsement", "reserved", "source_aware"])
        check("pandas: no failed run", not runs["failed"].any())
        check("polars: 3 arms x 61 rounds", curve.height == 3 * 61, curve.height)
        check("duckdb: 3 arms x 3 graphs", len(table) == 9, len(table))
        n = duckdb.sql(f"SELECT count(*) FROM '{out}/trajectories.parquet'").fetchall()[0][0]
        check("duckdb: trajectory rows", n == 180 * 61, n)

        # Shard parts are plain Parquet too: read them before `witness merge`.
        shards = Path(tmp) / "shards"
        subprocess.run([witness, "run", "-q", "--shard", "0/2", "--out", str(shards),
                        str(root / "experiments/default.toml")], check=True)
        partial = shard_snippets(shards)
        check("duckdb reads shard parts before merge", 0 < partial[0] < 180, partial)
        check("polars reads shard parts before merge", partial[1] == partial[0] * 61, partial)

        # The hive model: nullable knob columns and the episodes table.
        hive = Path(tmp) / "hive"
        manifest = Path(tmp) / "hive.toml"
        manifest.write_text((root / "experiments/hive-arms.toml").read_text()
                            .replace("rooms = 5000", "rooms = 500") + "\n[output]\nepisodes = true\n")
        subprocess.run([witness, "run", "-q", "--out", str(hive), str(manifest)], check=True)
        hive_schema = pq.read_schema(hive / "runs.parquet")
        for col, ty in {"budget": pa.int64(), "refutation_cap": pa.int64(), "correct_pct": pa.float64(),
                        "effective_threshold": pa.int64(), "evidential": pa.bool_()}.items():
            check(f"hive runs.{col} is {ty}", hive_schema.field(col).type == ty, hive_schema.field(col).type)
        hruns = pd.read_parquet(hive / "runs.parquet")
        plus = hruns[hruns.arm == "hive+"].iloc[0]
        check("pandas: hive+ at 500 rooms is 78.8 % correct", round(plus.correct_pct, 1) == 78.8, plus.correct_pct)
        check("pandas: unset knobs are null", pd.isna(plus.budget) and pd.isna(plus.refutation_cap))
        ends = duckdb.sql(f"""
            SELECT r.arm, e.ending, count(*) FROM '{hive}/episodes.parquet' e
            JOIN '{hive}/runs.parquet' r USING (run_id) WHERE r.arm = 'hive' GROUP BY ALL ORDER BY ALL
        """).fetchall()
        check("duckdb: hive endings 455 converged, 45 deadlocked",
              ends == [("hive", "converged", 455), ("hive", "deadlocked", 45)], ends)
        decided = pl.read_parquet(hive / "episodes.parquet").filter(pl.col("ending") != "converged")
        check("polars: decided is null unless converged", decided["decided"].null_count() == decided.height)

    finish("interop")


if __name__ == "__main__":
    main()
