#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The state directory's parent on a frozen filesystem (fsfreeze; an LVM snapshot being taken): the
# directory is on a tmpfs, but a tmpfs mounted on a directory of the frozen filesystem, as /run
# sits on / . mkdir(2) of a directory that already exists still asks for write access to its
# parent's filesystem before it says EEXIST, and waits without bound while that filesystem is
# frozen. The pass makes the state directory's missing parents (state_dir_open()): it must look
# before it makes, and return by its deadline. Negative control: mkdir(1) of the existing
# directory, which blocks (proving the freeze holds what the pass must not wait for).
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
command -v fsfreeze >/dev/null || skip "no fsfreeze (util-linux)"

stack_setup fz ext4 64M || fail "stack_setup fz"
mnt=$(stack_mnt fz)
# At exit, in this order (ss_on_exit runs first in, first out): the thaw, so that anything still
# waiting on the frozen filesystem goes on, then the tmpfs.
ss_on_exit "fsfreeze -u '$mnt' 2>/dev/null || true"
ss_on_exit "umount '$mnt/run' 2>/dev/null || umount -l '$mnt/run'"
mkdir -p "$mnt/run"
mount -t tmpfs -o size=8M,mode=0755 suspend-sync-test "$mnt/run"
mkdir -p "$mnt/run/ss"
fsfreeze -f "$mnt"

checks_begin
# Control: mkdir of the existing $mnt/run waits while $mnt is frozen.
timeout -s KILL 2 mkdir "$mnt/run" 2>/dev/null && rc=0 || rc=$?
if ((rc == 137)); then
        ok "control: mkdir of the existing $mnt/run waits while $mnt is frozen"
else
        fail "control: mkdir of the existing $mnt/run ended ($rc) while $mnt is frozen: the case is not made"
fi

# A manual run and a late pass (hermetic: the test bed's own mounts only, the frozen one among
# them; their workers may wait on it, bounded by the deadline), each with the state directory (and,
# for the second, a missing subdirectory of it) below the tmpfs on the frozen filesystem.
sys=$SS_TMP/sys
ss_fixture_sysfs "$sys"
deadline_ms=2000
for state in "$mnt/run/ss" "$mnt/run/new/ss"; do
        t0=$(date +%s%N)
        timeout -s KILL 15 "$SUSPEND_SYNC" --state-dir="$state" --config="$SS_CONF" --sysfs="$sys" \
                --deadline=$((deadline_ms / 1000))s --late --trigger=hook run >"$SS_TMP/run.log" 2>&1 && rc=0 || rc=$?
        ms=$((($(date +%s%N) - t0) / 1000000))
        echo "state directory $state: exit $rc after $ms ms"
        if ((rc == 137)); then
                fail "the pass with its state directory at $state did not return within 15 s (waits on the frozen $mnt)"
        elif ((ms > deadline_ms + 1000)); then
                fail "the pass with its state directory at $state returned after $ms ms, deadline $deadline_ms ms"
        else
                ok "the pass with its state directory at $state returned after $ms ms (exit $rc)"
        fi
        [[ -s $state/last.json ]] && ok "its run record is in $state" ||
                { cat "$SS_TMP/run.log"; fail "no run record in $state"; }
done

checks_end state-dir-frozen
