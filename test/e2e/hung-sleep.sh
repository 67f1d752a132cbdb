#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# hung-sleep.sh RELEASE — check 4 of issue 10: a hung disk with dirty data, default unit (WantedBy=,
# OnTimeout=continue), DeadlineSec=3s MountTimeoutSec=2s:
#   - the sleep goes ahead ("mem" written) within DeadlineSec= (plus a little) of each pass;
#   - status says timeout;
#   - no suspend-sync process is left once the disk resumes;
#   - resume is not delayed by our workers: systemd-suspend.service is done soon after
#     systemd-sleep's "returned" message, and the next `systemctl suspend` is accepted.
# Issue 10's defects ("a worker abandoned by the late pass holds up resume", "the late pass
# retries a device the unit pass just found hung") are reported as KNOWN DEFECT, failing only
# with E2E_STRICT=1.
# The fault disk is made on the host in a directory bind-mounted onto itself with shared
# propagation, bound into the container at /mnt/bed (as in require-sync.sh).
# Env: SOURCE_ROOT, BUILD_ROOT, FAULTDISK, TEST_LIB (set by meson).

set -u -o pipefail
release=${1:?usage: hung-sleep.sh RELEASE}
SOURCE_ROOT=${SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
TEST_LIB=${TEST_LIB:-$SOURCE_ROOT/test/lib}
source "$SOURCE_ROOT/test/e2e/lib.sh"
e2e_require "$release"

mkdir -p "$E2E_CACHE"
bed=$(mktemp -d "$E2E_CACHE/bed.XXXXXX") || exit 1
# shellcheck disable=SC2034 # read by stack.sh
SS_TEST_WORKDIR=$bed/disks
SS_TEST_LEDGER=/run/suspend-sync-e2e/ledger.${bed##*.}
source "$TEST_LIB/stack.sh"
require_root_loop_fuse

defect() {
        if [[ -n ${E2E_STRICT:-} ]]; then fail "$*"; else echo "KNOWN DEFECT (issue 10, not failed without E2E_STRICT=1): $*"; fi
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f ms", (b - a) / 1000 }'; }

cleanup() {
        [[ -n ${_STK_DIR[h]:-} ]] && stack_ctl h resume >/dev/null 2>&1
        e2e_cleanup
        stack_cleanup
        mountpoint -q "$bed" && umount "$bed"
        rm -rf --one-file-system "$bed"
        rmdir "$SS_TEST_LEDGER" /run/suspend-sync-e2e 2>/dev/null
}
trap cleanup EXIT

mount --bind "$bed" "$bed" && mount --make-shared "$bed" || { echo "FAIL: shared bind of $bed"; exit 1; }
stack_setup h ext4 128M || { echo "FAIL: stack_setup"; exit 1; }
stack_ctl h hang-max 120s >/dev/null

t0=$SECONDS
e2e_boot "$release" --bind="$bed:/mnt/bed" || { echo "FAIL: boot"; exit 1; }
echo "boot: systemd $E2E_SYSTEMD_VERSION, $((SECONDS - t0)) s; hung disk $(stack_dev h)"
deadline_us=3000000
e2e_run sh -c 'mkdir -p /etc/suspend-sync.conf.d && printf "[Sync]\nMountTimeoutSec=2s\nDeadlineSec=3s\n" >/etc/suspend-sync.conf.d/e2e.conf'
e2e_watch_start || exit 1

dd if=/dev/urandom of="$(stack_mnt h)/dirty" bs=1M count=16 status=none
stack_ctl h hang io >/dev/null

w0=$(($(wc -l <"$E2E_WATCH_LOG") + 1))
c=$(e2e_run journalctl -q -n0 --show-cursor | sed -n 's/^-- cursor: //p')
t1=$SECONDS
e2e_suspend suspend 150 || fail "the suspend cycle did not end within 150 s"
cycle_s=$((SECONDS - t1))
e2e_run journalctl -q -o json --after-cursor="$c" >"$E2E_WORK/journal.json"
jmono() { jq -r "select($1) | .__MONOTONIC_TIMESTAMP" "$E2E_WORK/journal.json" | head -n1; }
jq -r 'select(.UNIT == "suspend-sync.service" or .UNIT == "systemd-suspend.service" or (._COMM // "") == "suspend-sync" or .SYSLOG_IDENTIFIER == "systemd-sleep" or .SYSLOG_IDENTIFIER == "systemd-logind") |
        "\(.__MONOTONIC_TIMESTAMP) \(.MESSAGE)"' "$E2E_WORK/journal.json" | grep -v "Incomplete view" | sed 's/^/  journal: /'
u0=$(jmono '.UNIT == "suspend-sync.service" and .JOB_TYPE == "start" and .JOB_RESULT == null')
u1=$(jmono '.UNIT == "suspend-sync.service" and .JOB_TYPE == "start" and .JOB_RESULT != null')
hook0=$(jmono '.UNIT == "systemd-suspend.service" and .JOB_TYPE == "start" and .JOB_RESULT == null')
enter=$(jmono '.SYSLOG_IDENTIFIER == "systemd-sleep" and (.MESSAGE | test("^(Entering sleep state|Performing sleep operation)"))')
back=$(jmono '.SYSLOG_IDENTIFIER == "systemd-sleep" and (.MESSAGE | test("returned from sleep"))')
done_=$(jmono '.UNIT == "systemd-suspend.service" and .JOB_TYPE == "start" and .JOB_RESULT != null')
writes=$(tail -n +"$w0" "$E2E_WATCH_LOG" | grep -c ' power state MODIFY "mem')
echo "cycle $cycle_s s; unit pass $(ms "$u0" "$u1"); systemd-suspend.service start -> enter sleep $(ms "$hook0" "$enter"); returned -> systemd-suspend.service done $(ms "$back" "$done_"); mem writes $writes"
((writes >= 1)) && ok "the sleep went ahead" || fail "no mem write"
((u1 - u0 <= deadline_us + 1000000)) && ok "unit pass within DeadlineSec=3s + 1 s ($(ms "$u0" "$u1"))" ||
        fail "unit pass took $(ms "$u0" "$u1")"
if [[ -n $enter ]] && ((enter - hook0 <= 1000000)); then
        ok "late pass did not retry the hung device: systemd-suspend.service start -> sleep $(ms "$hook0" "$enter")"
else
        defect "the late pass retried the device the unit pass found hung: systemd-suspend.service start -> sleep $(ms "$hook0" "$enter")"
fi
if [[ -n $done_ && -n $back ]] && ((done_ - back <= 1000000)); then
        ok "resume not delayed: systemd-suspend.service done $(ms "$back" "$done_") after systemd-sleep returned"
else
        defect "resume delayed by our workers: systemd-suspend.service done $(ms "$back" "$done_") after systemd-sleep returned"
fi
# What the late pass did with the hung mount (a loop device over a file on FUSE, as faultdisk
# makes it, is left out of the late pass: then its defects cannot show with this disk).
late_reason=$(e2e_run cat /run/suspend-sync/last.json | jq -r '.mounts[]? | select(.mount_point | startswith("/mnt/bed/")) | select(.fstype == "ext4") | "\(.action)/\(.outcome): \(.reason)"' | head -n1)
echo "late pass on the hung mount: $late_reason"
hist=$(e2e_run suspend-sync status | sed -n '/^History/,$p' | sed -n 2,3p | awk '{ print $3 "/" $4 }' | tr '\n' ' ')
echo "status history (newest first): $hist"
[[ $hist == *timeout/unit* ]] && ok "status says timeout for the unit pass" || fail "status: '$hist'"
leftover=$(e2e_run pgrep -x suspend-sync | tr '\n' ' ')
echo "suspend-sync processes left while the disk is hung: [${leftover% }]; left-over warnings: $(jq -r 'select((.MESSAGE // "") | test("left-over|remains running")) | .MESSAGE' "$E2E_WORK/journal.json" | wc -l)"

stack_ctl h resume >/dev/null
for ((i = 0; i < 100; i++)); do
        left=$(e2e_run pgrep -x suspend-sync | tr '\n' ' ')
        [[ -z $left ]] && break
        sleep 0.2
done
[[ -z $left ]] && ok "no suspend-sync process left $((i * 200)) ms after the disk resumed" ||
        fail "suspend-sync processes left after the disk resumed: $left"
t2=$SECONDS
e2e_suspend suspend 60 && ok "the next suspend was accepted and completed ($((SECONDS - t2)) s)" ||
        fail "the next suspend did not complete"

echo "$release: $fails failure(s), $((SECONDS - t0)) s"
[[ $fails == 0 ]]
