#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs last in the testbed suite: nothing made by the suite may remain — no ledger entry, no mount,
# no loop device backed by a file under the work dir, no faultdisk daemon, no zombie.
set -u
source "${TEST_LIB:?}/common.sh"
SS_TEST_WORKDIR=${SS_TEST_WORKDIR:-/var/tmp/suspend-sync-test}
SS_TEST_LEDGER=${SS_TEST_LEDGER:-/run/suspend-sync-test/ledger}
require_root
bad=0
leak() { echo "LEAK: $*"; bad=1; }

for e in "$SS_TEST_LEDGER"/*/; do
        [[ -d $e ]] || continue
        # entries of stacks built under another work dir (another suite running now) are not ours
        [[ $(cat "$e/workdir" 2>/dev/null) == "$SS_TEST_WORKDIR"/* ]] || continue
        leak "ledger entry $e: $(grep -H . "$e"* 2>/dev/null | tr '\n' ' ')"
done
while read -r target fstype; do
        leak "mount $target ($fstype)"
done < <(findmnt -rn -o TARGET,FSTYPE | awk -v p="$SS_TEST_WORKDIR/" 'index($1, p) == 1')
while read -r dev back; do
        leak "loop device $dev backed by $back"
done < <(losetup -ln -O NAME,BACK-FILE | awk -v p="$SS_TEST_WORKDIR/" 'index($2, p) == 1')
while read -r pid args; do
        leak "process $pid: $args"
done < <(ps -eo pid=,args= | awk -v p="$SS_TEST_WORKDIR/" 'index($0, p) && !/awk/')
# A zombie is a leak when it stays: a daemon the suite stopped (ntfs-3g after its unmount) has been
# handed to PID 1, which reaps it in its own time, so one seen at once is looked at again for a while.
zombies() { ps -eo pid=,stat=,args= | awk '$2 ~ /^Z/ && /faultdisk|sync|losetup|mount|mkfs/'; }
for _ in $(seq 50); do
        [[ -z $(zombies) ]] && break
        sleep 0.1
done
while read -r pid _ args; do
        leak "zombie $pid: $args"
done < <(zombies)

[[ $bad == 0 ]] || exit 1
echo "PASS: no ledger entry, mount, loop device, daemon or zombie left"
