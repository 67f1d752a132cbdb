#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Golden output of "suspend-sync status", human and JSON, on a fixed state directory
# (fixtures/status/state: last.json and a history with one record older than the sleep_action key)
# and the "laptop" fixture root's meminfo. Unprivileged, touches nothing.
# UPDATE_GOLDEN=1 rewrites the golden files.
set -euo pipefail

fx=$FIXTURES_DIR/status
export TZ=UTC LC_ALL=C
fail=0
check() {
        local name=$1; shift
        local got
        got=$("$SUSPEND_SYNC" status --state-dir="$fx/state" --root="$FIXTURES_DIR/roots/laptop" "$@" 2>&1)
        if [[ ${UPDATE_GOLDEN:-} == 1 ]]; then
                printf '%s\n' "$got" >"$fx/$name.golden"
                return
        fi
        if ! diff -u "$fx/$name.golden" <(printf '%s\n' "$got"); then
                echo "FAIL: status $* differs from $name.golden"
                fail=1
        fi
}
check status
check status-json --json=pretty
exit $fail
