#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Review AF, F1: the daemon's late pass, forked for the system-sleep hook, checked that the hook
# still waited and then wrote /sys/power/sync_on_suspend=0 with nothing checking again. Stalled in
# between (a page fault on a hung root disk, a frozen cgroup), it wrote its 0 after the hook had
# given up and after both of the resume's restores had run: the knob 0, and no pass of ours
# vouching for any sleep. The knob's gate (kernel-knob.h KnobGate) is asked again right after the
# write, under the knob's lock, and puts 1 back when the hook no longer waits.
#
# The real daemon and the real hook (suspend-sync-sleep-hook pre suspend), fake-logind on a private
# bus, a fixture sysfs whose knob is a plain file (--sysfs=), a unit's pass of this sleep recorded
# by hand. The late child stalls 8 s right after the gate was found open
# ($SUSPEND_SYNC_TEST_KNOB_WRITE_STALL); DeadlineSec=3s, so the hook gives up at 3 s + 2 s. Then
# the resume's restores (the post hook, the unit's ExecStopPost=), while the child still stalls,
# and the knob after the child has ended: 1, with the reason in the daemon's log. The control: the
# same cycle without the stall turns the knob off (the setup lets a late pass do so).
# Root, dbus-daemon, debugfs; /run/suspend-sync-daemon must not exist (the daemon's
# RuntimeDirectory=, whose socket path is fixed).
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
require_root_loop_fuse
source "$TEST_LIB/fake-logind.sh"
fake_logind_require hook
# The hook that gives up on the daemon's pass turns the knob on where this machine's own record of
# a change says so (hook_give_up_knob(): /run/suspend-sync, /sys fixed at build time).
[[ ! -e /run/suspend-sync/knob.orig ]] || skip "/run/suspend-sync/knob.orig exists: the hook would write this machine's knob"
ss_begin
ss_debugfs || fail "debugfs cannot be mounted: the knob would stay on for want of evidence"
ss_knob_fixture || fail "no fixture sysfs"
ss_config_knob_off 3s
fake_logind_begin
# A superblock an earlier test tore down may linger a while in no mount table: wait, bounded.
for ((i = 0; i < 120; i++)); do
        ss --sysfs="$sys" --late plan 2>&1 >/dev/null | grep -q "Incomplete view" || break
        sleep 0.5
done

# sleep STALL: one sleep's hook → the daemon's late pass; prints the hook's time in ms.
late_sleep() {
        local t0 rc=0
        ss_unit_pass_record
        t0=$(date +%s%N)
        env -i PATH="$PATH" SYSTEMD_SLEEP_ACTION=suspend "$SLEEP_HOOK" pre suspend >"$SS_TMP/hook.out" 2>&1 || rc=$?
        echo "$(((($(date +%s%N) - t0) / 1000000))) $rc"
}
resume() {
        ss --sysfs="$sys" post suspend >>"$SS_TMP/resume.log" 2>&1 || true
        ss --sysfs="$sys" restore-knob >>"$SS_TMP/resume.log" 2>&1 || true
}
children_gone() {
        local i
        for ((i = 0; i < 200; i++)); do
                [[ -z $(pgrep -P "$daemon_pid" || true) ]] && return 0
                sleep 0.1
        done
        fail "the daemon's late child did not end: $(ps -o pid=,stat=,comm= --ppid "$daemon_pid")"
}

# Control: no stall. The late pass turns the knob off, and the resume puts it back.
DAEMON_OPTS=(--sysfs="$sys")
daemon_start "$SS_CONF"
fake_wait "granted 1"
read -r ms rc < <(late_sleep)
[[ $rc == 0 ]] || fail "control: the hook exited $rc: $(cat "$SS_TMP/hook.out")"
[[ $(k) == 0 ]] || fail "control: the late pass left the knob at $(k): this test tests nothing: $(cat "$SS_TMP/daemon.log")"
resume
[[ $(k) == 1 ]] || fail "control: the resume left the knob at $(k)"
echo "ok: control: the daemon's late pass turned the knob off in ${ms} ms, the resume put it back"
daemon_stop
fake_wait "released 1"

# The late child stalls after the gate's first look: the hook gives up, the resume runs, and then
# the child writes. Its second look finds the hook gone and puts 1 back at once.
daemon_start "$SS_CONF" SUSPEND_SYNC_TEST_KNOB_WRITE_STALL=8s
fake_wait "granted 2"
read -r ms rc < <(late_sleep)
grep -q "did not end within its limit" "$SS_TMP/hook.out" ||
        fail "the hook did not give up on the stalled late pass (${ms} ms, exit $rc): $(cat "$SS_TMP/hook.out")"
[[ $(k) == 1 ]] || fail "the knob is $(k) when the hook gave up"
resume
[[ $(k) == 1 ]] || fail "the knob is $(k) after the resume"
children_gone
[[ $(k) == 1 ]] ||
        fail "the stalled late child left the knob at $(k) after the hook gave up and the resume ran: $(cat "$SS_TMP/daemon.log")"
grep -q "Set /sys/power/sync_on_suspend back to 1 right after this pass wrote 0: the system-sleep hook stopped waiting" \
        "$SS_TMP/daemon.log" || fail "no word of the knob put back: $(cat "$SS_TMP/daemon.log")"
# The record it made stays for the next restore, which puts the original back.
ss --sysfs="$sys" restore-knob
[[ $(k) == 1 && ! -e $SS_STATE/knob.orig ]] || fail "the next restore: knob $(k), record $(cat "$SS_STATE/knob.orig" 2>&1)"
echo "ok: a late child stalled past the hook's give-up (${ms} ms) and the resume put the knob back to 1 itself"
daemon_stop
fake_wait "released 2"
echo PASS
