#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fuse-freeze.sh RELEASE — check 3 of issue 10: a FUSE mount served from user.slice (faultdisk
# --passthrough inside the container, started with systemd-run --slice=user.slice) holding dirty
# data (kernel writeback cache). On `systemctl suspend`:
#   - the unit pass syncs it (its run record says synced; the daemon received the data) and is done before user.slice is frozen (systemd >= 256);
#   - the late pass does not touch it (its record skips it).
# Env: SOURCE_ROOT, BUILD_ROOT, FAULTDISK (bookworm uses the host's binary).

set -u -o pipefail
release=${1:?usage: fuse-freeze.sh RELEASE}
SOURCE_ROOT=${SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$SOURCE_ROOT/test/e2e/lib.sh"
e2e_require "$release"
[[ -c /dev/fuse ]] || e2e_skip "no /dev/fuse"

RUN_SUMMARY=68604cfcdf4543a8af217e49559df3e8

t0=$SECONDS
e2e_boot "$release" --bind=/dev/fuse || { echo "FAIL: boot"; exit 1; }
e2e_install_faultdisk || { echo "FAIL: faultdisk for $release"; exit 1; }
echo "boot: systemd $E2E_SYSTEMD_VERSION, $((SECONDS - t0)) s"

mnt=/mnt/fuse
sock=/run/e2e-fuse.sock
e2e_fuse_user "$mnt" "$sock" --status=/run/e2e-fuse.status || { echo "FAIL: FUSE server"; exit 1; }
cg=$(e2e_run systemctl show -P ControlGroup e2e-fuse.service)
echo "FUSE daemon: $(e2e_run systemctl show -P MainPID e2e-fuse.service) in $cg; $(e2e_run findmnt -n -o FSTYPE,OPTIONS "$mnt")"
[[ $cg == /user.slice/* ]] || fail "FUSE daemon not in user.slice ($cg)"

fd_status() { e2e_run /usr/local/bin/faultdisk ctl "$sock" status | tr ' ' '\n' | grep -E "^$1=" | cut -d= -f2; }
# A writer in user.slice that keeps the file open and never closes a descriptor of it: every
# close(2) of a FUSE file sends FLUSH, which writes the dirty pages back at once. cat holds the
# only descriptor and is fed through a FIFO kept open by its parent.
e2e_run systemd-run -q --slice=user.slice --unit=e2e-writer sh -c \
        "mkfifo /run/e2e-fifo; cat /run/e2e-fifo >$mnt/dirty & exec 4>/run/e2e-fifo;
         head -c 262144 /dev/urandom >&4; exec sleep infinity"
for ((i = 0; i < 100; i++)); do
        [[ $(e2e_run stat -c %s "$mnt/dirty" 2>/dev/null) == 262144 ]] && break
        sleep 0.1
done
before_bytes=$(fd_status bytes_written)
before_flush=$(fd_status flushes)
dirty=$(e2e_run grep -E '^(Dirty|Writeback):' /proc/meminfo | tr -s ' \n' ' ')
echo "before suspend: daemon bytes_written $before_bytes, flushes $before_flush; $dirty"

c=$(e2e_run journalctl -q -n0 --show-cursor | sed -n 's/^-- cursor: //p')
e2e_suspend suspend || { fail "suspend cycle did not complete"; exit 1; }
after_bytes=$(fd_status bytes_written)
after_flush=$(fd_status flushes)
echo "after suspend: daemon bytes_written $after_bytes, flushes $after_flush"
e2e_run journalctl -q -o json --after-cursor="$c" >"$E2E_WORK/journal.json"
jmono() { jq -r "select($1) | .__MONOTONIC_TIMESTAMP" "$E2E_WORK/journal.json" | head -n1; }
unit_done=$(jmono '.UNIT == "suspend-sync.service" and .JOB_TYPE == "start" and .JOB_RESULT != null')
frozen=$(jmono '.UNIT == "user.slice" and (.MESSAGE | test("frozen"))')
late=$(jmono ".MESSAGE_ID == \"$RUN_SUMMARY\" and (.SUSPEND_SYNC_TRIGGER == \"hook\" or ._SYSTEMD_UNIT == \"systemd-suspend.service\")")
echo "journal: unit pass done $unit_done, user.slice frozen ${frozen:-(no freeze in $E2E_SYSTEMD_VERSION)}, late pass summary $late"

# The two run records of this sleep (history, newest first: late, unit).
recs=$(e2e_run sh -c 'ls -1t /run/suspend-sync/history/* | head -n 2')
rec_late=$(head -n1 <<<"$recs")
rec_unit=$(sed -n 2p <<<"$recs")
outcome() { e2e_run cat "$1" | jq -r --arg m "$mnt" '.mounts[]? | select(.mount_point == $m) | "\(.action)/\(.outcome) \(.reason)"' | head -n1; }
trig() { e2e_run cat "$1" | jq -r '.trigger'; }
u=$(outcome "$rec_unit")
l=$(outcome "$rec_late")
echo "unit pass ($(trig "$rec_unit")): $mnt $u"
echo "late pass ($(trig "$rec_late")): $mnt $l"
[[ $u == sync/synced* ]] && ok "the unit pass synced the FUSE mount served from user.slice" ||
        fail "unit pass: $mnt '$u'"
[[ $l == skip/* ]] && ok "the late pass left the FUSE mount alone" || fail "late pass: $mnt '$l'"
# 256 KiB stay dirty in the kernel (FUSE's bdi lets little dirty data pile up: more is written
# back at once), the unit pass pushes them to the daemon.
((before_bytes < 262144 && after_bytes >= 262144)) &&
        ok "the daemon had $before_bytes of the 262144 bytes before the suspend, $after_bytes after" ||
        fail "daemon: bytes_written $before_bytes -> $after_bytes of 262144 (flushes $before_flush -> $after_flush)"
if [[ -n $frozen ]]; then
        ((unit_done < frozen && frozen < late)) &&
                ok "unit pass done before user.slice froze ($(((frozen - unit_done) / 1000)) ms), late pass ran frozen" ||
                fail "order: unit done $unit_done, frozen $frozen, late $late"
fi
e2e_run systemctl stop e2e-writer.service e2e-fuse.service

echo "$release: $fails failure(s), $((SECONDS - t0)) s"
[[ $fails == 0 ]]
