#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Review O, O8: the daemon takes logind's delay lock again after a sleep without blocking its event
# loop, against fake-logind on a private dbus-daemon (the daemon's "system bus" through
# $DBUS_SYSTEM_BUS_ADDRESS), which can hold its answers to Inhibit:
#   1. while the Inhibit call after a resume is held unanswered, the daemon serves the hook's socket
#      (a malformed request closed) and the bus (Ping), and the call has not failed: the event loop
#      never waited for it (the synchronous call waited DAEMON_BUS_TIMEOUT, 10 s, then failed);
#   2. the answer that comes later is the lock the daemon holds: the next PrepareForSleep(true)
#      releases exactly that lock;
#   3. a PrepareForSleep(true) that comes before the answer: no lock of ours for that sleep (the unit
#      runs), and the lock that comes during it is let go at once (it would hold the sleep up), not
#      asked for again until the PrepareForSleep(false) after it;
#   4. a sleep and a resume while a call is under way: no second call, the one answer kept;
#   5. a refused call: tried again, as before (a second later, DAEMON_RELOCK_TRIES in all);
#   6. SIGTERM: the lock released and the daemon gone, without flushing its bus;
#   7. (review U, U5) a second daemon whose configuration file is on a FUSE mount that hangs after its
#      start: the read after a resume waits for nobody (the bus, a sleep and SIGHUP are handled while
#      its reader hangs, and the sleep goes by the configuration read before), and when the server
#      answers again, the read's result is applied (DeadlineSec= as recorded in conf-bounds); a read
#      under way is let finish, not replaced by one for each resume and SIGHUP (review Y, Y1). The
#      reader's bound is 30 s ($SUSPEND_SYNC_TEST_CONF_READ_TIMEOUT), so that what the test sees does
#      not depend on how fast this machine is: a daemon that waits for its reader answers the Ping
#      after 30 s, having warned that the files were not readable.
# DeadlineSec=60s: above the daemon pass's cap, so that the daemon runs no pass of its own and lets
# each sleep's lock go on PrepareForSleep(true) (pass_start(): "No pass of ours"), which is what
# fake-logind sees. Root (the daemon refuses otherwise), dbus-daemon, python3, FUSE (the fault-injection
# disk's passthrough mode); /run/suspend-sync-daemon must not exist (the daemon's RuntimeDirectory=,
# whose socket path is fixed).
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
require_root_loop_fuse
command -v python3 >/dev/null || skip "no python3"
source "$TEST_LIB/fake-logind.sh"
fake_logind_require
ss_begin
ss_config "[Sync]
DeadlineSec=60s"
fake_logind_begin

daemon_start "$SS_CONF"

# The first lock, at the start (synchronous: before READY=1, nothing is served yet).
fake_wait "granted 1"
ping
grep -q "Holding logind's delay lock" "$SS_TMP/daemon.log" || fail "no lock held at the start"
# Review U, U4: the configuration read in full at the start, its bounds recorded for a pass that
# cannot read it (conf-bounds.h), though no pass of the daemon's has run.
grep -qx "DEADLINE_USEC=60000000" "$SS_STATE/conf-bounds" ||
        fail "the daemon recorded no bounds of its configuration: $(cat "$SS_STATE/conf-bounds" 2>&1)"
fake "signal 1"
fake_wait "released 1"

# 1. After the resume, Inhibit held: the event loop still runs.
fake hold
fake "signal 0"
fake_wait "inhibit 2"
ping
answer=$(timeout "$WAIT_MAX" python3 - "$RUNDIR/late-pass" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(b"x")
print("closed" if s.recv(64) == b"" else "answered")
PY
) || fail "the hook's socket was not served while Inhibit was under way"
[[ $answer == closed ]] || fail "the daemon answered a malformed request: '$answer'"
if grep "Failed to take logind's delay lock\|Failed to read logind's InhibitDelayMaxUSec" "$SS_TMP/daemon.log"; then
        fail "the call failed (timed out) before the event loop ran: the daemon waited for it"
fi
[[ $(count inhibit) == 2 ]] || fail "Inhibit asked $(count inhibit) times, not 2"
echo "ok 1: the hook's socket and the bus served while Inhibit was under way"

# 2. The late answer is the lock the daemon holds.
fake answer
fake_wait "granted 2"
fake "signal 1"
fake_wait "released 2"
echo "ok 2: the lock of the late answer held, released on the next sleep"

# 3. PrepareForSleep(true) before the answer: released as it comes, not asked for during the sleep.
fake hold
fake "signal 0"
fake_wait "inhibit 3"
fake "signal 1"
ping
fake answer
fake_wait "granted 3"
fake_wait "released 3"
ping
[[ $(count inhibit) == 3 ]] || fail "Inhibit asked during the sleep: $(count inhibit) calls"
fake "signal 0"
fake_wait "granted 4"
ping
grep -qx "released 4" "$SS_TMP/fake.out" && fail "the lock taken after the resume was released"
[[ $(grep -c "delay lock came after this sleep began" "$SS_TMP/daemon.log") == 1 ]] ||
        fail "the daemon did not say it let the lock go"
echo "ok 3: a lock that came during a sleep let go, taken again after it"

# 4. A sleep and a resume while the call is under way: one call, its answer kept.
fake "signal 1"
fake_wait "released 4"
fake hold
fake "signal 0"
fake_wait "inhibit 5"
fake "signal 1"
fake "signal 0"
ping
[[ $(count inhibit) == 5 ]] || fail "Inhibit asked again while a call was under way: $(count inhibit) calls"
fake answer
fake_wait "granted 5"
ping
grep -qx "released 5" "$SS_TMP/fake.out" && fail "the answer after the resume was not kept"
echo "ok 4: one call under a sleep and a resume, its lock kept"

# 5. A refused call: tried again (a second later), the lock of the next one held.
fake "signal 1"
fake_wait "released 5"
fake fail
fake "signal 0"
fake_wait "refused 6"
fake_wait "granted 7"
grep -q "Failed to take logind's delay lock: Refused by the test" "$SS_TMP/daemon.log" ||
        fail "the refusal was not logged"
echo "ok 5: a refused call tried again"

# 5b. logind refuses while it still carries out the sleep (OperationInProgress, right after a
# resume): routine, tried again a second later, no warning (review R, R6).
fake "signal 1"
fake_wait "released 7"
fake busy
fake "signal 0"
fake_wait "refused 8"
fake_wait "granted 9"
grep -q "Busy by the test" "$SS_TMP/daemon.log" && fail "logind's OperationInProgress was logged as a failure"
echo "ok 5b: a refusal while logind still sleeps tried again, quietly"

# 6. SIGTERM: the lock released, the daemon gone.
daemon_stop
fake_wait "released 9"
[[ $(count released) == 7 && $(count granted) == 7 ]] || fail "locks granted and released do not match"
echo "ok 6: SIGTERM released the lock, the daemon exited 0"

# 7. The configuration read again without waiting for its reader (review U, U5).
stack_passthrough cfg
printf '[Sync]\nDeadlineSec=60s\n' >"$(stack_dir cfg)/lower/suspend-sync.conf"
stack_ctl cfg hang-max 120s >/dev/null
ss_on_exit "stack_ctl cfg resume >/dev/null 2>&1"
# bounds_wait USEC: until the daemon has recorded DeadlineSec= as USEC (conf-bounds.h).
bounds_wait() {
        local i
        for ((i = 0; i < WAIT_MAX * 20; i++)); do
                grep -qx "DEADLINE_USEC=$1" "$SS_STATE/conf-bounds" 2>/dev/null && return 0
                sleep 0.05
        done
        cat "$SS_TMP/daemon.log"
        fail "the daemon did not record DeadlineSec=$1us within ${WAIT_MAX}s"
}
rm -f "$SS_STATE/conf-bounds"
daemon_start "$(stack_mnt cfg)/suspend-sync.conf" SUSPEND_SYNC_TEST_CONF_READ_TIMEOUT=30s
fake_wait "granted 10"
bounds_wait 60000000
stack_ctl cfg hang all >/dev/null
printf '[Sync]\nDeadlineSec=61s\n' >"$(stack_dir cfg)/lower/suspend-sync.conf"
fake "signal 1"
fake_wait "released 10"
fake "signal 0"
fake_wait "granted 11"
ping
waited() {
        if grep -q "not readable within" "$SS_TMP/daemon.log"; then
                cat "$SS_TMP/daemon.log"
                fail "$1"
        fi
}
waited "the daemon waited for its configuration's reader after the resume"
fake "signal 1"
fake_wait "released 11"
ping
waited "the sleep waited for the configuration's reader"
grep -q "The configuration is still being read: this sleep goes by the one read before" "$SS_TMP/daemon.log" ||
        fail "the daemon did not say the sleep went by the configuration read before"
[[ $(grep -c "No pass of ours for this sleep (DeadlineSec= is above" "$SS_TMP/daemon.log") == 2 ]] ||
        fail "the sleep did not go by DeadlineSec=60s, read before"
fake "signal 0"
fake_wait "granted 12"
kill -HUP "$daemon_pid"
ping
waited "SIGHUP waited for the configuration's reader"
# A read under way is let finish, the files read again after it (review Y, Y1): a reader stuck on a
# hung filesystem stays stuck once killed (in D state), and a new one for each resume and SIGHUP
# would pile them up. Two resumes and four SIGHUPs while it hangs: one reader, none killed.
for ((j = 0; j < 3; j++)); do kill -HUP "$daemon_pid"; ping; done
readers=$(ps -o stat= --ppid "$daemon_pid" | grep -vc '^Z' || true)
[[ $readers == 1 ]] || fail "$readers children of the daemon while its configuration hangs, want its one reader:
$(ps -o pid=,stat=,wchan:30=,args= --ppid "$daemon_pid")"
grep -qx "DEADLINE_USEC=60000000" "$SS_STATE/conf-bounds" || fail "a read was applied while the files hung"
stack_ctl cfg resume >/dev/null
bounds_wait 61000000
for ((i = 0; i < WAIT_MAX * 20; i++)); do
        grep -q "asked for again while it was read: reading it again" "$SS_TMP/daemon.log" && break
        sleep 0.05
done
grep -q "asked for again while it was read: reading it again" "$SS_TMP/daemon.log" ||
        fail "the configuration was not read again after the read under way ended"
ping
waited "the read that ended was taken for one not read in full"
echo "ok 7: the configuration read again while the bus, a sleep and SIGHUP are served; applied when it answers"

daemon_stop
fake_wait "released 12"
