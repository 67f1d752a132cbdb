#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression (issue 9 case 10): run inside a minimal chroot whose root is a directory (not a mount
# point) with /proc, /sys and /dev bound in, `plan` listed only those mounts and 0 to sync although
# the filesystem holding the root was dirty, and the pass called itself complete. The tool must see
# that its view is restricted, sync "/" itself (syncfs on the root directory reaches its superblock)
# and never claim a complete pass.
#
# The chroot is built by hand on a fault disk (ext4): the binary and the libraries ldd names, a
# config, a state directory. 4 MiB written into the chroot, `run` inside it, then a power cut: the
# data must survive. Checks `plan --json`: "/" planned for sync, complete=false, view_restricted=true.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
command -v ldd >/dev/null || skip "ldd missing"

stack_setup cv ext4 128M
mnt=$(stack_mnt cv)
root=$mnt/chroot
binds=()
unbind() {
        local i
        for ((i = ${#binds[@]} - 1; i >= 0; i--)); do
                umount "${binds[i]}" 2>/dev/null || umount -l "${binds[i]}" 2>/dev/null || true
        done
        binds=()
}
ss_on_exit unbind

# Negative control: 4 MiB written and a power cut without any sync must be lost (else the check
# below could not tell a synced run from a lucky one).
mkdir -p "$root"
sync -f "$mnt"
"$FAULTDISK" gen 4343 4194304 >"$root/control"
stack_power_cut cv 0 4343 >/dev/null || fail "power cut failed"
stack_mount cv || fail "cannot mount after the power cut"
if "$FAULTDISK" gen 4343 4194304 | cmp -s - "$root/control" 2>/dev/null; then
        fail "negative control: 4 MiB survived a power cut without any sync"
fi
echo "negative control: a power cut without a sync lost the 4 MiB"
rm -f "$root/control"

mkdir -p "$root"/{proc,sys,dev,state}
cp "$SUSPEND_SYNC" "$root/suspend-sync"
while read -r lib; do
        cp --parents -L "$lib" "$root/"
done < <(ldd "$SUSPEND_SYNC" | grep -o '/[^ ]*' | sort -u)
for d in proc sys dev; do
        mount --bind "/$d" "$root/$d"
        binds+=("$root/$d")
done
# Only "/" is ours here; whatever the other processes of this shared machine hold (reached through
# their open files) is left alone.
printf '[Sync]\nMountTimeoutSec=20s\nDeadlineSec=30s\n[Kernel]\nSyncOnSuspend=keep\n[Rule our-root]\nPath=/\nAction=auto\n[Rule everything-else]\nAction=skip\n' \
        >"$root/suspend-sync.conf"
inside() { chroot "$root" /suspend-sync --state-dir=/state --config=/suspend-sync.conf "$@"; }

mountpoint -q "$root" && fail "test setup: $root must not be a mount point"

"$FAULTDISK" gen 4242 4194304 >"$root/data"
sum=$(md5sum <"$root/data")

failures=0
check() {       # CONDITION-TEXT MESSAGE
        [[ $1 == ok ]] || { echo "FAIL: $2" >&2; failures=$((failures + 1)); }
}
inside plan --json=short >"$SS_TMP/plan.json" 2>"$SS_TMP/plan.err" || { cat "$SS_TMP/plan.err" >&2; fail "plan failed in the chroot"; }
root_actions='[m["action"] for m in j["mounts"] if m["mount_point"] == "/" and m.get("namespace") is None]'
complete=$(ss_json 'j.get("complete", "absent")' <"$SS_TMP/plan.json")
restricted=$(ss_json 'j.get("view_restricted", "absent")' <"$SS_TMP/plan.json")
actions=$(ss_json "$root_actions" <"$SS_TMP/plan.json")
echo "plan in the chroot: complete=$complete view_restricted=$restricted, \"/\": $actions," \
        "$(ss_json 'sum(m["action"] == "sync" for m in j["mounts"])' <"$SS_TMP/plan.json") to sync"
ss_json 'j.get("incomplete_why")' <"$SS_TMP/plan.json" || true
check "$([[ $complete == false ]] && echo ok)" "the chroot's plan claims a complete view (complete=$complete)"
check "$([[ $restricted == true ]] && echo ok)" "the chroot's plan does not see its view is restricted ($restricted)"
check "$([[ $actions == "['sync']" ]] && echo ok)" "\"/\" is not planned for sync in the chroot ($actions)"

rc=0
inside run >"$SS_TMP/run.log" 2>&1 || rc=$?
cat "$SS_TMP/run.log"
check "$( ((rc == 0)) && echo ok)" "run in the chroot exited $rc"
outcome=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j.get("complete", "absent"), "synced" in [m["outcome"] for m in j["mounts"] if m["mount_point"] == "/"])' "$root/state/last.json")
echo "run record: complete, / synced: $outcome"
check "$([[ $outcome == "False True" ]] && echo ok)" "run record: $outcome"

# The same chroot seen through a read-only bind of the writable filesystem (review finding 9):
# statfs() says ST_RDONLY for the mount, but the superblock takes writes through $mnt, so "/" must
# still be planned for sync, not skipped as read-only.
ro=$SS_TMP/ro
mkdir -p "$ro"
mount --rbind "$mnt" "$ro"
binds+=("$ro")
mount -o remount,bind,ro "$ro"
chroot "$ro/chroot" /suspend-sync --config=/suspend-sync.conf plan --json=short >"$SS_TMP/plan-ro.json" \
        2>"$SS_TMP/plan-ro.err" || { cat "$SS_TMP/plan-ro.err" >&2; fail "plan failed in the read-only view"; }
actions=$(ss_json "$root_actions" <"$SS_TMP/plan-ro.json")
echo "plan through a read-only bind: \"/\": $actions"
check "$([[ $actions == "['sync']" ]] && echo ok)" "\"/\" is not planned for sync through a read-only bind ($actions)"
umount -R "$ro" || umount -l "$ro"
unset 'binds[-1]'

# Power cut right after the run: what the run synced must survive.
unbind
stack_power_cut cv 0 4242 >/dev/null || fail "power cut failed"
stack_mount cv || fail "cannot mount after the power cut"
got=$(md5sum <"$root/data" 2>/dev/null || echo missing)
check "$([[ $got == "$sum" ]] && echo ok)" "4 MiB in the chroot lost after the run and a power cut"
((failures == 0)) || fail "$failures check(s) failed"
echo "power cut after the run: 4 MiB in the chroot intact"
echo "PASS"
