#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The late pass writes its run record and the handover after its syncs. On tmpfs (/run on every
# systemd machine) that dirties nothing. On a real filesystem it is data that only the kernel's own
# sync would still write before the sleep, so SyncOnSuspend=auto keeps that sync on and says why.
# Control: the same pass with the state directory on tmpfs turns it off, before and after the case
# (without it, a knob kept on by anything else would pass the check).
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
# The knob goes off only with debugfs to look at (evidence.h: no dirty data on devices without a
# superblock); a fresh machine may have none mounted.
ss_debugfs || fail "debugfs cannot be mounted: the knob would stay on for want of evidence"

ss_knob_fixture || fail "no fixture sysfs"

[[ $(stat -f -c %T "$SS_STATE") == tmpfs ]] || fail "the test library's state directory $SS_STATE is not on tmpfs"
# The real filesystem: the test work directory's (/var/tmp), synced by the late pass like any local
# block filesystem, then written to by it. (Not a test-bed disk: its FUSE file is a mount the late
# pass leaves out, which alone keeps the knob on.)
mkdir -p "$SS_TEST_WORKDIR"
disk_state=$(mktemp -d "$SS_TEST_WORKDIR/knob-state-dir.XXXXXX")
ss_on_exit rm -rf "$disk_state"
fs=$(stat -f -c %T "$disk_state")
[[ $fs != tmpfs && $fs != ramfs ]] || skip "$SS_TEST_WORKDIR is on $fs: no real filesystem for the state directory"

# Not hermetic: the test bed's usual rule skips every mount but ours (Action=skip), which alone would
# keep the knob on. The late pass syncs only local block filesystems.
SS_HERMETIC=0 ss_config "[Kernel]
SyncOnSuspend=auto"

late() { # STATE_DIR LOG
        echo 1 >"$knob"
        rm -f "$1/knob.orig"
        "$SUSPEND_SYNC" --state-dir="$1" --config="$SS_CONF" --sysfs="$sys" --late --trigger=hook run >"$2" 2>&1 ||
                { cat "$2"; fail "late pass with state directory $1 failed"; }
}
# control: tmpfs state directory, knob 0. Other mounts of this shared machine (a FUSE mount being
# written, a superblock of an earlier test lingering) may keep it on for a while: retry, bounded.
control() { # WHEN
        local i
        for ((i = 0; i < 10; i++)); do
                late "$SS_STATE" "$SS_TMP/control.log"
                [[ $(k) == 0 ]] && return 0
                sleep 1
        done
        cat "$SS_TMP/control.log"
        skip "control $1: the late pass with a tmpfs state directory keeps the kernel's sync on here for other reasons"
}

control before
echo "control before: sync_on_suspend $(k) with the state directory on tmpfs"

late "$disk_state" "$SS_TMP/disk.log"
cat "$SS_TMP/disk.log"
[[ -s $disk_state/last.json ]] || fail "the late pass did not record its run in $disk_state"
[[ $(k) == 1 ]] || fail "state directory on a real filesystem: the late pass turned the kernel's sync off (knob $(k))"
grep -q "State directory '$disk_state' is not on tmpfs" "$SS_TMP/disk.log" ||
        fail "state directory on a real filesystem: no warning naming it"
grep -q "Leaving the kernel's own sync on: the state directory is not on tmpfs" "$SS_TMP/disk.log" ||
        fail "state directory on a real filesystem: the reason the kernel's sync stays on is not said"
[[ ! -e $disk_state/knob.orig ]] || fail "state directory on a real filesystem: a knob record was written"

control after
echo "control after: sync_on_suspend $(k)"
echo PASS
