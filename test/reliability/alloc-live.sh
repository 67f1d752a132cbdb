#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A sleep's two passes on this machine as it is, with every allocation of one of them failed in turn
# (alloc-fail.so: the Nth fails with ENOMEM, every other is served; review AS did it by hand, and the
# unit test pass-alloc does it on a fixture, where the knob is never turned off). Per N: the unit's
# pass, then the late pass (system-sleep entry installed, so the unit's pass may leave commits to
# the late pass: DeferCommit=), KeepCheapSync=no so that the late pass runs and decides the knob (a
# fixture's plain file); the host's mounts are synced, not ruled out (SS_HERMETIC=0). Checked:
#   - no pass dies of a signal, hangs (60 s), or has a sanitizer's report, nor does a child of it;
#   - the knob is 0 after the late pass only when that pass exited 0 and synced every superblock it
#     planned, as many as without a failure ("Synced K of K superblocks (0 timed out, 0 failed", K
#     the control's: a failure that shrank the plan would print K' of K'): a failed allocation may
#     keep the kernel's sync on, never turn it off over something left unsynced;
#   - control: without a failure the late pass turns the knob off here, having synced at least one
#     superblock (else the sweep proves nothing about the decision), and some N keep it on. Whether
#     the unit's pass left commits to the late pass (DeferCommit=) is said, not required: it depends
#     on the machine's filesystems.
# Every N is tried (no randomness); how many there are moves a little with the machine. ~90 s here.
# What it cannot tell apart: a knob rightly turned off over a device proven stuck or a filesystem
# unmounted meanwhile fails it (neither happens on a test machine left alone).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin
[[ -n ${ALLOC_FAIL:-} && -r $ALLOC_FAIL ]] || skip "ALLOC_FAIL (alloc-fail.so) not built"
ss_debugfs || skip "debugfs not available"

SS_HERMETIC=0 ss_config "[Kernel]
KeepCheapSync=no"
ss_knob_fixture
# ASan (the developer build) checks that its runtime comes first; the preload is ours to place.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:detect_leaks=0:abort_on_error=1"
# the lines read below: "Synced ..." (info), "Left N superblock(s) to the late pass" (debug)
export SUSPEND_SYNC_LOG_LEVEL=debug
out=$REL_TMP/out

pass() { # N ARGS...: one pass with its Nth allocation failed (0: none)
        local n=$1
        shift
        ALLOC_FAIL_AT=$n LD_PRELOAD=$ALLOC_FAIL timeout 60 "$SUSPEND_SYNC" --state-dir="$SS_STATE" \
                --config="$SS_CONF" --sysfs="$sys" "$@" >>"$out" 2>&1
}
cycle() { # unit|late N: a unit's pass and a late pass, the one named with allocation N failed
        local nu=0 nl=0
        [[ $1 == unit ]] && nu=$2 || nl=$2
        find "$SS_STATE" -mindepth 1 -delete
        : >"$out"
        echo 1 >"$knob"
        RU=0 RL=0
        pass "$nu" --trigger=unit run || RU=$?
        # the late pass's own lines: what follows the unit's
        LATE_FROM=$(wc -l <"$out")
        pass "$nl" --trigger=hook --late run || RL=$?
        K=$(k)
}

late_synced() { # the late pass's "Synced K of K ..., 0 failed" line: K; nothing when not all
        tail -n +"$((LATE_FROM + 1))" "$out" |
                sed -nE 's/^Synced ([0-9]+) of \1 superblocks \(0 timed out, 0 failed.*/\1/p' | tail -1
}
cycle late 0
[[ $K == 0 ]] ||
        skip "the late pass keeps the kernel's sync on here even without a failure (nothing to sweep): $(tail -3 "$out" | tr '\n' ' ')"
k_all=$(late_synced)
[[ -n $k_all && $k_all -ge 1 ]] || skip "the late pass synced nothing here (nothing to sweep): $(tail -3 "$out" | tr '\n' ' ')"
deferred=$(head -n "$LATE_FROM" "$out" | sed -nE 's/.*Left ([0-9]+) superblock\(s\) to the late pass.*/\1/p' | tail -1)
echo "control: without a failure the late pass synced $k_all superblock(s) and turned the knob off; the unit's pass left ${deferred:-0} commit(s) to it"
fails=0
for which in unit late; do
        : >"$out"
        find "$SS_STATE" -mindepth 1 -delete
        echo 1 >"$knob"
        ALLOC_FAIL_COUNT=1 pass 0 --trigger=unit run || true
        ALLOC_FAIL_COUNT=1 pass 0 --trigger=hook --late run || true
        total=$(sed -n 's/^alloc-fail: \([0-9]*\) allocations$/\1/p' "$out" | sed -n "$([[ $which == unit ]] && echo 1 || echo 2)p")
        [[ -n $total && $total -gt 100 ]] || fail "no count of the $which pass's allocations: $(tail -3 "$out")"
        deaths=0 off=0 kept=0 bad_off=0
        for ((n = 1; n <= total + 5; n++)); do
                cycle "$which" "$n" 2>/dev/null
                if ((RU >= 124 || RL >= 124)) || grep -qE 'ERROR: AddressSanitizer|runtime error:' "$out"; then
                        deaths=$((deaths + 1))
                        ((deaths <= 3)) && echo "$which pass, allocation $n failed: exits $RU/$RL; $(grep -m1 -E 'Sanitizer|SUMMARY' "$out" || tail -1 "$out")"
                fi
                if [[ $K == 0 ]]; then
                        off=$((off + 1))
                        if ((RL != 0)) || [[ $(late_synced) != "$k_all" ]]; then
                                bad_off=$((bad_off + 1))
                                ((bad_off <= 3)) && echo "$which pass, allocation $n failed: the knob turned off after: $(tail -n +"$((LATE_FROM + 1))" "$out" | tail -3 | tr '\n' ' ') (exit $RL)"
                        fi
                else
                        kept=$((kept + 1))
                fi
        done
        echo "$which pass: $total allocations, each failed once: $deaths died or hung; knob off $off times, on $kept; off without a clean late pass: $bad_off"
        ((deaths == 0)) || { echo "FAIL: the passes died or hung at $deaths allocations of the $which pass" >&2; fails=$((fails + 1)); }
        ((bad_off == 0)) || { echo "FAIL: the knob was turned off over a late pass that did not sync everything ($bad_off)" >&2; fails=$((fails + 1)); }
        [[ $which == unit ]] || ((kept > 0)) || { echo "FAIL: control: no failed allocation of the late pass kept the knob on" >&2; fails=$((fails + 1)); }
done
((fails == 0)) || exit 1
echo PASS
