#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Golden output of "suspend-sync status", human and JSON:
# - fixtures/status/state (last.json and a history with one record older than the sleep_action
#   key) with the "laptop" fixture root's meminfo;
# - a recorded sleep cycle (fixtures/cycles: unit and late pass, a hung USB stick whose worker is
#   still stuck — fixture proc/4242/stat matches the handover —, the resume, the kernel's sync in
#   a fixture /dev/kmsg) on a narrow and a wide terminal ($COLUMNS), with --all, and as JSON;
# - the same cycle with the late pass left out (KeepCheapSync=): the kernel's sync left on, said so;
# - abnormal ends of that cycle (review AW, L3): the resume recorded 30 ms after the late pass (a
#   state write that failed looks so: not a sleep of "0us"); the late pass killed (the post hook
#   recorded the resume, no late record: not "no late pass"; its controls, a resume recorded by
#   restore-knob for a sleep no hook of ours ran in, and one older than the cycle); the state
#   directory read-only (said, as records of sleeps since are missing; root only: a bind mount);
# - nothing recorded: the hints; records there that cannot be read: said so, not 0.
# "5min ago" is computed against SUSPEND_SYNC_NOW_USEC. Unprivileged but for the read-only case (root,
# a mount namespace of its own), touches nothing.
# UPDATE_GOLDEN=1 rewrites the golden files.
set -euo pipefail

fx=$FIXTURES_DIR/status
export TZ=UTC LC_ALL=C SUSPEND_SYNC_NOW_USEC=1767236400000000
unset COLUMNS NO_COLOR SYSTEMD_COLORS
fail=0
check() {
        local name=$1; shift
        local got
        got=$("$@" 2>&1)
        if [[ ${UPDATE_GOLDEN:-} == 1 ]]; then
                printf '%s\n' "$got" >"$fx/$name.golden"
                return
        fi
        if ! diff -u "$fx/$name.golden" <(printf '%s\n' "$got"); then
                echo "FAIL: $* differs from $name.golden"
                fail=1
        fi
}
ss_status() { "$SUSPEND_SYNC" status --state-dir="$fx/state" --root="$FIXTURES_DIR/roots/laptop" "$@"; }
ss_cycle() { "$SUSPEND_SYNC" status --state-dir="$FIXTURES_DIR/cycles/state" --root="$FIXTURES_DIR/cycles/root" "$@"; }

check status ss_status
# --all lists every mount of the record, as plan and run count them: the fixture's namespace has
# /home twice (an overmount), and both rows are shown.
check status-all ss_status --all
# json-c < 0.17 (Debian 12) prints an empty array as "[", newline, indent, "]" when pretty; 0.17 and
# later (Debian 13) as "[]": the golden file has the latter, older json-c's output is folded to it.
ss_status_pretty() { ss_status --json=pretty | sed -z 's/\[\n *\]/[]/g'; }
check status-json ss_status_pretty
check cycle-narrow env COLUMNS=60 "$SUSPEND_SYNC" status --state-dir="$FIXTURES_DIR/cycles/state" --root="$FIXTURES_DIR/cycles/root"
check cycle-wide env COLUMNS=200 "$SUSPEND_SYNC" status --state-dir="$FIXTURES_DIR/cycles/state" --root="$FIXTURES_DIR/cycles/root"
check cycle-all ss_cycle --all
check cycle-json ss_cycle --json=short
empty=$(mktemp -d /tmp/ss-status-empty.XXXXXX)
cheap=$(mktemp -d /tmp/ss-status-cheap.XXXXXX)
trap 'rm -rf "$empty" "$cheap"' EXIT
# The same cycle with the late pass left out (KeepCheapSync=): the unit's record says so, no hook
# record follows it.
cp -r "$FIXTURES_DIR/cycles/state/." "$cheap/"
rm "$cheap/history/00001767232810400000-22.json"
python3 - "$cheap/history/00001767232800000000-21.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["late_left_out"] = True
r["kernel_sync_estimate_usec"] = 1144
json.dump(r, open(sys.argv[1], "w"))
PY
check cycle-left-out "$SUSPEND_SYNC" status --state-dir="$cheap" --root="$FIXTURES_DIR/cycles/root"
check cycle-left-out-json "$SUSPEND_SYNC" status --state-dir="$cheap" --root="$FIXTURES_DIR/cycles/root" --json=short
# Review AW, L3. The state write failed: systemd-sleep runs the post hook at once.
abnormal=$(mktemp -d /tmp/ss-status-abnormal.XXXXXX)
trap 'rm -rf "$empty" "$cheap" "$abnormal"' EXIT
cp -r "$FIXTURES_DIR/cycles/state" "$abnormal/at-once"
sed -i 's/^REALTIME=.*/REALTIME=2026-01-01T02:00:10.640000000Z/' "$abnormal/at-once/last-resume"
check cycle-resumed-at-once "$SUSPEND_SYNC" status --state-dir="$abnormal/at-once" --root="$FIXTURES_DIR/cycles/root"
# ... and told exactly: the late pass and the post hook record how long this boot has been
# suspended (CLOCK_BOOTTIME less CLOCK_MONOTONIC); the same count is no sleep at all, a larger one
# how long the machine slept (records without the counts: hedged, above).
suspended_fixture() { # DIR LATE_SUSPENDED_USEC RESUME_SUSPENDED_USEC
        python3 - "$1/history/00001767232810400000-22.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["started_boottime_usec"] = 7200000000
r["started_suspended_usec"] = int(sys.argv[2])
json.dump(r, open(sys.argv[1], "w"))
PY
        echo "SUSPENDED_USEC=$3" >>"$1/last-resume"
}
cp -r "$abnormal/at-once" "$abnormal/not-slept"
suspended_fixture "$abnormal/not-slept" 5000000 5000000
check cycle-not-slept "$SUSPEND_SYNC" status --state-dir="$abnormal/not-slept" --root="$FIXTURES_DIR/cycles/root"
cp -r "$FIXTURES_DIR/cycles/state" "$abnormal/slept"
suspended_fixture "$abnormal/slept" 5000000 3594000000
check cycle-slept-exact "$SUSPEND_SYNC" status --state-dir="$abnormal/slept" --root="$FIXTURES_DIR/cycles/root"
# the two counts are two clock reads apart: a difference under a millisecond either way is none
cp -r "$abnormal/at-once" "$abnormal/not-slept-jitter"
suspended_fixture "$abnormal/not-slept-jitter" 5000400 5000000
for d in not-slept:0 not-slept-jitter:0 slept:3589000000 at-once:None; do
        got=$("$SUSPEND_SYNC" status --json=short --state-dir="$abnormal/${d%%:*}" --root="$FIXTURES_DIR/cycles/root" |
                python3 -c 'import json, sys; print(json.load(sys.stdin)["last_cycle"]["suspended_usec"])')
        [[ $got == "${d#*:}" ]] || { echo "FAIL: ${d%%:*}: suspended_usec $got, want ${d#*:}"; fail=1; }
done
# The kernel's suspend counts (/sys/power/suspend_stats): the late pass records them, the post hook
# too; whether the sleep happened is told from them, how long from the clocks.
counts_fixture() { # DIR LATE_SUCCESS LATE_FAIL RESUME_SUCCESS RESUME_FAIL [KEY=VALUE...]: on a suspended_fixture
        local d=$1
        python3 - "$d/history/00001767232810400000-22.json" "$2" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["suspend_success"] = int(sys.argv[2])
r["suspend_fail"] = int(sys.argv[3])
json.dump(r, open(sys.argv[1], "w"))
PY
        printf 'SUSPEND_SUCCESS=%s\nSUSPEND_FAIL=%s\n' "$4" "$5" >>"$d/last-resume"
        shift 5
        for kv in "$@"; do echo "$kv" >>"$d/last-resume"; done
}
cp -r "$abnormal/not-slept" "$abnormal/suspend-failed"
counts_fixture "$abnormal/suspend-failed" 10 2 10 3 SUSPEND_LAST_FAILED_STEP=suspend SUSPEND_LAST_FAILED_DEV=usb1 \
        SUSPEND_LAST_FAILED_ERRNO=-16
check cycle-suspend-failed "$SUSPEND_SYNC" status --state-dir="$abnormal/suspend-failed" --root="$FIXTURES_DIR/cycles/root"
cp -r "$abnormal/not-slept" "$abnormal/suspend-refused"
counts_fixture "$abnormal/suspend-refused" 10 2 10 2
check cycle-suspend-refused "$SUSPEND_SYNC" status --state-dir="$abnormal/suspend-refused" --root="$FIXTURES_DIR/cycles/root"
# s2idle that the clocks do not count: a sleep all the same
cp -r "$FIXTURES_DIR/cycles/state" "$abnormal/s2idle"
suspended_fixture "$abnormal/s2idle" 5000000 5000000
counts_fixture "$abnormal/s2idle" 10 2 11 2
check cycle-s2idle "$SUSPEND_SYNC" status --state-dir="$abnormal/s2idle" --root="$FIXTURES_DIR/cycles/root"
# a record without the clocks' counts (an older version's late pass beside a newer post hook): the
# kernel's count alone says it slept, where the wall clock under a second could only hedge
cp -r "$abnormal/at-once" "$abnormal/counted-no-clocks"
counts_fixture "$abnormal/counted-no-clocks" 10 2 11 2
check cycle-counted-no-clocks "$SUSPEND_SYNC" status --state-dir="$abnormal/counted-no-clocks" --root="$FIXTURES_DIR/cycles/root"
# more than this cycle's sleep counted
cp -r "$abnormal/slept" "$abnormal/two-suspends"
counts_fixture "$abnormal/two-suspends" 10 2 12 3 SUSPEND_LAST_FAILED_STEP=freeze SUSPEND_LAST_FAILED_ERRNO=-11
check cycle-two-suspends "$SUSPEND_SYNC" status --state-dir="$abnormal/two-suspends" --root="$FIXTURES_DIR/cycles/root"
# Review BD, M2: mem failed, then freeze slept (systemd-sleep tries each of SuspendState= in turn): one
# sleep and its pass, not a sleep without one
cp -r "$abnormal/slept" "$abnormal/retry"
counts_fixture "$abnormal/retry" 10 2 11 3 SUSPEND_LAST_FAILED_STEP=suspend SUSPEND_LAST_FAILED_DEV=usb1 \
        SUSPEND_LAST_FAILED_ERRNO=-16
check cycle-retry "$SUSPEND_SYNC" status --state-dir="$abnormal/retry" --root="$FIXTURES_DIR/cycles/root"
# Review BB, L2: one boot, paired by CLOCK_BOOTTIME: the wall clock set back at the resume; a resume of
# another boot is none after this late pass.
boot_fixture() { # DIR LATE_BOOT_ID RESUME_BOOT_ID RESUME_BOOTTIME_USEC
        python3 - "$1/history/00001767232810400000-22.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["boot_id"] = sys.argv[2]
json.dump(r, open(sys.argv[1], "w"))
PY
        printf 'BOOT_ID=%s\nBOOTTIME_USEC=%s\n' "$3" "$4" >>"$1/last-resume"
}
boot=0123456789abcdef0123456789abcdef
cp -r "$abnormal/slept" "$abnormal/clock-back"
sed -i 's/^REALTIME=.*/REALTIME=2026-01-01T01:30:00.000000000Z/' "$abnormal/clock-back/last-resume"
boot_fixture "$abnormal/clock-back" $boot $boot 10800000000
check cycle-clock-back "$SUSPEND_SYNC" status --state-dir="$abnormal/clock-back" --root="$FIXTURES_DIR/cycles/root"
cp -r "$abnormal/two-suspends" "$abnormal/other-boot"
boot_fixture "$abnormal/other-boot" $boot ffffffffffffffffffffffffffffffff 10800000000
check cycle-other-boot "$SUSPEND_SYNC" status --state-dir="$abnormal/other-boot" --root="$FIXTURES_DIR/cycles/root"
# Review BD, M1: a hibernation is in neither count, nor is a hybrid sleep's suspend: for any action but
# suspend the counts say nothing (a hibernation whose clocks counted no time is not "Slept: no").
action_fixture() { # DIR ACTION: both passes and the post hook name it
        local f
        for f in "$1/history/00001767232800000000-21.json" "$1/history/00001767232810400000-22.json"; do
                python3 - "$f" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["sleep_action"] = sys.argv[2]
json.dump(r, open(sys.argv[1], "w"))
PY
        done
        sed -i "s/^ACTION=.*/ACTION=$2/; s/^SYSTEMD_SLEEP_ACTION=.*/SYSTEMD_SLEEP_ACTION=$2/" "$1/last-resume"
}
cp -r "$abnormal/suspend-refused" "$abnormal/hibernate-counts"
action_fixture "$abnormal/hibernate-counts" hibernate
check cycle-hibernate-counts "$SUSPEND_SYNC" status --state-dir="$abnormal/hibernate-counts" --root="$FIXTURES_DIR/cycles/root"
cp -r "$abnormal/suspend-failed" "$abnormal/hybrid-counts"
action_fixture "$abnormal/hybrid-counts" hybrid-sleep
# and in JSON: last_cycle.kernel_suspends
for d in suspend-failed:'{"entered": 0, "failed": 1, "last_failed_step": "suspend", "last_failed_dev": "usb1", "last_failed_errno": "EBUSY"}' \
        suspend-refused:'{"entered": 0, "failed": 0}' s2idle:'{"entered": 1, "failed": 0}' \
        two-suspends:'{"entered": 2, "failed": 1, "last_failed_step": "freeze", "last_failed_dev": null, "last_failed_errno": "EAGAIN"}' \
        other-boot:None slept:None clock-back:None hibernate-counts:None hybrid-counts:None; do
        got=$("$SUSPEND_SYNC" status --json=short --state-dir="$abnormal/${d%%:*}" --root="$FIXTURES_DIR/cycles/root" |
                python3 -c 'import json, sys; k = json.load(sys.stdin)["last_cycle"]["kernel_suspends"]; print(json.dumps(k) if k is not None else None)')
        [[ $got == "${d#*:}" ]] || { echo "FAIL: ${d%%:*}: kernel_suspends $got, want ${d#*:}"; fail=1; }
done
# The late pass killed mid-pass: no record of it, the post hook's resume after the unit's pass.
cp -r "$FIXTURES_DIR/cycles/state" "$abnormal/killed"
rm "$abnormal/killed/history/00001767232810400000-22.json"
check cycle-late-killed "$SUSPEND_SYNC" status --state-dir="$abnormal/killed" --root="$FIXTURES_DIR/cycles/root"
# Controls: restore-knob recorded the resume (no hook of ours ran: ACTION=unknown, no
# SYSTEMD_SLEEP_ACTION=), or the resume is older than the cycle: "no late pass" as before.
cp -r "$abnormal/killed" "$abnormal/no-hook"
printf 'ACTION=unknown\nSYSTEMD_SLEEP_ACTION=\nREALTIME=2026-01-01T03:00:00.000000000Z\nBOOTTIME_SEC=7300.00\n' \
        >"$abnormal/no-hook/last-resume"
cp -r "$abnormal/killed" "$abnormal/old-resume"
sed -i 's/^REALTIME=.*/REALTIME=2026-01-01T01:00:00.000000000Z/' "$abnormal/old-resume/last-resume"
# ... and in JSON: last_cycle.late_unrecorded, true only for the killed late pass
for d in killed no-hook old-resume; do
        want=false
        [[ $d == killed ]] && want=true
        got=$("$SUSPEND_SYNC" status --json=short --state-dir="$abnormal/$d" --root="$FIXTURES_DIR/cycles/root" |
                python3 -c 'import json, sys; print(str(json.load(sys.stdin)["last_cycle"]["late_unrecorded"]).lower())')
        [[ $got == "$want" ]] || { echo "FAIL: $d: late_unrecorded $got, want $want"; fail=1; }
done
for d in no-hook old-resume; do
        got=$("$SUSPEND_SYNC" status --state-dir="$abnormal/$d" --root="$FIXTURES_DIR/cycles/root")
        if ! grep -q "^ Kernel sync: no late pass: the sleep did not go ahead, or the hook did not run$" <<<"$got" ||
                grep -q "Late pass" <<<"$got"; then
                echo "FAIL: $d: a late pass said to have run"; fail=1
        fi
done
# The state directory read-only: said. A bind mount in a mount namespace of our own (root only).
if [[ $(id -u) == 0 ]] && unshare -m true 2>/dev/null; then
        cp -r "$FIXTURES_DIR/cycles/state" "$abnormal/ro"
        ss_ro() {
                unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
                        exec "$2" status --state-dir="$1" --root="$3"' sh "$abnormal/ro" "$SUSPEND_SYNC" \
                        "$FIXTURES_DIR/cycles/root" 2>&1 | sed "s|$abnormal/ro|STATE|g"
        }
        check cycle-read-only ss_ro
        ro_json=$(unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" &&
                exec "$2" status --json=short --state-dir="$1" --root="$3"' sh "$abnormal/ro" "$SUSPEND_SYNC" \
                "$FIXTURES_DIR/cycles/root" | python3 -c 'import json, sys; print(json.load(sys.stdin)["state_dir_read_only"])')
        [[ $ro_json == True ]] || { echo "FAIL: read-only state directory: state_dir_read_only $ro_json in JSON"; fail=1; }
        if "$SUSPEND_SYNC" status --state-dir="$abnormal/ro" --root="$FIXTURES_DIR/cycles/root" | grep -q "read-only"; then
                echo "FAIL: a writable state directory said to be read-only"; fail=1
        fi
else
        echo "SKIP part: a read-only state directory needs root and a mount namespace"
fi
ss_nothing() { "$SUSPEND_SYNC" status --state-dir="$empty" --root="$FIXTURES_DIR/roots/laptop" 2>&1 | sed "s|$empty|STATE|g"; }
check nothing ss_nothing
# Records there that cannot be read are not "nothing recorded" (review Q, M2): said, in JSON too,
# and the exit status is not 0. The control: the same directory empty exits 0 with no "unread".
corrupt=$(mktemp -d /tmp/ss-status-corrupt.XXXXXX)
trap 'rm -rf "$empty" "$cheap" "$abnormal" "$corrupt"' EXIT
echo garbage >"$corrupt/last.json"
mkdir "$corrupt/history"
echo '{"started_realtime_usec":' >"$corrupt/history/00001767232800000000-1.json"
ss_corrupt() { { "$SUSPEND_SYNC" status --state-dir="$corrupt" --root="$FIXTURES_DIR/roots/laptop" "$@" 2>/dev/null || :; } | sed "s|$corrupt|STATE|g"; }
check corrupt ss_corrupt
if "$SUSPEND_SYNC" status --state-dir="$corrupt" --root="$FIXTURES_DIR/roots/laptop" >/dev/null 2>&1; then
        echo "FAIL: status exits 0 when no record could be read"; fail=1
fi
if ! "$SUSPEND_SYNC" status --state-dir="$empty" --root="$FIXTURES_DIR/roots/laptop" >/dev/null 2>&1; then
        echo "FAIL: status exits non-zero with nothing recorded"; fail=1
fi
# Enabled with --runtime, or by the distribution: no "not enabled" hint (review Q, L6); the link's
# target need not resolve under --root. The control is "nothing" above (the hint is there).
for d in run/systemd/system usr/lib/systemd/system; do
        r=$(mktemp -d /tmp/ss-status-root.XXXXXX)
        cp -r "$FIXTURES_DIR/roots/laptop/proc" "$r/"
        mkdir -p "$r/$d/sleep.target.wants"
        ln -s /usr/lib/systemd/system/suspend-sync.service "$r/$d/sleep.target.wants/suspend-sync.service"
        if "$SUSPEND_SYNC" status --state-dir="$empty" --root="$r" | grep -q "not enabled"; then
                echo "FAIL: 'not enabled' with a link in /$d"; fail=1
        fi
        rm -rf "$r"
done
got=$(ss_corrupt --json=short | jq -c .unread || true)
if [[ $got != '{"last_run":"Bad message","history":null,"history_records":1}' ]]; then
        echo "FAIL: --json's unread: $got"; fail=1
fi
got=$("$SUSPEND_SYNC" status --state-dir="$empty" --root="$FIXTURES_DIR/roots/laptop" --json=short | jq -c .unread || true)
if [[ $got != '{"last_run":null,"history":null,"history_records":0}' ]]; then
        echo "FAIL: --json's unread with nothing recorded: $got"; fail=1
fi
# colours only when asked for (not a terminal here)
if SYSTEMD_COLORS=1 ss_cycle | grep -q $'\e\\[0;1;31mtimeout'; then :; else
        echo "FAIL: SYSTEMD_COLORS=1 did not colour the timeout red"; fail=1
fi
if SYSTEMD_COLORS=1 NO_COLOR=1 ss_cycle | grep -q $'\e\\['; then :; else
        echo "FAIL: SYSTEMD_COLORS=1 must win over NO_COLOR"; fail=1
fi
if ss_cycle | grep -q $'\e'; then
        echo "FAIL: colours on a pipe without SYSTEMD_COLORS"; fail=1
fi
exit $fail
