#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The daemon over many sleeps, against fake-logind on a private bus (test/lib/fake-logind.sh). A
# daemon runs for weeks, and each sleep costs it a pass (its standby, forked ahead), a late pass
# through the system-sleep hook's socket, a configuration read after the resume and a new standby:
# nothing of that may pile up. SOAK_CYCLES sleeps (default 30), each as systemd and logind make it:
#   PrepareForSleep(true): the daemon's pass runs and its lock goes;
#   the system-sleep hook (suspend-sync-sleep-hook pre suspend) asks the daemon for the late pass,
#   which the daemon forks and answers (no fallback to exec'ing the binary);
#   PrepareForSleep(false): the lock taken again, the configuration read again, a standby forked.
# After the third sleep and after the last, with the daemon idle (its one child the standby):
#   - the daemon's open files, by kind: the same (a pipe, socket or file left per sleep grows them);
#   - its children: the standby alone, no zombie; the standby's open files the same; the processes
#     of this binary on the machine, left to PID 1 or not, the same;
#   - its threads: one;
#   - its state directory: the same files but for history/, which stays at STATE_HISTORY_MAX;
# and each sleep had the daemon's pass and its late pass, each syncing a disk of the test's own
# (written before each sleep) with all else it planned. At SIGTERM it exits 0: in the test build
# (ASan) that includes LeakSanitizer's check of everything it allocated over the sleeps.
# DeadlineSec=3s: below fake-logind's InhibitDelayMaxUSec (5 s), so that the daemon runs its pass.
# SyncOnSuspend=keep: no pass writes /sys/power/sync_on_suspend. Root, dbus-daemon;
# /run/suspend-sync-daemon must not exist (the daemon's RuntimeDirectory=, whose socket path is fixed).
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
require_root_loop_fuse
source "$TEST_LIB/fake-logind.sh"
fake_logind_require hook
ss_begin
ss_config "[Sync]
DeadlineSec=3s
[Kernel]
SyncOnSuspend=keep"
fake_logind_begin
# a disk of the test's own, written before each sleep: every pass forks workers and syncs it
stack_setup soakdisk ext4 32M
mnt=$(stack_mnt soakdisk)

CYCLES=${SOAK_CYCLES:-30}
((CYCLES >= 8)) || fail "SOAK_CYCLES=$CYCLES: at least 8 (two records each), so that the history's bound is reached"
STATE_HISTORY_MAX=16 # src/state.h

# idle_wait: until the daemon's only child is its standby, alive (the configuration's reader of the
# resume reaped, the standby forked a second after it).
idle_wait() {
        local i kids
        for ((i = 0; i < WAIT_MAX * 20; i++)); do
                kids=$(ps -o stat=,comm= --ppid "$daemon_pid" || true)
                [[ $kids =~ ^[^Z]*\ ss-next-pass$ ]] && return 0
                sleep 0.05
        done
        cat "$SS_TMP/daemon.log"
        fail "the daemon's children are not its standby alone after ${WAIT_MAX}s: $(ps -o pid=,stat=,comm= --ppid "$daemon_pid")"
}
# files PID: its open files by kind, one line each with its count (pipe:[N] and socket:[N] by kind
# only: a new standby's pipes are new pipes).
files() {
        local f
        for f in /proc/"$1"/fd/*; do readlink "$f" || true; done |
                sed -e 's/^pipe:\[[0-9]*\]$/pipe/' -e 's/^socket:\[[0-9]*\]$/socket/' | sort | uniq -c
}
standby() { pgrep -P "$daemon_pid" -x ss-next-pass; }
state_files() { (cd "$SS_STATE" && find . -path ./history -prune -o -print | sort); }
# every process of this binary, the daemon's descendants and any left to PID 1 alike (a worker or
# reader a pass leaves behind is reparented when the pass exits): their states and names
binary=$(readlink -f "$SUSPEND_SYNC")
binary_procs() {
        local p
        for p in /proc/[0-9]*; do
                if [[ $(readlink "$p/exe" 2>/dev/null) == "$binary" ]]; then
                        ps -o stat=,comm= -p "${p#/proc/}" || true # gone meanwhile
                fi
        done | sort
}
# snapshot NAME: what the idle daemon holds, into $SS_TMP/NAME.*
snapshot() {
        files "$daemon_pid" >"$SS_TMP/$1.daemon"
        files "$(standby)" >"$SS_TMP/$1.standby"
        state_files >"$SS_TMP/$1.state"
        ps -o stat=,comm= --ppid "$daemon_pid" >"$SS_TMP/$1.children"
        binary_procs >"$SS_TMP/$1.procs"
}

DAEMON_NO_STANDBY=0 daemon_start "$SS_CONF"
fake_wait "granted 1"
idle_wait

passes=0
late=0
for ((k = 1; k <= CYCLES; k++)); do
        dd if=/dev/urandom of="$mnt/file$((k % 4))" bs=256K count=1 status=none
        fake "signal 1"
        fake_wait "released $k"
        rc=0
        env -i PATH="$PATH" SYSTEMD_SLEEP_ACTION=suspend "$SLEEP_HOOK" pre suspend >"$SS_TMP/hook.out" 2>&1 || rc=$?
        [[ $rc == 0 && ! -s $SS_TMP/hook.out ]] ||
                fail "sleep $k: the hook exited $rc, said: $(cat "$SS_TMP/hook.out")"
        fake "signal 0"
        fake_wait "granted $((k + 1))"
        idle_wait
        ((k == 3)) && snapshot early
done
snapshot late

passes=$(grep -c "^The pass took [^;]*; " "$SS_TMP/daemon.log" || true)
late=$(grep -c "The late pass of this sleep runs in PID" "$SS_TMP/daemon.log" || true)
[[ $passes == "$CYCLES" ]] || fail "$passes passes of the daemon's for $CYCLES sleeps: $(grep -i pass "$SS_TMP/daemon.log" | tail -5)"
[[ $late == "$CYCLES" ]] || fail "$late late passes through the daemon for $CYCLES sleeps: $(grep -i late "$SS_TMP/daemon.log" | tail -5)"
# both passes of each sleep synced what they planned, the test's disk among it
synced=$(grep -cE "^Synced ([1-9][0-9]*) of \1 superblocks \(0 timed out, 0 failed" "$SS_TMP/daemon.log" || true)
[[ $synced == $((2 * CYCLES)) ]] ||
        fail "$synced passes synced all they planned, want $((2 * CYCLES)): $(grep "^Synced" "$SS_TMP/daemon.log" | sort | uniq -c)"
echo "ok: $CYCLES sleeps, each with the daemon's pass and its late pass, each syncing all it planned"

for what in daemon standby children procs state; do
        if ! diff -u "$SS_TMP/early.$what" "$SS_TMP/late.$what"; then
                fail "the idle daemon's $what after sleep 3 and after sleep $CYCLES differ (above)"
        fi
done
echo "ok: after $CYCLES sleeps the daemon holds what it held after 3: $(awk '{n += $1} END {print n}' "$SS_TMP/late.daemon") files, its standby $(awk '{n += $1} END {print n}' "$SS_TMP/late.standby"), one child"
threads=$(awk '/^Threads:/ {print $2}' /proc/"$daemon_pid"/status)
[[ $threads == 1 ]] || fail "the daemon has $threads threads"
n_history=$(find "$SS_STATE/history" -type f | wc -l)
((n_history == STATE_HISTORY_MAX)) || fail "history/ holds $n_history records after $((2 * CYCLES)) passes, want $STATE_HISTORY_MAX"
echo "ok: one thread; history/ at its bound ($n_history records)"

daemon_stop
fake_wait "released $((CYCLES + 1))"
echo "ok: SIGTERM: the lock released, the daemon exited 0"
