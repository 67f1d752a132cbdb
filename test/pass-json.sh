#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The passes parse no JSON (review AS, AS-3): json-c before 0.18, Debian 12's 0.16 among them,
# crashes when an allocation fails while it parses an object's key, and a pass must not die over a
# summary of past times. The unit's pass and the late pass run on the laptop fixture with a state
# directory holding everything a pass may find there (what the ETA learns, run records, the history,
# a handover), under json-forbidden.so, which ends any process that calls one of json-c's parsers
# with status 99 and says so. Both must read the learned times all the same (their debug line says
# how many), and `plan`, which parses the records for its "Past ETAs" line, must be stopped by it
# (control: the preload works). Unprivileged; writes only to a temporary directory.
set -euo pipefail

fx=$FIXTURES_DIR
tmp=$(mktemp -d /tmp/ss-pass-json.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# a state directory as a resume leaves it: record-cycle writes what the ETA learns
cp -r "$fx/cycles/state" "$tmp/state"
cp -r "$fx/cycles/boot1" "$tmp/root"
mkdir -p "$tmp/root/etc" "$tmp/lib"
"$SUSPEND_SYNC" --state-dir="$tmp/state" --history-dir="$tmp/lib" --root="$tmp/root" record-cycle
cp "$(ls "$tmp"/state/history/*.json | head -1)" "$tmp/state/last.json"
[[ -s $tmp/state/eta-learned ]] || bad "record-cycle wrote no eta-learned"

# ASan (the developer build) checks that its runtime comes first; the preload is ours to place
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
common=(--root="$fx/roots/laptop" --sysfs="$fx/sysfs/laptop" --debugfs="$fx/roots/laptop/debugfs"
        --state-dir="$tmp/state")
under() { SUSPEND_SYNC_LOG_LEVEL=debug LD_PRELOAD="$JSON_FORBIDDEN" "$SUSPEND_SYNC" "$@"; }

for pass in unit late; do
        args=(run "${common[@]}")
        [[ $pass == late ]] && args=(run --late "${common[@]}")
        rc=0
        under "${args[@]}" >"$tmp/$pass.out" 2>&1 || rc=$?
        if grep -q '^json-forbidden:' "$tmp/$pass.out"; then
                bad "the $pass pass parsed JSON: $(grep '^json-forbidden:' "$tmp/$pass.out" | head -1)"
        fi
        # the fixture's mounts are not this machine's: 74 (sync errors) is what a pass says here
        [[ $rc == 0 || $rc == 74 ]] || bad "the $pass pass exited $rc"
        grep -q 'The ETA of [1-9][0-9]* mount(s) learned from past sleeps' "$tmp/$pass.out" ||
                bad "the $pass pass learned nothing from eta-learned"
done

# control: the preload stops a verb that parses JSON
rc=0
under plan "${common[@]}" >"$tmp/plan.out" 2>&1 || rc=$?
[[ $rc == 99 ]] && grep -q '^json-forbidden: json_tokener_parse_ex called' "$tmp/plan.out" ||
        bad "control: plan under json-forbidden.so exited $rc without its line"

exit $fail
