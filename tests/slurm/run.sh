#!/usr/bin/env bash
# End-to-end test against a real Slurm: installs slurmctld, slurmd,
# slurm-client and munge from Debian's packages when missing, starts a
# controller and one node on localhost, and checks that
#   1. `sbatch --wait --array=0-3` of `witness run ... --shard auto`, then
#      `witness merge`, gives files byte-identical to a single-machine run,
#      and the merged folder passes `witness verify --all`;
#   2. a failing array task makes `sbatch --wait` (and so this test) fail;
#   3. that task, resubmitted alone with examples/slurm/sweep.sbatch, resumes
#      its own shard without redoing its finished chunks, and the merge is
#      again identical to a single-machine run.
# Daemons this script starts are stopped on exit, whatever happens. It skips
# (exit 0, saying SKIP) only when the packages cannot be installed.
#
# usage: bash tests/slurm/run.sh [path/to/witness]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WITNESS=$(realpath "${1:-$ROOT/target/release/witness}")
WORK=$(mktemp -d /tmp/witness-slurm.XXXXXX)
export SLURM_CONF=$WORK/slurm.conf
passed=0
failed=0
our_munged=""

ok() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

cleanup() {
    set +e
    for daemon in slurmd slurmctld; do
        [ -f "$WORK/$daemon.pid" ] && kill "$(cat "$WORK/$daemon.pid")" 2>/dev/null
    done
    pkill -f "slurmd -f $SLURM_CONF" 2>/dev/null
    pkill -f "slurmctld -f $SLURM_CONF" 2>/dev/null
    [ -n "$our_munged" ] && kill "$our_munged" 2>/dev/null
    sleep 1
    pkill -9 -f "$SLURM_CONF" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

# --- packages ------------------------------------------------------------
need() { command -v slurmctld && command -v slurmd && command -v sbatch && command -v munged; }
if ! need >/dev/null 2>&1; then
    echo "installing slurmctld slurmd slurm-client munge from Debian's packages"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurmctld slurmd slurm-client munge; } >"$WORK/apt.log" 2>&1; then
        tail -5 "$WORK/apt.log"
        echo "SKIP: the Slurm test did not run: slurmctld, slurmd, slurm-client and munge could not be installed"
        exit 0
    fi
fi

# --- munge ---------------------------------------------------------------
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /run/munge /var/lib/munge /var/log/munge /etc/munge
    if [ ! -s /etc/munge/munge.key ]; then
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
        chmod 400 /etc/munge/munge.key
    fi
    chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge 2>/dev/null || true
    munged --force --pid-file="$WORK/munged.pid" 2>/dev/null || munged --force
    sleep 1
    our_munged=$(cat "$WORK/munged.pid" 2>/dev/null || pgrep -n munged)
    munge -n | unmunge >/dev/null
fi

# --- slurm ---------------------------------------------------------------
mkdir -p "$WORK/state" "$WORK/spool"
cat >"$SLURM_CONF" <<EOF
ClusterName=witnessci
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/slurmctld.log
SlurmdLogFile=$WORK/slurmd.log
NodeName=witnessnode NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=witnessnode Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N witnessnode
for _ in $(seq 60); do
    sinfo -h -o %t 2>/dev/null | grep -q idle && break
    sleep 1
done
if ! sinfo -h -o %t | grep -q idle; then
    tail -20 "$WORK/slurmctld.log" "$WORK/slurmd.log"
    echo "slurm: 0 passed, 1 failed (the node never became idle)"
    exit 1
fi
ok "slurmctld and slurmd up on localhost ($(sinfo -h -o '%P %D %t'))"

same_files() { # DIR_A DIR_B: the data files are byte-identical
    local f
    for f in runs.parquet trajectories.parquet manifest.toml; do
        cmp -s "$1/$f" "$2/$f" || return 1
    done
}

# --- 1. the recorded sweep as a 4-task array ---------------------------------
cat >"$WORK/plain.sbatch" <<EOF
#!/bin/bash
exec "$WITNESS" run "$ROOT/experiments/sweep-540.toml" --out "$WORK/sweep" --shard auto --quiet
EOF
if sbatch --wait --array=0-3 --cpus-per-task=1 --output="$WORK/sweep-%a.out" "$WORK/plain.sbatch" >/dev/null; then
    ok "sbatch --wait --array=0-3 of witness run --shard auto"
else
    fail "an array task of the sweep failed"; cat "$WORK"/sweep-*.out
fi
"$WITNESS" merge "$WORK/sweep" --quiet && ok "witness merge" || fail "witness merge"
"$WITNESS" run "$ROOT/experiments/sweep-540.toml" --out "$WORK/single" --quiet
same_files "$WORK/sweep" "$WORK/single" && ok "merged files are byte-identical to a single-machine run" \
    || fail "merged files differ from a single-machine run"
"$WITNESS" verify "$WORK/sweep" --all >/dev/null && ok "witness verify --all passes on the merged result" \
    || fail "witness verify --all on the merged result"

# --- 2. a failing task fails the array; 3. resubmitted alone, it resumes -----
# A stand-in for a crash: task 1 is killed with SIGKILL after its first chunk.
cat >"$WORK/crash-once.sh" <<EOF
#!/bin/bash
if [ "\$SLURM_ARRAY_TASK_ID" = 1 ] && [ ! -e "$WORK/crashed" ]; then
    touch "$WORK/crashed"
    "$WITNESS" "\$@" & pid=\$!
    until [ -e "$WORK/resume/parts/runs/chunk-00000001.parquet" ]; do sleep 0.01; done
    kill -9 \$pid; exit 137
fi
exec "$WITNESS" "\$@"
EOF
chmod +x "$WORK/crash-once.sh"
export WITNESS_BIN="$WORK/crash-once.sh"
submit() { # extra sbatch arguments...
    (cd "$ROOT" && WITNESS="$WITNESS_BIN" MANIFEST=tests/slurm/resume.toml OUT="$WORK/resume" SHARDS=4 \
        sbatch --wait --cpus-per-task=1 --output="$WORK/resume-%a.out" "$@" examples/slurm/sweep.sbatch >/dev/null)
}
if submit --array=0-3; then
    fail "sbatch --wait succeeded although task 1 was killed"
else
    ok "a failing array task makes sbatch --wait fail"
fi
if submit --array=1; then
    ok "task 1 resubmitted alone (sbatch --array=1 examples/slurm/sweep.sbatch)"
else
    fail "the resubmitted task failed"; cat "$WORK/resume-1.out"
fi
if grep -Eq "[1-9][0-9]* chunk\(s\) resumed" "$WORK/resume-1.out"; then
    ok "the resubmitted task resumed its finished chunks: $(grep -Eo '[0-9]+ executed, [0-9]+ chunk\(s\) resumed' "$WORK/resume-1.out")"
else
    fail "the resubmitted task did not resume"; cat "$WORK/resume-1.out"
fi
if "$WITNESS" merge "$WORK/resume" --quiet; then
    ok "witness merge after the resubmission"
else
    fail "merge after resubmission"
    for f in "$WORK"/resume-*.out; do echo "--- $f"; cat "$f"; done
    sacct -j "$(cat "$WORK/last-job" 2>/dev/null || echo 0)" 2>/dev/null || true
fi
"$WITNESS" run "$ROOT/tests/slurm/resume.toml" --out "$WORK/resume-single" --quiet
same_files "$WORK/resume" "$WORK/resume-single" && ok "crash, resubmit and merge give the single-machine bytes" \
    || fail "crash, resubmit and merge differ from a single-machine run"

echo "slurm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
