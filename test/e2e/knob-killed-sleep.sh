#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# knob-killed-sleep.sh RELEASE — review AW, H1: the knob after a sleep that ends without the post
# hook, when suspend-sync-daemon.service's pass stood for the unit (suspend-sync.service skipped by
# its condition, so no ExecStopPost= restore-knob) and the daemon that made the mark is not there to
# see PrepareForSleep(false).
# The container looks like a machine of its own (lib.sh E2E_MACHINE_VIEW), so that the late pass
# turns the kernel's sync off; systemd-sleep carries state-hold.so (LD_PRELOAD), which logs the knob
# at each write of /sys/power/state and holds the write 4 s (the machine "asleep"). While it is held:
#   0. (the control) systemd-suspend.service killed with SIGKILL (no post hook): the daemon puts the
#      knob back on PrepareForSleep(false);
#   1. the daemon stopped, then systemd-suspend.service killed: nothing of ours runs at the resume;
#      the daemon started again after it puts the knob back at its start (logind: no sleep under
#      way). A daemon that stays stopped leaves it to the next pass of ours (not covered: the knob
#      is not written during a sleep, where the late pass may have turned the sync off over a hung
#      device);
#   2. the daemon restarted (a start during a sleep fails at logind's delay lock, systemd restarts
#      it a second later: its start after the sleep puts the knob back), then systemd-suspend.service
#      killed.
# Each must end with sync_on_suspend back at 1 within 10 s of the cycle's end (it was 1 before).
# Env: SOURCE_ROOT, BUILD_ROOT.

set -u -o pipefail
release=${1:?usage: knob-killed-sleep.sh RELEASE}
SOURCE_ROOT=${SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$SOURCE_ROOT/test/e2e/lib.sh"
e2e_require "$release"
export E2E_MACHINE_VIEW=1

t0=$SECONDS
e2e_boot "$release" || { echo "FAIL: boot"; exit 1; }
if [[ $release == bookworm && $(. /etc/os-release && echo "$VERSION_CODENAME") == bookworm ]]; then
        gcc -O2 -shared -fPIC -o "$E2E_ROOT/usr/local/lib/state-hold.so" "$SOURCE_ROOT/test/e2e/state-hold.c" -ldl ||
                { echo "FAIL: state-hold.so"; exit 1; }
else
        cp "$SOURCE_ROOT/test/e2e/state-hold.c" "$E2E_ROOT/var/tmp/state-hold.c" &&
                e2e_run gcc -O2 -shared -fPIC -o /usr/local/lib/state-hold.so /var/tmp/state-hold.c -ldl ||
                { echo "FAIL: state-hold.so"; exit 1; }
fi
e2e_run sh -c 'mkdir -p /etc/systemd/system/systemd-suspend.service.d &&
        printf "[Service]\nEnvironment=LD_PRELOAD=/usr/local/lib/state-hold.so\n" >/etc/systemd/system/systemd-suspend.service.d/state-hold.conf &&
        systemctl daemon-reload' || { echo "FAIL: drop-in"; exit 1; }
echo "boot: systemd $E2E_SYSTEMD_VERSION, $((SECONDS - t0)) s"
knob() { tr -d '\n' <"$E2E_WORK/power/sync_on_suspend"; }
writes() { e2e_run cat /run/state-hold.log 2>/dev/null | wc -l; }
daemon_up() {
        local i
        e2e_run systemctl start suspend-sync-daemon.service
        for ((i = 0; i < 50; i++)); do
                e2e_run systemd-inhibit --list --no-legend 2>/dev/null | grep -q 'Syncing filesystems before sleep' && return 0
                sleep 0.1
        done
        return 1
}
cycle_end() { # CURSOR
        local i
        for ((i = 0; i < 150; i++)); do
                e2e_run journalctl -q -o json --after-cursor="$1" |
                        jq -c 'select(.UNIT == "systemd-suspend.service" and .JOB_TYPE == "start" and .JOB_RESULT != null)' |
                        grep -q . && [[ -z $(e2e_run systemctl list-jobs --no-legend) ]] && return 0
                sleep 0.2
        done
        return 1
}
# killed_sleep NAME ACTION: ACTION (none, stop, restart) on the daemon while the state write is held,
# then systemd-suspend.service killed; the knob must be 1 again within 10 s of the cycle's end.
killed_sleep() {
        local name=$1 action=$2 n0 c i w k
        daemon_up || { fail "$name: the daemon holds no delay lock"; return; }
        printf 'freeze mem disk\n' >"$E2E_WORK/power/state"
        e2e_run sh -c 'echo "delay 4" >/run/state-hold.mode'
        n0=$(writes)
        c=$(e2e_run journalctl -q -n0 --show-cursor | sed -n 's/^-- cursor: //p')
        e2e_run systemctl suspend || { fail "$name: systemctl suspend refused"; return; }
        for ((i = 0; i < 100; i++)); do (($(writes) > n0)) && break; sleep 0.1; done
        w=$(e2e_run cat /run/state-hold.log | tail -n +$((n0 + 1)) | head -n1)
        if [[ $w != *"knob=0"* ]]; then
                fail "$name: the late pass did not turn the kernel's sync off ('$w'): this check shows nothing"
                e2e_run rm -f /run/state-hold.mode
                cycle_end "$c"
                return
        fi
        case $action in
        stop) e2e_run systemctl stop suspend-sync-daemon.service ;;
        restart) e2e_run systemctl restart suspend-sync-daemon.service 2>/dev/null ;;
        esac
        e2e_run systemctl kill -s KILL systemd-suspend.service
        e2e_run rm -f /run/state-hold.mode
        cycle_end "$c" || fail "$name: the sleep cycle did not end"
        [[ $action != stop ]] || e2e_run systemctl start suspend-sync-daemon.service
        for ((i = 0; i < 50; i++)); do
                k=$(knob)
                [[ $k == 1 ]] && break
                sleep 0.2
        done
        [[ $k == 1 ]] && ok "$name: sync_on_suspend back to 1 after the sleep ($((i * 200)) ms after its end)" ||
                fail "$name: sync_on_suspend left at '$k' 10 s after the sleep ended (knob.orig: $(e2e_run cat /run/suspend-sync/knob.orig 2>&1))"
        e2e_run systemctl reset-failed
}
killed_sleep "0 (control: the daemon sees the resume)" none
killed_sleep "1 (the daemon stopped during the sleep, started after it)" stop
killed_sleep "2 (the daemon restarted during the sleep)" restart

echo "$release: $fails failure(s), $((SECONDS - t0)) s"
[[ $fails == 0 ]]
