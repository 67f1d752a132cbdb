#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Durability oracle on FSTYPE (argument: ext4, xfs or btrfs), both ways:
#   positive: files written, syncfs (`sync -f`), power cut keeping a random subset of the volatile
#             cache, power on, remount -> every file intact, fsck clean;
#   negative: the same without the sync, and with the lying flush -> the oracle MUST report loss.
set -u
fstype=${1:?usage: testbed-durability.sh FSTYPE}
source "${TEST_LIB:?}/stack.sh"
require_root_loop_fuse
command -v "mkfs.$fstype" >/dev/null || skip "no mkfs.$fstype"

N=40

# Positive run, three seeds for the kept subset.
stack_setup d "$fstype" || fail "setup"
mnt=$(stack_mnt d)
for seed in 11 22 33; do
        oracle_write "$mnt/synced-$seed" $N "$seed" || fail "oracle_write"
        sync -f "$mnt" || fail "sync -f"
        # keep some unsynced writes in flight too: they may be kept or lost, both are fine
        oracle_write "$mnt/unsynced-$seed" 5 "$((seed + 1000))" || fail "oracle_write"
        # O_DIRECT data goes to the disk's volatile cache without a flush: "keep" has work to do
        dd if=/dev/urandom of="$mnt/direct-$seed" bs=64k count=32 oflag=direct status=none || fail "dd"
        [[ $(stack_get d dirty_blocks) -gt 0 ]] || fail "no dirty blocks in the disk cache before the cut"
        stack_power_cut d 500 "$seed" || fail "power cut"
        stack_mount d || fail "mount after power cut (seed $seed)"
        for s in 11 22 33; do
                [[ $s -le $seed ]] || break
                oracle_check "$mnt/synced-$s" $N "$s" || fail "synced files lost after power cut (seed $seed)"
        done
        stack_umount d || fail "umount"
        stack_fsck d || fail "fsck after power cut (seed $seed)"
        stack_mount d || fail "mount"
done
echo "positive: synced data survived 3 power cuts with keep=500, fsck clean"

# Negative control 1: no sync before the power cut.
oracle_write "$mnt/nosync" $N 77 || fail "oracle_write"
stack_power_cut d 0 7 || fail "power cut"
stack_mount d || fail "mount"
if oracle_check "$mnt/nosync" $N 77; then
        fail "negative control (no sync): the oracle saw no loss"
fi
echo "negative control (no sync): loss detected as expected"

# Negative control 2: the lying flush acknowledges syncfs but persists nothing.
stack_ctl d lie on >/dev/null || fail "lie on"
oracle_write "$mnt/lie" $N 88 || fail "oracle_write"
sync -f "$mnt" || fail "sync -f"
[[ $(stack_get d dirty_blocks) -gt 0 ]] || fail "lying flush left no dirty blocks"
stack_power_cut d 0 8 || fail "power cut"
stack_ctl d lie off >/dev/null || fail "lie off"
if stack_mount d; then
        if oracle_check "$mnt/lie" $N 88; then
                fail "negative control (lying flush): the oracle saw no loss"
        fi
else
        echo "mount failed after the lying flush: counts as loss"
fi
echo "negative control (lying flush): loss detected as expected"
echo "PASS"
