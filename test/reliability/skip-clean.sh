#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 4 item 2, skip correctness, under the contract of issue 9: SkipClean=yes skips nothing.
# Several ext4 disks (the type that had a clean rule, removed: docs/CLEAN-EVIDENCE.md) under
# SkipClean=yes; each round a random subset gets the workload (data and metadata changes, or
# metadata-only changes, the last ones milliseconds before the run) and the rest is left untouched.
# Round: snapshot every disk, first run, wait until the writeback lists drain (after a sync the
# bdev inode stays on b_dirty for ~5 s: the state in which the old rule skipped untouched disks),
# changes, second run, power cut on every disk (random keep), remount, fsck, compare every disk
# with its model.
# Failure: any mount not synced (changed or not: a skip would be unsafe, see the regress-ext4-clean-*
# tests), any loss, fsck not clean.
#
# Environment: REL_ROUNDS (default 2), REL_DISKS (default 4), REL_SEED, REL_RESULTS.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin
ss_debugfs || skip "debugfs not available: the test waits on the bdi's writeback lists"

rounds=${REL_ROUNDS:-2}
ndisks=${REL_DISKS:-4}
base=${REL_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "skip-clean: base seed=$base rounds=$rounds disks=$ndisks"

disks=()
mounts=()
for ((i = 1; i <= ndisks; i++)); do
        stack_setup "s$i" ext4 128M
        disks+=("s$i")
        mounts+=("$(stack_mnt "s$i")")
done
REL_SYNC="SkipClean=yes
MountTimeoutSec=30s
DeadlineSec=60s"
rel_config "${mounts[@]}"

status=$REL_TMP/status.json
failures=0 skipped_total=0 untouched_total=0 changes_total=0 synced_total=0
round_fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}

for ((r = 1; r <= rounds; r++)); do
        seed=$((base * 1000 + r))
        RANDOM=$seed
        changed=()
        untouched=()
        for d in "${disks[@]}"; do
                if ((RANDOM % 2)); then changed+=("$d"); else untouched+=("$d"); fi
        done
        # at least one of each
        if ((${#changed[@]} == 0)); then changed=("${untouched[0]}"); untouched=("${untouched[@]:1}"); fi
        if ((${#untouched[@]} == 0)); then untouched=("${changed[-1]}"); unset 'changed[-1]'; fi
        meta=$((RANDOM % 2))
        echo "== round $r seed=$seed changed=${changed[*]} untouched=${untouched[*]} metadata-only=$meta"

        # Models of the untouched disks now: reading a tree updates atimes (a change), so never
        # look at them again before the power cut.
        rel_snap "${untouched[@]}"
        ss run >"$REL_TMP/run1.log" 2>&1 || { cat "$REL_TMP/run1.log"; fail "round $r: first run failed"; }
        for d in "${disks[@]}"; do
                rel_wait_lists_empty "$(stack_mnt "$d")" || fail "round $r: writeback lists of $d did not drain"
        done
        if ((meta)); then
                REL_GEN_FLAGS=--meta rel_gen "$seed" 0 8 "${changed[@]}"
        else
                rel_gen "$seed" 30 6 "${changed[@]}"
        fi
        rc=0
        ss run >"$REL_TMP/run2.log" 2>&1 || rc=$?
        [[ $rc == 0 ]] || { cat "$REL_TMP/run2.log"; round_fail "round $r: second run exit status $rc"; }
        ss status --json=short >"$status"

        i=0
        for d in "${disks[@]}"; do
                i=$((i + 1))
                m=$(stack_mnt "$d")
                out=$(rel_outcome "$status" "$m")
                is_changed=0
                [[ " ${changed[*]} " == *" $d "* ]] && is_changed=1
                note="changed"
                [[ $out == synced* ]] && synced_total=$((synced_total + 1))
                if ((is_changed)); then
                        changes_total=$((changes_total + REL_CHANGES[$d]))
                        [[ $out == synced* ]] || round_fail "round $r: UNSAFE: $d held ${REL_CHANGES[$d]} changes and was '$out' (seed $seed)"
                else
                        untouched_total=$((untouched_total + 1))
                        if [[ $out == synced* ]]; then
                                note="skipped=0/1"
                        else
                                skipped_total=$((skipped_total + 1))
                                note="skipped=1/1"
                                round_fail "round $r: untouched $d was '$out', not synced: nothing is ever skipped as clean (seed $seed)"
                        fi
                fi
                keep=$((((seed * 7919) + i * 104729) % 1001))
                cseed=$((seed * 10 + i))
                rel_cut "$d" "$keep" "$cseed" || fail "round $r: $d cannot be mounted after the cut (seed $seed)"
                rc=0
                rel_check "$d" || rc=$?
                echo "round $r $d: $out; keep=$keep cut-seed=$cseed changes=${REL_CHANGES[$d]} entries=$REL_ENTRIES losses=$REL_LOSSES fsck=$REL_FSCK"
                rel_record skip ext4 "$r" "$seed" "$keep" "${REL_CHANGES[$d]}" "$REL_ENTRIES" "$REL_LOSSES" "$REL_FSCK" "$note"
                [[ $rc == 0 ]] || round_fail "round $r: $d lost $REL_LOSSES entries ($out, seed $seed keep $keep)"
                [[ $REL_FSCK == ok ]] || round_fail "round $r: $d fsck not clean (seed $seed)"
        done
done

echo "skip-clean: synced $synced_total of $((rounds * ndisks)) mounts; skipped $skipped_total of $untouched_total untouched mounts (must be 0); changes checked $changes_total; $failures failure(s); base seed $base"
((failures == 0)) || exit 1
echo PASS
