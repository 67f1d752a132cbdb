#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# SkipClean=yes skips nothing (issue 9: the ext4 clean rule was removed, docs/CLEAN-EVIDENCE.md),
# proven with power cuts: after a first run has synced two ext4 disks and their writeback lists
# have drained (the state in which the old rule skipped an untouched disk), metadata-only changes
# (touch, chmod, chown, mkdir, rmdir, rename, link, symlink, unlink, truncate) are made on one of
# them milliseconds before a second run. The second run must sync both, the untouched one too;
# after a power cut that drops every unflushed block (random keep), every change must be there and
# fsck must be clean.
# Negative control: the same kind of change on a disk a rule skips must be reported as lost, so the
# manifest comparison can see a lost metadata-only change.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
ss_debugfs || skip "debugfs not available: the test waits on the bdi's writeback lists"

rounds=${CLEAN_SKIP_ROUNDS:-3}
stack_setup a ext4 128M
stack_setup b ext4 128M
A=$(stack_mnt a)
B=$(stack_mnt b)

manifest() {            # DIR: every path with type, mode, owner, size, link target and mtime
        (cd "$1" && find . -path ./lost+found -prune -o -printf '%p %y %m %U:%G %s %l %T@\n' | sort)
}

metadata_changes() {    # DIR SEED: metadata-only changes, no file data written
        local d=$1 s=$2
        touch -d "@$((1600000000 + s))" "$d/f0"
        chmod 0600 "$d/f1"
        chown 1234:5678 "$d/f2"
        mkdir "$d/dir.$s"
        rmdir "$d/empty"
        mkdir "$d/empty"
        mv "$d/f3" "$d/f3.renamed.$s"
        mv "$d/f3.renamed.$s" "$d/f3"
        ln "$d/f4" "$d/f4.link.$s"
        ln -s "f5-target-$s" "$d/sym.$s"
        rm -f "$d/f6"
        truncate -s 0 "$d/f7"
}

wait_lists_empty() {    # MOUNT: until the bdi of its loop device has no listed inode (<= 60 s)
        local bdi i
        bdi=$(stat -c '%Hd:%Ld' "$1")
        for ((i = 0; i < 600; i++)); do
                if awk '/^b_/ { s += $2 } END { exit s != 0 }' "/sys/kernel/debug/bdi/$bdi/wb_stats"; then
                        return 0
                fi
                sleep 0.1
        done
        return 1
}

base_tree() {           # DIR
        local d=$1 i
        mkdir -p "$d/empty"
        for i in 0 1 2 3 4 5 6 7; do
                head -c $((4096 * (i + 1))) /dev/urandom >"$d/f$i"
        done
}

ss_config "[Sync]
SkipClean=yes
MountTimeoutSec=20s
DeadlineSec=60s"

for ((round = 1; round <= rounds; round++)); do
        seed=$((RANDOM * 32768 + RANDOM))
        echo "== round $round seed=$seed"
        rm -rf "${A:?}"/* "${B:?}"/*
        base_tree "$A"
        base_tree "$B"
        # (Reading B's tree updates directory atimes, a metadata change too: do it before the
        # first run, and never touch B afterwards.)
        expect_b=$(manifest "$B")
        ss run >/dev/null 2>&1 || fail "first run failed"
        # After syncfs the block device's own inode stays listed on b_dirty until the flusher's next
        # periodic pass (dirty_writeback_centisecs, 5 s) finds it clean. Suspends are further apart
        # than that; wait as time would pass (the old rule then called B clean).
        wait_lists_empty "$B" || fail "B's writeback lists did not drain"

        # A changes right before the run; B stays untouched since the first run.
        metadata_changes "$A" "$seed"
        expect_a=$(manifest "$A")
        plan=$SS_TMP/plan.json
        ss plan --json=short >"$plan"
        ss run >/dev/null 2>&1 || fail "second run failed"
        status=$SS_TMP/status.json
        ss status --json=short >"$status"
        a_out=$(ss_mount_field "$status" "$A" outcome)
        b_out=$(ss_mount_field "$status" "$B" outcome)
        b_reason=$(ss_mount_field "$status" "$B" reason)
        echo "a: $a_out ($(ss_mount_field "$status" "$A" reason)); b: $b_out ($b_reason)"
        [[ $a_out == synced ]] || fail "the changed disk was not synced"
        [[ $b_out == synced ]] || fail "the untouched disk was not synced (SkipClean=yes must skip nothing): $b_out $b_reason"

        # Power cut, then mount (journal replay), compare, unmount, fsck, mount again.
        for n in a b; do
                stack_power_cut_and_remount "$n" 500 "$seed" >/dev/null
        done
        [[ $(manifest "$A") == "$expect_a" ]] || { diff <(echo "$expect_a") <(manifest "$A") || true; fail "a: metadata change lost (seed $seed)"; }
        [[ $(manifest "$B") == "$expect_b" ]] || fail "b: changed by the power cut although untouched (seed $seed)"
        for n in a b; do
                stack_umount "$n"
                stack_fsck "$n" || fail "$n: fsck not clean after power cut and recovery (seed $seed)"
                stack_mount "$n"
        done
done

# Negative control: a metadata-only change on B, which a rule skips: the power cut must lose it and
# the comparison must notice.
seed=4242
rm -rf "${B:?}"/*
base_tree "$B"
ss run >/dev/null 2>&1
ss_config "[Sync]
SkipClean=yes
[Rule control]
Path=$B
Action=skip"
# jbd2 commits every 5 s on its own, which would make the change durable behind our back.
mount -o remount,commit=600 "$B"
sync -f "$B"
metadata_changes "$B" "$seed"
expect_b=$(manifest "$B")
ss run >/dev/null 2>&1
stack_power_cut "b" 0 "$seed" >/dev/null
stack_mount b
if [[ $(manifest "$B") == "$expect_b" ]]; then
        fail "negative control: an unsynced metadata change survived a power cut that kept nothing"
fi
echo "negative control: the skipped change was lost, as it must be"
echo PASS
