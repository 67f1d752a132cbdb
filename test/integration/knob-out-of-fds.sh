#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Review AS, AS-1: a 0 that an earlier sleep's late pass left in sync_on_suspend (its record says 1)
# must not stand when the process that should put it back runs out of file descriptors. Each verb
# that may have to turn the kernel's sync back on holds the knob open from its start, before any
# other file. restore-knob, and a late pass with no unit's pass before it (the service not enabled,
# a later sleep of suspend-then-hibernate), under RLIMIT_NOFILE of 4 to 12 with no inherited fd: the
# knob ends at 1 every time, the record kept wherever the restore could not be done. (The code before
# the fix left 0 at 5-7 for restore-knob and at 4-11 for the late pass, exit 0.) Control: with the
# limit high enough the restore itself runs and drops the record.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
ss_knob_fixture || fail "no fixture sysfs"
# Hermetic: the test bed's rule skips every mount but ours, which keeps the late pass's knob on; what
# is checked is that the leftover 0 does not stand.
ss_config "[Kernel]
SyncOnSuspend=auto"

# limited N CMD...: CMD with every fd above 2 closed and RLIMIT_NOFILE at N. (The developer build's
# leak check at exit needs descriptors of its own: off here.)
limited() {
        local n=$1
        shift
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" bash -c 'for fd in /proc/$$/fd/*; do n=${fd##*/}; ((n > 2)) && eval "exec $n>&-"; done
                 exec prlimit --nofile="$0:$0" -- "$@"' "$n" "$@"
}

leftover() {
        echo 0 >"$knob"
        echo 1 >"$SS_STATE/knob.orig"
}

log=$SS_TMP/out
for n in 4 5 6 7 8 9 10 12; do
        leftover
        limited "$n" "$SUSPEND_SYNC" --state-dir="$SS_STATE" --sysfs="$sys" restore-knob >"$log" 2>&1 || {
                cat "$log"
                fail "restore-knob with RLIMIT_NOFILE=$n failed"
        }
        [[ $(k) == 1 ]] || { cat "$log"; fail "restore-knob with RLIMIT_NOFILE=$n left the knob at $(k)"; }
        echo "restore-knob, RLIMIT_NOFILE=$n: knob $(k), record $([[ -e $SS_STATE/knob.orig ]] && echo kept || echo dropped)"

        leftover
        limited "$n" "$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" --sysfs="$sys" \
                --trigger=hook --late run >"$log" 2>&1 && rc=0 || rc=$?
        [[ $(k) == 1 ]] || { cat "$log"; fail "a late pass with RLIMIT_NOFILE=$n left the knob at $(k) (exit $rc)"; }
        echo "late pass, RLIMIT_NOFILE=$n: knob $(k), exit $rc"
done

# control: enough descriptors, the restore runs and drops the record
leftover
limited 64 "$SUSPEND_SYNC" --state-dir="$SS_STATE" --sysfs="$sys" restore-knob >"$log" 2>&1 ||
        { cat "$log"; fail "restore-knob failed"; }
[[ $(k) == 1 && ! -e $SS_STATE/knob.orig ]] || { cat "$log"; fail "control: the restore did not run"; }
grep -q "Restored /sys/power/sync_on_suspend to 1" "$log" || { cat "$log"; fail "control: no word of the restore"; }
echo "ok"
