#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression (issue 9, case 3b): with a jbd2 commit interval longer than vm.dirty_expire_centisecs
# (commit=60 is common laptop advice), the periodic flusher writes a metadata-only dirtied inode with
# WB_SYNC_NONE, which for journaled ext4 only takes it off the writeback lists: the change then sits
# in jbd2's running transaction, in memory, and no list or counter shows it. The removed ext4 clean
# rule called such a disk "clean", skipped it, and a power cut lost the change. Now SkipClean=yes
# skips nothing.
# One ext4 on a fault disk mounted with commit=60, SkipClean=yes: run, drain (rel_settle), touch and
# mkdir, wait until the periodic flusher has taken the inodes off the lists (~dirty_expire + one
# flusher interval), run, power cut keeping nothing unflushed, remount, check every change.
# No faster trigger exists for our device alone: background writeback (over the dirty threshold)
# and free-space writeback need dirty data, and the expiry age is a global sysctl, never changed
# here.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin
ss_debugfs || skip "debugfs not available: the test waits on the bdi's writeback lists"

commit=60
expire=$(cat /proc/sys/vm/dirty_expire_centisecs)
if ((expire >= commit * 100)); then
        skip "vm.dirty_expire_centisecs=$expire is not below commit=$commit s: the window does not open here"
fi

seed=${REL_SEED:-$((RANDOM * 32768 + RANDOM))}
stack_setup c ext4 128M
M=$(stack_mnt c)
mount -o remount,commit=$commit "$M"

REL_SYNC="SkipClean=yes
MountTimeoutSec=30s
DeadlineSec=60s"
rel_config "$M"

n=4
for ((i = 0; i < n; i++)); do
        echo "$i" >"$M/f$i"
done
rel_settle "$M" || fail "the disk did not settle after the first runs"

# Metadata-only changes; jbd2 will not commit them for $commit s.
t0=$(rel_ms)
for ((i = 0; i < n; i++)); do
        touch -d "@$((1600000000 + seed % 100000 + i))" "$M/f$i"
        mkdir "$M/d$i"
done
bdi=$(stat -c '%Hd:%Ld' "$M")
listed=$(awk '/^b_/ { s += $2 } END { print s + 0 }' "/sys/kernel/debug/bdi/$bdi/wb_stats")
((listed > 0)) || fail "the changes put no inode on the writeback lists: the test would prove nothing"
rel_wait_lists_empty "$M" || fail "the periodic flusher did not take the inodes off the lists"
echo "$listed inodes listed after the changes; lists empty after $((($(rel_ms) - t0) / 1000)) s (expire $((expire / 100)) s, commit $commit s)"

ss run >"$REL_TMP/run.log" 2>&1 || { cat "$REL_TMP/run.log"; fail "run failed"; }
ss status --json=short >"$REL_TMP/status.json"
out=$(rel_outcome "$REL_TMP/status.json" "$M")
age=$((($(rel_ms) - t0) / 1000))
echo "run $age s after the changes: $out"
((age < commit)) || echo "note: jbd2's own commit may have made the changes durable already (the test proves less)"

rel_cut c 0 "$seed" || fail "cannot mount after the power cut (seed $seed)"
lost=0
for ((i = 0; i < n; i++)); do
        [[ $(stat -c %Y "$M/f$i") == $((1600000000 + seed % 100000 + i)) ]] || lost=$((lost + 1))
        [[ -d $M/d$i ]] || lost=$((lost + 1))
done
echo "after the power cut: $lost of $((2 * n)) metadata changes lost; fsck $REL_FSCK (seed $seed)"
[[ $out == synced* ]] || fail "the changed ext4 was not synced: $out"
((lost == 0)) || fail "$lost metadata changes lost"
[[ $REL_FSCK == ok ]] || fail "fsck not clean"
echo PASS
