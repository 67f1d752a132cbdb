#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 4 item 1: power cut after a successful `suspend-sync run`, on ext4, xfs and btrfs (vfat where
# the kernel has it). Each trial runs the seeded workload generator (workload.py: data and
# metadata-only changes, mmap writes, the last changes milliseconds before the run) on every
# filesystem, then `suspend-sync run`, then a power cut keeping a random per-mille of the unflushed
# blocks on each disk, then remount (journal replay), fsck, and a comparison with the expected-state
# model: 0 losses and fsck clean, or the test fails. The filesystems age across trials.
# Negative controls, on separate disks: a cut without the run, and a run on a disk whose flushes
# lie; each must be reported as loss, or the test fails (the comparison would be blind).
#
# Environment: REL_TRIALS (default 3), REL_SEED (base seed, default random), REL_OPS/REL_LATE
# (changes per trial: bulk, late), REL_NEG_EVERY (negative controls every N trials, default: once,
# after the last trial), REL_FSTYPES (default "ext4 xfs btrfs vfat"), REL_RESULTS (tsv of every trial).
# Reproduce one trial: REL_SEED=<base> REL_TRIALS=<t> (the workload of trial t depends on the trees
# left by the trials before it, so replay from trial 1).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin

trials=${REL_TRIALS:-3}
base=${REL_SEED:-$((RANDOM * 32768 + RANDOM))}
ops=${REL_OPS:-40}
late=${REL_LATE:-6}
neg_every=${REL_NEG_EVERY:-0}
echo "power-cut: base seed=$base trials=$trials ops=$ops late=$late"

fstypes=()
for fs in ${REL_FSTYPES:-ext4 xfs btrfs vfat}; do
        if [[ $fs == vfat ]] && ! grep -qw vfat /proc/filesystems; then
                echo "vfat: not run, kernel lacks vfat"
                rel_record note vfat 0 0 0 0 0 0 - "not run, kernel lacks vfat"
                continue
        fi
        fstypes+=("$fs")
done
for fs in "${fstypes[@]}"; do
        stack_setup "$fs" "$fs" 320M
        stack_setup "n-$fs" "$fs" 320M
done

our_mounts() {
        local fs
        for fs in "${fstypes[@]}"; do
                stack_mnt "$fs"
                stack_mnt "n-$fs"
        done
}

failures=0
trial_fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}

status=$REL_TMP/status.json

negative_controls() {   # TRIAL
        local t=$1 fs i=0 seed keep rc note
        for fs in "${fstypes[@]}"; do
                i=$((i + 1))
                local n=n-$fs m
                m=$(stack_mnt "$n")

                # (a) a cut without the run: the changes must be lost
                seed=$((base * 1000 + t * 10 + i))
                keep=$(((seed * 7919) % 301))
                [[ $fs == ext4 ]] && mount -o remount,commit=600 "$m"
                sync -f "$m"
                rel_gen "$seed" 20 "$late" "$n"
                rel_cut "$n" "$keep" "$seed" || fail "$n: cannot mount after the cut (seed $seed)"
                rel_check "$n" >/dev/null || true
                echo "negative control no-run: fs=$fs seed=$seed keep=$keep losses=$REL_LOSSES of $REL_ENTRIES fsck=$REL_FSCK"
                rel_record neg-norun "$fs" "$t" "$seed" "$keep" "${REL_CHANGES[$n]}" "$REL_ENTRIES" "$REL_LOSSES" "$REL_FSCK" -
                ((REL_LOSSES > 0)) || trial_fail "negative control (cut without run) on $fs saw no loss (seed $seed)"

                # (b) a run on a disk whose flushes lie: the changes must be lost
                seed=$((seed + 5))
                keep=$(((seed * 7919) % 301))
                sync -f "$m"
                stack_ctl "$n" lie on >/dev/null
                rel_gen "$seed" 20 "$late" "$n"
                rc=0
                ss run >"$REL_TMP/run.log" 2>&1 || rc=$?
                stack_power_cut "$n" "$keep" "$seed" >/dev/null
                stack_ctl "$n" lie off >/dev/null
                note=-
                REL_FSCK=ok
                if stack_mount "$n" && stack_umount "$n"; then
                        stack_fsck "$n" 2>/dev/null || REL_FSCK=FAIL
                        stack_mount "$n"
                        rel_check "$n" >/dev/null || true
                else
                        REL_LOSSES=all REL_ENTRIES=0 note="unmountable"
                fi
                echo "negative control lying flush: fs=$fs seed=$seed keep=$keep run_rc=$rc losses=$REL_LOSSES of $REL_ENTRIES fsck=$REL_FSCK $note"
                rel_record neg-lie "$fs" "$t" "$seed" "$keep" "${REL_CHANGES[$n]}" "$REL_ENTRIES" "$REL_LOSSES" "$REL_FSCK" "$note"
                [[ $REL_LOSSES == all ]] || ((REL_LOSSES > 0)) || trial_fail "negative control (lying flush) on $fs saw no loss (seed $seed)"
                # a lying disk may leave a damaged filesystem (that is the point): start afresh
                rel_umount_patient "$n" || fail "cannot unmount $n"
                stack_cleanup "$n"
                stack_setup "$n" "$fs" 320M
                mapfile -t mounts < <(our_mounts)
                rel_config "${mounts[@]}"
        done
}

mapfile -t mounts < <(our_mounts)
rel_config "${mounts[@]}"

for ((t = 1; t <= trials; t++)); do
        seed=$((base * 1000 + t))
        rel_gen "$seed" "$ops" "$late" "${fstypes[@]}"
        t0=$(rel_ms)
        rc=0
        ss run >"$REL_TMP/run.log" 2>&1 || rc=$?
        t1=$(rel_ms)
        gap=$((t0 - REL_LAST_CHANGE_MS))
        if [[ $rc != 0 ]]; then
                cat "$REL_TMP/run.log"
                trial_fail "trial $t: run exit status $rc (seed $seed)"
        fi
        ss status --json=short >"$status"
        i=0
        for fs in "${fstypes[@]}"; do
                i=$((i + 1))
                out=$(rel_outcome "$status" "$(stack_mnt "$fs")")
                [[ $out == synced* ]] || trial_fail "trial $t: $fs outcome '$out'"
                keep=$((((seed * 7919) + i * 104729) % 1001))
                cseed=$((seed * 10 + i))
                rel_cut "$fs" "$keep" "$cseed" || fail "trial $t: $fs cannot be mounted after the cut (seed $seed keep $keep cut-seed $cseed)"
                rc=0
                rel_check "$fs" || rc=$?
                echo "trial $t fs=$fs seed=$seed keep=$keep cut-seed=$cseed changes=${REL_CHANGES[$fs]} entries=$REL_ENTRIES losses=$REL_LOSSES fsck=$REL_FSCK run_ms=$((t1 - t0)) last-change-to-run=${gap}ms"
                rel_record trial "$fs" "$t" "$seed" "$keep" "${REL_CHANGES[$fs]}" "$REL_ENTRIES" "$REL_LOSSES" "$REL_FSCK" "run_ms=$((t1 - t0)) gap_ms=$gap"
                [[ $rc == 0 ]] || trial_fail "trial $t: $fs lost $REL_LOSSES changes (base seed $base, seed $seed, keep $keep, cut-seed $cseed)"
                [[ $REL_FSCK == ok ]] || trial_fail "trial $t: $fs fsck not clean (seed $seed keep $keep cut-seed $cseed)"
        done
        if ((neg_every > 0 && t % neg_every == 0)); then
                negative_controls "$t"
        fi
done
((neg_every > 0)) || negative_controls "$trials"

echo "power-cut: $failures failure(s), base seed $base"
((failures == 0)) || exit 1
echo PASS
