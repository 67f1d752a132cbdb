#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 5 acceptance: a loop filesystem with dirty data mounted only inside `unshare -m` (invisible
# in the host's mount table) is found, shown with its namespace by `plan`, and synced by `run`
# through /proc/PID/root; a power cut taken while the namespace is alive proves it. Negative
# control: a second one in the same namespace, skipped by a rule, loses its data in the same cut.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
require_root_mount_point
command -v unshare >/dev/null || skip "no unshare"

stack_setup ns ext4 128M
stack_setup ctl ext4 128M
stack_umount ns
stack_umount ctl
A=$(stack_mnt ns)
B=$(stack_mnt ctl)
seed=$RANDOM
echo "seed=$seed"

# The namespace: mount both, write, then wait until told to exit.
fifo=$SS_TMP/go
mkfifo "$fifo"
unshare -m --propagation private bash -c '
        mount -o commit=600 "$1" "$2" && mount -o commit=600 "$3" "$4" || exit 1
        source "$TEST_LIB/stack.sh"
        oracle_write "$2" 8 "$5" >/dev/null && oracle_write "$4" 8 "$5" >/dev/null
        touch "$6.ready"
        read -r _ <"$6"
' ns "$(stack_dev ns)" "$A" "$(stack_dev ctl)" "$B" "$seed" "$fifo" &
nspid=$!
for ((i = 0; i < 100; i++)); do [[ -e $fifo.ready ]] && break; sleep 0.1; done
[[ -e $fifo.ready ]] || fail "namespace did not come up"
release() { [[ -n ${nspid:-} ]] && { echo go >"$fifo" & wait "$nspid" 2>/dev/null; nspid=; } || true; }
ss_on_exit release

echo "control disk after setup: $(stack_ctl ctl status | tr ' ' '\n' | grep -E '^(writes|flushes|dirty_blocks)=' | tr '\n' ' ')"
findmnt -rn -o TARGET | grep -qxF "$A" && fail "the mount is visible in the host namespace"

ss_config "[Rule control]
Path=$B
Action=skip"
plan=$SS_TMP/plan.json
ss plan --json=short >"$plan"
ns=$(ss_mount_field "$plan" "$A" namespace)
path=$(ss_mount_field "$plan" "$A" path)
echo "plan: $A in $ns via $path: $(ss_mount_field "$plan" "$A" action)"
[[ $ns == mnt:* ]] || fail "namespace not shown"
[[ $path == /proc/*/root$A ]] || fail "not reached through /proc/PID/root"
[[ $(ss_mount_field "$plan" "$A" action) == sync ]] || fail "not planned for sync"
echo "control disk before run: $(stack_ctl ctl status | tr ' ' '\n' | grep -E '^(writes|flushes|dirty_blocks)=' | tr '\n' ' ')"
ss run
status=$SS_TMP/status.json
ss status --json=short >"$status"
[[ $(ss_mount_field "$status" "$A" outcome) == synced ]] || fail "not synced"

echo "control disk before the cut: $(stack_ctl ctl status | tr ' ' '\n' | grep -E '^(writes|flushes|dirty_blocks|bytes_flushed)=' | tr '\n' ' ')"
echo "control: $(ss_mount_field "$status" "$B" outcome) ($(ss_mount_field "$status" "$B" reason))"
# Power cut while the namespace still holds the mounts, then let it go (its unmount writes vanish).
stack_ctl ns power-cut keep=500 "seed=$seed" >/dev/null
stack_ctl ctl power-cut keep=0 "seed=$seed" >/dev/null
release
stack_ctl ns power-on >/dev/null
stack_ctl ctl power-on >/dev/null
for n in ns ctl; do
        stack_power_cut_and_remount "$n" 0 0 >/dev/null   # fresh loop device, clean page cache
done
oracle_check "$A" 8 "$seed" || fail "data synced through the namespace was lost (seed $seed)"
if oracle_check "$B" 8 "$seed" >/dev/null 2>&1; then
        fail "negative control: unsynced data survived the power cut"
fi
echo "negative control: the skipped mount lost its data, as it must"
echo PASS
