#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# daemon.sh RELEASE — suspend-sync-daemon.service under a real systemd and logind:
#   1. enabling suspend-sync.service as the package does enables the daemon too (Also=); started,
#      it holds logind's delay lock for sleep;
#   2. `systemctl suspend`: the daemon's pass (trigger unit) ends before systemd starts the sleep,
#      suspend-sync.service is skipped by its condition, the system-sleep hook asks the daemon for
#      the late pass, which runs (forked by the daemon) before "mem" is written; after resume the mark is gone, the lock is held again, the knob is back and the
#      cycle is in the history (the unit's ExecStopPost= steps, done by the daemon);
#      The pass is the standby the daemon forked ahead (its one child named ss-next-pass, with its
#      configuration reader forked ahead too and its heap its own, which runs the pass as
#      suspend-sync); a new one waits after the resume;
#   2b. KeepCheapSync=yes with the bound at 1 h: the daemon's pass leaves the late pass out and takes
#      the hook's link down, so systemd-sleep runs no hook of ours (pre or post); "mem" is written
#      with the knob untouched; after resume the marker is gone, the link back, the resume recorded;
#   2c. the standby's pass reads its configuration with the reader forked ahead (debug messages);
#      `systemctl reload` replaces the standby; one killed, the daemon forks the pass on the signal
#      as before (its pass still done, the unit not needed), and has a standby again after resume;
#   3. a sleep that bypasses logind (`systemctl start suspend.target`): no daemon pass, the unit
#      runs its own;
#   4. a unit that requires suspend-sync.service (a drop-in on sleep.target, no condition reset):
#      the daemon's pass sets no mark, and the unit runs its own pass (the negative control of 2:
#      without the daemon's question to PID 1 the unit would be skipped); then
#      DeadlineSec=60s, read by the daemon on `systemctl reload`: no daemon pass either (the unit's
#      pass would have to wait longer for it than its start timeout allows);
#   5. the mark never outlives the daemon: a mark left in place when the daemon is killed is gone
#      while systemd waits to restart it (RestartSec=, before the new daemon could remove it);
#   6. another program holds a delay lock for sleep too (it may write after our pass): no mark, the
#      unit runs after it (the negative control of the inhibitor check);
#   6b. (reviews AH, M1; AI, AI-1) the daemon's binary replaced by an upgrade without its restart, as
#      dpkg unpacks (the old file still linked as a backup): no pass of the daemon's and one warning, the unit runs its pass, the hook leaves the daemon out and runs the
#      late pass itself; restarted, the daemon runs both again;
#   7. a pass that outlasts logind's wait (a FUSE mount of user.slice whose server hangs,
#      DeadlineSec=6s): the daemon releases the lock at its bound without a mark, the unit waits for
#      the pass's state lock and then runs its own, the sleep goes ahead; nothing is left once the
#      server answers;
#   8. the daemon stopped: the unit runs as it always did, the hook runs the late pass itself (its
#      socket gone with the daemon's RuntimeDirectory=); the daemon's unit disabled, the unit is
#      unloaded (2: while the daemon's unit is loaded, its Before= keeps ours and sleep.target loaded);
#   8b. 2b without the daemon: the unit's own pass takes the hook's link down, its ExecStopPost=
#      (restore-knob) puts it back and records the resume.
# Env: SOURCE_ROOT, BUILD_ROOT (set by meson). Exit 77 when the prerequisites are missing.

set -u -o pipefail
release=${1:?usage: daemon.sh RELEASE}
SOURCE_ROOT=${SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$SOURCE_ROOT/test/e2e/lib.sh"

RUN_SUMMARY=68604cfcdf4543a8af217e49559df3e8
UNIT_STARTING=7d4958e842da4a758f6c1cdc7b36dcc5
MARK=/run/suspend-sync-daemon/pass-done

e2e_require "$release"
[[ -c /dev/fuse ]] || e2e_skip "no /dev/fuse"
t_start=$SECONDS
e2e_boot "$release" --bind=/dev/fuse || { echo "FAIL: boot"; exit 1; }
e2e_install_faultdisk || { echo "FAIL: faultdisk for $release"; exit 1; }
echo "boot: systemd $E2E_SYSTEMD_VERSION, $((SECONDS - t_start)) s"
e2e_watch_start || exit 1

cursor() { e2e_run journalctl -q -n0 --show-cursor | sed -n 's/^-- cursor: //p'; }
journal_since() { e2e_run journalctl -q -o json --after-cursor="$1" >"$E2E_WORK/journal.json"; }
jmono() { jq -r "select($1) | .__MONOTONIC_TIMESTAMP" "$E2E_WORK/journal.json" | sed -n "${2:-1}p"; }
jcount() { jq -c "select($1)" "$E2E_WORK/journal.json" | grep -c .; }
# Whether each ran its pass in this cycle, from long-lived processes only: journald reads a
# process's unit from /proc when it reads the datagram, which a pass that has exited by then no
# longer has. The unit: its start job done (its ExecStart=, the pass, exited 0). The daemon: its own
# word on the pass.
unit_ran() { jcount '.UNIT == "suspend-sync.service" and .JOB_TYPE == "start" and .JOB_RESULT == "done"'; }
daemon_ran() { jcount '._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("^The pass (took|is still running)"))'; }
unit_started() { jcount ".UNIT == \"suspend-sync.service\" and .MESSAGE_ID == \"$UNIT_STARTING\""; }
has_lock() { e2e_run systemd-inhibit --list --no-legend --no-pager 2>/dev/null | grep -q 'Syncing filesystems before sleep'; }
# What happened to the hook's link (/run/suspend-sync/sleep-hook) in the write log from line $1 up
# to "mem": D removed, M made (renamed into place).
link_events() {
        tail -n +"$1" "$E2E_WATCH_LOG" | awk '/ power state MODIFY "mem/ { print s; exit }
                / state sleep-hook DELETE / { s = s "D" } / state sleep-hook MOVED_TO / { s = s "M" }'
}
# systemctl suspend for check $1, its journal in journal.json and shown as "$1: $2"; sets c (the
# cursor before it) and w0 (the first line of the write log after it).
suspend_logged() {
        c=$(cursor)
        w0=$(($(wc -l <"$E2E_WATCH_LOG") + 1))
        e2e_suspend suspend || fail "$1: the suspend cycle did not complete"
        journal_since "$c"
        show_journal "$1: $2" "$c"
}
# After a sleep whose pass took the hook's link down (check $1, write log from line $2): the link
# is back within 5 s (restore-knob), and the resume was recorded after "mem" without a post hook.
link_back_after() {
        local i
        for ((i = 0; i < 50; i++)); do
                [[ $(e2e_run readlink /run/suspend-sync/sleep-hook) == /usr/libexec/suspend-sync-sleep-hook ]] && break
                sleep 0.1
        done
        ((i < 50)) && ok "$1: the link is back after the sleep (restore-knob)" ||
                fail "$1: /run/suspend-sync/sleep-hook is not back after 5 s"
        tail -n +"$2" "$E2E_WATCH_LOG" |
                awk '/ power state MODIFY "mem/ { m = 1 } m && / state last-resume MOVED_TO / { f = 1 } END { exit !f }' &&
                ok "$1: the resume was recorded without the post hook" || fail "$1: no last-resume written after mem"
}
wait_lock() { local i; for ((i = 0; i < 50; i++)); do has_lock && return 0; sleep 0.1; done; return 1; }
# bounds_read USEC: `systemctl reload` returns once the signal is sent, and the daemon reads the
# configuration without holding its event loop (review U, U5): until it recorded DeadlineSec= as
# USEC (/run/suspend-sync/conf-bounds), a sleep goes by the values read before.
bounds_read() {
        local i
        for ((i = 0; i < 50; i++)); do
                e2e_run grep -qx "DEADLINE_USEC=$1" /run/suspend-sync/conf-bounds 2>/dev/null && return 0
                sleep 0.1
        done
        return 1
}
show_journal() { echo "--- journal ($1)"; e2e_run journalctl -q --no-pager -o short-monotonic --after-cursor="$2"; echo "---"; }
knob_orig=$(tr -d '\n' <"$E2E_WORK/power/sync_on_suspend")
cycles() { e2e_run sh -c 'ls /var/lib/suspend-sync/cycles 2>/dev/null | grep -c "\.json$"'; }

# ---------------------------------------------------------------- 1
e2e_run systemctl disable -q suspend-sync.service
e2e_run systemctl enable -q suspend-sync.service
en=$(e2e_run systemctl is-enabled suspend-sync-daemon.service)
[[ $en == enabled ]] && ok "1: enabling suspend-sync.service enabled suspend-sync-daemon.service (Also=)" ||
        fail "1: suspend-sync-daemon.service is '$en' after enabling suspend-sync.service"
e2e_run systemctl start suspend-sync-daemon.service || fail "1: the daemon did not start"
wait_lock && ok "1: the daemon holds logind's delay lock: $(e2e_run systemd-inhibit --list --no-legend --no-pager | grep suspend-sync | tr -s ' ')" ||
        fail "1: no delay lock of suspend-sync: $(e2e_run systemd-inhibit --list --no-legend --no-pager)"
main=$(e2e_prop suspend-sync-daemon.service MainPID)
echo "1: the daemon (PID $main) holds $(e2e_run ps -o rss= -p "$main" | tr -d ' ') KiB resident, $(e2e_run ls /proc/"$main"/fd | wc -l) fds"
# Idle, it waits for logind's signal and nothing else: no timer, no poll (a laptop's battery).
switches() { e2e_run awk '/^(non)?voluntary_ctxt_switches/ { n += $2 } END { print n }' /proc/"$main"/status; }
w0=$(switches)
sleep 3
w1=$(switches)
(( w1 - w0 <= 2 )) && ok "1: the idle daemon woke $((w1 - w0)) times in 3 s" ||
        fail "1: the idle daemon woke $((w1 - w0)) times in 3 s (it should wait for logind only)"

# The next pass, forked ahead (the standby): the daemon's one child named ss-next-pass, or nothing.
# standby_wait OLD: its pid once it is there and not OLD (within 5 s; the daemon forks it a second
# after each resume).
standby() { e2e_run pgrep -P "$(e2e_prop suspend-sync-daemon.service MainPID)" -x ss-next-pass | tr '\n' ' ' | sed 's/ $//'; }
standby_wait() {
        local i s
        for ((i = 0; i < 50; i++)); do
                s=$(standby)
                [[ -n $s && $s != "${1:-}" ]] && { echo "$s"; return 0; }
                sleep 0.1
        done
        echo "$s"
        return 1
}
unit_sum_pid() { jq -r "select(.MESSAGE_ID == \"$RUN_SUMMARY\" and .SUSPEND_SYNC_TRIGGER == \"unit\") | ._PID" "$E2E_WORK/journal.json" | head -n1; }

# ---------------------------------------------------------------- 2
sb=$(standby)
[[ $sb =~ ^[0-9]+$ ]] && ok "2: the next pass waits as the daemon's child (PID $sb, ss-next-pass)" ||
        fail "2: the daemon's standby pass: '$sb'"
sbr=$(e2e_run pgrep -P "${sb:-1}" -x ss-next-pass | tr '\n' ' ' | sed 's/ $//')
[[ $sbr =~ ^[0-9]+$ ]] && ok "2: its configuration reader waits as its child (PID $sbr)" ||
        fail "2: the standby's configuration reader: '$sbr'"
# Its heap made its own while it waits (standby_prefault()): no page of it still shared with the
# daemon (Shared_Dirty 0), where its reader, forked before that, still shares the daemon's (the
# control: the check sees sharing where there is some).
heap_shared() { e2e_run awk '/ \[heap\]$/ { h = 1; next } /^[0-9a-f]+-[0-9a-f]+ / { h = 0 } h && /^Shared_Dirty:/ { print $2 }' "/proc/$1/smaps"; }
hs=$(heap_shared "${sb:-1}") hr=$(heap_shared "${sbr:-1}")
[[ $hs == 0 && $hr =~ ^[0-9]+$ && $hr -gt 0 ]] && ok "2: the standby's heap is its own (shared dirty: standby $hs kB, its reader $hr kB)" ||
        fail "2: heap shared dirty: standby '$hs' kB, reader '$hr' kB"
c=$(cursor)
w0=$(($(wc -l <"$E2E_WATCH_LOG") + 1))
n0=$(cycles)
e2e_suspend suspend || fail "2: the suspend cycle did not complete"
journal_since "$c"
show_journal "2: systemctl suspend with the daemon" "$c"
# The pass was the standby, started by the signal: its summary's _PID (journald takes _PID from
# the datagram's credentials), its name back to suspend-sync (_COMM, read from /proc while it ran).
sum_pid=$(unit_sum_pid)
sum_comm=$(jq -r "select(.MESSAGE_ID == \"$RUN_SUMMARY\" and .SUSPEND_SYNC_TRIGGER == \"unit\") | ._COMM // \"\"" "$E2E_WORK/journal.json" | head -n1)
[[ -n $sb && $sum_pid == "$sb" ]] && ok "2: the daemon's pass ran in the standby (PID $sb)" ||
        fail "2: the daemon's pass ran in PID '$sum_pid', the standby was '$sb'"
[[ $sum_comm == suspend-sync || -z $sum_comm ]] && ok "2: the pass runs as suspend-sync ('$sum_comm')" ||
        fail "2: the pass's _COMM is '$sum_comm'"
sb2=$(standby_wait "$sb") && ok "2: a new standby after the resume (PID $sb2)" ||
        fail "2: no new standby after the resume: '$sb2'"
pass=$(jmono '._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("^The pass (took|is still running)"))')
marked=$(jmono '._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("is not needed for this sleep"))')
susp=$(jmono ".UNIT == \"systemd-suspend.service\" and .MESSAGE_ID == \"$UNIT_STARTING\"")
late=$(jmono ".MESSAGE_ID == \"$RUN_SUMMARY\" and .SUSPEND_SYNC_TRIGGER == \"hook\"")
skipped=$(jcount '(.UNIT == "suspend-sync.service" or ._SYSTEMD_UNIT == "init.scope") and (.MESSAGE | test("suspend-sync.service.*(unmet condition|Condition check)|ConditionPathExists=!/run/suspend-sync-daemon"))')
echo "2: daemon pass summary $pass, marked $marked, systemd-suspend starting $susp, late pass $late"
[[ -n $pass && -n $susp ]] && ((pass < susp)) &&
        ok "2: the daemon's pass ended before systemd started systemd-suspend.service" ||
        fail "2: daemon pass '$pass', systemd-suspend.service starting '$susp'"
[[ -n $marked ]] && ok "2: the daemon marked the pass done" || fail "2: no mark message from the daemon"
[[ $(unit_started) == 0 ]] && ok "2: suspend-sync.service was not started" ||
        fail "2: suspend-sync.service started although the daemon's pass was done"
((skipped >= 1)) && ok "2: systemd logged the unit's unmet condition" ||
        fail "2: no condition message for suspend-sync.service"
[[ -n $late && -n $susp ]] && ((late > susp)) && ok "2: the late pass ran after systemd started systemd-suspend.service" ||
        fail "2: late pass summary '$late'"
# The hook asked the daemon, which forked the late pass: the summary's _PID is the one the daemon
# named (journald takes _PID from the datagram's credentials, unlike _SYSTEMD_UNIT).
late_pid=$(jq -r 'select(._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("^The late pass of this sleep runs in PID"))) | .MESSAGE' "$E2E_WORK/journal.json" | sed -n '1s/.* PID \([0-9]*\),.*/\1/p')
late_sum_pid=$(jq -r "select(.MESSAGE_ID == \"$RUN_SUMMARY\" and .SUSPEND_SYNC_TRIGGER == \"hook\") | ._PID" "$E2E_WORK/journal.json" | head -n1)
[[ -n $late_pid && $late_pid == "$late_sum_pid" ]] &&
        ok "2: the daemon ran the late pass for the system-sleep hook (PID $late_pid)" ||
        fail "2: late pass through the daemon: the daemon named PID '$late_pid', the late summary came from '$late_sum_pid'"
e2e_run test -S /run/suspend-sync-daemon/late-pass && ok "2: the daemon's socket for the hook is there" ||
        fail "2: no /run/suspend-sync-daemon/late-pass"
e2e_watch_has "$w0" ' power state MODIFY "mem' && ok "2: mem reached the fake state file" ||
        fail "2: no write of mem"
[[ $(link_events "$w0") == "" ]] && ok "2: the hook's link stayed up (the control of 2b)" ||
        fail "2: the hook's link before mem: '$(link_events "$w0")'"
e2e_run test ! -e "$MARK" && ok "2: the mark is gone after resume" || fail "2: $MARK still there after resume"
wait_lock && ok "2: the lock is held again after resume" || fail "2: no delay lock after resume"
for ((i = 0; i < 50; i++)); do (($(cycles) > n0)) && break; sleep 0.1; done
(($(cycles) > n0)) && ok "2: record-cycle kept the sleep ($(cycles) cycles)" || fail "2: no new cycle in the history"
knob=$(tr -d '\n' <"$E2E_WORK/power/sync_on_suspend")
[[ $knob == "$knob_orig" ]] && ok "2: sync_on_suspend back to $knob" || fail "2: sync_on_suspend $knob after resume"
st=$(e2e_run suspend-sync status --json=short)
jq -e '.last_cycle.unit_started_realtime != null and .last_cycle.late_started_realtime != null' <<<"$st" >/dev/null 2>&1 &&
        ok "2: status shows the unit's pass (the daemon's) and the late pass of this sleep" ||
        fail "2: status's last cycle: $(jq -c '.last_cycle' <<<"$st" 2>&1)"
# Its pass said who held the state lock, and by when it would let go (lock-holder.h): what a unit's
# pass that finds the lock held waits for.
holder=$(e2e_run cat /run/suspend-sync/lock-holder 2>&1)
[[ $holder =~ ^[0-9]+\ [0-9]+\ daemon\ [0-9]+$ ]] && ok "2: the daemon's pass marked itself the lock's holder ($holder)" ||
        fail "2: /run/suspend-sync/lock-holder: '$holder'"
failed=$(e2e_run systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')
[[ -z $failed ]] && ok "2: no failed units" || fail "2: failed units: $failed"
# The daemon's Before= keeps the unit (and sleep.target, its dependency) loaded between sleeps: PID 1
# answers the daemon's question on the next one without loading them from disk. list-units shows
# loaded units only, and loads none (check 8 is the negative control: without the daemon, the unit
# is garbage-collected after its sleep).
loaded() { e2e_run systemctl list-units --all --plain --no-legend "$1" | grep -c "^$1 "; }
[[ $(loaded suspend-sync.service) -ge 1 && $(loaded sleep.target) -ge 1 ]] &&
        ok "2: suspend-sync.service and sleep.target stay loaded after the sleep (the daemon's Before=)" ||
        fail "2: loaded after the sleep: suspend-sync.service $(loaded suspend-sync.service), sleep.target $(loaded sleep.target)"

# ---------------------------------------------------------------- 2b
# KeepCheapSync=yes (the default; the suite's 00-e2e-late-pass.conf turns it off): a unit's pass that
# synced everything quickly leaves the late pass out, and the kernel's own sync on. How quick this
# machine's flushes are is not the question here: the bound is set to 1 h for the daemon
# ($SUSPEND_SYNC_TEST_LATE_SKIP_BELOW). 2 above is the negative control (KeepCheapSync=no).
e2e_run sh -c 'printf "[Kernel]\nKeepCheapSync=yes\n" >/etc/suspend-sync.conf.d/zz-e2e-cheap.conf &&
        mkdir -p /run/systemd/system/suspend-sync-daemon.service.d &&
        printf "[Service]\nEnvironment=SUSPEND_SYNC_TEST_LATE_SKIP_BELOW=1h\n" >/run/systemd/system/suspend-sync-daemon.service.d/e2e.conf &&
        mkdir -p /run/systemd/system/systemd-suspend.service.d &&
        printf "[Service]\nEnvironment=SYSTEMD_LOG_LEVEL=debug\n" >/run/systemd/system/systemd-suspend.service.d/e2e-debug.conf &&
        systemctl daemon-reload && systemctl restart suspend-sync-daemon.service' || fail "2b: could not set up"
wait_lock || fail "2b: no delay lock after the restart"
suspend_logged 2b "KeepCheapSync=yes"
left_out=$(jcount '(.MESSAGE | test("^The late pass is left out of this suspend"))')
late=$(jcount ".MESSAGE_ID == \"$RUN_SUMMARY\" and .SUSPEND_SYNC_TRIGGER == \"hook\"")
by_daemon=$(jcount '(.MESSAGE | test("^The late pass of this sleep runs in PID"))')
((left_out == 1)) && ok "2b: the daemon's pass left the late pass out" || fail "2b: 'left out' messages: $left_out"
((late == 0 && by_daemon == 0)) && ok "2b: the system-sleep hook ran no late pass" ||
        fail "2b: late pass summaries $late, forked by the daemon $by_daemon"
# The knob as the kernel read it: no write of it before "mem" (it stays 1, the kernel's sync on).
knob_writes=$(tail -n +"$w0" "$E2E_WATCH_LOG" | awk '/ power state MODIFY "mem/ { exit } / power sync_on_suspend MODIFY / { n++ } END { print n + 0 }')
e2e_watch_has "$w0" ' power state MODIFY "mem' && ((knob_writes == 0)) &&
        ok "2b: mem was written with the kernel's sync left on" ||
        fail "2b: knob writes before mem: $knob_writes"
e2e_run test ! -e /run/suspend-sync/late-skip && ok "2b: restore-knob removed the marker after the sleep" ||
        fail "2b: /run/suspend-sync/late-skip is left after the sleep"
# No hook of ours at all: the daemon's pass took the link systemd-sleep reaches it through down
# before "mem" (and nothing put it back until the resume), and systemd-sleep (debug) skipped the
# dangling entry before and after the sleep. 2 and 8 are the controls: there the hook ran.
links=$(link_events "$w0")
[[ $links == D ]] && ok "2b: the hook's link was down from the pass to mem" ||
        fail "2b: the hook's link before mem: '$links' (D: removed, M: made)"
stat_skips=$(jcount '(.MESSAGE | test("Failed to stat .*/system-sleep/suspend-sync.*, ignoring"))')
((stat_skips == 2)) && ok "2b: systemd-sleep ran no hook of ours, pre or post" ||
        fail "2b: systemd-sleep skipped our entry $stat_skips time(s), not 2"
link_back_after "2b" "$w0"
e2e_run sh -c 'rm -f /etc/suspend-sync.conf.d/zz-e2e-cheap.conf /run/systemd/system/suspend-sync-daemon.service.d/e2e.conf \
        /run/systemd/system/systemd-suspend.service.d/e2e-debug.conf &&
        systemctl daemon-reload && systemctl restart suspend-sync-daemon.service' || fail "2b: could not clean up"
wait_lock || fail "2b: no delay lock after the second restart"

# ---------------------------------------------------------------- 2c
# The standby (debug messages on, in a runtime drop-in): its pass reads the configuration with the
# reader forked ahead, and forks none; `systemctl reload` replaces the standby (it was forked with the
# configuration read before); a standby killed (by an admin, the OOM killer): the daemon forks the
# pass on the signal as before it had one, and the sleep's pass is still the daemon's.
e2e_run sh -c 'mkdir -p /run/systemd/system/suspend-sync-daemon.service.d &&
        printf "[Service]\nEnvironment=SUSPEND_SYNC_LOG_LEVEL=debug\n" >/run/systemd/system/suspend-sync-daemon.service.d/e2e-debug.conf &&
        systemctl daemon-reload && systemctl restart suspend-sync-daemon.service' || fail "2c: could not set up"
wait_lock || fail "2c: no delay lock after the restart"
sb=$(standby_wait)
[[ $sb =~ ^[0-9]+$ ]] || fail "2c: no single standby after the restart: '$sb'"
suspend_logged 2c "with the standby, debug messages"
taken=$(jq -r 'select(.MESSAGE == "The configuration is read by the reader forked ahead.") | ._PID' "$E2E_WORK/journal.json" | tr '\n' ' ' | sed 's/ $//')
forked=$(jcount '.MESSAGE // "" | test("^The reader forked ahead is gone")')
[[ $(unit_sum_pid) == "$sb" && $taken == "$sb" && $forked == 0 ]] &&
        ok "2c: the standby's pass (PID $sb) read its configuration with the reader forked ahead" ||
        fail "2c: pass PID '$(unit_sum_pid)', standby $sb, 'read by the reader forked ahead' from '$taken', forked $forked"
sb=$(standby_wait "$sb")
[[ $sb =~ ^[0-9]+$ ]] || fail "2c: no single standby after the resume: '$sb'"
e2e_run systemctl reload suspend-sync-daemon.service || fail "2c: reload"
sb2=$(standby_wait "$sb")
[[ $sb2 =~ ^[0-9]+$ ]] && ok "2c: reload replaced the standby ($sb -> $sb2)" ||
        fail "2c: the standby after reload: '$sb2' (was $sb)"
e2e_run kill -KILL "$sb2" || fail "2c: could not kill the standby $sb2"
for ((i = 0; i < 30; i++)); do [[ -z $(standby) ]] && break; sleep 0.1; done
[[ -z $(standby) ]] || fail "2c: a standby is still there after the kill: '$(standby)'"
suspend_logged 2c "the standby killed"
sum_pid=$(unit_sum_pid)
[[ $(daemon_ran) == 1 && $(unit_started) == 0 && $sum_pid =~ ^[0-9]+$ && $sum_pid != "$sb2" ]] &&
        ok "2c: without its standby the daemon forked the pass (PID $sum_pid) and the unit was not needed" ||
        fail "2c: daemon messages $(daemon_ran), unit started $(unit_started), pass PID '$sum_pid' (killed standby $sb2)"
sb3=$(standby_wait "$sb2") && ok "2c: a standby again after the resume (PID $sb3)" ||
        fail "2c: no standby after the resume: '$sb3'"
e2e_run sh -c 'rm -f /run/systemd/system/suspend-sync-daemon.service.d/e2e-debug.conf &&
        systemctl daemon-reload && systemctl restart suspend-sync-daemon.service' || fail "2c: could not clean up"
wait_lock || fail "2c: no delay lock after the second restart"

# ---------------------------------------------------------------- 3
c=$(cursor)
e2e_run systemctl start suspend.target || fail "3: systemctl start suspend.target failed"
sleep 0.5
journal_since "$c"
show_journal "3: systemctl start suspend.target" "$c"
[[ $(daemon_ran) == 0 ]] && ok "3: no daemon pass (logind not asked)" ||
        fail "3: a daemon pass in a sleep that bypassed logind"
[[ $(unit_ran) -ge 1 ]] &&
        ok "3: suspend-sync.service ran its pass" || fail "3: suspend-sync.service did not run its pass"
e2e_run systemctl stop suspend.target sleep.target >/dev/null 2>&1

# ---------------------------------------------------------------- 4
e2e_run sh -c 'mkdir -p /etc/systemd/system/sleep.target.d &&
        printf "[Unit]\nRequires=suspend-sync.service\n" >/etc/systemd/system/sleep.target.d/ss-test.conf &&
        systemctl daemon-reload'
c=$(cursor)
e2e_suspend suspend || fail "4: the suspend cycle did not complete"
journal_since "$c"
show_journal "4: sleep.target requires suspend-sync.service" "$c"
[[ $(jcount '._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("^The pass took .*a unit requires suspend-sync.service"))') -ge 1 ]] &&
        ok "4: the daemon left the sleep to the unit: a unit requires it" || fail "4: no 'a unit requires suspend-sync.service' from the daemon"
[[ $(unit_ran) -ge 1 ]] &&
        ok "4: suspend-sync.service ran its own pass" || fail "4: suspend-sync.service did not run"
e2e_run sh -c 'rm /etc/systemd/system/sleep.target.d/ss-test.conf && systemctl daemon-reload'
e2e_run sh -c 'mkdir -p /etc/suspend-sync.conf.d && printf "[Sync]\nDeadlineSec=60s\n" >/etc/suspend-sync.conf.d/e2e.conf'
e2e_run systemctl reload suspend-sync-daemon.service || fail "4: systemctl reload"
bounds_read 60000000 || fail "4: the daemon did not read DeadlineSec=60s on reload"
c=$(cursor)
e2e_suspend suspend || fail "4: the suspend cycle (DeadlineSec=60s) did not complete"
journal_since "$c"
[[ $(jcount '._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("No pass of ours.*DeadlineSec= is above"))') -ge 1 && $(daemon_ran) == 0 ]] &&
        ok "4: DeadlineSec=60s (read on reload): no daemon pass" || fail "4: DeadlineSec=60s: the daemon did not leave the pass to the unit"
[[ $(unit_ran) -ge 1 ]] && ok "4: suspend-sync.service ran its pass (DeadlineSec=60s)" || fail "4: suspend-sync.service did not run (DeadlineSec=60s)"
e2e_run rm /etc/suspend-sync.conf.d/e2e.conf
e2e_run systemctl reload suspend-sync-daemon.service
bounds_read 30000000 || fail "4: the daemon did not read DeadlineSec=30s again on reload"

# ---------------------------------------------------------------- 5
e2e_run touch "$MARK" || fail "5: cannot create $MARK"
e2e_run systemctl kill -s KILL suspend-sync-daemon.service
gap=""
for ((i = 0; i < 100; i++)); do
        sub=$(e2e_run systemctl show -P SubState suspend-sync-daemon.service)
        if [[ $sub == auto-restart ]]; then
                e2e_run test ! -e "$MARK" && gap=gone || gap=there
                break
        fi
        sleep 0.01
done
case $gap in
gone) ok "5: the mark was gone while systemd waited to restart the killed daemon (RuntimeDirectory=)" ;;
there) fail "5: $MARK outlived the killed daemon" ;;
*) fail "5: the killed daemon was not seen waiting to restart (SubState '$sub')" ;;
esac
for ((i = 0; i < 50; i++)); do
        [[ $(e2e_run systemctl is-active suspend-sync-daemon.service) == active ]] && break
        sleep 0.1
done
[[ $(e2e_run systemctl is-active suspend-sync-daemon.service) == active ]] && ok "5: systemd restarted the killed daemon" ||
        fail "5: the daemon is $(e2e_run systemctl is-active suspend-sync-daemon.service) after SIGKILL"
wait_lock && ok "5: the restarted daemon holds the lock" || fail "5: no lock after the restart"

# ---------------------------------------------------------------- 6
e2e_run systemd-run -q --unit=ss-other-lock --property=Type=exec \
        systemd-inhibit --what=sleep --mode=delay --who=ss-other --why="e2e: another delay lock" sleep 600 ||
        fail "6: cannot start the other lock holder"
for ((i = 0; i < 50; i++)); do e2e_run systemd-inhibit --list --no-legend | grep -q ss-other && break; sleep 0.1; done
c=$(cursor)
e2e_suspend suspend || fail "6: the suspend cycle did not complete"
journal_since "$c"
show_journal "6: another program holds a delay lock" "$c"
[[ $(jcount '._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("another program delays the sleep too \\(ss-other\\)"))') -ge 1 ]] &&
        ok "6: the daemon set no mark: another program (ss-other) delays the sleep too" ||
        fail "6: no 'another program delays the sleep too (ss-other)' from the daemon"
[[ $(unit_ran) -ge 1 ]] &&
        ok "6: suspend-sync.service ran its own pass, after the other lock" || fail "6: suspend-sync.service did not run"
e2e_run systemctl stop ss-other-lock.service
wait_lock || fail "6: no lock after the sleep"

# ---------------------------------------------------------------- 6b
# Reviews AH, M1 and AI, AI-1: an upgrade that does not restart the daemon, made as dpkg unpacks (the
# old file kept as a backup link, so it still has one; a new file renamed over the path): the daemon
# runs no pass of its own and warns once, the unit runs its pass, the hook (which compares the
# daemon's program with the installed binary) sends the daemon no request and runs the late pass
# itself; restarted, the daemon runs both again.
e2e_run sh -c 'b=$(readlink -f /proc/$(systemctl show -P MainPID suspend-sync-daemon.service)/exe) &&
        ln "$b" "$b.dpkg-tmp" && cp -p "$b" "$b.e2e-new" && mv -f "$b.e2e-new" "$b"' ||
        fail "6b: cannot replace the daemon's binary"
suspend_logged 6b "the daemon's binary replaced"
daemon_says=$(jcount '._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("^No pass of ours for this sleep \\(this daemon does not run the installed binary"))')
warned=$(jcount '._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("is not the binary this daemon runs"))')
((daemon_says == 1 && warned == 1 && $(daemon_ran) == 0)) &&
        ok "6b: the daemon with its binary replaced ran no pass, said why and warned once" ||
        fail "6b: the daemon's word: no pass $daemon_says, warnings $warned, passes $(daemon_ran)"
[[ $(unit_ran) -ge 1 ]] && ok "6b: suspend-sync.service ran its own pass" || fail "6b: suspend-sync.service did not run"
late=$(jcount ".MESSAGE_ID == \"$RUN_SUMMARY\" and .SUSPEND_SYNC_TRIGGER == \"hook\"")
by_daemon=$(jcount '(.MESSAGE | test("^The late pass of this sleep runs in PID"))')
hook_says=$(jcount '(.MESSAGE | test("the daemon does not run the installed binary"))')
((late >= 1 && by_daemon == 0 && hook_says >= 1)) &&
        ok "6b: the hook left the daemon out, said why, and ran the late pass itself" ||
        fail "6b: late pass summaries $late, by the daemon $by_daemon, the hook's word $hook_says"
e2e_run sh -c 'rm -f /usr/sbin/suspend-sync.dpkg-tmp /usr/local/sbin/suspend-sync.dpkg-tmp'
e2e_run systemctl restart suspend-sync-daemon.service || fail "6b: cannot restart the daemon"
wait_lock || fail "6b: no lock after the restart"
suspend_logged 6b "the daemon restarted"
by_daemon=$(jcount '(.MESSAGE | test("^The late pass of this sleep runs in PID"))')
(($(daemon_ran) >= 1 && by_daemon >= 1)) && ok "6b: restarted, the daemon ran the pass and the late pass again" ||
        fail "6b: after the restart: daemon passes $(daemon_ran), late passes by the daemon $by_daemon"
wait_lock || fail "6b: no lock after the sleep"

# ---------------------------------------------------------------- 7
mnt=/mnt/fuse
sock=/run/e2e-fuse.sock
e2e_fuse_user "$mnt" "$sock" --hang-max=90s || fail "7: FUSE server"
e2e_run sh -c 'mkdir -p /etc/suspend-sync.conf.d && printf "[Sync]\nDeadlineSec=6s\n" >/etc/suspend-sync.conf.d/e2e.conf'
e2e_run /usr/local/bin/faultdisk ctl "$sock" hang >/dev/null || fail "7: faultdisk hang"
c=$(cursor)
w0=$(($(wc -l <"$E2E_WATCH_LOG") + 1))
t7=$SECONDS
main=$(e2e_prop suspend-sync-daemon.service MainPID)
e2e_suspend suspend 60 &
susp_pid=$!
# While the pass hangs past the daemon's bound (4 s after the signal, its deadline at 6 s), it is
# the daemon's only child. It is a fork without exec: none of its fds may be a lock FIFO of
# logind's (the daemon released its own at the bound) or any fd the daemon holds (the system bus,
# its lock FIFO). fds(): the targets above 2 but anonymous inodes (epoll, signalfd, timerfd,
# pidfd: one name for all, the pass makes its own) and "/" (the pass opens its own root too).
fds() { e2e_run sh -c "for f in /proc/$1/fd/*; do [ \"\${f##*/}\" -gt 2 ] && readlink \"\$f\"; done" 2>/dev/null |
        grep -v -e '^anon_inode:' -e '^/$' | sort -u; }
for ((i = 0; i < 100; i++)); do
        e2e_run journalctl -q -o cat --after-cursor="$c" -u suspend-sync-daemon.service |
                grep -q 'is still running after' && break
        sleep 0.1
done
kids=$(e2e_run pgrep -P "$main" -x suspend-sync | tr '\n' ' ')
dfds=$(fds "$main")
held=""
report=""
for k in $kids; do
        # Its one tie to the daemon by design: the pipe of its report (fd 3, pass_run()), whose
        # read end the daemon holds until the report or the exit.
        report=$(e2e_run readlink "/proc/$k/fd/3" 2>/dev/null)
        [[ $report == pipe:* ]] && grep -qxF "$report" <<<"$dfds" || report="(no report pipe: '$report')"
        kfds=$(fds "$k" | grep -vxF "$report")
        held+=$( { grep /run/systemd/inhibit/ <<<"$kfds"; comm -12 <(echo "$kfds") <(echo "$dfds"); } |
                sort -u | sed "s/^/$k: /" | tr '\n' ' ')
done
echo "7: the daemon's fds: $(echo $dfds); its hung pass: [$kids]"
grep -q socket: <<<"$dfds" || fail "7: the check sees no socket among the daemon's fds"
[[ $report == pipe:* ]] && ok "7: the hung pass's report pipe ($report) is the one the daemon reads" ||
        fail "7: the hung pass has no report pipe to the daemon: $report"
[[ -n $kids && -z $held ]] && ok "7: the hung pass ($kids) holds no other fd of the daemon (no lock, no bus)" ||
        fail "7: hung pass [$kids] holds: ${held:-nothing, but no pass was found}"
wait "$susp_pid" || fail "7: the suspend cycle did not complete within 60 s"
journal_since "$c"
show_journal "7: the daemon's pass outlasts logind's wait" "$c"
echo "7: cycle $((SECONDS - t7)) s"
[[ $(jcount '._SYSTEMD_UNIT == "suspend-sync-daemon.service" and (.MESSAGE | test("is still running after .*did not end while logind waited"))') -ge 1 ]] &&
        ok "7: the daemon released the lock at its bound without a mark" ||
        fail "7: no 'still running ... did not end while logind waited' from the daemon"
waited=$(jmono '._SYSTEMD_UNIT == "suspend-sync.service" and (.MESSAGE | test("waiting for it"))')
# The unit's pass is the process that said it waited; the daemon's, the other unit-trigger summary.
unit_pid=$(jq -r 'select(.MESSAGE // "" | test("waiting for it")) | ._PID' "$E2E_WORK/journal.json" | head -n1)
daemon_done=$(jmono ".MESSAGE_ID == \"$RUN_SUMMARY\" and .SUSPEND_SYNC_TRIGGER == \"unit\" and ._PID != \"${unit_pid:-none}\"")
unit_done=$(jmono ".MESSAGE_ID == \"$RUN_SUMMARY\" and ._PID == \"${unit_pid:-none}\"")
[[ -n $waited ]] && ok "7: the unit waited for the daemon's pass (its state lock)" || fail "7: the unit did not say it waited"
# The unit's pass started its clock when it got the lock, which the daemon's pass releases right
# after saving its record (RunDone): its summary, logged after its stuck worker went to a scope, may
# come after the unit's. So the records: the unit's begins no earlier than the daemon's was saved.
order=$(e2e_run suspend-sync status --json=short | jq -r '[.history[] | select(.trigger == "unit")] |
        sort_by(.started_realtime_usec) | .[-2:] | if length == 2 then
        "\(.[1].started_realtime_usec - .[0].started_realtime_usec - .[0].duration_usec)" else "none" end')
[[ -n $daemon_done && -n $unit_done && $order =~ ^[0-9]+$ ]] &&
        ok "7: the unit's pass began $((order / 1000)) ms after the daemon's had saved its record" ||
        fail "7: the unit's record begins $order us after the daemon's was saved (summaries '$daemon_done', '$unit_done')"
e2e_watch_has "$w0" ' power state MODIFY "mem' && ok "7: the sleep went ahead" || fail "7: no write of mem"
# logind saw the lock go at the daemon's bound: it never waited out its own timeout for it (a
# child that kept the lock's fd would make it: "Delay lock is active (UID 0/root, PID N/suspend-sync)
# but inhibitor timeout is reached.", as logind 252 and 257 say it). Not vacuous: the daemon's pass
# was still there when that timeout (InhibitDelayMaxSec=, 5 s) passed.
t_sig=$(jmono '.MESSAGE // "" | test("The system will suspend now")')
delay=$(e2e_run busctl get-property org.freedesktop.login1 /org/freedesktop/login1 \
        org.freedesktop.login1.Manager InhibitDelayMaxUSec | awk '{ print $2 }')
[[ -n $t_sig && -n $daemon_done && -n $delay ]] && ((daemon_done - t_sig > delay)) &&
        ok "7: the daemon's pass outlived logind's wait ($(((daemon_done - t_sig) / 1000)) ms > $((delay / 1000)) ms)" ||
        fail "7: the daemon's pass ended $(((${daemon_done:-0} - ${t_sig:-0}) / 1000)) ms after the signal, logind waits ${delay:-?} us"
[[ $(jcount '.MESSAGE // "" | test("Delay lock is active .*suspend-sync.* inhibitor timeout is reached")') == 0 ]] &&
        ok "7: logind did not wait out its timeout for our lock" ||
        fail "7: logind waited out its timeout for our lock: $(jq -r 'select(.MESSAGE // "" | test("inhibitor timeout")) | .MESSAGE' "$E2E_WORK/journal.json")"
e2e_run /usr/local/bin/faultdisk ctl "$sock" resume >/dev/null || fail "7: faultdisk resume"
# Nothing of ours left but the daemon itself (e2e_check_none_left counts every suspend-sync).
for ((i = 0; i < 100; i++)); do
        left=$(e2e_run pgrep -x suspend-sync | grep -vx "$main" | tr '\n' ' ')
        scopes=$(e2e_run systemctl list-units --all --no-legend --plain 'suspend-sync-stuck-*' | awk '{ print $1 }' | tr '\n' ' ')
        [[ -z $left && -z $scopes ]] && break
        sleep 0.2
done
[[ -z $left && -z $scopes ]] && ok "7: nothing of ours left once the server answered again ($((i * 200)) ms), but the daemon" ||
        fail "7: left once the server answered: processes [$left], scopes [$scopes]"
e2e_run sh -c 'rm /etc/suspend-sync.conf.d/e2e.conf'
e2e_run systemctl stop e2e-fuse.service

# ---------------------------------------------------------------- 8
e2e_run systemctl stop suspend-sync-daemon.service
has_lock && fail "8: a delay lock is left after the daemon stopped"
c=$(cursor)
e2e_suspend suspend || fail "8: the suspend cycle did not complete"
journal_since "$c"
[[ $(unit_ran) -ge 1 ]] &&
        ok "8: without the daemon suspend-sync.service ran its pass" || fail "8: suspend-sync.service did not run"
# The hook found no daemon and ran the late pass itself (the negative control of 2's PID check).
late=$(jcount ".MESSAGE_ID == \"$RUN_SUMMARY\" and .SUSPEND_SYNC_TRIGGER == \"hook\"")
by_daemon=$(jcount '(.MESSAGE | test("^The late pass of this sleep runs in PID"))')
e2e_run test ! -e /run/suspend-sync-daemon/late-pass || fail "8: the daemon's socket outlived it"
((late >= 1 && by_daemon == 0)) && ok "8: without the daemon the hook ran the late pass itself" ||
        fail "8: late pass summaries $late, by the daemon $by_daemon"

# ---------------------------------------------------------------- 8b
# 2b without the daemon: the unit's own pass leaves the late pass out and takes the hook's link
# down; after the sleep the unit's ExecStopPost= (restore-knob) puts it back and records the resume.
e2e_run sh -c 'printf "[Kernel]\nKeepCheapSync=yes\n" >/etc/suspend-sync.conf.d/zz-e2e-cheap.conf &&
        mkdir -p /run/systemd/system/suspend-sync.service.d &&
        printf "[Service]\nEnvironment=SUSPEND_SYNC_TEST_LATE_SKIP_BELOW=1h\n" >/run/systemd/system/suspend-sync.service.d/e2e.conf &&
        systemctl daemon-reload' || fail "8b: could not set up"
suspend_logged 8b "KeepCheapSync=yes without the daemon"
left_out=$(jcount '._SYSTEMD_UNIT == "suspend-sync.service" and (.MESSAGE | test("^The late pass is left out of this suspend"))')
((left_out == 1)) && ok "8b: the unit's own pass left the late pass out" || fail "8b: 'left out' messages of the unit: $left_out"
[[ $(link_events "$w0") == D ]] && ok "8b: the hook's link was down from the unit's pass to mem" ||
        fail "8b: the hook's link before mem: '$(link_events "$w0")'"
link_back_after "8b" "$w0"
e2e_run sh -c 'rm -f /etc/suspend-sync.conf.d/zz-e2e-cheap.conf /run/systemd/system/suspend-sync.service.d/e2e.conf &&
        systemctl daemon-reload' || fail "8b: could not clean up"
# The negative control of 2's check: the daemon's unit, enabled, stays loaded when stopped (its
# WantedBy=), and keeps ours loaded; disabled, nothing references either any more.
e2e_run systemctl disable -q suspend-sync-daemon.service
for ((i = 0; i < 30; i++)); do (($(loaded suspend-sync.service) == 0)) && break; sleep 0.1; done
(($(loaded suspend-sync.service) == 0)) &&
        ok "8: with the daemon's unit disabled, suspend-sync.service is unloaded (2's check can fail)" ||
        fail "8: suspend-sync.service still loaded with the daemon disabled: $(e2e_run systemctl list-units --all --plain --no-legend suspend-sync.service)"
failed=$(e2e_run systemctl --failed --no-legend --plain | awk '{print $1}' | tr '\n' ' ')
[[ -z $failed ]] && ok "8: no failed units" || fail "8: failed units: $failed"

echo "$release: $fails failure(s), $((SECONDS - t_start)) s"
[[ $fails == 0 ]]
