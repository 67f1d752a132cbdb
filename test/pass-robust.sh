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
#   pass-robust.sh record-cycle
#                          record-cycle (after resume: the unit's ExecStopPost=, or the daemon's)
#                          on the cycles fixture, every allocation failed in turn: it may fail with
#                          a message, never record a cycle other than the control's (review BF: a
#                          record skipped for want of memory left the last cycle without its late
#                          pass, or made an earlier one the last, and it said "Recorded", exit 0).
#                          Not counted against it: an N whose failed allocation is json-c's own
#                          (0.16, Debian 12, may die of it or drop the key it parsed: AS-3, fixed in
#                          0.18), told apart by the backtrace ALLOC_FAIL_SAY prints; the resume
#                          time (the post hook's record not read: the time record-cycle runs at, by
#                          design). ~1.5 min.
set -euo pipefail

mode=${1:?json, alloc or record-cycle}
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
if [[ $mode == record-cycle ]]; then
        # rc_one N [SAY]: record-cycle with the Nth allocation failed (0: none), its cycle in
        # $tmp/lib; SAY 1: the failed allocation's backtrace too (backtrace() loads libgcc_s: not
        # where ld.so itself allocates, N < 10)
        rc_one() {
                rm -rf "$tmp/state" "$tmp/lib"
                cp -r "$fx/cycles/state" "$tmp/state"
                mkdir -p "$tmp/lib"
                # (the preload for record-cycle alone, not for timeout)
                timeout 20 env ALLOC_FAIL_SAY="${2:-0}" ALLOC_FAIL_AT="$1" LD_PRELOAD="$ALLOC_FAIL" "$SUSPEND_SYNC" \
                        --state-dir="$tmp/state" --history-dir="$tmp/lib" --root="$tmp/root" record-cycle >"$tmp/out" 2>&1
        }
        # in_jsonc N: the Nth allocation is json-c's own (its backtrace's first frame past the preload)
        in_jsonc() {
                rc_one "$1" 1 || true
                grep -A12 '^alloc-fail: PID' "$tmp/out" | grep -v -e '^alloc-fail' -e 'libasan' -e 'alloc-fail\.so' |
                        head -1 | grep -q 'libjson-c'
        }
        # the cycle recorded, but its resume time: where the post hook's record cannot be read,
        # record-cycle takes the time it runs at, right after the resume (verb-record-cycle.c
        # resumed_at()), which is another time here, on an old fixture
        cycle_sum() {
                python3 - "$tmp"/lib/cycles/*.json <<'PY' 2>/dev/null | md5sum
import json, sys
for f in sorted(sys.argv[1:]):
    j = json.load(open(f))
    j.pop("resumed_realtime", None)
    print(f.rsplit("/", 1)[-1], json.dumps(j, sort_keys=True))
PY
        }
        rc=0
        ALLOC_FAIL_COUNT=1 rc_one 0 || rc=$?
        total=$(sed -n 's/^alloc-fail: \([0-9]*\) allocations$/\1/p' "$tmp/out")
        control=$(cycle_sum)
        [[ $rc == 0 && -n $total && $(ls "$tmp/lib/cycles" | wc -l) == 1 ]] ||
                bad "control: record-cycle exited $rc, $(ls "$tmp/lib/cycles" 2>/dev/null | wc -l) cycle(s), ${total:-no} allocations"
        wrong=0 said=0 same=0 jsonc=0
        for ((n = 1; n <= ${total:-0} + 5; n++)); do
                rc=0 sum=
                rc_one "$n" || rc=$?
                [[ $rc != 0 ]] || sum=$(cycle_sum)
                bad_one=0
                if ((rc >= 124)) || grep -qE 'ERROR: AddressSanitizer|runtime error:' "$tmp/out"; then
                        bad_one=1
                elif [[ $rc == 0 && $sum != "$control" ]]; then
                        bad_one=1
                fi
                if ((bad_one)) && in_jsonc "$n"; then
                        jsonc=$((jsonc + 1))
                        continue
                fi
                ((bad_one)) && rc_one "$n" || true # as it was, for what follows
                if ((rc >= 124)) || grep -qE 'ERROR: AddressSanitizer|runtime error:' "$tmp/out"; then
                        bad "record-cycle with allocation $n failed died or hung: exit $rc; $(grep -m1 -E 'Sanitizer|SUMMARY' "$tmp/out" || tail -1 "$tmp/out")"
                elif [[ $rc == 0 && $sum == "$control" ]]; then
                        same=$((same + 1))
                elif [[ $rc == 0 ]]; then
                        wrong=$((wrong + 1))
                        ((wrong <= 3)) && echo "record-cycle with allocation $n failed: exit 0, another cycle than the control's: $(grep -v '^alloc-fail\|^/\|(+0x' "$tmp/out" | head -2 | tr '\n' ' ')"
                else
                        said=$((said + 1))
                        grep -qE 'Out of memory|Cannot allocate memory|Failed' "$tmp/out" ||
                                bad "record-cycle with allocation $n failed exited $rc without a word"
                fi
        done
        echo "record-cycle: ${total:-?} allocations, each failed once: $same the control's cycle, $said failed with a message, $wrong another cycle, $jsonc in json-c (not counted)"
        ((wrong == 0)) || bad "record-cycle recorded another cycle than the control's at $wrong N"
        ((said > 0)) || bad "control: no failed allocation made record-cycle fail"
fi
exit $fail
