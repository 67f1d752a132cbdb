#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The passes against what killed them before (review AS, AS-3: json-c before 0.18, Debian 12's 0.16
# among them, crashes when an allocation fails while it parses an object's key, and every pass
# parsed the ETA's learned times as JSON). The unit's pass and the late pass run on the laptop
# fixture with a state directory holding what a pass may find there (what the ETA learns, run
# records, the history, a handover). Unprivileged; writes only to a temporary directory.
#
#   pass-robust.sh json    under json-forbidden.so, which ends any process that calls one of
#                          json-c's parsers with status 99 and says so: the passes parse no JSON, and
#                          still read the learned times (their debug line says how many). Control:
#                          `plan`, which parses the records for its "Past ETAs" line, is stopped.
#   pass-robust.sh alloc   every allocation failed in turn: once per allocation N, alloc-fail.so fails
#                          the Nth (ENOMEM) and serves every other. A pass may fail, report or sync
#                          less; it may not die of a signal (ASan's reports abort) or hang (20 s),
#                          nor may a child it forks have a sanitizer's report.
#                          No randomness: every N is tried (how many there are, and which call is
#                          the Nth, move a little with the machine's processes and mounts). Control:
#                          some N land in the parse of what the ETA learns (its debug line says
#                          "Ignoring"). The code before the eta-learned text file died at 22-29
#                          (unit) and 26 (late) N here.
set -euo pipefail

mode=${1:?json or alloc}
fx=$FIXTURES_DIR
tmp=$(mktemp -d /tmp/ss-pass-robust.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# a state directory as a resume leaves it: record-cycle writes what the ETA learns
cp -r "$fx/cycles/state" "$tmp/state0"
cp -r "$fx/cycles/boot1" "$tmp/root"
mkdir -p "$tmp/root/etc" "$tmp/lib"
"$SUSPEND_SYNC" --state-dir="$tmp/state0" --history-dir="$tmp/lib" --root="$tmp/root" record-cycle
cp "$(ls "$tmp"/state0/history/*.json | head -1)" "$tmp/state0/last.json"
[[ -s $tmp/state0/eta-learned ]] || bad "record-cycle wrote no eta-learned"

# ASan (the developer build) checks that its runtime comes first; the preload is ours to place.
# Leaks on the paths an ENOMEM takes are not what this checks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0:abort_on_error=1"
export SUSPEND_SYNC_LOG_LEVEL=debug
common=(--root="$fx/roots/laptop" --sysfs="$fx/sysfs/laptop" --debugfs="$fx/roots/laptop/debugfs"
        --state-dir="$tmp/state")
fresh_state() { rm -rf "$tmp/state" && cp -r "$tmp/state0" "$tmp/state"; }
pass_args() { if [[ $1 == late ]]; then echo "run --late"; else echo run; fi; }

if [[ $mode == json ]]; then
        for pass in unit late; do
                fresh_state
                rc=0
                # shellcheck disable=SC2046
                LD_PRELOAD="$JSON_FORBIDDEN" "$SUSPEND_SYNC" $(pass_args $pass) "${common[@]}" >"$tmp/$pass.out" 2>&1 || rc=$?
                if grep -q '^json-forbidden:' "$tmp/$pass.out"; then
                        bad "the $pass pass parsed JSON: $(grep '^json-forbidden:' "$tmp/$pass.out" | head -1)"
                fi
                # the fixture's mounts are not this machine's: 74 (sync errors) is what a pass says here
                [[ $rc == 0 || $rc == 74 ]] || bad "the $pass pass exited $rc"
                grep -q 'The ETA of [1-9][0-9]* mount(s) learned from past sleeps' "$tmp/$pass.out" ||
                        bad "the $pass pass learned nothing from eta-learned"
        done
        # control: the preload stops a verb that parses JSON
        fresh_state
        rc=0
        LD_PRELOAD="$JSON_FORBIDDEN" "$SUSPEND_SYNC" plan "${common[@]}" >"$tmp/plan.out" 2>&1 || rc=$?
        [[ $rc == 99 ]] && grep -q '^json-forbidden: json_tokener_parse_ex called' "$tmp/plan.out" ||
                bad "control: plan under json-forbidden.so exited $rc without its line"
fi

if [[ $mode == alloc ]]; then
        one() { # N PASS: a pass with the Nth allocation failed (0: none)
                fresh_state
                # shellcheck disable=SC2046
                ALLOC_FAIL_AT=$1 LD_PRELOAD="$ALLOC_FAIL" timeout 20 "$SUSPEND_SYNC" $(pass_args "$2") "${common[@]}" \
                        >"$tmp/out" 2>&1
        }
        for pass in unit late; do
                rc=0
                ALLOC_FAIL_COUNT=1 one 0 $pass || rc=$?
                total=$(sed -n 's/^alloc-fail: \([0-9]*\) allocations$/\1/p' "$tmp/out")
                if [[ -z $total || $total -lt 100 ]]; then
                        bad "the $pass pass: no count of its allocations (exit $rc): $(tail -2 "$tmp/out")"
                        continue
                fi
                deaths=0 parse_hit=0
                for ((n = 1; n <= total + 5; n++)); do
                        rc=0
                        one "$n" $pass 2>/dev/null || rc=$?
                        # a forked child (a worker, a bounded reader) that died of it says so on the
                        # same stderr, though the pass goes on and reports that mount failed
                        if ((rc >= 124)) || grep -qE 'ERROR: AddressSanitizer|runtime error:' "$tmp/out"; then
                                deaths=$((deaths + 1))
                                ((deaths <= 3)) && echo "the $pass pass with allocation $n failed: exit $rc; $(grep -m1 -E 'Sanitizer|SUMMARY' "$tmp/out" || tail -1 "$tmp/out")"
                        fi
                        grep -q "^Ignoring '.*/eta-learned': Cannot allocate memory" "$tmp/out" && parse_hit=$((parse_hit + 1))
                done
                echo "the $pass pass: $total allocations, each failed once: $deaths died or hung; $parse_hit in the learned times' parse"
                ((deaths == 0)) || bad "the $pass pass died or hung at $deaths of its allocations"
                ((parse_hit > 0)) || bad "control: no failed allocation reached the $pass pass's parse of eta-learned"
        done
fi
exit $fail
