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
#      and D09: a daemon that takes a pass's exit 0 for its record fails here);
#   6. the daemon ends after the mark and the late pass, before the resume (review BF, F5): the next
#      daemon's start, no sleep under way, finds the cycle-owed note its predecessor wrote with the
#      mark and runs record-cycle (a cycle recorded, the note gone); a: the post hook ran first (the
#      knob back, the unit-pass mark gone: what a real resume leaves, review BG F-1), and the record
#      of a sleep begun after it planted, which record-cycle must not take for it (F-2), b: it did not
#      (the mark still stands: restore-knob for its token first, the knob 1, the mark gone), c: as
#      b, the successor started during the sleep (it leaves the sleep alone, then does the same at
#      its end; review BG, F-5), d: as a, the successor started while PID 1 says
#      suspend-sync.service is active (a sleep logind did not start, whose unit pass's record is
#      planted: review BG, F-4): the steps wait for it to stop, then take the owed cycle by the
#      note's time; the control, a start with nothing owed, runs neither step;
#   7. the post steps' exec fails (the daemon's binary, a copy, removed before the resume): the
#      daemon puts the knob back itself (review BG, F-3: the knob stayed 0 until the next pass).
#   8. each child of the daemon under a tiny RLIMIT_NOFILE once it holds the knob, a leftover 0 (its
#      original 1 recorded) before the sleep: the daemon's pass leaves the knob 1 (review BE, K15:
#      a child that does not hold the knob open leaves the 0).
#   9. a sleep that begins while the post steps of the one before run: no pass of the daemon's for
#      it (so no mark, no note: review BH's O1, a mark then, cannot happen), and theirs end as usual.
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
        if ((${LEFTOVER:-0})); then # a 0 an earlier sleep's late pass left, its original recorded
                echo 0 >"$knob"
                echo 1 >"$SS_STATE/knob.orig"
        fi
        fake "signal 1"
        fake_wait "released $k"
        KPASS=$(k)
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
# no cycle-owed note either: a daemon restarted later would take the unit's cycle for its own (review BH)
[[ ! -e $SS_STATE/cycle-owed ]] || fail "2: a cycle-owed note for a sleep the daemon did not mark"
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

# ---------------------------------------------------------------- 6
# the daemon ends after its mark and the late pass, before PrepareForSleep(false) (review BF, F5: an
# allocation failed inside sd-bus; here SIGTERM, which takes the same way out); the resume comes with
# no daemon. The next daemon's start (logind: no sleep under way) finds the cycle-owed note and runs
# what the dead daemon would have. a: the post hook ran at the resume (its restore-knob put the knob
# back and removed the unit-pass mark: the common case, review BG F-1); b: no post hook ran
# (systemd-sleep died, or the late pass was left out), the unit-pass mark of that pass still stands.
# restart_after_marked_sleep K POST [DURING]: the K-th sleep, marked, the late pass, the daemon
# stopped, the post hook run when POST is 1, the resume, a new daemon (its lock the (K+1)-th
# granted; started before the resume when DURING is 1), its post steps ended
restart_after_marked_sleep() {
        local k=$1 post=$2 during=${3:-0}
        echo 1 >"$knob"
        fake "signal 1"
        fake_wait "released $k"
        marked || { cat "$log"; fail "6: no mark with nothing against it"; }
        HOOK=$(timeout 15 python3 "$SS_TMP/hook.py" "$RUNDIR/late-pass" | tr '\n' ' ')
        [[ $HOOK == "ack done 0 " && $(k) == 0 && -s $SS_STATE/unit-pass && -s $SS_STATE/cycle-owed ]] ||
                { cat "$log"; fail "6: the late pass did not turn the knob off (hook '$HOOK', knob $(k)), or no unit-pass mark or cycle-owed note"; }
        if ((${BUSY:-0})); then
                fake "state active"
                fake_wait "state active"
        fi
        OWED=$(cut -d' ' -f1 "$SS_STATE/cycle-owed")
        daemon_stop
        if ((post)); then
                "$SUSPEND_SYNC" --state-dir="$SS_STATE" --sysfs="$sys" post suspend ||
                        fail "6: the post hook failed"
                [[ $(k) == 1 && ! -e $SS_STATE/unit-pass ]] ||
                        fail "6: the post hook left the knob at $(k) or the unit-pass mark standing"
        fi
        CYCLES6=$(cycles)
        mv "$log" "$SS_TMP/daemon-$k.log"
        ((${PLANT:-0})) && plant_next_sleep "${PLANT_OFFSET:-3600}"
        if ((during)); then
                # started during the sleep (PreparingForSleep true): the sleep is left as it is; from a
                # copy of its binary, which then becomes a script that notes each exec's arguments in
                # $SS_TMP/execs (review BH: the post steps' options)
                rm -f "$SS_TMP/execs"
                cp "$SUSPEND_SYNC" "$SS_TMP/ss-copy"
                SUSPEND_SYNC=$SS_TMP/ss-copy daemon_start "$SS_CONF"
                fake_wait "granted $((k + 1))"
                ping
                printf '#!/bin/bash\nprintf "%%s\\n" "$*" >>%q\nexec %q "$@"\n' "$SS_TMP/execs" "$SUSPEND_SYNC" >"$SS_TMP/ss-copy.new"
                chmod 755 "$SS_TMP/ss-copy.new"
                mv "$SS_TMP/ss-copy" "$SS_TMP/ss-copy.orig" # the file it runs, put back after the case
                mv "$SS_TMP/ss-copy.new" "$SS_TMP/ss-copy"
                [[ $(k) == 0 && -e $SS_STATE/unit-pass ]] || { cat "$log"; fail "6c: a daemon started during the sleep changed it"; }
                fake "signal 0"
                fake_wait "signalled 0" "$k"
        else
                fake "signal 0"
                fake_wait "signalled 0" "$k"
                daemon_start "$SS_CONF"
                fake_wait "granted $((k + 1))"
                if ((${BUSY:-0})); then
                        # PID 1: suspend-sync.service active, a sleep logind did not start under way
                        log_wait "is owed its post steps, but suspend-sync.service is active: they wait for it|^'(restore-knob|record-cycle)' runs in PID"
                        sleep 2.5 # two of the daemon's questions more
                        ! grep -qE "^'(restore-knob|record-cycle)' runs in PID" "$log" &&
                                [[ -s $SS_STATE/cycle-owed && $(cycles) == "$CYCLES6" ]] ||
                                { cat "$log"; fail "6d: the steps owed ran while suspend-sync.service was active"; }
                        (($(grep -c "is owed its post steps" "$log") == 1)) ||
                                fail "6d: the wait was said more than once"
                        fake "state inactive"
                        fake_wait "state inactive" 2
                fi
        fi
        # the steps begin up to a second after the signal or the start (the knob's lock; in 6d PID
        # 1 asked again): post_wait alone would take a second with none begun for their end
        log_wait "^'record-cycle' runs in PID"
        post_wait 1
        echo "6: restarted (post hook $post, during the sleep $during): knob $(k), $(cycles) cycle(s) (before $CYCLES6)"
        [[ $(k) == 1 && ! -e $SS_STATE/knob.orig ]] || { cat "$log"; fail "6: the knob is $(k) after the restart"; }
        [[ ! -e $SS_STATE/unit-pass && ! -e $SS_STATE/cycle-owed ]] ||
                { cat "$log"; fail "6: the unit-pass mark or the cycle-owed note outlived the cycle"; }
        [[ $(cycles) == $((CYCLES6 + 1)) ]] ||
                { cat "$log"; fail "6: $(cycles) cycles after the restart, want $((CYCLES6 + 1)): the sleep's cycle was lost"; }
        grep -q "The daemon before this one ended after marking a sleep and before recording its cycle" "$log" ||
                { cat "$log"; fail "6: the daemon did not name the cycle owed"; }
        [[ $(grep -c "^'record-cycle' runs in PID" "$log") == 1 ]] ||
                { cat "$log"; fail "6: record-cycle run $(grep -c "^'record-cycle' runs in PID" "$log") times for the cycle owed, want 1"; }
}
# plant_next_sleep: the unit pass's record of a sleep begun after this one (an hour on, this boot), as
# when the next sleep's pass has saved its record before record-cycle reads them (review BG, F-2): the
# daemon's record-cycle, bound by --cycle-before-boottime=, must keep the sleep it runs for
plant_next_sleep() {
        PLANTED=$(python3 - "$SS_STATE/history" "${1:-3600}" <<'PY'
import glob, json, os, sys, time
d = sys.argv[1]
units = []
for f in sorted(glob.glob(os.path.join(d, "*.json"))):
    r = json.load(open(f))
    if r.get("trigger") == "unit":
        units.append(r)
r = units[-1]
offset = int(sys.argv[2]) * 1000000
r["started_realtime_usec"] += max(offset, 60000000) # after the late pass's record in any case
r["started_boottime_usec"] = int(time.clock_gettime(time.CLOCK_BOOTTIME) * 1e6) + offset
r["pid"] = 99999
json.dump(r, open(os.path.join(d, "%020d-99999.json" % r["started_realtime_usec"]), "w"))
print(r["started_realtime_usec"])
PY
)
}
PLANT=1 restart_after_marked_sleep 6 1
! grep -rqs "\"started_realtime_usec\": *$PLANTED\b" "$SS_TMP/lib/cycles" ||
        fail "6a: record-cycle kept the next sleep's half cycle, not the one it ran for"
rm -f "$SS_STATE/history/"*-99999.json
grep -q "^'restore-knob' runs in PID" "$log" && fail "6a: restore-knob run again after the post hook's"
echo "ok 6a: a daemon stopped at the resume, the post hook run: its successor recorded the cycle"
restart_after_marked_sleep 7 0
grep -q "^'restore-knob' runs in PID" "$log" || fail "6b: no restore-knob for the mark still standing"
echo "ok 6b: the same without a post hook: its successor ran restore-knob, then record-cycle"
# c: the successor started during that sleep (review BG, F-5: it recorded the cycle but left the
# mark of a sleep without a post hook standing)
restart_after_marked_sleep 8 0 1
grep -q "^'restore-knob' runs in PID" "$log" || fail "6c: no restore-knob for the mark still standing"
# restore-knob for the owed pass's token only (a restore-knob of no token, run late, would end the next
# sleep's cycle too), record-cycle bound to the sleep it records (review BH)
grep -q "^restore-knob .*--token=$OWED" "$SS_TMP/execs" ||
        { cat "$SS_TMP/execs"; fail "6c: restore-knob not run for the owed pass's token $OWED"; }
grep -qE "^record-cycle .*--cycle-before-boottime=[0-9]+" "$SS_TMP/execs" ||
        { cat "$SS_TMP/execs"; fail "6c: record-cycle run without --cycle-before-boottime="; }
mv -f "$SS_TMP/ss-copy.orig" "$SS_TMP/ss-copy" # the daemon's own file again: not "replaced" for 6d
echo "ok 6c: the successor started during the sleep: restore-knob, then record-cycle, at its end"
# d: as a, the successor started while PID 1 says suspend-sync.service is active: a sleep logind
# did not start (systemctl start suspend.target) is under way, its unit pass's record saved after
# the note (planted, begun now), or that unit's ExecStopPost= still runs (review BG, F-4): the steps
# owed wait until the unit is inactive, and then record the marked sleep's cycle, by the note's time
BUSY=1 PLANT=1 PLANT_OFFSET=0 restart_after_marked_sleep 9 1
! grep -rqs "\"started_realtime_usec\": *$PLANTED\b" "$SS_TMP/lib/cycles" ||
        fail "6d: record-cycle kept the cycle of the sleep begun since the note, not the one owed"
# ... and the owed one whole, its late pass with it (review BI, BI-5)
python3 - "$SS_TMP/lib/cycles" <<'PY' || fail "6d: the cycle recorded has no late pass"
import glob, json, os, sys
newest = max(glob.glob(os.path.join(sys.argv[1], "*.json")), key=os.path.getmtime)
sys.exit(0 if json.load(open(newest)).get("late") else 1)
PY
rm -f "$SS_STATE/history/"*-99999.json
echo "ok 6d: the successor waited for suspend-sync.service to stop, then recorded the cycle owed"
# the control: a start with nothing owed runs neither step
daemon_stop
mv "$log" "$SS_TMP/daemon-10.log"
daemon_start "$SS_CONF"
fake_wait "granted 11"
ping
log_wait "The next pass waits in PID"
! grep -qE "^'(restore-knob|record-cycle)' runs in PID" "$log" ||
        { cat "$log"; fail "6: a start with nothing owed ran a post step"; }
grep -q "The daemon before this one ended" "$log" && fail "6: a start with nothing owed named a debt"
echo "ok 6: the control, nothing owed, no post step"

# ---------------------------------------------------------------- 7
# restore-knob that cannot run (review BG, F-3): the daemon runs from a copy of its binary, removed
# before the resume, so each post step's exec fails; the daemon puts the knob back itself
daemon_stop
mv "$log" "$SS_TMP/daemon-11.log"
cp "$SUSPEND_SYNC" "$SS_TMP/ss-copy"
SUSPEND_SYNC=$SS_TMP/ss-copy daemon_start "$SS_CONF"
fake_wait "granted 12"
log_wait "The next pass waits in PID"
echo 1 >"$knob"
fake "signal 1"
fake_wait "released 12"
marked || { cat "$log"; fail "7: no mark with nothing against it"; }
HOOK=$(timeout 15 python3 "$SS_TMP/hook.py" "$RUNDIR/late-pass" | tr '\n' ' ')
[[ $HOOK == "ack done 0 " && $(k) == 0 ]] || { cat "$log"; fail "7: the late pass did not turn the knob off"; }
rm "$SS_TMP/ss-copy"
fake "signal 0"
fake_wait "granted 13"
ping
post_wait 1
echo "7: restore-knob's exec failed: knob $(k)"
[[ $(k) == 1 && ! -e $SS_STATE/knob.orig ]] || { cat "$log"; fail "7: the knob is $(k) after a restore-knob that could not run"; }
grep -q "Restored /sys/power/sync_on_suspend to 1 (restore-knob failed)" "$log" ||
        { cat "$log"; fail "7: the daemon did not say it put the knob back"; }
[[ ! -e $SS_STATE/cycle-owed ]] || fail "7: the cycle-owed note outlived the daemon's record-cycle"
echo "ok 7: a restore-knob that could not run, the knob put back by the daemon"

# ---------------------------------------------------------------- 8
# the daemon's pass out of file descriptors (review BE, K14, K15): a 0 an earlier sleep's late pass
# left in the knob (its record says 1) must not stand into this sleep. Each child of the daemon
# holds the knob open from its start (child_detach()); here each then runs under RLIMIT_NOFILE N
# ($SUSPEND_SYNC_TEST_CHILD_NOFILE): after the pass the knob is 1 for every N, put back or failed
# safe. A child that holds no knob (K15) leaves the 0 at N 4. (K14, a child that keeps the daemon's
# number, is no different today: the daemon itself never holds the knob, main.c.)
granted=13
for n in 4 5 6 8 12; do
        daemon_stop
        mv "$log" "$SS_TMP/daemon-8-$n.log"
        SUSPEND_SYNC_TEST_CHILD_NOFILE=$n daemon_start "$SS_CONF"
        granted=$((granted + 1))
        fake_wait "granted $granted"
        log_wait "The next pass waits in PID"
        LEFTOVER=1 sleep_cycle "$granted"
        granted=$((granted + 1))
        echo "8: RLIMIT_NOFILE $n: knob $KPASS after the daemon's pass (mark $MARK), $KRES after the resume"
        [[ $KPASS == 1 ]] || { cat "$log"; fail "8: the daemon's pass under RLIMIT_NOFILE $n left the leftover 0"; }
        [[ $KRES == 1 ]] || { cat "$log"; fail "8: RLIMIT_NOFILE $n: the knob is $KRES after the resume"; }
done
echo "ok 8: the daemon's pass out of descriptors, the leftover 0 never stood"

# ---------------------------------------------------------------- 9
# a sleep S2 that begins while the post steps of S1 still run (review BH's O1, which assumed S2
# marked): the daemon runs no pass for it ("bookkeeping still runs"), so no mark and no note of
# S2's, and the unit runs its own; S1's steps end as they would (its cycle, its note gone). S1's
# restore-knob is held: the daemon runs from a copy of its binary, which is a script that waits
# while $SS_TMP/hold exists for restore-knob, and is the copy again (the same file, so not
# "replaced") before S2 begins.
daemon_stop
mv "$log" "$SS_TMP/daemon-9.log"
cp "$SUSPEND_SYNC" "$SS_TMP/ss-copy"
SUSPEND_SYNC=$SS_TMP/ss-copy daemon_start "$SS_CONF"
granted=$((granted + 1))
fake_wait "granted $granted"
log_wait "The next pass waits in PID"
CYCLES9=$(cycles)
echo 1 >"$knob"
fake "signal 1"
fake_wait "released $granted"
marked || { cat "$log"; fail "9: S1 not marked"; }
HOOK=$(timeout 15 python3 "$SS_TMP/hook.py" "$RUNDIR/late-pass" | tr '\n' ' ')
printf '#!/bin/bash\nif [[ $1 == restore-knob ]]; then echo held >>%q; for ((i = 0; i < 160; i++)); do [[ -e %q ]] || break; sleep 0.05; done; fi\nexec %q "$@"\n' \
        "$SS_TMP/held" "$SS_TMP/hold" "$SUSPEND_SYNC" >"$SS_TMP/ss-script"
chmod 755 "$SS_TMP/ss-script"
touch "$SS_TMP/hold"
mv "$SS_TMP/ss-copy" "$SS_TMP/ss-copy.orig"
mv "$SS_TMP/ss-script" "$SS_TMP/ss-copy"
fake "signal 0"
fake_wait "granted $((granted + 1))"
granted=$((granted + 1))
for ((i = 0; i < WAIT_MAX * 20; i++)); do [[ -s $SS_TMP/held ]] && break; sleep 0.05; done
[[ -s $SS_TMP/held ]] || { cat "$log"; fail "9: S1's restore-knob did not run through the script"; }
mv -f "$SS_TMP/ss-copy.orig" "$SS_TMP/ss-copy"
S1=$(cut -d' ' -f1 "$SS_STATE/cycle-owed")
# S2, while S1's restore-knob waits
echo 1 >"$knob"
fake "signal 1"
fake_wait "released $granted"
log_wait "No pass of ours for this sleep \(the last sleep's pass or bookkeeping still runs\)|The pass took" 2
marked && { cat "$log"; fail "9: S2 marked while S1's post steps ran"; }
# S2's unit pass's record (the unit runs it), begun after S1's end: S1's record-cycle, bound by S1's
# end, must not take it (review BH, D15: the bound moved to S2's end while S1's steps ran)
plant_next_sleep 0
[[ $(cut -d' ' -f1 "$SS_STATE/cycle-owed") == "$S1" ]] || fail "9: S2 changed S1's note"
fake "signal 0"
fake_wait "granted $((granted + 1))"
granted=$((granted + 1))
ping
[[ -e $SS_TMP/hold && $(grep -c "^'restore-knob' runs in PID" "$log") == 1 ]] ||
        { cat "$log"; fail "9: S1's restore-knob ended before S2 did, or another ran beside it"; }
rm "$SS_TMP/hold"
log_wait "^'record-cycle' runs in PID"
post_wait 1
echo "9: S2 during S1's steps: not marked; $(cycles) cycle(s) (before $CYCLES9), knob $(k)"
[[ $(cycles) == $((CYCLES9 + 1)) && ! -e $SS_STATE/cycle-owed ]] ||
        { cat "$log"; fail "9: S1's cycle not recorded, or its note outlived its steps"; }
[[ $(grep -c "^'restore-knob' runs in PID" "$log") == 1 ]] || fail "9: the daemon ran post steps for S2"
! grep -rqs "\"started_realtime_usec\": *$PLANTED\b" "$SS_TMP/lib/cycles" ||
        fail "9: S1's record-cycle kept S2's cycle, not S1's"
rm -f "$SS_STATE/history/"*-99999.json
[[ $(k) == 1 ]] || fail "9: the knob is $(k) after the steps"
echo "ok 9: a sleep begun during the post steps of the one before: no pass of ours, theirs end as usual"

daemon_stop
echo PASS
