#!/usr/bin/env bash
# End-to-end test of GNU parallel across hosts: installs `parallel` and
# `openssh-server` from Debian's packages when missing, starts an sshd on
# 127.0.0.1 with throwaway keys (removed at the end) and reaches it under
# two host names, as two machines sharing a filesystem would be, and checks
# that
#   1. `parallel -S` over the two hosts, one shard per job, with one shard
#      failing, leaves that shard missing (`witness shards` says so);
#   2. `parallel --resume-failed` with the same joblog reruns only it;
#   3. `witness merge` then gives files byte-identical to a single-machine
#      run.
# It stops the sshd it started however it ends, and prints SKIP (exit 0)
# only when the packages cannot be installed.
#
# usage: bash tests/parallel/run.sh [path/to/witness]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WITNESS=$(realpath "${1:-$ROOT/target/release/witness}")
WORK=$(mktemp -d /tmp/witness-parallel.XXXXXX)
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok    $*"; }
fail() { failed=$((failed + 1)); echo "FAIL  $*"; }

cleanup() {
    set +e
    [ -f "$WORK/sshd.pid" ] && kill "$(cat "$WORK/sshd.pid")" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT

# --- packages ------------------------------------------------------------
if ! { command -v parallel && command -v ssh && [ -x /usr/sbin/sshd ]; } >/dev/null 2>&1; then
    echo "installing parallel and openssh-server from Debian's packages"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        parallel openssh-server openssh-client; } >"$WORK/apt.log" 2>&1; then
        tail -5 "$WORK/apt.log"
        echo "SKIP: the GNU parallel test did not run: parallel and openssh-server could not be installed"
        exit 0
    fi
fi

# --- an sshd on 127.0.0.1, reached as two hosts ---------------------------
ssh-keygen -q -t ed25519 -N '' -f "$WORK/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$WORK/id"
cp "$WORK/id.pub" "$WORK/authorized_keys"
chmod 600 "$WORK/authorized_keys"
PORT=$((20000 + RANDOM % 20000))
cat >"$WORK/sshd_config" <<EOF
Port $PORT
ListenAddress 127.0.0.1
HostKey $WORK/host_key
AuthorizedKeysFile $WORK/authorized_keys
PidFile $WORK/sshd.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
EOF
cat >"$WORK/ssh_config" <<EOF
Host host-a host-b
    HostName 127.0.0.1
    Port $PORT
    User $(id -un)
    IdentityFile $WORK/id
    IdentitiesOnly yes
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    LogLevel ERROR
EOF
mkdir -p /run/sshd
/usr/sbin/sshd -f "$WORK/sshd_config" -E "$WORK/sshd.log"
for _ in $(seq 50); do
    ssh -F "$WORK/ssh_config" host-a true 2>/dev/null && break
    sleep 0.1
done
if ssh -F "$WORK/ssh_config" host-b true; then
    ok "sshd on 127.0.0.1:$PORT, reached as host-a and host-b"
else
    fail "cannot log in to the test sshd"; cat "$WORK/sshd.log"; exit 1
fi

# --- 1. one shard per job over two hosts, shard 2 failing once ------------
cat >"$WORK/shard.sh" <<EOF
#!/bin/bash
# One shard of the sweep; shard 2 fails the first time, as a crashed job would.
k=\$1
if [ "\$k" = 2 ] && [ ! -e "$WORK/failed-once" ]; then
    touch "$WORK/failed-once"
    echo "shard \$k: failing on purpose on \$(hostname)" >&2
    exit 1
fi
exec "$WITNESS" run "$ROOT/experiments/sweep-540.toml" --out "$WORK/sweep" --shard "\$k/4" --threads 1 --quiet
EOF
chmod +x "$WORK/shard.sh"
run_parallel() { # extra parallel options...
    parallel --will-cite --joblog "$WORK/jobs.log" -S 1/host-a,1/host-b \
        --ssh "ssh -F $WORK/ssh_config" "$@" "$WORK/shard.sh" {} ::: 0 1 2 3
}
if run_parallel; then
    fail "parallel succeeded although shard 2 failed"
else
    ok "parallel -S host-a,host-b ran the shards and reported the failed one"
fi
hosts=$(awk 'NR > 1 { print $2 }' "$WORK/jobs.log" | sort -u | tr '\n' ' ')
[ "$hosts" = "host-a host-b " ] && ok "jobs ran on both hosts ($hosts)" || fail "jobs ran on: $hosts"
status=0
"$WITNESS" shards "$WORK/sweep" --count 4 >"$WORK/shards.out" || status=$?
if [ "$status" = 1 ] && grep -q "shard 2/4  missing" "$WORK/shards.out"; then
    ok "witness shards: shard 2 missing (exit 1)"
else
    fail "witness shards did not report shard 2 missing (exit $status)"; cat "$WORK/shards.out"
fi

# --- 2. --resume-failed reruns only the failed shard ----------------------
before=$(wc -l <"$WORK/jobs.log")
if run_parallel --resume-failed; then
    ok "parallel --resume-failed finished"
else
    fail "parallel --resume-failed failed"; cat "$WORK/jobs.log"
fi
rerun=$(tail -n +"$((before + 1))" "$WORK/jobs.log" | awk '{ print $NF }' | tr '\n' ' ')
[ "$rerun" = "2 " ] && ok "only shard 2 was run again" || fail "run again: '$rerun'"
"$WITNESS" shards "$WORK/sweep" >/dev/null && ok "witness shards: every shard complete" \
    || fail "witness shards still reports unfinished shards"

# --- 3. merge equals a single-machine run ---------------------------------
"$WITNESS" merge "$WORK/sweep" --quiet && ok "witness merge" || fail "witness merge"
"$WITNESS" run "$ROOT/experiments/sweep-540.toml" --out "$WORK/single" --quiet
same=1
for f in runs.parquet trajectories.parquet manifest.toml complete.json; do
    cmp -s "$WORK/sweep/$f" "$WORK/single/$f" || { same=0; echo "differs: $f"; }
done
[ "$same" = 1 ] && ok "merged files are byte-identical to a single-machine run" \
    || fail "merged files differ from a single-machine run"

echo "parallel: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
