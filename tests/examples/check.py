#!/usr/bin/env python3
"""The job files under examples/ parse as their engines read them (YAML,
JSON, an HTCondor submit file, a bash script), and the command each one
gives witness, run under the environment that engine sets for each of its
tasks, shards the sweep so that `witness merge` gives a single run's bytes.

usage: python3 tests/examples/check.py path/to/witness
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WITNESS = os.path.abspath(sys.argv[1])
passed = failed = 0
# No scheduler's variables but the ones a check sets.
BASE_ENV = {k: v for k, v in os.environ.items()
            if not k.startswith(("SLURM_", "AWS_BATCH_", "JOB_COMPLETION_INDEX"))}


def ok(what):
    global passed
    passed += 1
    print(f"ok    {what}")


def fail(what):
    global failed
    failed += 1
    print(f"FAIL  {what}")


def example(path):
    with open(os.path.join(ROOT, "examples", path), encoding="utf-8") as f:
        return f.read()


def run_tasks(name, argv, envs, out):
    """Runs witness with `argv` (its first word `witness`, `--out` pointed
    at `out`) once per task environment, then merges and compares."""
    args = list(argv[1:])
    args[args.index("--out") + 1] = out
    for env in envs:
        r = subprocess.run([WITNESS] + args, cwd=ROOT, env=dict(BASE_ENV, **env),
                           capture_output=True, text=True)
        if r.returncode != 0:
            return fail(f"{name}: task {env} exited {r.returncode}: {r.stderr.strip()}")
    r = subprocess.run([WITNESS, "merge", out, "--quiet"], capture_output=True, text=True)
    if r.returncode != 0:
        return fail(f"{name}: merge: {r.stderr.strip()}")
    for f in ("runs.parquet", "trajectories.parquet", "manifest.toml"):
        with open(os.path.join(out, f), "rb") as a, open(os.path.join(SINGLE, f), "rb") as b:
            if a.read() != b.read():
                return fail(f"{name}: {f} differs from a single-machine run")
    ok(f"{name}: {len(envs)} tasks as the engine runs them, merged, equal a single run")


def kubernetes(tmp):
    docs = list(yaml.safe_load_all(example("kubernetes/indexed-job.yaml")))
    job = docs[0]
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed", job
    argv = spec["template"]["spec"]["containers"][0]["command"]
    n = spec["completions"]
    assert argv[argv.index("--shard-count") + 1] == str(n), argv
    ok(f"kubernetes/indexed-job.yaml: an Indexed Job of {n} completions, --shard-count {n}")
    run_tasks("kubernetes", argv, [{"JOB_COMPLETION_INDEX": str(k)} for k in range(n)],
              os.path.join(tmp, "k8s"))


def aws(tmp):
    doc = json.loads(example("aws-batch/job-definition.json"))
    argv = doc["containerProperties"]["command"]
    assert argv[argv.index("--shard") + 1] == "auto", argv
    n = 4
    ok("aws-batch/job-definition.json: parses; --shard auto reads the array index and size")
    run_tasks("aws-batch", argv,
              [{"AWS_BATCH_JOB_ARRAY_INDEX": str(k), "AWS_BATCH_JOB_ARRAY_SIZE": str(n)}
               for k in range(n)], os.path.join(tmp, "aws"))


def htcondor(tmp):
    keys, queue = {}, None
    for line in example("htcondor/sweep.sub").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"queue\s+(\d+)", line)
        if m:
            queue = int(m.group(1))
            continue
        k, sep, v = line.partition("=")
        assert sep, f"not a submit-file line: {line!r}"
        keys[k.strip().lower()] = v.strip()
    assert os.path.basename(keys["executable"]) == "witness", keys
    args = shlex.split(keys["arguments"])
    shard = args[args.index("--shard") + 1]
    assert shard == f"$(Process)/{queue}", (shard, queue)
    ok(f"htcondor/sweep.sub: queue {queue}, --shard $(Process)/{queue}")
    # HTCondor substitutes $(Process) = 0 .. queue-1 in the arguments.
    out = os.path.join(tmp, "condor")
    for k in range(queue):
        argv = ["witness"] + [a.replace("$(Process)", str(k)) for a in args]
        argv[argv.index("--out") + 1] = out
        r = subprocess.run([WITNESS] + argv[1:], cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            return fail(f"htcondor: job {k} exited {r.returncode}: {r.stderr.strip()}")
    r = subprocess.run([WITNESS, "merge", out, "--quiet"], capture_output=True, text=True)
    same = r.returncode == 0 and all(
        open(os.path.join(out, f), "rb").read() == open(os.path.join(SINGLE, f), "rb").read()
        for f in ("runs.parquet", "trajectories.parquet"))
    (ok if same else fail)(f"htcondor: {queue} jobs merged equal a single run")


def slurm():
    text = example("slurm/sweep.sbatch")
    r = subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True)
    assert r.returncode == 0, r.stderr
    array = re.search(r"^#SBATCH --array=0-(\d+)$", text, re.M)
    shards = re.search(r"SHARDS=\$\{SHARDS:-(\d+)\}", text)
    assert array and shards and int(array.group(1)) + 1 == int(shards.group(1)), text
    assert "--shard auto --shard-count" in text
    ok(f"slurm/sweep.sbatch: bash syntax; --array=0-{array.group(1)} matches SHARDS={shards.group(1)}"
       " (run under a real Slurm by tests/slurm/run.sh)")


with tempfile.TemporaryDirectory() as tmp:
    SINGLE = os.path.join(tmp, "single")
    subprocess.run([WITNESS, "run", "experiments/sweep-540.toml", "--out", SINGLE, "--quiet"],
                   cwd=ROOT, check=True)
    for check in (kubernetes, aws, htcondor):
        try:
            check(tmp)
        except (AssertionError, KeyError, ValueError) as e:
            fail(f"{check.__name__}: {e!r}")
    try:
        slurm()
    except AssertionError as e:
        fail(f"slurm: {e!r}")

print(f"examples: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
