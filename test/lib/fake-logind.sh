# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The daemon against fake-logind (test/fake-logind.c) on a private dbus-daemon, which the daemon
# reaches as its "system bus" through $DBUS_SYSTEM_BUS_ADDRESS. Sourced after suspend-sync.sh and
# ss_begin (it uses $SS_TMP, $SS_STATE, ss_on_exit, fail):
#   fake_logind_begin      # $RUNDIR made, the bus and fake-logind; all gone on exit; "ready" awaited
#   daemon_start CONFIG [NAME=VALUE...]   # a daemon reading CONFIG (log: $SS_TMP/daemon.log)
#   daemon_stop            # SIGTERM; the daemon must exit 0
#   fake LINE              # a command to fake-logind (see fake-logind.c)
#   fake_wait LINE [N]     # until fake-logind has told LINE N times (default 1)
#   ping                   # the daemon has handled everything sent before it
#   count WORD             # how many lines fake-logind told that begin with WORD
#   fake_logind_require [hook]   # skip the test without what these need (below)
# $RUNDIR is the daemon's RuntimeDirectory= (its socket path is fixed): the caller makes it.
# $DAEMON_NO_STANDBY=1 (the default) keeps the daemon from forking its standby pass ahead.
# $DAEMON_OPTS (an array, may be unset): more options of the daemon's, before the verb.
# $FAKE_SYSTEMD1=1 (set before fake_logind_begin): fake-logind also stands for PID 1 (--systemd1:
# suspend-sync.service required by nothing and inactive, so the daemon marks its pass; the commands
# "require UNIT" and "state S" change that). Unset, PID 1 never answers and the daemon never marks.

RUNDIR=/run/suspend-sync-daemon
# a bound on each wait, so that a daemon that does not do its part fails the test instead of hanging
# it (not a measure of anything: every step takes milliseconds)
WAIT_MAX=${WAIT_MAX:-60}
daemon_pid=$$
pings=0

# fake_logind_require [hook]: skips unless dbus-daemon and fake-logind are there and no daemon of
# this machine's runs ($RUNDIR exists); with "hook", also the system-sleep hook (sets $SLEEP_HOOK),
# and no suspend-sync installed where the hook execs it ($SUSPEND_SYNC_INSTALLED).
fake_logind_require() {
        command -v dbus-daemon >/dev/null || skip "no dbus-daemon"
        [[ -x ${FAKE_LOGIND:-} ]] || skip "FAKE_LOGIND not set"
        if [[ ${1:-} == hook ]]; then
                SLEEP_HOOK=$BUILD_ROOT/src/suspend-sync-sleep-hook
                [[ -x $SLEEP_HOOK ]] || skip "no $SLEEP_HOOK"
                # The hook asks only a daemon that runs the binary it would exec (hook-client.h), which
                # this build's is not where one is installed.
                [[ -z ${SUSPEND_SYNC_INSTALLED:-} || ! -e $SUSPEND_SYNC_INSTALLED ]] ||
                        skip "$SUSPEND_SYNC_INSTALLED is installed: the hook would leave this build's daemon out"
        fi
        [[ ! -e $RUNDIR ]] || skip "$RUNDIR exists: a suspend-sync daemon of this machine may be running"
}

fake_logind_begin() {
        local i
        # the daemon's RuntimeDirectory= (its socket's path is fixed; fake_logind_require checked it
        # was not there)
        mkdir -m 0755 "$RUNDIR"
        ss_on_exit "rm -rf '$RUNDIR'"
        dbus-daemon --session --nofork --nopidfile --address="unix:path=$SS_TMP/bus" --print-address=1 \
                >"$SS_TMP/bus.addr" 2>"$SS_TMP/bus.err" &
        _fl_bus_pid=$!
        ss_on_exit "kill $_fl_bus_pid 2>/dev/null; wait $_fl_bus_pid 2>/dev/null"
        for ((i = 0; i < WAIT_MAX * 20; i++)); do [[ -s $SS_TMP/bus.addr ]] && break; sleep 0.05; done
        [[ -s $SS_TMP/bus.addr ]] || fail "dbus-daemon did not start: $(cat "$SS_TMP/bus.err")"
        export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$SS_TMP/bus

        # fake-logind, its commands on fd 5, what it tells in fake.out.
        mkfifo "$SS_TMP/fake.in"
        "$FAKE_LOGIND" ${FAKE_SYSTEMD1:+--systemd1} <"$SS_TMP/fake.in" >"$SS_TMP/fake.out" 2>"$SS_TMP/fake.err" &
        _fl_fake_pid=$!
        exec 5>"$SS_TMP/fake.in"
        ss_on_exit "exec 5>&-; kill $_fl_fake_pid 2>/dev/null; wait $_fl_fake_pid 2>/dev/null"
        fake_wait ready
}

fake_wait() {
        local i
        for ((i = 0; i < WAIT_MAX * 20; i++)); do
                (($(grep -cx "$1" "$SS_TMP/fake.out") >= ${2:-1})) && return 0
                kill -0 "$daemon_pid" 2>/dev/null || break
                sleep 0.05
        done
        echo "--- fake-logind:"; cat "$SS_TMP/fake.out" "$SS_TMP/fake.err"
        echo "--- daemon:"; cat "$SS_TMP/daemon.log" 2>/dev/null
        fail "fake-logind did not tell '$1' (x${2:-1}) within ${WAIT_MAX}s (or the daemon is gone)"
}
fake() { echo "$1" >&5; }

# pid_running PID: the process exists and is not a zombie.
pid_running() {
        local st
        st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
        [[ -n $st && $st != Z ]]
}
# post_steps_running LOG: a restore-knob or record-cycle of this daemon (by its --state-dir=) runs,
# or the last one its LOG says it started has not ended: between the daemon's fork and the exec the
# child still has the daemon's command line, which pgrep -f does not take for the step.
post_steps_running() {
        local pid
        pgrep -f -- "^suspend-sync (restore-knob|record-cycle) .*--state-dir=$SS_STATE" >/dev/null && return 0
        pid=$(sed -n "s/^'\(restore-knob\|record-cycle\)' runs in PID \([0-9]*\)\.$/\2/p" "$1" | tail -1)
        [[ -n $pid ]] && pid_running "$pid"
}
# ping: the daemon answered a Ping sent after everything fake-logind sent so far, so it has handled
# those and fake-logind has what it sent while doing so (one peer's messages to another keep their
# order through the bus).
ping() { fake ping; pings=$((pings + 1)); fake_wait pong "$pings"; }
count() { grep -c "^$1 " "$SS_TMP/fake.out" || true; }

daemon_start() {
        local config=$1 standby=()
        shift
        [[ ${DAEMON_NO_STANDBY:-1} == 1 ]] && standby=(SUSPEND_SYNC_TEST_NO_STANDBY=1)
        env -u NOTIFY_SOCKET RUNTIME_DIRECTORY="$RUNDIR" "${standby[@]}" SUSPEND_SYNC_LOG_LEVEL=debug \
                "$@" "$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$config" ${DAEMON_OPTS[@]+"${DAEMON_OPTS[@]}"} \
                daemon >"$SS_TMP/daemon.log" 2>&1 &
        daemon_pid=$!
        ss_on_exit "kill $daemon_pid 2>/dev/null; wait $daemon_pid 2>/dev/null"
}
daemon_stop() {
        local rc=0
        kill -TERM "$daemon_pid"
        wait "$daemon_pid" || rc=$?
        [[ $rc == 0 ]] || fail "the daemon exited with $rc: $(cat "$SS_TMP/daemon.log")"
        daemon_pid=$$
}
