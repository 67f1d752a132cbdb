#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Review N4, device flush parity for an xfs with a realtime device (rtdev=): xfs_fs_sync_fs() forces
# the log, whose writes flush the data (and log) device, but nothing flushes the realtime device,
# which holds the data of realtime files. So after syncfs those blocks sit in the rt device's
# volatile cache (measured: 0 FLUSH on the rt device per syncfs, src/fs-type.c). The worker fsyncs the
# device rtdev= names. Two fault disks: the data device and the rt device; a realtime file written
# without fsync, then `suspend-sync run`: the run must be "synced", must have written the file's
# blocks to the rt device, and must leave no written-but-unflushed block there (and send a FLUSH).
#   Without the worker's rt flush (src/worker.c flush_rt_device()): rt device flushes during run=0,
#   unflushed blocks = the file's (1024 for 4 MiB) — the test fails.
# Skips where mkfs.xfs is missing (tools/setup installs xfsprogs) and where the kernel's xfs has no
# realtime support (CONFIG_XFS_RT unset: the mount fails with ENOSYS, "Not built with
# CONFIG_XFS_RT"), as on the project's 6.18 test machine; it was run under Debian's 6.12 kernel.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin
command -v mkfs.xfs >/dev/null || skip "mkfs.xfs missing: xfsprogs is not installed (tools/setup installs it)"
command -v xfs_io >/dev/null || skip "xfs_io missing: xfsprogs is not installed (tools/setup installs it)"

# The data disk first: the stacks are undone in the order made, so the xfs is unmounted before the
# rt device's loop is detached.
stack_setup data raw 320M || fail "cannot set up the data disk"
stack_setup rt raw 320M || fail "cannot set up the rt disk"
m=$(stack_mnt data)
rtdev=$(stack_dev rt)
mkfs.xfs -q -f -K -b size=4096 -r rtdev="$rtdev" "$(stack_dev data)" || fail "mkfs.xfs -r rtdev= failed"
if ! out=$(stack_mount_as data xfs "rtdev=$rtdev" 2>&1); then
        if [[ $out == *"not implemented"* ]] || dmesg 2>/dev/null | tail -n 20 | grep -q 'Not built with CONFIG_XFS_RT'; then
                skip "this kernel's xfs has no realtime support (CONFIG_XFS_RT unset; mount: $out)"
        fi
        fail "cannot mount the xfs with rtdev=$rtdev: $out"
fi
findmnt -rn -o FS-OPTIONS --mountpoint "$m" | tr , '\n' | grep -qx "rtdev=$rtdev" ||
        fail "rtdev=$rtdev not shown in the superblock options"

rel_config "$m"
ss plan --json=short >"$REL_TMP/plan.json" || fail "plan failed"
got=$(ss_mount_field "$REL_TMP/plan.json" "$m" rt_flush_device) || fail "$m not in the plan"
echo "plan: rt_flush_device = $got"
[[ $got == "$rtdev" ]] || fail "plan says rt_flush_device = '$got', expected '$rtdev'"

# A realtime file: the flag is set while it is empty; its data goes to the rt device.
touch "$m/rt"
xfs_io -c 'chattr +r' "$m/rt" || fail "cannot make $m/rt a realtime file"
xfs_io -c lsattr "$m/rt" | grep -q '^r' || fail "$m/rt is not a realtime file: $(xfs_io -c lsattr "$m/rt")"
sync -f "$m"
xfs_io -c 'pwrite -q -S 0x5a 0 4m' "$m/rt" || fail "cannot write $m/rt"
stack_ctl rt reset-counters >/dev/null
stack_ctl data reset-counters >/dev/null

rc=0
ss run >"$REL_TMP/run.log" 2>&1 || rc=$?
[[ $rc == 0 ]] || { cat "$REL_TMP/run.log"; fail "run exit status $rc"; }
ss status --json=short >"$REL_TMP/status.json"
outcome=$(rel_outcome "$REL_TMP/status.json" "$m")
rt_written=$(stack_get rt bytes_written)
rt_flushes=$(stack_get rt flushes)
rt_dirty=$(stack_get rt dirty_blocks)
data_flushes=$(stack_get data flushes)
data_dirty=$(stack_get data dirty_blocks)
echo "run: outcome '$outcome'; rt device: bytes written=$rt_written flushes=$rt_flushes unflushed blocks=$rt_dirty;" \
        "data device: flushes=$data_flushes unflushed blocks=$data_dirty"

failures=0
[[ $outcome == synced* ]] || { echo "FAIL: outcome '$outcome'" >&2; failures=$((failures + 1)); }
# the control: the run did write the realtime file's data, to the rt device
((rt_written >= 4194304)) || { echo "FAIL: the run wrote $rt_written bytes to the rt device, expected the file's 4 MiB" >&2; failures=$((failures + 1)); }
((rt_flushes > 0)) || { echo "FAIL: the run sent no FLUSH to the rt device" >&2; failures=$((failures + 1)); }
[[ $rt_dirty == 0 ]] || { echo "FAIL: $rt_dirty blocks written to the rt device but not flushed after a successful run" >&2; failures=$((failures + 1)); }
[[ $data_dirty == 0 ]] || { echo "FAIL: $data_dirty blocks written to the data device but not flushed after a successful run" >&2; failures=$((failures + 1)); }
((failures == 0)) || exit 1
echo PASS
