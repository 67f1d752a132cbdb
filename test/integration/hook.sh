#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The system-sleep hook's verbs of the binary, which the hook (suspend-sync-sleep-hook, linked into
# systemd's system-sleep directory: install-layout.sh checks the link) execs whenever the daemon does
# not take the late pass (test-hook-client, e2e-daemon), run as systemd-sleep would: "pre ACTION" before the sleep,
# "post ACTION" after it, $SYSTEMD_SLEEP_ACTION in the environment. Options point it at a fixture
# sysfs and a state directory of this test (systemd-sleep passes none).
#
# A: pre is the late pass (trigger hook) with the action as recorded sleep action: the action
#    named, else $SYSTEMD_SLEEP_ACTION when it is one we know, else none; arguments after the
#    action ignored; exit status 0 whatever happens.
# B: post restores the knob of the fixture sysfs from knob.orig and writes last-resume (atomic, no
#    temporary file left); without a state directory it makes none; exit status 0.
# C: pre over a real loop-mounted ext4 with dirty data syncs it (record: trigger hook, the mount
#    synced).
# D: DeadlineSec= past what systemd-sleep gives its hooks (90 s): pre ends within 80 s and says so
#    (record: deadline 80 s); control: the same late pass run by hand keeps DeadlineSec=.
# E: pre exec'd by suspend-sync-sleep-hook counts its deadline from the hook's start.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
checks_begin

sys=$SS_TMP/sys
ss_fixture_sysfs "$sys"
knob=$sys/power/sync_on_suspend

# hook ENV... -- ARGS...: the binary with a clean environment, as systemd-sleep would start it.
hook() {
        local envs=()
        while [[ $1 != -- ]]; do envs+=("$1"); shift; done
        shift
        env -i PATH="$PATH" INVOCATION_ID= "${envs[@]}" "$SUSPEND_SYNC" --state-dir="$SS_STATE" \
                --config="$SS_CONF" --sysfs="$sys" "$@"
}

# field NAME: a top-level string field of the last run record ("-" when absent or null).
field() {
        python3 -c 'import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print("-" if v is None else v)' "$SS_STATE/last.json" "$1"
}

# pre_case EXPECTED_ACTION ENV... -- ARGS...
pre_case() {
        local want=$1 rc=0
        shift
        rm -f "$SS_STATE/last.json"
        hook "$@" >"$SS_TMP/out" 2>&1 || rc=$?
        if ((rc != 0)); then
                fail "hook ${*}: exit $rc"
        elif [[ ! -f $SS_STATE/last.json ]]; then
                fail "hook ${*}: no run record"; cat "$SS_TMP/out"
        elif [[ $(field trigger) != hook || $(field sleep_action) != "$want" ]]; then
                fail "hook ${*}: trigger $(field trigger), sleep action $(field sleep_action), want hook, $want"
        else
                ok "hook ${*}: late pass recorded, trigger hook, sleep action $want"
        fi
}

# ---------------------------------------------------------------- A: pre
pre_case suspend -- pre suspend
pre_case hibernate SYSTEMD_SLEEP_ACTION=hibernate -- pre hibernate
pre_case hybrid-sleep -- pre hybrid-sleep
pre_case suspend-then-hibernate SYSTEMD_SLEEP_ACTION=suspend -- pre suspend-then-hibernate
# no action, or one we do not know: $SYSTEMD_SLEEP_ACTION if it is one we know, else none
pre_case hibernate SYSTEMD_SLEEP_ACTION=hibernate -- pre
pre_case - SYSTEMD_SLEEP_ACTION=suspend-after-failed-hibernate -- pre bogus
pre_case - -- pre
# arguments systemd may add later are ignored
pre_case suspend -- pre suspend extra
# a pass that cannot run (not root): exit 0 all the same, and it says why
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH="$PATH" INVOCATION_ID= "$@"; }
rc=0
as_nobody "$SUSPEND_SYNC" --state-dir="$SS_STATE" --sysfs="$sys" pre suspend >"$SS_TMP/out" 2>&1 || rc=$?
# Negative control: the same pass through "run" fails, so the 0 above is the hook's own.
rc_run=0
as_nobody "$SUSPEND_SYNC" --state-dir="$SS_STATE" --sysfs="$sys" --late --trigger=hook run >/dev/null 2>&1 ||
        rc_run=$?
if ((rc == 0 && rc_run != 0)) && grep -q 'needs root' "$SS_TMP/out"; then
        ok "a late pass that cannot run: hook exit 0, says why (run itself: exit $rc_run)"
else
        fail "a late pass that cannot run: hook exit $rc, run exit $rc_run (want 0 and non-zero): $(cat "$SS_TMP/out")"
fi

# ---------------------------------------------------------------- B: post
printf '0\n' >"$knob"
printf '1\n' >"$SS_STATE/knob.orig"
rm -f "$SS_STATE/last-resume"
rc=0
hook SYSTEMD_SLEEP_ACTION=suspend-after-failed-hibernate -- post hibernate || rc=$?
[[ $rc == 0 ]] || fail "post: exit $rc"
if [[ $(tr -d '\n' <"$knob") == 1 && ! -e $SS_STATE/knob.orig ]]; then
        ok "post restored the fixture knob and removed the record"
else
        fail "post: knob $(tr -d '\n' <"$knob"), record: $(ls "$SS_STATE")"
fi
if grep -qx 'ACTION=hibernate' "$SS_STATE/last-resume" 2>/dev/null &&
   grep -qx 'SYSTEMD_SLEEP_ACTION=suspend-after-failed-hibernate' "$SS_STATE/last-resume" &&
   grep -qE '^REALTIME=20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{9}Z$' "$SS_STATE/last-resume" &&
   grep -qE '^BOOTTIME_SEC=[0-9]+\.[0-9]{2}$' "$SS_STATE/last-resume" &&
   [[ -z $(find "$SS_STATE" -name '*.tmp*' -o -name '.#*' -o -name '.last-resume*') ]]; then
        ok "post wrote last-resume, nothing else left"
else
        fail "post: last-resume is $(cat "$SS_STATE/last-resume" 2>/dev/null || echo missing)"
fi
# a state directory that cannot be made (below a file): exit 0, and it says why
: >"$SS_TMP/file"
rc=0
env -i PATH="$PATH" "$SUSPEND_SYNC" --state-dir="$SS_TMP/file/state" --sysfs="$sys" post suspend \
        >"$SS_TMP/out" 2>&1 || rc=$?
if [[ $rc == 0 ]] && grep -q 'Failed to record the resume' "$SS_TMP/out"; then
        ok "post with a state directory that cannot be made: exit 0, says why"
else
        fail "post with a state directory that cannot be made: exit $rc: $(cat "$SS_TMP/out")"
fi

# ---------------------------------------------------------------- C: pre over a real dirty ext4
stack_setup hookdisk ext4 64M
mnt=$(stack_mnt hookdisk)
dd if=/dev/urandom of="$mnt/dirty" bs=1M count=4 status=none
start=$(date +%s%N)
pre_case suspend SYSTEMD_SLEEP_ACTION=suspend -- pre suspend
echo "C: the hook took $((($(date +%s%N) - start) / 1000000)) ms"
outcome=$(python3 -c 'import json, sys
for m in json.load(open(sys.argv[1])).get("mounts", []):
    if m.get("mount_point") == sys.argv[2]:
        print(m.get("outcome")); break
else:
    print("absent")' "$SS_STATE/last.json" "$mnt")
if [[ $outcome == synced ]]; then
        ok "C: the late pass synced the dirty loop ext4 ($mnt)"
else
        fail "C: the dirty loop ext4 is '$outcome' in the hook's record"
fi

# ---------------------------------------------------------------- D: pre within systemd-sleep's 90 s
ss_config "[Sync]
DeadlineSec=2min"
hook -- pre suspend >"$SS_TMP/out" 2>&1 || true
d_hook=$(field deadline_usec)
"$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" --sysfs="$sys" --late run >"$SS_TMP/out2" 2>&1 || true
d_hand=$(field deadline_usec)
if [[ $d_hook == 80000000 && $d_hand == 120000000 ]] && grep -q "DeadlineSec=2min is longer than systemd-sleep waits for its hooks: this pass ends within 1min 20s" "$SS_TMP/out"; then
        ok "D: pre ends within 80 s with DeadlineSec=2min and says so; by hand the late pass keeps 2 min"
else
        fail "D: deadline of pre $d_hook, by hand $d_hand (want 80000000, 120000000): $(grep -i deadline "$SS_TMP/out")"
fi

# ---------------------------------------------------------------- E: the hook's wait inside DeadlineSec=
# suspend-sync-sleep-hook execs pre after waiting up to 0.5 s for the daemon's ack, and tells it when
# it started ($SUSPEND_SYNC_HOOK_STARTED="PID USEC": its PID, which the exec keeps, and
# CLOCK_MONOTONIC): the pass counts its deadline, and its record's duration, from there (review AF,
# F2: 3.16 s for DeadlineSec=3s). By the PID, not by age (review AG, F3; review AH, L4): a start 3 s
# back counts, and so does one 40 s back, past DeadlineSec=30s (an exec that slow leaves the pass no
# time, not its whole deadline again); another PID's (inherited) or one in the future does not.
# started_pre OFFSET_US [PID]: pre exec'd by a shell that says it started OFFSET_US ago (PID: its own).
started_pre() {
        env -i PATH="$PATH" INVOCATION_ID= OFFSET="$1" PIDX="${2:-}" SS="$SUSPEND_SYNC" STATE="$SS_STATE" \
                CONF="$SS_CONF" SYS="$sys" bash -c '
                now=$(python3 -c "import time; print(int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1e6))")
                export SUSPEND_SYNC_HOOK_STARTED="${PIDX:-$$} $((now - OFFSET))"
                exec "$SS" --state-dir="$STATE" --config="$CONF" --sysfs="$SYS" pre suspend' >"$SS_TMP/out" 2>&1 || true
        field duration_usec
}
ss_config "[Sync]
DeadlineSec=30s"
d_started=$(started_pre 3000000)
d_future=$(started_pre -10000000)
d_old=$(started_pre 40000000)
d_other=$(started_pre 3000000 1)
if ((d_started >= 3000000 && d_started < 30000000 && d_old >= 40000000 && d_old < 45000000 &&
        d_future < 1000000 && d_other < 1000000)); then
        ok "E: pre counts from the hook's start 3 s earlier (${d_started} us) and 40 s earlier (${d_old} us, past its deadline); a start in the future or of another PID is ignored (${d_future}, ${d_other} us)"
else
        fail "E: durations from the hook's start ${d_started}, a future one ${d_future}, an old one ${d_old}, another PID's ${d_other} us"
fi

checks_end hook
