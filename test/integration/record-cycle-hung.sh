#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# record-cycle (the unit's ExecStopPost=, after resume) with [Metrics] TextfileDirectory= on a
# server that stopped answering (a FUSE passthrough mount hung with "hang all", as a dead NFS
# server): the metrics are written in a bounded child, so record-cycle still records the cycle in the
# history, returns within a few seconds (the configuration read and the 2 s bound; the unit gives
# it TimeoutStopSec=10s), says the directory did not answer, and leaves its child in the kernel
# only until the server answers again. Control: the same directory while the server answers gets
# the textfile. And the history directory itself on that server (/var/lib on a hung NFS root, review
# F, F3): written in a bounded child too, so record-cycle returns, says so, and still writes the
# metrics. Uses the recorded cycles of fixtures/cycles.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
checks_begin

stack_passthrough tf || fail "stack_passthrough tf"
dir=$(stack_mnt tf)/textfile
mkdir -p "$dir"
stack_ctl tf hang-max 60s >/dev/null
ss_on_exit "stack_ctl tf resume >/dev/null 2>&1"
state=$SS_TMP/cycle-state
cp -r "$FIXTURES_DIR/cycles/state" "$state"
printf '[Metrics]\nTextfileDirectory=%s\n' "$dir" >"$SS_TMP/metrics.conf"
rc_() { "$SUSPEND_SYNC" --state-dir="$state" --history-dir="$SS_TMP/lib$1" --config="$SS_TMP/metrics.conf" record-cycle; }
ours() { { pgrep -f -- "--state-dir=$state" || true; } | tr '\n' ' '; }
hist=$(stack_mnt tf)/history
mkdir -p "$hist" "$SS_TMP/tf-local"
printf '[Metrics]\nTextfileDirectory=%s\n' "$SS_TMP/tf-local" >"$SS_TMP/local.conf"

# Control: the server answers.
rc_ 1 >"$SS_TMP/out" 2>&1 || { cat "$SS_TMP/out"; fail "record-cycle failed with the server answering"; }
[[ -s $dir/suspend_sync.prom ]] && ok "control: the textfile is written while the server answers" ||
        fail "control: no textfile in $dir"
rm -f "$dir/suspend_sync.prom"

stack_ctl tf hang all >/dev/null
t0=$(date +%s%N)
rc=0
SUSPEND_SYNC_LOG_LEVEL=debug timeout -s KILL 15 "$SUSPEND_SYNC" --state-dir="$state" --history-dir="$SS_TMP/lib2" \
        --config="$SS_TMP/metrics.conf" record-cycle >"$SS_TMP/out" 2>&1 || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$SS_TMP/out"
echo "record-cycle with the metrics directory hung: exit $rc after $ms ms; left in the kernel: [$(ours)]"
((rc != 137 && ms <= 5000)) && ok "record-cycle returned after $ms ms (exit $rc)" ||
        fail "record-cycle did not return within 5 s (exit $rc after $ms ms)"
grep -q "Metrics directory '$dir' did not answer within 2s" "$SS_TMP/out" &&
        ok "it says the metrics directory did not answer" || fail "no word of the hung metrics directory"
n=$(find "$SS_TMP/lib2" -name '*.json' 2>/dev/null | wc -l)
((n == 1)) && ok "the cycle is in the history all the same" || fail "$n cycle files in the history, expected 1"

# The history directory on the hung server, the metrics elsewhere.
t0=$(date +%s%N)
rc=0
timeout -s KILL 15 "$SUSPEND_SYNC" --state-dir="$state" --history-dir="$hist" --config="$SS_TMP/local.conf" \
        record-cycle >"$SS_TMP/out" 2>&1 || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$SS_TMP/out"
echo "record-cycle with the history directory hung: exit $rc after $ms ms; left in the kernel: [$(ours)]"
((rc != 137 && ms <= 7000)) && ok "record-cycle returned after $ms ms with the history hung (exit $rc)" ||
        fail "record-cycle did not return within 7 s with the history hung (exit $rc after $ms ms)"
grep -q "History directory '$hist' did not answer within 3s" "$SS_TMP/out" &&
        ok "it says the history directory did not answer" || fail "no word of the hung history directory"
[[ -s $SS_TMP/tf-local/suspend_sync.prom ]] && ok "the metrics are written all the same" ||
        fail "no textfile in $SS_TMP/tf-local"

stack_ctl tf resume >/dev/null
for ((i = 0; i < 100; i++)); do [[ -z $(ours) ]] && break; sleep 0.1; done
[[ -z $(ours) ]] && ok "no process left once the server answers" || fail "processes left: $(ours)"

checks_end record-cycle-hung
