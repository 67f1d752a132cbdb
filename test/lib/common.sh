# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# common.sh — the one way a shell test under test/ skips, fails and reports (bash, sourced; stack.sh
# and suspend-sync.sh source it, so a test sources only the library it uses).
#
#   skip REASON...        # print "SKIP: REASON" and exit 77 (meson: skipped): a prerequisite is
#                         # missing here (root, a tool, a kernel feature), never a failure
#   fail MESSAGE...       # print "FAIL: MESSAGE" on stderr and exit 1
#   require_root          # skip "not root" unless we are root
#   require_build_root    # skip unless $BUILD_ROOT is a meson build directory and meson runs
#   tmpfs_mktemp NAME     # print a new directory on tmpfs (/run, else /dev/shm; the caller removes
#                         # it): a state directory as on a real system, where /run is tmpfs. A late
#                         # pass whose records go to a real filesystem keeps the kernel's sync on.
#
# Tests that check many independent things and report them all (hook.sh, install-layout.sh,
# units-verify.sh) switch fail to counting:
#
#   checks_begin          # from here on, fail prints "FAIL: MESSAGE" (stdout) and goes on
#   ok MESSAGE...         # print "ok:   MESSAGE"
#   checks_end WHAT       # exit 1 with "N check(s) failed" if any failed, else print
#                         # "all WHAT checks passed"
#
# The prologue of a test on fault-injection disks is `source "$TEST_LIB/suspend-sync.sh"; ss_begin`
# (test/reliability: `source "$(dirname "$0")/lib.sh"; rel_begin`).

[[ -n ${_SS_COMMON_SH:-} ]] && return 0
_SS_COMMON_SH=1

skip() {
        echo "SKIP: $*"
        exit 77
}

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

require_root() {
        [[ $(id -u) == 0 ]] || skip "not root"
}

require_build_root() {
        [ -n "${BUILD_ROOT:-}" ] || skip "BUILD_ROOT not set"
        [ -f "$BUILD_ROOT/meson-private/coredata.dat" ] || skip "BUILD_ROOT=$BUILD_ROOT is not a meson build directory"
        command -v meson >/dev/null || skip "meson not found"
}

tmpfs_mktemp() {         # NAME
        local base
        for base in /run /dev/shm; do
                if [[ $(stat -f -c %T "$base" 2>/dev/null) == tmpfs ]]; then
                        mktemp -d "$base/$1.XXXXXX"
                        return
                fi
        done
        echo "neither /run nor /dev/shm is a tmpfs: no place for a state directory" >&2
        return 1
}

checks_begin() {
        fails=0
        fail() {
                echo "FAIL: $*"
                fails=$((fails + 1))
        }
}

ok() {
        echo "ok:   $*"
}

checks_end() {          # WHAT
        if [[ ${fails:-0} -gt 0 ]]; then
                echo "$fails check(s) failed"
                exit 1
        fi
        echo "all $1 checks passed"
}
