#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The daemon's mark and what it does after the sleep the mark stood for, against fake-logind on a
# private bus standing for PID 1 too (FAKE_SYSTEMD1: suspend-sync.service's requirers and
# ActiveState, asked as manager.c asks them, at the unit's escaped object path), a fixture knob
# (--sysfs=), the host's root synced (as daemon-alloc.sh) and DeadlineSec=5s (the daemon waits 4 s
# of fake-logind's 5 s). Elsewhere PID 1 never answers and the daemon never marks:
#   1. nothing against it: PrepareForSleep(true), the pass (in the standby) saves a "success" record,
#      PID 1 is asked the three requirer properties and ActiveState, and the daemon creates
#      /run/suspend-sync-daemon/pass-done before it releases the lock ("not needed for this sleep");
#      the hook's late pass turns the knob off (its original recorded); on PrepareForSleep(false) the
#      mark goes, the daemon execs restore-knob with its pass's token (the knob 1 again, its record
#      gone) and then record-cycle with its locations (a cycle in --history-dir=, the daemon's, not
#      /var/lib);
#   2. a unit requires suspend-sync.service (fake PID 1's RequiredBy lists sleep.target): no mark,
#      the reason said, and after the resume no restore-knob or record-cycle of the daemon's (the
#      unit's ExecStopPost= does them): a daemon that ignores the requirers fails here;
#   3. suspend-sync.service still "deactivating" (the last sleep's unit stopping): no mark, said so;
#   4. the control of 2 and 3: nothing against it again, the mark again;
#   5. the pass exits 0 but its record is not saved (last.json a non-empty directory: the rename
#      fails, the pass says so and ignores it): no mark, "its record was not saved" (review BE, D06
#      and D09: a daemon that takes a pass's exit 0 for its record fails here).
# Root, dbus-daemon, python3, debugfs; /run/suspend-sync-daemon must not exist.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
source "$TEST_LIB/fake-logind.sh"
fake_logind_require hook # no suspend-sync installed: a daemon of this build would count as replaced
command -v python3 >/dev/null || skip "no python3"
ss_begin
ss_debugfs || skip "debugfs cannot be mounted"
ss_knob_fixture || fail "no fixture sysfs"
ss_config_knob_off 5s
FAKE_SYSTEMD1=1
DAEMON_NO_STANDBY=0
DAEMON_OPTS=(--sysfs="$sys" --history-dir="$SS_TMP/lib")
fake_logind_begin
log=$SS_TMP/daemon.log

# the hook's side of the late pass (hook-socket.h, as daemon-alloc.sh): "ack" then "done CODE"
cat >"$SS_TMP/hook.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(b"suspend suspend")
s.settimeout(10)
m = s.recv(128)
print("ack" if m.startswith(b"ack ") else "noack")
m = s.recv(128)
print(m.decode(errors="replace") if m else "closed")
PY

# until the daemon's log has a line matching PATTERN (N times)
log_wait() {
        local i
        for ((i = 0; i < WAIT_MAX * 20; i++)); do
                (($(grep -cE "$1" "$log") >= ${2:-1})) && return 0
                kill -0 "$daemon_pid" 2>/dev/null || break
                sleep 0.05
        done
        cat "$log"
        fail "the daemon's log has no '$1' (x${2:-1}) within ${WAIT_MAX}s"
}
# until the daemon's post steps have ended: record-cycle's exec said (K times in all) and no
# restore-knob or record-cycle of the daemon's runs, or none has run for 1 s (none started)
post_wait() {
        local i idle=0
        for ((i = 0; i < WAIT_MAX * 20; i++)); do
                if post_steps_running "$log"; then
                        idle=0
                else
                        idle=$((idle + 1))
                        (($(grep -c "^'record-cycle' runs in PID" "$log") >= $1)) && return 0
                        ((idle < 20)) || return 0
                fi
                sleep 0.05
        done
        fail "restore-knob or record-cycle still runs after ${WAIT_MAX}s"
}
cycles() { { compgen -G "$SS_TMP/lib/cycles/*.json" || true; } | wc -l; }
marked() { [[ -e $RUNDIR/pass-done ]]; }

# sleep_cycle K: the K-th sleep of this daemon (its lock the K-th granted): PrepareForSleep(true),
# the lock released, the mark looked at (MARK: yes or no), the late pass, PrepareForSleep(false), the
# post steps ended, the lock taken again.
sleep_cycle() {
        local k=$1 posts
        posts=$(grep -c "^'record-cycle' runs in PID" "$log" || true)
        echo 1 >"$knob"
        fake "signal 1"
        fake_wait "released $k"
        MARK=no
        if marked; then MARK=yes; fi
        HOOK=$(timeout 15 python3 "$SS_TMP/hook.py" "$RUNDIR/late-pass" | tr '\n' ' ')
        KLATE=$(k)
        fake "signal 0"
        fake_wait "granted $((k + 1))"
        ping
        [[ $MARK == no ]] || posts=$((posts + 1))
        post_wait "$posts"
        KRES=$(k)
}

daemon_start "$SS_CONF"
fake_wait "granted 1"
log_wait "The next pass waits in PID"

# ---------------------------------------------------------------- 1
sleep_cycle 1
echo "1: mark $MARK, hook '$HOOK', knob $KLATE after the late pass, $KRES after the resume, $(cycles) cycle(s)"
[[ $(count asked) == 4 ]] || fail "1: PID 1 asked $(count asked) times, want the 3 requirer properties and ActiveState"
for p in RequiredBy RequisiteOf BoundBy ActiveState; do
        grep -qx "asked $p" "$SS_TMP/fake.out" || fail "1: PID 1 not asked for $p"
done
[[ $MARK == yes ]] || { cat "$log"; fail "1: no mark with nothing against it"; }
grep -q "suspend-sync.service is not needed for this sleep" "$log" || fail "1: the mark's message is missing"
[[ $HOOK == "ack done 0 " && $KLATE == 0 ]] ||
        { cat "$log"; fail "1: the late pass did not turn the knob off (hook '$HOOK', knob $KLATE): the restore would prove nothing"; }
marked && fail "1: the mark outlived the sleep"
[[ $KRES == 1 && ! -e $SS_STATE/knob.orig ]] ||
        { cat "$log"; fail "1: after the resume the knob is $KRES (record $(cat "$SS_STATE/knob.orig" 2>&1)): no restore-knob"; }
grep -q "Restored /sys/power/sync_on_suspend to 1" "$log" || fail "1: restore-knob said nothing"
grep -q "left over from a sleep that ended without" "$log" && fail "1: the knob was put back as a leftover, not by restore-knob"
[[ $(cycles) == 1 ]] || { cat "$log"; fail "1: record-cycle wrote $(cycles) cycles in --history-dir=, want 1"; }
echo "ok 1: marked; after the resume restore-knob put the knob back and record-cycle kept the cycle"

# ---------------------------------------------------------------- 2
fake "require sleep.target"
fake_wait "required sleep.target"
sleep_cycle 2
echo "2: a requirer: mark $MARK, knob $KLATE/$KRES, $(cycles) cycle(s)"
[[ $MARK == no ]] || fail "2: marked though a unit requires suspend-sync.service"
log_wait "a unit requires suspend-sync.service: suspend-sync.service runs its own"
[[ $(cycles) == 1 && $(grep -c "^'restore-knob' runs in PID" "$log") == 1 ]] ||
        fail "2: the daemon ran restore-knob or record-cycle after a sleep its mark did not stand for"
# (the knob: put back by the daemon as a leftover, the unit's ExecStopPost= is not here)
echo "ok 2: a requirer, no mark, no post steps of the daemon's"

# ---------------------------------------------------------------- 3
fake "require"
fake "state deactivating"
fake_wait "state deactivating"
sleep_cycle 3
echo "3: deactivating: mark $MARK"
[[ $MARK == no ]] || fail "3: marked though suspend-sync.service is deactivating"
log_wait "suspend-sync.service is deactivating: suspend-sync.service runs its own"
echo "ok 3: the unit still stopping, no mark"

# ---------------------------------------------------------------- 4
fake "state inactive"
fake_wait "state inactive"
sleep_cycle 4
echo "4: control: mark $MARK, knob $KLATE/$KRES, $(cycles) cycle(s)"
[[ $MARK == yes && $KRES == 1 && $(cycles) == 2 ]] || { cat "$log"; fail "4: nothing against it, yet mark $MARK, knob $KRES, $(cycles) cycles"; }
echo "ok 4: the control, marked again"

# ---------------------------------------------------------------- 5
rm -f "$SS_STATE/last.json"
mkdir -p "$SS_STATE/last.json/x"
sleep_cycle 5
rm -rf "$SS_STATE/last.json"
echo "5: the record not saved: mark $MARK"
[[ $MARK == no ]] || { cat "$log"; fail "5: marked though the pass's record was not saved"; }
log_wait "its record was not saved"
echo "ok 5: a pass that exited 0 without its record saved, no mark"

daemon_stop
echo PASS
