#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression (test bed): a test that chained its own cleanup in front of _ss_exit_trap as
#     trap 'rc=$?; cleanup_extra; _ss_exit_trap; exit $rc' EXIT
# exited 0 even after `fail`: _ss_exit_trap exits with the status it finds in $? (that of
# cleanup_extra, 0), so the final `exit $rc` never ran. Found when degraded.sh (same pattern) passed
# in meson while printing FAIL; test/integration/run-loop.sh and run-namespace.sh used the pattern,
# so they could not fail. Fixed in test/lib/suspend-sync.sh: extra cleanup is registered with
# ss_on_exit. Checks: (1) under set -e, a test that registers cleanup with ss_on_exit and fails
# exits 1, runs its cleanup and removes $SS_TMP; (2) the same with the old chained trap exits 0
# (the control: the check can see the bug); (3) no script under test/ chains a trap in front of
# _ss_exit_trap any more.
set -uo pipefail
src=${SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
lib=${TEST_LIB:-$src/test/lib}
tmp=$(mktemp -d /tmp/regress-exit-trap.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

script() {              # FILE REGISTRATION-LINE
        cat >"$1" <<EOS
set -euo pipefail
source "$lib/stack.sh"
source "$lib/suspend-sync.sh"
SUSPEND_SYNC=/bin/true ss_init
echo "\$SS_TMP" >"$1.ss_tmp"
cleanup_extra() { touch "$1.cleaned"; }
$2
fail "deliberate failure"
EOS
}

script "$tmp/new.sh" 'ss_on_exit cleanup_extra'
bash "$tmp/new.sh" 2>/dev/null
rc=$?
[[ $rc == 1 ]] || { echo "FAIL: ss_on_exit: exit status $rc after fail, expected 1"; exit 1; }
[[ -e $tmp/new.sh.cleaned ]] || { echo "FAIL: ss_on_exit: the registered cleanup did not run"; exit 1; }
[[ ! -e $(cat "$tmp/new.sh.ss_tmp") ]] || { echo "FAIL: ss_on_exit: SS_TMP left behind"; exit 1; }

script "$tmp/old.sh" "trap 'rc=\$?; cleanup_extra; _ss_exit_trap; exit \$rc' EXIT"
bash "$tmp/old.sh" 2>/dev/null
rc=$?
[[ $rc == 0 ]] && echo "control: the old chained trap still exits 0 after fail (as it did)" ||
        echo "note: the old chained trap now exits $rc after fail"

bad=$(grep -rlE "_ss_exit_trap;[[:space:]]*exit" "$src/test" --include='*.sh' --exclude="$(basename "$0")" || true)
if [[ -n $bad ]]; then
        echo "FAIL: these tests mask their own failures (exit status 0 after fail):"
        echo "$bad" | sed 's/^/  /'
        echo "fix: register the extra cleanup with ss_on_exit instead of an EXIT trap"
        exit 1
fi
echo PASS
