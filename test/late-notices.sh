#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# "No bdi stats" is said once per sleep cycle (issue 10): at notice level by the unit's pass (here
# plan without --late, which prepares the same way), not by the late pass (plan --late). Runs on
# the laptop fixture root with a debugfs that does not exist; unprivileged, touches nothing.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
checks_begin

fx=$FIXTURES_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(--root="$fx/roots/laptop" --sysfs="$fx/sysfs/laptop" --debugfs="$tmp/no-debugfs" --state-dir="$tmp/state")

"$SUSPEND_SYNC" plan "${args[@]}" >/dev/null 2>"$tmp/unit.err"
n=$(grep -c "No bdi stats" "$tmp/unit.err" || true)
[[ $n == 1 ]] || { cat "$tmp/unit.err"; fail "main pass: 'No bdi stats' said $n times, expected 1"; }

"$SUSPEND_SYNC" plan --late "${args[@]}" >/dev/null 2>"$tmp/late.err"
n=$(grep -c "No bdi stats" "$tmp/late.err" || true)
[[ $n == 0 ]] || { cat "$tmp/late.err"; fail "late pass: 'No bdi stats' said $n times, expected 0 (debug)"; }
checks_end "late notice"
