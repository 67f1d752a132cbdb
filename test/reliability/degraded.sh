#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 4 item 5: degraded systems. Two ext4 disks under SkipClean=yes: B untouched and settled
# (synced, writeback lists drained: the state in which the removed clean rule skipped it); A changed
# milliseconds before the run. Then `run` with one piece of the facts or of the state missing:
#   no-debugfs       --debugfs=/nonexistent
#   garbage-stats    --debugfs=DIR whose bdi/*/stats and wb_stats hold garbage
#   stats-dirs       --debugfs=DIR whose bdi/*/stats and wb_stats are directories
#   no-sysfs         --sysfs=<empty dir> (libudev and sysfs cannot classify anything)
#   missing-state    --state-dir under a non-existent parent (it must be created and the run recorded)
#   ro-state         --state-dir on a read-only bind mount
#   file-state       --state-dir is a regular file
# Each case: exit status 0 (documented: every planned mount synced), both disks synced ("Synced 2 of
# 2 superblocks": the rules skip every other mount of this machine), so 0 unsafe skips, a line on
# stderr naming what was missing, and after a power cut (random keep) every change present and
# fsck clean.
#
# Environment: REL_DEGRADED_CASES (default: all of the above), REL_SEED, REL_RESULTS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin
ss_debugfs || skip "debugfs not available: the test waits on the bdi's writeback lists"

# shellcheck disable=SC2206
cases=(${REL_DEGRADED_CASES:-no-debugfs garbage-stats stats-dirs no-sysfs missing-state ro-state file-state})
base=${REL_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "degraded: base seed=$base cases=${cases[*]}"

stack_setup a ext4 128M
stack_setup b ext4 128M
A=$(stack_mnt a)
B=$(stack_mnt b)
REL_SYNC="SkipClean=yes
MountTimeoutSec=30s
DeadlineSec=60s"
rel_config "$A" "$B"

D=$SS_TMP/degraded
mkdir -p "$D/empty-sysfs"
# fake debugfs trees, one entry per real bdi
for kind in garbage dirs; do
        for bdi in /sys/kernel/debug/bdi/*/; do
                bdi=$(basename "$bdi")
                mkdir -p "$D/dbg-$kind/bdi/$bdi"
                for f in stats wb_stats; do
                        if [[ $kind == garbage ]]; then
                                printf 'b_dirty: x\n\x01\x02garbage\nBdiWriteback: -1 kB\nb_io:\n' >"$D/dbg-$kind/bdi/$bdi/$f"
                        else
                                mkdir -p "$D/dbg-$kind/bdi/$bdi/$f"
                        fi
                done
        done
done
ro_mounted=0
cleanup_ro() {
        if ((ro_mounted)); then umount "$D/ro-state" 2>/dev/null || true; fi
}
ss_on_exit cleanup_ro

failures=0
case_fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}

t=0
for c in "${cases[@]}"; do
        t=$((t + 1))
        seed=$((base * 1000 + t))
        # B settled (its model first: reading a tree updates atimes)
        rel_snap b
        rel_settle "$B" || fail "$c: precondition: the untouched disk did not settle"

        args=()
        state=$SS_STATE
        expect_msg=
        case $c in
        no-debugfs)    args=(--debugfs=/nonexistent); expect_msg="debugfs|bdi" ;;
        garbage-stats) args=(--debugfs="$D/dbg-garbage"); expect_msg="stats|debugfs|bdi" ;;
        stats-dirs)    args=(--debugfs="$D/dbg-dirs"); expect_msg="stats|debugfs|bdi" ;;
        no-sysfs)      args=(--sysfs="$D/empty-sysfs"); expect_msg="sysfs|udev|classif" ;;
        missing-state) state=$D/missing.$t/parent/state; expect_msg= ;;
        ro-state)      mkdir -p "$D/ro-state"
                       mount --bind "$D/ro-state" "$D/ro-state"
                       ro_mounted=1
                       mount -o remount,ro,bind "$D/ro-state"
                       state=$D/ro-state; expect_msg="state|record" ;;
        file-state)    : >"$D/file-state"; state=$D/file-state; expect_msg="state|record" ;;
        *) fail "unknown case $c" ;;
        esac

        # what the degraded run will decide for B (a missing state dir: plan on another missing one,
        # so that the run still finds it missing)
        pstate=$state
        [[ $c == missing-state ]] && pstate=$D/missing.$t.plan/parent/state
        "$SUSPEND_SYNC" --state-dir="$pstate" --config="$SS_CONF" "${args[@]}" plan --json=short >"$REL_TMP/plan.json" 2>/dev/null || true
        b_plan="$(ss_mount_field "$REL_TMP/plan.json" "$B" action) $(ss_mount_field "$REL_TMP/plan.json" "$B" reason)"
        rel_gen "$seed" 20 6 a
        rc=0
        "$SUSPEND_SYNC" --state-dir="$state" --config="$SS_CONF" "${args[@]}" run >"$REL_TMP/out" 2>"$REL_TMP/err" || rc=$?
        cat "$REL_TMP/out" >>"$REL_TMP/err"
        synced=$(grep -o 'Synced [0-9]* of [0-9]* superblocks ([0-9]* timed out, [0-9]* failed' "$REL_TMP/err" || true)
        echo "== $c (seed $seed): exit $rc; $synced; B planned: $b_plan"
        sed 's/^/   stderr: /' "$REL_TMP/err" | grep -v "not on tmpfs" || true
        unsafe=0 ok=1
        [[ $rc == 0 ]] || { case_fail "$c: exit status $rc, expected 0"; ok=0; }
        if [[ $synced != "Synced 2 of 2 superblocks (0 timed out, 0 failed" ]]; then
                unsafe=1 ok=0
                case_fail "$c: expected both disks synced, got '$synced' (B planned: $b_plan)"
        fi
        [[ $b_plan == sync* ]] || { unsafe=1; ok=0; case_fail "$c: UNSAFE: B planned '$b_plan' with evidence missing"; }
        if [[ -n $expect_msg ]] && ! grep -v "not on tmpfs" "$REL_TMP/err" | grep -qiE "$expect_msg"; then
                ok=0
                case_fail "$c: nothing on stderr says what was missing (expected /$expect_msg/)"
        fi
        if [[ $c == missing-state ]]; then
                [[ -s $state/last.json ]] || { ok=0; case_fail "$c: state dir not created or run not recorded"; }
        fi
        [[ $c == ro-state ]] && { umount "$D/ro-state"; ro_mounted=0; }

        losses=0 entries=0 fsck=ok
        j=0
        for n in a b; do
                j=$((j + 1))
                keep=$(((seed * 7919 + j * 104729) % 1001))
                rel_cut "$n" "$keep" "$((seed * 10 + j))" || fail "$c: $n cannot be mounted after the cut (seed $seed)"
                rel_check "$n" || { ok=0; case_fail "$c: $n lost $REL_LOSSES entries (seed $seed keep $keep)"; }
                [[ $REL_FSCK == ok ]] || { fsck=FAIL; ok=0; case_fail "$c: $n fsck not clean (seed $seed)"; }
                losses=$((losses + REL_LOSSES)) entries=$((entries + REL_ENTRIES))
        done
        rel_record degraded "$c" "$t" "$seed" - "${REL_CHANGES[a]}" "$entries" "$losses" "$fsck" "unsafe=$unsafe rc=$rc ok=$ok"
done
echo "degraded: ${#cases[@]} cases, $failures failure(s), base seed $base"
((failures == 0)) || exit 1
echo PASS
