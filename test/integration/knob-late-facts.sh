#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# What only the kernel's own sync would still write, though no mount the late pass knows holds it:
# SyncOnSuspend=auto (and off, for the first) keeps that sync on and says why.
#   A: a block device with no filesystem mounted, written straight to by a process that keeps it
#      open (a VM on a raw disk, a dd still running; the last close of a block device writes its
#      page cache back itself): its page cache is dirty, and sync(2) ends with sync_bdevs(). The
#      pass names the device (debugfs bdi/<MAJ:MIN>), with auto and off. Control: once the device is
#      flushed, the same pass does not name it.
#   B: another executable in systemd's system-sleep directory runs alongside the late pass and may
#      write after it. The pass names it. Control: the same file not executable is no hook; off
#      ignores it.
#   C: both, with off: the device is still looked at and named (the hook no reason there).
#   D: a partition written straight to and held open, on a disk whose other partition holds an ext4
#      the pass syncs: the disk's bdi is that ext4's, whose inodes look alike, so A's rule does not
#      look at it; the pass asks the page cache of the disk's other devices (raw-cache.h), finds the
#      partition dirty and syncs it itself (it says so, and a second pass finds nothing there), with
#      auto and off. Then the ext4 remounted read-only and its own partition written straight to:
#      a read-only superblock's device is asked too (sync_filesystem() leaves it alone). Needs
#      cachestat(2) (Linux 6.5); before, D checks that the pass says it cannot tell.
# Each control also turns the knob off unless something else of this shared machine keeps it on
# (then it says what, and the check that matters, that ours is not named, still holds).
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
checks_begin
ss_debugfs || skip "debugfs not available: no bdi evidence"

ss_knob_fixture || fail "no fixture sysfs"
# Not hermetic: the test bed's usual rule skips every mount but ours (Action=skip), which alone would
# keep the knob on. WritebackFirst=no: the pass must not wake the flusher threads itself (it does,
# for every device, as soon as one is dirty), or they may write the device's pages back before it
# looks (then rightly finding it clean: 1 run in 2 did).
mode_config() { SS_HERMETIC=0 ss_config "[Kernel]
SyncOnSuspend=$1
[Sync]
WritebackFirst=no"; }

# late [PREFIX...]: a late pass (optionally inside PREFIX, e.g. another mount namespace); its log in
# $SS_TMP/late.log.
late() {
        echo 1 >"$knob"
        rm -f "$SS_STATE/knob.orig"
        ss_unit_pass_record # as after the unit's pass (off needs it, handover.h)
        "$@" "$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" --sysfs="$sys" --late --trigger=hook \
                run >"$SS_TMP/late.log" 2>&1 || { cat "$SS_TMP/late.log"; fail "late pass failed"; }
}
kept_by() { grep -o "Leaving the kernel's own sync on: .*" "$SS_TMP/late.log" || true; }
# control WHAT TEXT: the last pass did not name TEXT; it turned the knob off, unless something else
# of this shared machine kept it on (said, not failed: the check that matters is the first).
control() {
        if kept_by | grep -qF "$2"; then
                fail "$1: still named: $(kept_by)"
        elif [[ $(k) == 0 ]]; then
                ok "$1: knob 0"
        else
                ok "$1: not named (knob kept on by this machine: $(kept_by))"
        fi
}

# ---------------------------------------------------------------- A: a device written straight to
img=$(tmpfs_mktemp knob-late-facts-img) || fail "no tmpfs"
truncate -s 16M "$img/disk.img"
loop=$(losetup -f --show "$img/disk.img")
# Exactly the loop device made here (by its backing file), before its file goes.
ss_on_exit "exec 7>&- 2>/dev/null; losetup -j '$img/disk.img' | grep -q '^$loop:' && losetup -d '$loop'; rm -rf '$img'"
bdi=$(lsblk -dno MAJ:MIN "$loop" | tr -d ' ')
exec 7<>"$loop" # held open: the page cache stays dirty until written back
dd if=/dev/urandom of=/dev/fd/7 bs=1M count=4 status=none # buffered: no fsync, no O_DIRECT
echo "A: $loop (bdi $bdi): $(grep -E '^b_(dirty|io|more_io):' "/sys/kernel/debug/bdi/$bdi/stats" | tr -s ' \n' ' ')"
for mode in auto off; do
        mode_config "$mode"
        late
        if [[ $(k) == 1 ]] && kept_by | grep -qF "device $bdi, on which no filesystem this pass saw is mounted, holds dirty data"; then
                ok "A ($mode): knob kept on, the device named: $(kept_by)"
        else
                cat "$SS_TMP/late.log"
                fail "A ($mode): knob $(k), kept by: '$(kept_by)' (want 1, device $bdi named)"
        fi
done
# control: flushed, the device is no reason any more
blockdev --flushbufs "$loop"
exec 7>&-
mode_config auto
late
control "A control (flushed)" "device $bdi"

# ---------------------------------------------------------------- B: another system-sleep hook
# In a mount namespace of our own, a tmpfs over the hook directory (this machine's stays as it is).
hookdir=/usr/lib/systemd/system-sleep
[[ -d $hookdir ]] || mkdir -p "$hookdir" # the bind below needs a mount point; left empty
in_ns() { # MODE: a late pass in a namespace whose hook directory holds one file of that mode
        ss_unit_pass_record
        unshare -m --propagation private sh -c "mount -t tmpfs ss-hooks '$hookdir' &&
                printf '#!/bin/sh\nexit 0\n' >'$hookdir/other-hook' && chmod $1 '$hookdir/other-hook' &&
                exec \"\$@\"" sh "$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" --sysfs="$sys" \
                --late --trigger=hook run >"$SS_TMP/late.log" 2>&1 || { cat "$SS_TMP/late.log"; fail "late pass failed"; }
}
echo 1 >"$knob"; rm -f "$SS_STATE/knob.orig"
in_ns 0755
if [[ $(k) == 1 ]] && kept_by | grep -qF "another system-sleep hook runs alongside this pass" &&
   kept_by | grep -qF "$hookdir/other-hook"; then
        ok "B: knob kept on, the hook named: $(kept_by)"
else
        fail "B: knob $(k), kept by: '$(kept_by)' (want 1, $hookdir/other-hook named)"
fi
echo 1 >"$knob"; rm -f "$SS_STATE/knob.orig"
in_ns 0644
control "B control (the file not executable)" other-hook
mode_config off
echo 1 >"$knob"; rm -f "$SS_STATE/knob.orig"
in_ns 0755
[[ $(k) == 0 ]] || kept_by | grep -qvF other-hook ||
        fail "B (off): another hook kept the knob on, but off gives up the kernel sync for later writes"

# ---------------------------------------------------------------- C: both, with off
# The hook is no reason with off, the dirty device is: it must still be looked at and named.
exec 7<>"$loop"
dd if=/dev/urandom of=/dev/fd/7 bs=1M count=4 status=none
echo 1 >"$knob"; rm -f "$SS_STATE/knob.orig"
in_ns 0755
if [[ $(k) == 1 ]] && kept_by | grep -qF "device $bdi, on which no filesystem this pass saw is mounted"; then
        ok "C (off): another hook and a dirty device: knob kept on, the device named"
else
        fail "C (off): knob $(k), kept by: '$(kept_by)' (want 1, device $bdi named)"
fi
blockdev --flushbufs "$loop"
exec 7>&-

# ---------------------------------------------------------------- D: a partition written straight to
ss_on_exit "exec 8>&- 2>/dev/null" # first: the fd holds a partition of the disk torn down next
ss_partitioned_disk "$SS_TMP/pmnt" || fail "no partitioned loop disk"
ploop=$SS_PLOOP pdisk=$SS_PDISK
part=${ploop#/dev/}p2
# raw_case NAME MODE PARTITION SEEK_MIB: PARTITION written straight to (4 MiB at SEEK_MIB, held open),
# then a late pass with MODE. It syncs the partition itself and says so, and the partition is no
# reason to keep the knob on; a second pass finds nothing left there. Before Linux 6.5 (no
# cachestat) the pass cannot tell: the knob stays on and the partition is named. A sync elsewhere on
# this shared machine may write the partition back before the pass looks (then it is clean, neither
# synced nor named): the case is made again, at most three times.
raw_case() {
        local attempt
        for attempt in 1 2 3; do
                exec 8<>"/dev/$3"
                dd if=/dev/urandom of=/dev/fd/8 bs=1M count=4 seek="$4" status=none
                mode_config "$2"
                if ! ss_has_cachestat; then
                        late
                        exec 8>&-
                        [[ $(k) == 1 ]] && kept_by | grep -qF "whether block device $3 (" &&
                                kept_by | grep -qF "cachestat: needs Linux 6.5" ||
                                fail "$1 (no cachestat): knob $(k), kept by: '$(kept_by)'"
                        ok "$1 (no cachestat): knob kept on, $3 named"
                        return
                fi
                echo "$1: /dev/$3 holds $(ss_dirty_pages "/dev/$3") dirty pages before the pass"
                late
                if grep -qE "Synced the page cache of block devices written straight to: (.*, )?$3 \([0-9]+ pages\)" \
                        "$SS_TMP/late.log"; then
                        ! kept_by | grep -qF "block device $3 (" || fail "$1: $3 still named: $(kept_by)"
                        ok "$1: $(grep -o 'Synced the page cache.*' "$SS_TMP/late.log"); knob $(k)"
                        late
                        ! grep -qF "$3 (" "$SS_TMP/late.log" || { cat "$SS_TMP/late.log"; fail "$1: a second pass found $3 dirty"; }
                        exec 8>&-
                        return
                fi
                cat "$SS_TMP/late.log"
                ! kept_by | grep -qF "block device $3 (" || fail "$1: $3 named, not synced: $(kept_by)"
                [[ $(ss_dirty_pages "/dev/$3") == 0 ]] || fail "$1: the pass neither synced nor named $3, still dirty"
                exec 8>&-
                echo "$1: attempt $attempt: /dev/$3 was written back before the pass looked (a sync elsewhere); again"
        done
        fail "$1: /dev/$3 written back before the pass looked, three times"
}
echo data >"$SS_TMP/pmnt/file" # the ext4 is dirty too: the pass syncs it, and its commit dirties p1's cache
raw_case "D (auto)" auto "$part" 0
echo more >>"$SS_TMP/pmnt/file"
raw_case "D (off)" off "$part" 8
# The ext4 read-only, its own partition written straight to (its tail, past what the ext4 wrote).
mount -o remount,ro "$SS_TMP/pmnt"
raw_case "D (read-only ext4)" auto "${part%2}1" 40

checks_end knob-late-facts
