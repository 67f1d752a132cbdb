#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 3 acceptance: a device whose I/O hangs, with dirty data, next to healthy dirty ones.
# `run` must return by DeadlineSec (generous margin here; the benchmark measures the real figure),
# the healthy mounts must be synced (a power cut proves it), the hung one reported `timeout` with
# the abandoned worker's pid; after the disk resumes, the abandoned worker exits and nothing is left.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin

stack_setup good1 ext4 128M
stack_setup hung ext4 128M
stack_setup good2 xfs 320M
seed=$RANDOM
echo "seed=$seed"
oracle_write "$(stack_mnt good1)" 8 "$seed"
oracle_write "$(stack_mnt good2)" 8 "$((seed + 1))"
oracle_write "$(stack_mnt hung)" 8 "$((seed + 2))"
stack_ctl hung hang-max 120s >/dev/null
stack_ctl hung hang io >/dev/null

deadline=4
ss_config "[Sync]
MaxParallel=4
MountTimeoutSec=2s
DeadlineSec=${deadline}s"

t0=$(date +%s%N)
rc=0
ss run || rc=$?
t1=$(date +%s%N)
elapsed_ms=$(((t1 - t0) / 1000000))
echo "run returned $rc after ${elapsed_ms} ms (deadline ${deadline}s)"
((elapsed_ms <= deadline * 1000 + 1500)) || fail "run took ${elapsed_ms} ms, deadline ${deadline}s"
[[ $rc == 0 ]] || fail "exit status $rc with OnTimeout=continue"

status=$SS_TMP/status.json
ss status --json=short >"$status"
[[ $(ss_mount_field "$status" "$(stack_mnt good1)" outcome) == synced ]] || fail "good1 not synced"
[[ $(ss_mount_field "$status" "$(stack_mnt good2)" outcome) == synced ]] || fail "good2 not synced"
[[ $(ss_mount_field "$status" "$(stack_mnt hung)" outcome) == timeout ]] || fail "hung not reported timeout"
pid=$(ss_mount_field "$status" "$(stack_mnt hung)" abandoned_pid)
[[ $pid =~ ^[0-9]+$ ]] || fail "no abandoned pid reported"
echo "abandoned worker: $pid, parked requests on the hung disk: $(stack_get hung parked)"
[[ -d /proc/$pid ]] || echo "note: worker $pid already gone"

# The healthy ones are durable.
for s in good1:0 good2:1; do
        name=${s%:*}
        stack_power_cut_and_remount "$name" 500 "$seed"
        oracle_check "$(stack_mnt "$name")" 8 "$((seed + ${s#*:}))" || fail "$name lost data (seed $seed)"
done

# OnTimeout=fail turns the same situation into exit status 75 (EX_TEMPFAIL).
ss_config "[Sync]
MountTimeoutSec=1s
DeadlineSec=3s
OnTimeout=fail"
rc=0
ss run || rc=$?
[[ $rc == 75 ]] || fail "OnTimeout=fail: exit status $rc, expected 75"

# Resume: every abandoned worker finishes and exits.
stack_ctl hung resume >/dev/null
for p in $(python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["history"]:
    for m in r["mounts"]:
        if m.get("abandoned_pid"):
            print(m["abandoned_pid"])' <(ss status --json=short)); do
        ss_wait_gone "$p" 30 || fail "abandoned worker $p still there after resume"
done
[[ $(stack_get hung parked) == 0 ]] || fail "requests still parked after resume"
echo PASS
