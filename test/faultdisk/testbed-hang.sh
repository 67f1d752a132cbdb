#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Hang: a syncfs (`sync -f`) on a hung faultdisk blocks (parked > 0) and completes after resume;
# the automatic resume (hang-max) fires by itself; the same for the passthrough ("network") mode.
set -u
source "${TEST_LIB:?}/stack.sh"
require_root_loop_fuse

wait_parked() {         # NAME: until parked > 0 (10 s)
        local i
        for ((i = 0; i < 100; i++)); do
                [[ $(stack_get "$1" parked) -gt 0 ]] && return 0
                sleep 0.1
        done
        return 1
}

wait_exit() {           # PID SECONDS: wait for our child, return its status (124 on timeout)
        local i
        for ((i = 0; i < $2 * 10; i++)); do
                kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
                sleep 0.1
        done
        return 124
}

hang_and_resume() {     # NAME MODE FILE
        local name=$1 mode=$2 file=$3 pid rc
        dd if=/dev/urandom of="$file" bs=1M count=2 status=none || fail "dd"
        stack_ctl "$name" hang "$mode" >/dev/null || fail "hang"
        sync -f "$(dirname "$file")" &
        pid=$!
        wait_parked "$name" || fail "$name: no request parked while hung"
        sleep 1
        kill -0 $pid 2>/dev/null || fail "$name: sync -f returned on a hung disk"
        echo "$name: sync -f blocked, parked=$(stack_get "$name" parked)"
        stack_ctl "$name" resume >/dev/null || fail "resume"
        wait_exit $pid 20; rc=$?
        [[ $rc == 0 ]] || fail "$name: sync -f after resume: rc=$rc"
        [[ $(stack_get "$name" parked) == 0 ]] || fail "$name: requests still parked"
        echo "$name: sync -f completed after resume"
}

stack_setup h ext4 || fail "setup"
hang_and_resume h io "$(stack_mnt h)/f1"

# Automatic resume after hang-max, without any resume command.
stack_ctl h hang-max 2s >/dev/null || fail "hang-max"
dd if=/dev/urandom of="$(stack_mnt h)/f2" bs=1M count=1 status=none || fail "dd"
stack_ctl h hang all >/dev/null || fail "hang"
t0=$(date +%s%N)
sync -f "$(stack_mnt h)" &
pid=$!
wait_parked h || fail "no request parked while hung"
wait_exit $pid 20; rc=$?
t1=$(date +%s%N)
[[ $rc == 0 ]] || fail "sync -f after auto-resume: rc=$rc"
[[ $(stack_get h auto_resumes) -ge 1 ]] || fail "auto_resumes counter not incremented"
[[ $(stack_get h hung) == none ]] || fail "still hung after auto-resume"
(( t1 - t0 >= 1500000000 )) || fail "sync finished too early ($(( (t1 - t0) / 1000000 )) ms) for a 2 s hang"
echo "auto-resume fired after $(( (t1 - t0) / 1000000 )) ms"

# Passthrough mode: dirty pages in the kernel writeback cache, the server hangs like a dead NFS.
stack_passthrough net || fail "passthrough setup"
hang_and_resume net all "$(stack_mnt net)/f3"
cmp -s "$(stack_mnt net)/f3" "$(stack_dir net)/lower/f3" || fail "passthrough data differs"
findmnt -n -o FSTYPE "$(stack_mnt net)" | grep -qx fuse.faultdisk || fail "fstype is not fuse.faultdisk"
echo "PASS"
