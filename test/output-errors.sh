#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Output write errors are always reported (issue 13 §5): every verb that prints, writing to
# /dev/full, exits non-zero and says so once. Negative control: the same commands to /dev/null
# succeed. Unprivileged.
set -uo pipefail

fx=$FIXTURES_DIR
tmp=$(mktemp -d /tmp/ss-output-errors.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp -r "$fx/cycles/state" "$tmp/state"
common=(--root="$fx/roots/laptop" --sysfs="$fx/sysfs/laptop" --debugfs="$tmp/no-debugfs"
        --state-dir="$tmp/state" --history-dir="$tmp/lib")
fail=0
[[ -w /dev/full ]] || { echo "SKIP: no /dev/full"; exit 77; }

for verb in plan "plan --json=short" status "status --json=pretty" history "history --json=short" metrics plot \
            cat-config "--json=help plan" "--help" "--version"; do
        # shellcheck disable=SC2086 # verb and its options, word-split on purpose
        if ! "$SUSPEND_SYNC" "${common[@]}" $verb >/dev/null 2>"$tmp/err"; then
                echo "FAIL: '$verb' >/dev/null failed: $(cat "$tmp/err")"; fail=1; continue
        fi
        # shellcheck disable=SC2086
        "$SUSPEND_SYNC" "${common[@]}" $verb >/dev/full 2>"$tmp/err"
        rc=$?
        n=$(grep -c -i "failed to write" "$tmp/err")
        if [[ $rc == 0 || $n != 1 ]]; then
                echo "FAIL: '$verb' >/dev/full: exit $rc, $n error line(s): $(cat "$tmp/err")"; fail=1
        else
                echo "ok: '$verb' >/dev/full: exit $rc, '$(grep -i 'failed to write' "$tmp/err")'"
        fi
done
# A script that asks a verb without JSON output for JSON gets an error, not text (review B, F9);
# the JSON verbs take it (above).
for verb in cat-config metrics plot; do
        # shellcheck disable=SC2086
        out=$("$SUSPEND_SYNC" "${common[@]}" --json=short $verb 2>"$tmp/err")
        rc=$?
        if [[ $rc != 2 || -n $out ]] || ! grep -q "'$verb' has no JSON output" "$tmp/err"; then
                echo "FAIL: '--json=short $verb': exit $rc, $(wc -c <<<"$out") bytes out: $(cat "$tmp/err")"; fail=1
        else
                echo "ok: '--json=short $verb' refused: $(cat "$tmp/err")"
        fi
done
# --trigger= selects the pass (review X, X1): a word it does not know is refused, not taken for
# 'manual'; the known ones are taken (the control).
out=$("$SUSPEND_SYNC" "${common[@]}" --trigger=bogus plan 2>"$tmp/err")
rc=$?
if [[ $rc != 2 || -n $out ]] || ! grep -q "Invalid --trigger= 'bogus'" "$tmp/err"; then
        echo "FAIL: '--trigger=bogus plan': exit $rc, $(wc -c <<<"$out") bytes out: $(cat "$tmp/err")"; fail=1
else
        echo "ok: '--trigger=bogus plan' refused: $(cat "$tmp/err")"
fi
for t in unit hook manual; do
        if ! "$SUSPEND_SYNC" "${common[@]}" --trigger=$t plan >/dev/null 2>"$tmp/err"; then
                echo "FAIL: '--trigger=$t plan' failed: $(cat "$tmp/err")"; fail=1
        fi
done
exit $fail
