#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The daemon (suspend-sync daemon: verb-daemon.c, daemon.c) with its allocations failed one at a
# time (alloc-fail.so: the Nth fails with ENOMEM, every other is served), against fake-logind on a
# private bus that stands for PID 1 too (FAKE_SYSTEMD1: no unit requires suspend-sync.service, which
# is inactive, so the daemon marks a pass that saved a "success" record), a fixture knob (--sysfs=),
# a history directory of the test's (--history-dir=), the host's root synced (as
# daemon-late-stall.sh), and DeadlineSec=5s (the daemon waits 4 s of fake-logind's 5 s). For each N
# a fresh daemon and one lifecycle: start, the lock granted, PrepareForSleep(true) and the pass (the
# standby forked at the start, as in production) and the mark, the system-sleep hook's request for
# the late pass (a client of hook-socket.h's protocol that reads the ack and "done CODE"),
# PrepareForSleep(false) and, after a marked sleep, the daemon's restore-knob and record-cycle
# (waited for), a second sleep (what the first one's failure left behind), SIGTERM.
# Checked for every N:
#   1. no death: no exit by a signal, no sanitizer's report of the daemon or of a child (they share
#      its stderr); no hang: each sleep's lock released (or the daemon gone) within 8 s of its
#      PrepareForSleep(true), the hook answered (ack then done, or neither) within 15 s, SIGTERM
#      ends the daemon within 10 s;
#   2. no wrong "done": a mark (or the daemon's word of one) only where the pass of that sleep (its
#      PID as the daemon says) saved a record that says "success" (last.json as the lock was
#      released), and gone after the sleep; after a marked sleep's resume, the knob 1 once the
#      daemon's restore-knob and record-cycle have ended, the cycle in the test's history
#      directory (nothing in /var/lib/suspend-sync), unless the daemon said why not; "done 0" only
#      from a late pass that saved its record (last.json of its PID, read as "done" came) or said
#      it would not; the knob 0 after the late pass only with "done 0" and that record saying
#      "success" with as many superblocks synced as the control's; the knob 1 after the resume
#      (the daemon puts a late pass's change back, knob_leftover_restore(), or its restore-knob),
#      or, where the daemon is gone by then, after its restart (knob_leftover_at_start(); in
#      production the post hook and the unit's ExecStopPost= restore it too);
#   3. the daemon says why: an exit before SIGTERM with a failure's message, each lock released
#      after PrepareForSleep(true) with a decision's message (and not "DeadlineSec= is above" with
#      DeadlineSec=5s), a hook's request closed without an ack with the daemon's message about it,
#      no lock after the resume with one about that.
# The daemon's own allocations over a lifecycle are ~610 here, its children's (the standby's pass,
# the late pass) counted on from it reach N ~1770: every N of all of them takes ~16 min (done by
# hand, review BC). This test takes the windows that matter to logind and the hook, every N of each
# (ALLOC_FAIL_ARM: the count starts at a SIGUSR2 to the daemon and its children; ALLOC_FAIL_SAY: the
# process hit is told, with a backtrace):
#   sleep: armed right before PrepareForSleep(true), every N until 30 in a row fell outside (the
#          daemon's handling of the signal and its questions up to its decision, and the whole pass
#          in the standby up to its report and tally; the daemon's later steps get the N that reach
#          them);
#   hook:  armed right before the hook's request, every N until 30 past the first that fell in the
#          late pass (the daemon's accept, request, fork; the late pass's start, its ack and on);
#   post:  armed right before PrepareForSleep(false), the daemon only (restore-knob and record-cycle
#          are exec'd: they wait for a SIGUSR2 of their own, which they never get), every N until 30
#          in a row fell outside (the daemon's handling of the signal, its relock and configuration
#          read, the exec of restore-knob, its exit, the exec of record-cycle).
# Controls: without a failure the pass is marked, the late pass turns the knob off, the daemon's
# restore-knob puts it back and its record-cycle keeps the cycle, and no check fires (else the sweep
# proves nothing); some N fall in each window; some N of the hook's window keep the knob on. The
# negative controls: a daemon whose late pass reports a failed verb_run() as "done 0" fails check 2
# (review BC); so does one that marks whatever its pass's status and record (review BF: every N of
# 300-315, "sleep 1 marked, ... last.json: none").
# What it cannot check: a mark against a requirer, another delay lock or the unit still running
# (fake PID 1 and logind allow it here: daemon-mark.sh, test-daemon); a failure that changes
# nothing it observes (a message lost at debug level); the N between the windows only in the full
# sweep (by hand: `daemon-alloc.sh sweep FROM TO [ARM]`); N land a little differently with the
# machine's mounts; failures inside the exec'd restore-knob and record-cycle (they wait for a
# SIGUSR2 of their own, which nothing sends: no test fails their allocations).
# Root, dbus-daemon, python3, debugfs; /run/suspend-sync-daemon must not exist, nor
# /run/suspend-sync/knob.orig (a restore-knob without --state-dir= would put this machine's knob
# back). ~7.5 min here (~0.4 s a lifecycle, ~0.8 s in the post window; ~810 N in the sleep window,
# which is the whole pass, 5 min; ~33 in the hook's; ~145 in the post window, 2 min). Review BF
# (the post window): a restore-knob or record-cycle run without the daemon's --sysfs= or
# --state-dir= (N 5, 11, 107 there) or not started without a word (N 13) is caught.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
source "$TEST_LIB/fake-logind.sh"
fake_logind_require hook # no suspend-sync installed: a daemon of this build would count as replaced
command -v python3 >/dev/null || skip "no python3"
[[ -n ${ALLOC_FAIL:-} && -r $ALLOC_FAIL ]] || skip "ALLOC_FAIL (alloc-fail.so) not built"
[[ ! -e /run/suspend-sync/knob.orig ]] ||
        skip "/run/suspend-sync/knob.orig exists: a restore-knob of the default locations would write this machine's knob"
ss_begin
ss_debugfs || skip "debugfs cannot be mounted"
ss_knob_fixture || fail "no fixture sysfs"
ss_config_knob_off 5s
FAKE_SYSTEMD1=1
fake_logind_begin
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0:abort_on_error=1"
log=$SS_TMP/daemon.log
cur=0
ss_on_exit 'if ((cur > 0)); then kill -KILL $cur 2>/dev/null; wait $cur 2>/dev/null; fi'

# the hook's side of the late pass (hook-socket.h): prints "noack", "ack", then "done CODE" or "nodone"
cat >"$SS_TMP/hook.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(sys.argv[1])
    s.send(b"suspend suspend")
    s.settimeout(0.5)
    m = s.recv(128)
except Exception as e:
    print("noack", type(e).__name__); sys.exit(0)
if not m.startswith(b"ack "):
    print("noack", m.decode(errors="replace") or "closed"); sys.exit(0)
limit = int(m.split()[1])
print("ack", flush=True)
left = limit / 1e6 + 2 - time.clock_gettime(time.CLOCK_MONOTONIC)
s.settimeout(max(left, 0.1))
try:
    m = s.recv(128)
except Exception:
    print("nodone"); sys.exit(0)
print(m.decode(errors="replace") if m else "nodone closed")
PY

# wait_line LINE N SECONDS: fake-logind told LINE N times, or 1 (the daemon gone, or the time up)
wait_line() {
        local i
        for ((i = 0; i < $3 * 100; i++)); do
                (($(grep -cx "$1" "$SS_TMP/fake.out") >= $2)) && return 0
                kill -0 "$cur" 2>/dev/null || return 1
                sleep 0.01
        done
        return 1
}

alive() { kill -0 "$cur" 2>/dev/null; }
tick() { [[ -z ${TICKS:-} ]] || TICKS+=" $1=$((($(date +%s%N) - T0) / 1000000))"; }
marked() { [[ -e $RUNDIR/pass-done ]]; }
# the daemon's history directory (--history-dir=), and the default one, which nothing may write
hist=$SS_TMP/lib
cycles() { { compgen -G "$1/cycles/*.json" || true; } | wc -l; }
default_cycles() { cycles /var/lib/suspend-sync; }
DEFAULT_CYCLES=$(default_cycles)
# post_running: a restore-knob or record-cycle of this daemon's still runs
post_running() { post_steps_running "$log"; }
POST_MAX=25 # restore-knob and record-cycle, each bounded by the daemon at 10 s, and a margin
# post_wait: the daemon's post steps have ended: record-cycle's exec said (or its failure) and none
# runs, or none has run for 0.5 s (a step never started); 1 after POST_MAX
post_wait() {
        local i idle=0
        for ((i = 0; i < POST_MAX * 100; i++)); do
                if post_running; then
                        idle=0
                else
                        idle=$((idle + 1))
                        grep -qE "^'record-cycle' runs in PID|^Failed to run 'record-cycle'" "$log" && return 0
                        ((idle < 50)) || return 0
                fi
                alive || return 0
                sleep 0.01
        done
        return 1
}
# the passes the daemon started so far, and the PID of the last one, as it told them
passes() { grep -c "^The pass of this sleep runs in PID" "$log" || true; }
pass_last() { sed -n 's/^The pass of this sleep runs in PID \([0-9]*\)\.$/\1/p' "$log" | tail -1; }
REL_MAX=8 # DeadlineSec=5s (the daemon waits 4 s of fake-logind's 5 s) and a margin

# life N [ARM]: one daemon's lifecycle with allocation N failed (0: none). ARM (ALLOC_FAIL_ARM):
# "sleep", N counts from right before PrepareForSleep(true); "hook", from right before the hook's
# request (a SIGUSR2 to the daemon and its children then). Sets the L_* facts judge() reads.
life() {
        local n=$1 arm=${2:-} g0 r0 i t0 p0 armenv=()
        find "$SS_STATE" -mindepth 1 -delete
        rm -rf "$hist"
        echo 1 >"$knob"
        g0=$(count granted) r0=$(count released)
        [[ -n $arm ]] && armenv=(ALLOC_FAIL_ARM=1)
        # shellcheck disable=SC2086
        env -u NOTIFY_SOCKET RUNTIME_DIRECTORY="$RUNDIR" SUSPEND_SYNC_LOG_LEVEL=debug ${ENVX:-} \
                ${armenv[@]+"${armenv[@]}"} ALLOC_FAIL_SAY=1 ALLOC_FAIL_AT="$n" LD_PRELOAD="$ALLOC_FAIL" \
                "$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" --sysfs="$sys" --history-dir="$hist" \
                daemon >"$log" 2>&1 &
        cur=$! L_PID=$!
        daemon_pid=$cur
        L_LOCK=0 L_REL=0 L_HOOK=- L_KLATE=- L_KRES=- L_TERM=- L_RC=- L_MARK=0 L_RELOCK=0
        L_GONE_AT_REL=0 L_GONE_AT_HOOK=0 L_GONE=0 L_REL2=- L_GONE_AT_REL2=0 L_KRESTART=- L_LATE_PID=
        L_MARK1=0 L_MARK2=0 L_MARK_AFTER=0 L_KPOST=- L_CYCLES=- L_POST=- L_GONE_AT_POST=0 L_PASS1= L_PASS2=
        : >"$SS_TMP/unit1.json"
        : >"$SS_TMP/unit2.json"
        wait_line "granted $((g0 + 1))" 1 10 && L_LOCK=1
        tick lock
        ! grep -q "Too many calls" "$log" || fail "fake-logind refuses more Inhibit calls (INHIBIT_MAX)"
        # the start-up done (the standby forked, or not): its last line is READY=1's
        for ((i = 0; i < 200; i++)); do
                alive || break
                grep -qE "The next pass waits in PID|No standby pass" "$log" && break
                sleep 0.01
        done
        [[ $arm == sleep ]] && arm_all
        p0=$(passes)
        fake "signal 1"
        t0=$(date +%s%N)
        if wait_line "released $((r0 + 1))" 1 "$REL_MAX"; then
                L_REL=$((($(date +%s%N) - t0) / 1000000))
        fi
        alive || L_GONE_AT_REL=1
        tick rel
        # the mark as the lock went, and the record it stands on
        if marked; then L_MARK1=1; fi
        cp "$SS_STATE/last.json" "$SS_TMP/unit1.json" 2>/dev/null || true
        (($(passes) == p0)) || L_PASS1=$(pass_last)
        if alive; then
                [[ $arm == hook ]] && arm_all
                L_HOOK=$(timeout 15 python3 "$SS_TMP/hook.py" "$RUNDIR/late-pass" | tr '\n' ' ') || L_HOOK=timeout
                [[ -n $L_HOOK ]] || L_HOOK=timeout
                L_KLATE=$(k)
        fi
        alive || L_GONE_AT_HOOK=1
        tick hook
        # the late pass's record as its "done" left it (the second sleep's pass writes another)
        cp "$SS_STATE/last.json" "$SS_TMP/late.json" 2>/dev/null || : >"$SS_TMP/late.json"
        L_LATE_PID=$(sed -n 's/^The late pass of this sleep runs in PID \([0-9]*\),.*/\1/p' "$log")
        [[ $arm == post ]] && arm_daemon
        fake "signal 0"
        if alive && wait_line "granted $((g0 + 2))" 1 3; then L_RELOCK=1; fi
        tick relock
        # after a marked sleep: the daemon's restore-knob, then its record-cycle, waited for (a
        # second sleep while they run gets no pass: "still runs")
        if alive && [[ $L_MARK1 == 1 ]]; then
                post_wait && L_POST=1 || L_POST=0
                if marked && alive; then L_MARK_AFTER=1; fi
                L_KPOST=$(k) L_CYCLES=$(cycles "$hist")
                alive || L_GONE_AT_POST=1
        fi
        tick post
        # a second sleep: what the first one's failure left behind (a configuration not read again,
        # a standby lost) must not keep the lock either
        if [[ $L_RELOCK == 1 ]]; then
                L_REL2=0
                p0=$(passes)
                fake "signal 1"
                wait_line "released $((r0 + 2))" 1 "$REL_MAX" && L_REL2=1
                if marked; then L_MARK2=1; fi
                cp "$SS_STATE/last.json" "$SS_TMP/unit2.json" 2>/dev/null || true
                (($(passes) == p0)) || L_PASS2=$(pass_last)
                alive || L_GONE_AT_REL2=1
                fake "signal 0"
        fi
        tick sleep2
        if alive; then
                kill -TERM "$cur"
                L_TERM=1
                for ((i = 0; i < 1000; i++)); do alive || break; sleep 0.01; done
                if alive; then
                        L_TERM=hang
                        kill -KILL "$cur"
                fi
        else
                L_GONE=1
        fi
        tick term
        L_RC=0
        wait "$cur" || L_RC=$?
        cur=0
        # what the daemon forked (a pass past its bound, the standby's reader) ends by itself
        for ((i = 0; i < 1000; i++)); do
                [[ -z $(pgrep -f -- "--state-dir=$SS_STATE" || true) ]] && break
                sleep 0.01
        done
        tick end
        # the knob after the resume's restore, and after the late pass's child ended (a child that
        # wrote after the hook gave up puts 1 back itself: kernel-knob.h KnobGate)
        L_KRES=$(k)
        # A daemon gone before the resume's restore leaves a late pass's 0 to the post hook, the
        # unit's ExecStopPost= and its restart (knob_leftover_at_start()): the restart, here.
        L_KRESTART=-
        if [[ $L_GONE == 1 && $L_KRES == 0 ]]; then
                g0=$(count granted)
                env -u NOTIFY_SOCKET RUNTIME_DIRECTORY="$RUNDIR" SUSPEND_SYNC_LOG_LEVEL=debug \
                        "$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" --sysfs="$sys" --history-dir="$hist" \
                        daemon >"$log.restart" 2>&1 &
                cur=$!
                wait_line "granted $((g0 + 1))" 1 10 || true
                L_KRESTART=$(k)
                kill -TERM "$cur" 2>/dev/null || true
                wait "$cur" || true
                cur=0
        fi
}
# the daemon and what it forked get their SIGUSR2 (ALLOC_FAIL_ARM)
arm_all() {
        local p c
        for p in "$cur" $(pgrep -P "$cur" || true); do
                kill -USR2 "$p" 2>/dev/null || true
                for c in $(pgrep -P "$p" || true); do kill -USR2 "$c" 2>/dev/null || true; done
        done
}

# the daemon alone gets its SIGUSR2 (ALLOC_FAIL_ARM): what it execs waits for one of its own
arm_daemon() { kill -USR2 "$cur" 2>/dev/null || true; }

# who: which processes the failed allocation hit (ALLOC_FAIL_SAY): daemon, standby, pass, late, child
who() {
        local pid role out=""
        for pid in $(sed -n 's/^alloc-fail: PID \([0-9]*\) failed allocation.*/\1/p' "$log"); do
                if [[ $pid == "$L_PID" ]]; then role=daemon
                elif grep -q "The next pass waits in PID $pid\.$" "$log"; then role=standby
                elif grep -q "The late pass of this sleep runs in PID $pid," "$log"; then role=late
                else role=child; fi
                out+="$role "
        done
        echo "${out:-none}"
}
# the first frame of the failed allocation's backtrace outside the preload
site() {
        grep -A12 '^alloc-fail: PID' "$log" | grep -v -e alloc-fail -e '^--' | grep -m1 -v 'libasan\|libc\.so' || true
}

# the late pass's record (late.json, or FILE): "PID RESULT SYNCED TRIGGER" (SYNCED: its mounts
# synced), or "none"
late_record() {
        python3 - "${1:-$SS_TMP/late.json}" <<'PY' 2>/dev/null || echo none
import json, sys
j = json.load(open(sys.argv[1]))
print(j.get("pid", 0), j.get("result"), sum(m.get("outcome") == "synced" for m in j.get("mounts", [])),
      j.get("trigger"))
PY
}
DECISION="^The pass (took|is still running)|^No pass of ours|^Failed to start the pass|^Failed to arm"
decisions() { grep -cE "$DECISION" "$log" || true; }

# judge N: the findings of the lifecycle just run, one line each on stdout (none: nothing found)
judge() {
        local n=$1 rpid rresult rsynced
        if ((L_RC >= 128)) || grep -qE 'ERROR: AddressSanitizer|runtime error:|Sanitizer:' "$log"; then
                echo "N=$n death: exit $L_RC: $(grep -m1 -E 'Sanitizer|SUMMARY|runtime error' "$log" || tail -1 "$log")"
        fi
        if [[ $L_LOCK == 1 && $L_REL == 0 && $L_GONE_AT_REL == 0 ]]; then
                echo "N=$n hang: the delay lock kept ${REL_MAX}s after PrepareForSleep(true) by a daemon still running"
        fi
        if [[ $L_REL2 == 0 && $L_GONE_AT_REL2 == 0 ]]; then
                echo "N=$n hang: the second sleep's lock kept ${REL_MAX}s after PrepareForSleep(true)"
        fi
        [[ $L_TERM == hang ]] && echo "N=$n hang: SIGTERM did not end the daemon in 10s"
        [[ $L_HOOK == timeout ]] && echo "N=$n hang: the hook's request got no ack or done in 15s"
        # never a wrong done: a mark (or its word) only on the record of that sleep's pass saying
        # "success", ...
        local s m marks said ppid
        marks=$((L_MARK1 + L_MARK2)) said=$(grep -c "is not needed for this sleep" "$log" || true)
        ((said <= marks)) || [[ $L_GONE_AT_REL == 1 || $L_GONE_AT_REL2 == 1 ]] ||
                echo "N=$n wrong done: the daemon said $said time(s) that the unit is not needed, $marks mark(s) seen"
        for s in 1 2; do
                m=L_MARK$s ppid=L_PASS$s
                [[ ${!m} == 1 ]] || continue
                ppid=${!ppid}
                read -r rpid rresult _ rtrigger <<<"$(late_record "$SS_TMP/unit$s.json")"
                if [[ -z $ppid || $rpid != "$ppid" || $rresult != success || $rtrigger != unit ]]; then
                        echo "N=$n wrong done: sleep $s marked, its pass ${ppid:-unknown}, last.json: ${rpid:-none} ${rresult:-} ${rtrigger:-}"
                fi
        done
        # ... gone with its sleep, and the unit's ExecStopPost= done by the daemon after it
        [[ $L_MARK_AFTER == 1 ]] && echo "N=$n wrong done: the mark outlived its sleep's PrepareForSleep(false)"
        if [[ $L_POST == 0 && $L_GONE_AT_POST == 0 ]]; then
                echo "N=$n hang: restore-knob or record-cycle still ran ${POST_MAX}s after the resume"
        fi
        if [[ $L_KPOST == 0 && $L_GONE_AT_POST == 0 ]]; then
                echo "N=$n knob: still 0 after the marked sleep's resume and the daemon's post steps: $(grep -m1 -E "'restore-knob'|Restored" "$log")"
        fi
        # (record-cycle's own failure said, in the log it shares, counts as a word)
        if [[ $L_CYCLES == 0 && $L_GONE_AT_POST == 0 ]] &&
                ! grep -qE "^Failed to run 'record-cycle'|^'record-cycle' did not end" "$log" &&
                ! sed -n "/^'record-cycle' runs in PID/,\$p" "$log" | grep -qiE "out of memory|cannot allocate|^failed"; then
                echo "N=$n silent: no cycle recorded after the marked sleep, and no word of it"
        fi
        if [[ $(default_cycles) != "$DEFAULT_CYCLES" ]]; then
                echo "N=$n wrong place: a cycle written to /var/lib/suspend-sync, not --history-dir="
                DEFAULT_CYCLES=$(default_cycles)
        fi
        # ... a late pass's "done 0" only after it synced, the knob 0 only after all was synced
        # "done 0" from a late pass that ran to its record (or says it could not save it); the knob 0
        # only after "done 0" and a record of the late pass that synced all the control's did
        if [[ $L_HOOK == "ack done 0 " || $L_KLATE == 0 ]]; then
                read -r rpid rresult rsynced _ <<<"$(late_record)"
                if [[ $L_HOOK == "ack done 0 " && $rpid != "$L_LATE_PID" ]] &&
                        ! grep -qE "^Failed to record the run|the run will not be recorded" "$log"; then
                        echo "N=$n wrong done: the late pass answered done 0 without its record (last.json: ${rpid:-none} ${rresult:-}, late pass: ${L_LATE_PID:-none})"
                fi
                if [[ $L_KLATE == 0 ]] && [[ $L_HOOK != "ack done 0 " || $rpid != "$L_LATE_PID" ||
                        $rresult != success || $rsynced != "$K_ALL" ]]; then
                        echo "N=$n wrong done: the knob 0 after a late pass that did not sync everything (hook: $L_HOOK; record: $rpid $rresult $rsynced of $K_ALL)"
                fi
        fi
        if [[ $L_KRES == 0 && $L_GONE == 0 ]]; then
                echo "N=$n knob: still 0 after the resume: $(grep -m1 -E 'sync_on_suspend' "$log" | tail -1)"
        fi
        if [[ $L_KRESTART == 0 ]]; then
                echo "N=$n knob: still 0 after the resume, the daemon gone, and after its restart"
        fi
        # the log says why
        if [[ $L_GONE == 1 ]] && ! grep -qiE 'Cannot allocate memory|Out of memory|Failed|Cannot|exiting' "$log"; then
                echo "N=$n silent: the daemon exited ($L_RC) before SIGTERM without a word: $(tail -2 "$log" | tr '\n' ' ')"
        fi
        # (a daemon on its way out, its message written, may still be there when looked at)
        if [[ $L_REL != 0 && $L_GONE_AT_REL == 0 ]] && (($(decisions) < 1)) &&
                ! grep -q ", exiting\.$" "$log"; then
                echo "N=$n silent: the lock released after PrepareForSleep(true) without a word"
        fi
        if [[ $L_REL2 == 1 && $L_GONE_AT_REL2 == 0 && $L_GONE == 0 ]] && (($(decisions) < 2)) &&
                ! grep -q ", exiting\.$" "$log"; then
                echo "N=$n silent: the second sleep's lock released without a word"
        fi
        # ... and says it right: DeadlineSec=5s here
        if grep -q "DeadlineSec= is above" "$log"; then
                echo "N=$n wrong why: $(grep -m1 "DeadlineSec= is above" "$log")"
        fi
        # the bus (this test's dbus-daemon) never goes away here
        if grep -q "^The system bus went away" "$log"; then
                echo "N=$n wrong why: the daemon exited saying the system bus went away (it did not)"
        fi
        if [[ $L_HOOK == noack* && $L_GONE_AT_HOOK == 0 ]] &&
                ! grep -qE "the system-sleep hook runs (its own|the late pass itself)|^A malformed request|^Not taking the late pass" "$log"; then
                echo "N=$n silent: the hook's request closed without an ack and without a word ($L_HOOK)"
        fi
        if [[ $L_RELOCK == 0 && $L_GONE == 0 ]] && ! grep -qE "delay lock|InhibitDelayMaxUSec" <(grep -v "^Holding logind's delay lock for sleep (" "$log"); then
                echo "N=$n silent: no delay lock after the resume, and no word of it"
        fi
        return 0
}

if [[ ${1:-} == count ]]; then
        life 0 "${2:-}"
        echo "lock=$L_LOCK rel=$L_REL hook=$L_HOOK klate=$L_KLATE kres=$L_KRES term=$L_TERM rc=$L_RC"
        cat "$log"
        exit 0
fi
# control
life 0
read -r _ rresult K_ALL _ <<<"$(late_record)"
[[ $L_KLATE == 0 && $rresult == success && $K_ALL -ge 1 ]] ||
        fail "control: the late pass did not turn the knob off after syncing: $L_HOOK, record: $rresult $K_ALL: $(cat "$log")"
[[ $L_MARK1 == 1 && $L_POST == 1 && $L_KPOST == 1 && $L_CYCLES == 1 ]] ||
        fail "control: no mark, or no restore-knob and record-cycle after it: mark=$L_MARK1 post=$L_POST knob=$L_KPOST cycles=$L_CYCLES: $(cat "$log")"
grep -q "'record-cycle' runs in PID" "$log" || fail "control: the daemon did not say it ran record-cycle"
echo "control: lock=$L_LOCK released in ${L_REL}ms hook='$L_HOOK' knob late=$L_KLATE post=$L_KPOST resume=$L_KRES rc=$L_RC, late synced $K_ALL, marked $L_MARK1/$L_MARK2, cycles $L_CYCLES"
[[ -z $(judge 0) ]] || fail "control: $(judge 0)"

if [[ ${1:-} == one ]]; then # one N [ARM]: the log
        T0=$(date +%s%N) TICKS=" "
        life "$2" "${3:-}"
        echo "times (ms):$TICKS"
        echo "N=$2 hit=[$(who)] lock=$L_LOCK rel=$L_REL mark=$L_MARK1/$L_MARK2 hook='$L_HOOK' knob=$L_KLATE/$L_KPOST/$L_KRES cycles=$L_CYCLES rel2=$L_REL2 term=$L_TERM rc=$L_RC"
        judge "$2"
        cat "$log"
        exit 0
fi
if [[ ${1:-} == sweep ]]; then # sweep FROM TO [ARM]: every N, one line each
        for ((n = $2; n <= $3; n++)); do
                t=$(date +%s%N)
                life "$n" "${4:-}"
                echo "N=$n hit=[$(who)] lock=$L_LOCK rel=$L_REL mark=$L_MARK1/$L_MARK2 hook='$L_HOOK' knob=$L_KLATE/$L_KPOST/$L_KRES cycles=$L_CYCLES rel2=$L_REL2 term=$L_TERM rc=$L_RC $((($(date +%s%N) - t) / 1000000))ms site=$(site)"
                judge "$n" | sed 's/^/FINDING /'
                if [[ -n $(judge "$n") ]]; then cp "$log" "${KEEP_DIR:-/tmp}/daemon-alloc-$n${4:+-$4}.log" 2>/dev/null || true; fi
        done
        exit 0
fi

# in_window sleep|hook: whether the failed allocation of the lifecycle just run fell in the window,
# each process's failure against its own lines (lines of two processes come in no set order):
#   sleep: the daemon's before its decision on the pass (none: it died, hung or exited), or the
#          standby's before its pass's tally (none: the pass ended before it), which follows its
#          report;
#   hook:  the daemon's before its word of the late pass's fork, or any in that late pass (the
#          window reaches past the ack: see below);
#   post:  the daemon's before its word of record-cycle's exec (none: it died, hung or exited).
in_window() {
        local pid at mark
        if [[ $1 == post ]]; then
                pid=$L_PID mark="^'record-cycle' runs in PID"
        elif [[ $1 == hook ]]; then
                [[ $(who) == *late* ]] && return 0
                pid=$L_PID mark="The late pass of this sleep runs in PID"
        else
                pid=$L_PID mark=$DECISION
        fi
        at=$(grep -n -m1 "^alloc-fail: PID $pid " "$log" | cut -d: -f1 || true)
        if [[ -n $at ]]; then
                mark=$(grep -n -m1 -E "$mark" "$log" | cut -d: -f1 || true)
                [[ -z $mark ]] || ((at < mark)) && return 0
        fi
        [[ $1 == sleep ]] || return 1
        pid=$(sed -n 's/^The next pass waits in PID \([0-9]*\)\.$/\1/p' "$log" | head -1)
        [[ -n $pid ]] || return 1
        at=$(grep -n -m1 "^alloc-fail: PID $pid " "$log" | cut -d: -f1 || true)
        [[ -n $at ]] || return 1
        mark=$(grep -n -m1 -E '^Synced [0-9]+ of [0-9]+ superblocks' "$log" | cut -d: -f1 || true)
        [[ -z $mark ]] || ((at < mark))
}

findings=0 t_all=$(date +%s)
# sweep_window ARM: every N from 1 on, until TAIL N in a row fell outside the window (sleep), or
# TAIL N past the first that reached the late pass (hook); WINDOW_MAX at most.
sweep_window() {
        local arm=$1 n out=0 hits=0 t0 f first_late=0 kept=0
        t0=$(date +%s)
        for ((n = 1; n <= ${WINDOW_MAX:-1500}; n++)); do
                life "$n" "$arm"
                [[ -z ${KEEP_DIR:-} ]] ||
                        echo "$arm N=$n hit=[$(who)] lock=$L_LOCK rel=$L_REL mark=$L_MARK1/$L_MARK2 hook='$L_HOOK' knob=$L_KLATE/$L_KPOST/$L_KRES cycles=$L_CYCLES rel2=$L_REL2 term=$L_TERM rc=$L_RC site=$(site)" >>"$KEEP_DIR/lines.txt"
                f=$(judge "$n")
                if [[ -n $f ]]; then
                        echo "$f  [$arm window; hit: $(who); at: $(site)]"
                        findings=$((findings + $(wc -l <<<"$f")))
                        cp "$log" "${KEEP_DIR:-$SS_TMP}/finding-$arm-$n.log"
                fi
                [[ $L_KLATE == 1 ]] && kept=$((kept + 1))
                if in_window "$arm"; then
                        hits=$((hits + 1)) out=0
                else
                        out=$((out + 1))
                fi
                if [[ $arm == hook ]]; then
                        ((first_late == 0)) && [[ $(who) == *late* ]] && first_late=$n
                        ((first_late > 0 && n >= first_late + ${TAIL:-30})) && break
                        ((first_late > 0 || n < 300)) || fail "no N of 300 reached the late pass"
                else
                        ((out >= ${TAIL:-30})) && break
                fi
        done
        echo "$arm window: N 1-$n ($hits in the window), $(($(date +%s) - t0)) s; the knob kept on $kept times"
        WINDOW_N=$n WINDOW_HITS=$hits WINDOW_KEPT=$kept
}
# $DAEMON_ALLOC_WINDOWS: the windows swept (by hand: one of them)
for w in ${DAEMON_ALLOC_WINDOWS:-sleep hook post}; do
        sweep_window "$w"
        if [[ $w == sleep ]]; then
                ((WINDOW_HITS > 0)) || fail "control: no failed allocation fell between PrepareForSleep(true) and the decision"
        elif [[ $w == post ]]; then
                ((WINDOW_HITS > 0)) || fail "control: no failed allocation fell between PrepareForSleep(false) and record-cycle's exec"
        else
                ((WINDOW_HITS > 0 && WINDOW_KEPT > 0)) || fail "control: no failed allocation of the hook's window kept the knob on"
        fi
done
echo "$findings finding(s) in $(($(date +%s) - t_all)) s"
((findings == 0)) || exit 1
echo PASS
