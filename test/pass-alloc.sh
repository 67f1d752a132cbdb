#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every allocation of a pass failed in turn (review AS; AS-3 was a crash there): the unit's pass and
# the late pass run on the laptop fixture, with a state directory holding what the ETA learns and
# run records, once per allocation N with alloc-fail.so failing the Nth (ENOMEM) and every other
# one served. A pass may fail, report or sync less; it may not die of a signal (ASan's reports abort)
# or hang (20 s). Deterministic: the same N fail the same call on every run. Control: some N must
# land in the parse of what the ETA learns (its debug line says "Ignoring"), so the sweep reaches it.
# The code before the eta-learned text file died at 29 (unit) and 26 (late) N here. Unprivileged.
set -euo pipefail

fx=$FIXTURES_DIR
tmp=$(mktemp -d /tmp/ss-pass-alloc.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

cp -r "$fx/cycles/state" "$tmp/state0"
cp -r "$fx/cycles/boot1" "$tmp/root"
mkdir -p "$tmp/root/etc" "$tmp/lib"
"$SUSPEND_SYNC" --state-dir="$tmp/state0" --history-dir="$tmp/lib" --root="$tmp/root" record-cycle
cp "$(ls "$tmp"/state0/history/*.json | head -1)" "$tmp/state0/last.json"

# ASan (the developer build) checks that its runtime comes first; the preload is ours to place.
# Leaks on the paths an ENOMEM takes are not what this checks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0:abort_on_error=1"
export SUSPEND_SYNC_LOG_LEVEL=debug

one() { # N PASS-ARGS...: exit status of one pass with the Nth allocation failed (0: none failed)
        local n=$1
        shift
        rm -rf "$tmp/state"
        cp -r "$tmp/state0" "$tmp/state"
        ALLOC_FAIL_AT=$n LD_PRELOAD="$ALLOC_FAIL" timeout 20 "$SUSPEND_SYNC" run "$@" --root="$fx/roots/laptop" \
                --sysfs="$fx/sysfs/laptop" --debugfs="$fx/roots/laptop/debugfs" --state-dir="$tmp/state" \
                >"$tmp/out" 2>&1
}

for pass in unit late; do
        args=()
        [[ $pass == late ]] && args=(--late)
        rc=0
        ALLOC_FAIL_COUNT=1 one 0 "${args[@]}" || rc=$?
        total=$(sed -n 's/^alloc-fail: \([0-9]*\) allocations$/\1/p' "$tmp/out")
        if [[ -z $total || $total -lt 100 ]]; then
                bad "the $pass pass: no count of its allocations (exit $rc): $(tail -2 "$tmp/out")"
                continue
        fi
        deaths=0 parse_hit=0
        for ((n = 1; n <= total + 5; n++)); do
                rc=0
                one "$n" "${args[@]}" 2>/dev/null || rc=$?
                if ((rc >= 124)); then
                        deaths=$((deaths + 1))
                        ((deaths <= 3)) && echo "the $pass pass with allocation $n failed: exit $rc; $(grep -m1 -E 'Sanitizer|SUMMARY' "$tmp/out" || tail -1 "$tmp/out")"
                fi
                grep -q "^Ignoring '.*/eta-learned': Cannot allocate memory" "$tmp/out" && parse_hit=$((parse_hit + 1))
        done
        echo "the $pass pass: $total allocations, each failed once: $deaths died or hung; $parse_hit in the learned times' parse"
        ((deaths == 0)) || bad "the $pass pass died or hung at $deaths of its allocations"
        ((parse_hit > 0)) || bad "control: no failed allocation reached the $pass pass's parse of eta-learned"
done
exit $fail
