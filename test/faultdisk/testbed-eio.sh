#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# EIO: syncfs (`sync -f`) on a disk failing writes, or failing flushes, reports
# "Input/output error"; negative control: the same sync on the healthy disk succeeds.
set -u
source "${TEST_LIB:?}/stack.sh"
require_root_loop_fuse

check_eio() {           # NAME WHAT
        local name=$1 what=$2 mnt out rc=0
        mnt=$(stack_mnt "$name")
        dd if=/dev/urandom of="$mnt/ok" bs=1M count=1 status=none || fail "dd"
        sync -f "$mnt" || fail "$name: sync -f on the healthy disk failed"
        dd if=/dev/urandom of="$mnt/bad" bs=1M count=1 status=none || fail "dd"
        stack_ctl "$name" eio "$what" on >/dev/null || fail "eio on"
        out=$(sync -f "$mnt" 2>&1) || rc=$?
        stack_ctl "$name" eio "$what" off >/dev/null || fail "eio off"
        [[ $rc != 0 ]] || fail "$name: sync -f succeeded with eio $what"
        grep -q "Input/output error" <<<"$out" || fail "$name: unexpected error: $out"
        echo "$name: eio $what -> sync -f rc=$rc: $out"
        local key=failed_writes; [[ $what == flush ]] && key=failed_flushes
        [[ $(stack_get "$name" $key) -gt 0 ]] || fail "$name: $key not counted"
}

stack_setup ew ext4 || fail "setup"
check_eio ew write
stack_setup ef ext4 || fail "setup"
check_eio ef flush
echo "PASS"
