#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 4 item 3: k = 1..4 hung devices — block fault disks (`hang io`: writes and flushes park) and
# FUSE passthrough mounts (`hang all`: the server stops answering, like a dead NFS server) — with
# dirty data, next to healthy dirty ones (ext4, xfs; workload generator). Per run: `suspend-sync run`
# must return by DeadlineSec (return time - deadline is reported; more than REL_SLACK_MS fails), the
# healthy and idle mounts must be `synced` and durable (power cut, random keep, fsck, model
# comparison), every hung one reported `timeout` with its abandoned worker; after resume every
# abandoned worker exits, no request stays parked and no suspend-sync process of ours is left.
#
# Environment: REL_HUNG_RUNS (default 8: k = 1..4 with per-mount timeouts, then with the deadline), REL_SEED, REL_SLACK_MS (default 1000:
# process start-up under ASan on a shared machine), REL_RESULTS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin

runs=${REL_HUNG_RUNS:-8}
base=${REL_SEED:-$((RANDOM * 32768 + RANDOM))}
slack=${REL_SLACK_MS:-1000}
deadline_s=3
echo "hung: base seed=$base runs=$runs deadline=${deadline_s}s slack=${slack}ms"

stack_setup h-ext4 ext4 128M
stack_setup h-xfs xfs 320M
stack_setup b1 ext4 128M
stack_setup b2 ext4 128M
stack_passthrough f1
stack_passthrough f2
pool=(b1 f1 b2 f2)
healthy=(h-ext4 h-xfs)
mounts=()
for n in "${healthy[@]}" "${pool[@]}"; do
        mounts+=("$(stack_mnt "$n")")
        [[ $n == [bf]* ]] && stack_ctl "$n" hang-max 120s >/dev/null
done
# runs 1-4, 9-12, ...: per-mount timeouts (1 s) free the worker slots ("mount-timeout"); runs 5-8,
# 13-16, ...: the deadline is what stops the run (MountTimeoutSec longer than DeadlineSec: "deadline")
mode=
configure() {           # RUN
        local mt=1s
        mode=mount-timeout
        if (((($1 - 1) / 4) % 2)); then
                mt=10s
                mode=deadline
        fi
        REL_SYNC="MaxParallel=4
MountTimeoutSec=$mt
DeadlineSec=${deadline_s}s
OnTimeout=continue"
        rel_config "${mounts[@]}"
}

status=$REL_TMP/status.json
failures=0 worst=-999999
run_fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}

for ((i = 1; i <= runs; i++)); do
        seed=$((base * 1000 + i))
        k=$(((i - 1) % 4 + 1))
        RANDOM=$seed
        keyed=()
        for n in "${pool[@]}"; do keyed+=("$RANDOM $n"); done
        mapfile -t hung < <(printf '%s\n' "${keyed[@]}" | sort -n | head -n "$k" | cut -d' ' -f2)
        configure "$i"
        echo "== run $i seed=$seed k=$k hung=${hung[*]} mode=$mode $(grep MountTimeoutSec "$SS_CONF")"

        rel_gen "$seed" 30 6 "${healthy[@]}"
        for n in "${hung[@]}"; do
                # dirty data that only the hung device can take
                head -c $((256 * 1024 + i)) /dev/urandom >"$(stack_mnt "$n")/dirty.$i"
                if [[ $n == f* ]]; then
                        stack_ctl "$n" hang all >/dev/null
                else
                        stack_ctl "$n" hang io >/dev/null
                fi
        done

        t0=$(date +%s%N)
        rc=0
        ss run >"$REL_TMP/run.log" 2>&1 || rc=$?
        t1=$(date +%s%N)
        ms=$(((t1 - t0) / 1000000))
        over=$((ms - deadline_s * 1000))
        ((over > worst)) && worst=$over
        echo "run $i: exit $rc after $ms ms (deadline ${deadline_s}s, over by $over ms)"
        [[ $rc == 0 ]] || { cat "$REL_TMP/run.log"; run_fail "run $i: exit status $rc with OnTimeout=continue (seed $seed)"; }
        ((over <= slack)) || run_fail "run $i: returned $over ms after the deadline (k=$k, hung ${hung[*]})"

        ss status --json=short >"$status"
        pids=()
        timeouts=0
        for n in "${healthy[@]}" "${pool[@]}"; do
                m=$(stack_mnt "$n")
                out=$(rel_outcome "$status" "$m")
                if [[ " ${hung[*]} " == *" $n "* ]]; then
                        pid=$(ss_mount_field "$status" "$m" abandoned_pid)
                        if [[ $out == timeout* && $pid =~ ^[0-9]+$ ]]; then
                                timeouts=$((timeouts + 1))
                                pids+=("$pid")
                        else
                                run_fail "run $i: hung $n reported '$out' (abandoned pid '$pid')"
                        fi
                elif [[ " ${healthy[*]} " == *" $n "* ]]; then
                        [[ $out == synced* ]] || run_fail "run $i: healthy $n reported '$out' (k=$k)"
                else
                        # idle pool members may be proven clean
                        [[ $out == synced* || $out == "skipped clean"* ]] || run_fail "run $i: idle $n reported '$out' (k=$k)"
                fi
        done

        # the healthy ones are durable
        losses=0 entries=0 changes=0 fsck=ok
        j=0
        for n in "${healthy[@]}"; do
                j=$((j + 1))
                keep=$((((seed * 7919) + j * 104729) % 1001))
                rel_cut "$n" "$keep" "$((seed * 10 + j))" || fail "run $i: $n cannot be mounted after the cut (seed $seed)"
                rel_check "$n" || run_fail "run $i: $n lost $REL_LOSSES entries (seed $seed, keep $keep)"
                [[ $REL_FSCK == ok ]] || { fsck=FAIL; run_fail "run $i: $n fsck not clean (seed $seed)"; }
                losses=$((losses + REL_LOSSES)) entries=$((entries + REL_ENTRIES)) changes=$((changes + REL_CHANGES[$n]))
        done

        # resume: every abandoned worker exits, nothing parked, nothing of ours left
        for n in "${hung[@]}"; do
                stack_ctl "$n" resume >/dev/null
        done
        leftover=0
        for pid in "${pids[@]}"; do
                ss_wait_gone "$pid" 30 || { leftover=$((leftover + 1)); run_fail "run $i: abandoned worker $pid still there 30 s after resume"; }
        done
        for n in "${hung[@]}"; do
                [[ $(stack_get "$n" parked) == 0 ]] || { leftover=$((leftover + 1)); run_fail "run $i: requests still parked on $n"; }
        done
        if pgrep -f -- "--state-dir=$SS_STATE" >/dev/null; then
                leftover=$((leftover + 1))
                run_fail "run $i: suspend-sync processes left: $(pgrep -f -- "--state-dir=$SS_STATE" | tr '\n' ' ')"
        fi
        echo "run $i: timeouts=$timeouts/$k healthy changes=$changes entries=$entries losses=$losses fsck=$fsck leftover=$leftover"
        rel_record hung "k=$k $mode" "$i" "$seed" - "$changes" "$entries" "$losses" "$fsck" "over_ms=$over timeouts=$timeouts/$k leftover=$leftover"
done

echo "hung: worst return over the deadline $worst ms; $failures failure(s); base seed $base"
((failures == 0)) || exit 1
echo PASS
