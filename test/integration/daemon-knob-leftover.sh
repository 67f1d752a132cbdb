#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Review AW, H1: a knob left at 0 by a sleep whose end nothing of ours saw. The daemon's pass stood
# for the unit (so no ExecStopPost=), systemd-sleep died in its state write (no post hook), and the
# daemon that made the mark was stopped or restarted meanwhile: sync_on_suspend stayed 0 after the
# resume, its original recorded in knob.orig, until the next pass of ours. Now the daemon puts such a
# record back, against fake-logind on a private bus, with a fixture knob:
#   1. at its start, when logind says no sleep is under way (PreparingForSleep false): knob 1, the
#      record gone, the message names the leftover;
#   2. a daemon started during a sleep (PreparingForSleep true) leaves the knob as the sleep's late pass
#      set it, and puts it back at that sleep's PrepareForSleep(false), which its mark did not stand for;
#   3. (negative control) no record: a 0 that is not ours (an administrator's) is left alone, at the
#      start and after a sleep;
#   4. (review AW, L1) a daemon started while logind carries out a sleep, whose Inhibit logind refuses
#      (OperationInProgress): it does not exit (systemd would start it again every second, toward its
#      start limit), takes the lock after the sleep, and puts the knob back then.
# And review AW, L2: the daemon before may have marked the sleep (then no ExecStopPost= records its
# cycle): a daemon started during a sleep runs record-cycle at that sleep's end (2 and 4), with the
# daemon's own locations (--history-dir=, --root=: the default /var/lib otherwise); one that saw the
# sleep begin and did not mark it leaves that to the unit (3, the control).
# The daemon before this fix leaves 1 and 2 at 0. DeadlineSec=60s: the daemon runs no pass of its
# own (daemon-bus.sh). Root, dbus-daemon, fake-logind; /run/suspend-sync-daemon must not exist.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
source "$TEST_LIB/fake-logind.sh"
fake_logind_require
ss_begin
ss_config "[Sync]
DeadlineSec=60s"
ss_knob_fixture
DAEMON_OPTS=(--sysfs="$sys" --history-dir="$SS_TMP/lib" --root="$FIXTURES_DIR/cycles/boot1")
fake_logind_begin

# leftover: the state a late pass leaves in a sleep, the knob at 0 and the original (1) recorded;
# the passes' records of a sleep cycle (the cycles fixture's), and no history yet.
leftover() {
        mkdir -p "$SS_STATE"
        echo 0 >"$knob"
        echo 1 >"$SS_STATE/knob.orig"
        cp -r "$FIXTURES_DIR/cycles/state/." "$SS_STATE/"
        rm -rf "$SS_TMP/lib"
}
# recorded N: the daemon ran record-cycle for this sleep (its line), and it wrote the cycle (N, a
# case's number in the message)
recorded() {
        local i
        grep -q "Started during this sleep, so whose mark stood for it is not known: recording its cycle" \
                "$SS_TMP/daemon.log" || { cat "$SS_TMP/daemon.log"; fail "$1: the daemon did not record the cycle"; }
        for ((i = 0; i < WAIT_MAX * 20; i++)); do
                compgen -G "$SS_TMP/lib/cycles/*.json" >/dev/null && return 0
                sleep 0.05
        done
        fail "$1: no cycle in $SS_TMP/lib/cycles"
}
# start [PATTERN]: a daemon, and its start-up done: it holds its lock (or says PATTERN). The last
# daemon's log goes first: waiting on it would see its line before the new one truncates it.
start() {
        rm -f "$SS_TMP/daemon.log"
        daemon_start "$SS_CONF"
        started "$@"
}
started() { # [PATTERN] the daemon's start-up is done: it holds its lock (or says PATTERN)
        local i pattern="Holding logind's delay lock"
        [[ $# == 0 ]] || pattern=$1
        for ((i = 0; i < WAIT_MAX * 20; i++)); do
                grep -q "$pattern" "$SS_TMP/daemon.log" 2>/dev/null && return 0
                kill -0 "$daemon_pid" 2>/dev/null || break
                sleep 0.05
        done
        cat "$SS_TMP/daemon.log"
        fail "the daemon did not take its lock"
}

# ---------------------------------------------------------------- 1
leftover
start
echo "1: knob $(k), record $([[ -e $SS_STATE/knob.orig ]] && echo kept || echo gone)"
[[ $(k) == 1 ]] || { cat "$SS_TMP/daemon.log"; fail "1: the daemon's start left the knob at $(k) with its original recorded"; }
[[ ! -e $SS_STATE/knob.orig ]] || fail "1: the record stays"
grep -q "Restored /sys/power/sync_on_suspend to 1 (left over from a sleep that ended without suspend-sync seeing it)" \
        "$SS_TMP/daemon.log" || { cat "$SS_TMP/daemon.log"; fail "1: no message about the leftover"; }
daemon_stop

# ---------------------------------------------------------------- 2
fake "signal 1" # a sleep under way when the daemon starts (nobody listens yet)
fake_wait "signalled 1"
leftover
start
ping
echo "2: during the sleep: knob $(k)"
[[ $(k) == 0 && -e $SS_STATE/knob.orig ]] ||
        fail "2: the daemon's start during a sleep changed the sleep's knob (now $(k))"
fake "signal 0"
fake_wait "signalled 0"
ping
echo "2: after its PrepareForSleep(false): knob $(k)"
[[ $(k) == 1 && ! -e $SS_STATE/knob.orig ]] ||
        { cat "$SS_TMP/daemon.log"; fail "2: the sleep's end left the knob at $(k)"; }
grep -q "(left over from a sleep that ended without its post hook)" "$SS_TMP/daemon.log" ||
        fail "2: no message about the leftover"
recorded 2
echo "2: the sleep's cycle recorded"
daemon_stop

# ---------------------------------------------------------------- 3
echo 0 >"$knob"
rm -f "$SS_STATE/knob.orig"
start
fake "signal 1"
fake_wait "signalled 1" 2
fake "signal 0"
fake_wait "signalled 0" 2
ping
echo "3: no record: knob $(k)"
[[ $(k) == 0 ]] || fail "3: the daemon changed a knob it had no record of (now $(k))"
! grep -q "Restored /sys/power/sync_on_suspend" "$SS_TMP/daemon.log" || fail "3: a restore was logged"
# the line is logged before the daemon answers the ping: its absence is what the daemon did
! grep -q "recording its cycle" "$SS_TMP/daemon.log" || fail "3: a daemon that saw the sleep begin recorded its cycle"
daemon_stop

# ---------------------------------------------------------------- 4
fake "signal 1"
fake_wait "signalled 1" 3
leftover
granted=$(count granted)
fake busy
fake_wait busy
start "logind is carrying out a sleep: taking its delay lock after it"
ping
kill -0 "$daemon_pid" || fail "4: the daemon exited: $(cat "$SS_TMP/daemon.log")"
echo "4: started during a sleep: knob $(k), locks granted $(count granted) (before: $granted)"
[[ $(count granted) == "$granted" ]] || fail "4: a lock was granted during the sleep"
[[ $(k) == 0 ]] || fail "4: the daemon changed the sleep's knob"
n=$(count inhibit)
fake_wait "refused $n" # the daemon's own call, refused
fake "signal 0"
fake_wait "signalled 0" 3
fake_wait "granted $((n + 1))" # the one after the sleep
ping
echo "4: after the sleep: knob $(k), the lock taken"
[[ $(k) == 1 && ! -e $SS_STATE/knob.orig ]] || fail "4: the sleep's end left the knob at $(k)"
recorded 4
daemon_stop
echo PASS
