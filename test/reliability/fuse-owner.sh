#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 9 case 6: a FUSE mount without allow_other (gvfs, the document portal, a user's sshfs)
# admits only its owner — root gets EACCES — so every run reported a sync error (exit 3) and the
# unit failed after each sleep. The worker now syncs such a mount as its owner (user_id=/group_id=).
# An unprivileged user (nobody) mounts the fault disk's passthrough FUSE filesystem (kernel
# writeback cache on) without allow_other and writes data; `run` as root must then end with exit 0,
# the mount "synced", and the data in the backing directory. On 664a966: exit 3, "error".
# Also: `run` as a non-root user is refused at once (exit 2) with a clear message.
set -euo pipefail
source "$TEST_LIB/stack.sh"
source "$TEST_LIB/suspend-sync.sh"
source "$(dirname "$0")/lib.sh"
require_root_loop_fuse
ss_init
rel_init

command -v setpriv >/dev/null || { echo "SKIP: setpriv missing"; exit 77; }
getent passwd nobody >/dev/null && getent group nogroup >/dev/null || { echo "SKIP: no nobody/nogroup"; exit 77; }
[[ -u $(command -v fusermount3 || echo /nonexistent) ]] || { echo "SKIP: fusermount3 missing or not setuid"; exit 77; }
as_user() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
uid=$(id -u nobody)
gid=$(getent group nogroup | cut -d: -f3)

# A directory the user may use: its own, below the test work dir (which everyone may traverse).
mkdir -p "$SS_TEST_WORKDIR"
d=$(mktemp -d "$SS_TEST_WORKDIR/fuse-owner.XXXXXX")
chmod 755 "$d"
mkdir "$d/lower" "$d/mnt"
cp "$FAULTDISK" "$d/faultdisk"          # the build tree may be closed to the user
chown -R nobody:nogroup "$d"
pid=

cleanup() {
        if findmnt -rn --mountpoint "$d/mnt" >/dev/null 2>&1; then
                umount "$d/mnt" 2>/dev/null || umount -l "$d/mnt"
        fi
        if [[ -n $pid ]]; then
                for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
                wait "$pid" 2>/dev/null
        fi
        rm -rf --one-file-system "$d"
}
ss_on_exit cleanup

# The daemon runs as the user. libfuse mounts with user_id=/group_id= of its real ids; where
# /dev/fuse is not open to users (0600 in containers) it gets the two capabilities that fusermount3
# would use on its behalf — the mount is the same as a user's own.
caps=
if ! as_user test -r /dev/fuse -a -w /dev/fuse; then
        caps="--inh-caps=+sys_admin,+dac_override --ambient-caps=+sys_admin,+dac_override"
fi
# shellcheck disable=SC2086
as_user $caps "$d/faultdisk" --passthrough="$d/lower" --no-allow-other --control="$d/ctl" "$d/mnt" \
        >"$SS_TMP/faultdisk.log" 2>&1 &
pid=$!
for ((i = 0; i < 100; i++)); do
        [[ -S $d/ctl ]] && "$FAULTDISK" ctl "$d/ctl" ping >/dev/null 2>&1 && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
done
"$FAULTDISK" ctl "$d/ctl" ping >/dev/null 2>&1 || fail "user FUSE mount did not come up: $(cat "$SS_TMP/faultdisk.log")"

opts=$(findmnt -rn -o FS-OPTIONS --mountpoint "$d/mnt")
echo "mount: $(findmnt -rn -o FSTYPE --mountpoint "$d/mnt") $opts"
[[ ,$opts, == *,user_id=$uid,* && ,$opts, != *,allow_other,* ]] || fail "unexpected mount options: $opts"
if ls "$d/mnt" >/dev/null 2>&1; then
        fail "root may enter the mount: the test would prove nothing"
fi
echo "root: $(ls "$d/mnt" 2>&1 || true)"

# Dirty data, written by the owner, in the kernel's writeback cache of the FUSE mount.
as_user sh -c "head -c 4194304 /dev/urandom >'$d/mnt/data' && mkdir '$d/mnt/dir'"
want=$(as_user sha256sum "$d/mnt/data" | cut -d' ' -f1)

rel_config "$d/mnt"
ss plan --json=short >"$REL_TMP/plan.json"
owner=$(ss_json "[m['run_as'] for m in j['mounts'] if m['mount_point'] == '$d/mnt'][0]" <"$REL_TMP/plan.json")
echo "plan: run_as $owner"
[[ $owner == *"'uid': $uid"* && $owner == *"'gid': $gid"* ]] || fail "plan does not name the owner: $owner"
rc=0
ss run >"$REL_TMP/run.log" 2>&1 || rc=$?
ss status --json=short >"$REL_TMP/status.json"
out=$(rel_outcome "$REL_TMP/status.json" "$d/mnt")
echo "run as root: exit $rc, outcome '$out'"
[[ $rc == 0 ]] || { cat "$REL_TMP/run.log"; fail "run exit status $rc (a FUSE mount without allow_other must not be a sync error)"; }
[[ $out == synced* ]] || fail "outcome '$out'"
[[ $out == *"as its owner $uid:$gid"* ]] || fail "reason does not name the owner: '$out'"
got=$(sha256sum <"$d/lower/data" | cut -d' ' -f1)
[[ $got == "$want" ]] || fail "the backing file does not hold the data after the run"
[[ -d $d/lower/dir ]] || fail "directory missing in the backing directory after the run"

# A non-root run is refused at once, with a message, before anything is synced or recorded.
rc=0
as_user "$SUSPEND_SYNC" --state-dir="$d/state" --config="$SS_CONF" run >"$REL_TMP/user.log" 2>&1 || rc=$?
echo "run as nobody: exit $rc: $(head -n 1 "$REL_TMP/user.log")"
[[ $rc == 2 ]] || fail "non-root run: exit $rc, expected 2"
grep -q "'run' needs root" "$REL_TMP/user.log" || fail "non-root run: no clear message"
[[ ! -e $d/state ]] || fail "non-root run created its state directory"
# plan and status still work unprivileged
as_user "$SUSPEND_SYNC" --state-dir="$d/state" --config="$SS_CONF" plan >/dev/null 2>&1 || fail "plan fails unprivileged"
as_user "$SUSPEND_SYNC" --state-dir="$d/state" --config="$SS_CONF" status >/dev/null 2>&1 || fail "status fails unprivileged"

echo PASS
