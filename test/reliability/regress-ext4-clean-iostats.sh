#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression (issue 9, case 3a): with the disk's queue/iostats = 0 the block layer stops accounting,
# so ext4's lifetime_write_kbytes and the device's inflight counters freeze. The removed ext4 clean
# rule compared lifetime_write_kbytes with a baseline: an in-place overwrite that the periodic
# flusher had already written into the disk's volatile cache (WB_SYNC_NONE: no FLUSH) was called
# "clean", skipped, and lost in a power cut. Now SkipClean=yes skips nothing.
# One ext4 on a fault disk, SkipClean=yes: run, drain (twice, rel_settle), iostats=0 on our own loop
# device (its backing file lives on FUSE: there is no other disk below it), overwrite a file in
# place with the same size, wait until the flusher has written it and the writeback lists are empty
# again, run, power cut keeping nothing unflushed, remount, compare.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin
ss_debugfs || skip "debugfs not available: the test waits on the bdi's writeback lists"

seed=${REL_SEED:-$((RANDOM * 32768 + RANDOM))}
stack_setup c ext4 128M
M=$(stack_mnt c)
dev=$(stack_dev c)
iostats=/sys/block/$(basename "$dev")/queue/iostats
[[ -w $iostats ]] || skip "$iostats not writable"
orig_iostats=$(cat "$iostats")
ss_on_exit "echo $orig_iostats >$iostats"

REL_SYNC="SkipClean=yes
MountTimeoutSec=30s
DeadlineSec=60s"
rel_config "$M"

size=$((1024 * 1024))
head -c "$size" /dev/urandom >"$M/file"
rel_settle "$M" || fail "the disk did not settle after the first runs"

# The new content is prepared off the disk: reading the file after the overwrite would update its
# atime (relatime), a metadata change of its own.
head -c "$size" /dev/urandom >"$REL_TMP/new"
echo 0 >"$iostats"
dd if="$REL_TMP/new" of="$M/file" bs=64k conv=notrunc status=none
rel_wait_lists_empty "$M" || fail "the overwrite was not written back"

plan=$(ss plan --json=short)
ss run >"$REL_TMP/run.log" 2>&1 || { cat "$REL_TMP/run.log"; fail "run failed"; }
ss status --json=short >"$REL_TMP/status.json"
out=$(rel_outcome "$REL_TMP/status.json" "$M")
echo "iostats=0: planned '$(ss_mount_field <(echo "$plan") "$M" action)'; run: $out"
echo "$orig_iostats" >"$iostats"

rel_cut c 0 "$seed" || fail "cannot mount after the power cut (seed $seed)"
lost=$(python3 -c '
import sys
a = open(sys.argv[1], "rb").read(); b = open(sys.argv[2], "rb").read()
n = len(a) // 4096
print(sum(a[i * 4096:(i + 1) * 4096] != b[i * 4096:(i + 1) * 4096] for i in range(n)) + (len(a) != len(b)) * n)
' "$REL_TMP/new" "$M/file")
echo "after the power cut: $lost of $((size / 4096)) overwritten 4 KiB blocks lost; fsck $REL_FSCK (seed $seed)"
[[ $out == synced* ]] || fail "the overwritten ext4 was not synced: $out"
((lost == 0)) || fail "$lost blocks of the overwrite lost"
[[ $REL_FSCK == ok ]] || fail "fsck not clean"
echo PASS
