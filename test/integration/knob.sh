#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 5: /sys/power/sync_on_suspend through the real binary on a fixture sysfs (--sysfs=):
# SyncOnSuspend=off/auto/keep, restore after resume (restore-knob, as ExecStopPost= and the post
# hook call it), restore by the next start after a run was killed with SIGKILL mid-run, manual runs
# and the unit's pass never touching it (only the late pass does), the late pass knowing what the
# unit's pass left unsynced, and an absent knob.
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
# The knob goes off only with debugfs to look at (evidence.h: no dirty data on devices without a
# superblock); a fresh machine may have none mounted.
ss_debugfs || fail "debugfs cannot be mounted: the knob would stay on for want of evidence"

ss_knob_fixture || fail "no fixture sysfs"

# The hermetic configuration of the tests skips every mount but the test's own (Action=skip): the
# unit's pass hands those over as unsynced, which keeps the kernel's sync on. Where the knob must go
# off, the host's root (the one real filesystem of a fresh machine besides ours) is synced instead.
host_root='[Rule host-root]
Path=/
Action=auto'

# off: a complete late pass turns the kernel sync off for this cycle, recording the original.
ss_config "[Kernel]
SyncOnSuspend=off
$host_root"
# The machine is shared: a superblock an earlier test tore down (a FUSE server lazily unmounted, a
# loop device detaching) may linger a while in no mount table, and the view is then incomplete.
# Wait, bounded, until it is gone: the check below needs a complete view.
for ((i = 0; i < 120; i++)); do
        ss --sysfs="$sys" --late plan 2>&1 >/dev/null | grep -q "Incomplete view" || break
        sleep 0.5
done
((i == 0)) || echo "waited $((i / 2)) s for superblocks of earlier tests to go"
# Without the unit's pass (the unit not enabled, or it did not finish): what it would have synced
# (network, FUSE mounts) is not known, so off keeps the kernel sync on, and says why. So does a
# record that is not of this sleep: from the future (another boot's clock), another boot's id.
# The test bed's disk is a loop device on a FUSE file: that FUSE mount (served by root) is left
# out of the late pass, as network and FUSE mounts are.
stack_setup fz ext4 16M
no_record() { # LABEL
        ss --sysfs="$sys" --trigger=hook --late run 2>"$SS_TMP/late.log"
        [[ $(k) == 1 ]] || fail "off, $1: knob is $(k)"
        grep -q "no record of the unit's pass of this sleep" "$SS_TMP/late.log" ||
                fail "off, $1: no word of the missing unit's pass: $(cat "$SS_TMP/late.log")"
}
rm -f "$SS_STATE/handover"
no_record "no record of the unit's pass"
# The knob found at 0 with no change of ours recorded (an administrator's setting, or a record lost:
# review AF, F5): not ours to turn on, and not said to be on.
echo 0 >"$knob"
ss --sysfs="$sys" --trigger=hook --late run 2>"$SS_TMP/late0.log"
[[ $(k) == 0 ]] || fail "a knob found at 0 was changed to $(k)"
grep -q "The kernel's own sync stays off (sync_on_suspend reads 0, set so outside this pass): .*no record of the unit's pass" \
        "$SS_TMP/late0.log" || fail "a knob found at 0 is not said to stay off: $(cat "$SS_TMP/late0.log")"
echo 1 >"$knob"
# A unit's pass that ends before it writes its own record (here: it cannot open its root) leaves
# none of an earlier one's behind (review, stop 26: a sleep called off before any hook left one).
ss_unit_pass_record
! ss --root=/nonexistent --trigger=unit run 2>/dev/null || fail "a unit's pass without its root succeeded"
! grep -qs "^unit " "$SS_STATE/handover" || fail "an earlier unit's record outlived a failed unit's pass"
no_record "a unit's pass that failed after an earlier one's record"
# A unit's pass that cannot take the lock (a manual run holds it) refuses to run and cannot touch
# the handover, so an earlier sleep's record stays there; the token it wrote first, without the
# lock, keeps that record from standing for this sleep (review, stop 26). Likewise a restore-knob
# (the end of a sleep called off) that cannot take the lock: the record stays, the token goes.
ss_unit_pass_record
exec {lock_fd}>"$SS_STATE/lock"
flock -x "$lock_fd"
! ss --sysfs="$sys" --trigger=unit run 2>"$SS_TMP/refused.log" || fail "a unit's pass ran without the lock"
grep -q "refusing to run twice" "$SS_TMP/refused.log" || fail "no word of the lock: $(cat "$SS_TMP/refused.log")"
flock -u "$lock_fd"
grep -q "^unit " "$SS_STATE/handover" || fail "the earlier record is gone: this case tests nothing"
no_record "a unit's pass refused by the lock after an earlier one's record"
# Run by systemd (INVOCATION_ID), the unit's pass waits for the lock (the daemon's pass of this
# sleep may hold it), but no longer than --deadline-max= leaves (review AE, H2: it waited 40 s,
# whatever that said). The wait is one second short of it; here nothing lets go: refused.
flock -x "$lock_fd"
t0=$SECONDS
! INVOCATION_ID=0123456789abcdef0123456789abcdef ss --sysfs="$sys" --trigger=unit --deadline-max=3s run \
        2>"$SS_TMP/waited.log" || fail "a unit's pass ran without the lock"
took=$((SECONDS - t0))
flock -u "$lock_fd"
grep -q "waiting for it, at most [12]" "$SS_TMP/waited.log" && grep -q "refusing to run twice" "$SS_TMP/waited.log" ||
        fail "no wait of at most 2s, then no refusal: $(cat "$SS_TMP/waited.log")"
((took < 15)) || fail "the wait took ${took}s, past --deadline-max=3s"
ss_unit_pass_record
flock -x "$lock_fd"
ss --sysfs="$sys" restore-knob
flock -u "$lock_fd"
exec {lock_fd}>&-
grep -q "^unit " "$SS_STATE/handover" || fail "restore-knob took the record: this case tests nothing"
[[ ! -e $SS_STATE/unit-pass ]] || fail "restore-knob kept the unit's token"
no_record "a restore-knob refused by the lock after the unit's record"
ss_unit_pass_record $((3600 * 1000000))
no_record "a record from the future"
ss_unit_pass_record 0 0123456789abcdef0123456789abcdef
no_record "a record of another boot"
# With it: a complete late pass turns it off; the record is for that one late pass.
ss --sysfs="$sys" --trigger=unit run
grep -q "^unit [0-9]* [0-9a-f]\{32\} $(cat "$SS_STATE/unit-pass")$" "$SS_STATE/handover" ||
        fail "the unit's pass left no record with its token: $(cat "$SS_STATE/handover" "$SS_STATE/unit-pass" 2>&1)"
ss --sysfs="$sys" --trigger=hook --late run
[[ $(k) == 0 ]] || fail "off: knob is $(k) after a complete pass"
[[ $(tr -d '\n' <"$SS_STATE/knob.orig") == 1 ]] || fail "original value not recorded"
! grep -qs "^unit " "$SS_STATE/handover" || fail "the late pass kept the unit's record"
# a manual run never touches it
ss --sysfs="$sys" run
[[ $(k) == 0 ]] || fail "a manual run changed the knob"
# A second late pass after that one unit's pass (a later sleep of suspend-then-hibernate) has no
# record to lean on: it puts the kernel sync back on, and says why.
no_record "a second late pass after one unit's pass"
# resume: restore-knob puts the original back and drops the record
ss_unit_pass_record
ss --sysfs="$sys" restore-knob
[[ $(k) == 1 && ! -e $SS_STATE/knob.orig ]] || fail "restore-knob: knob $(k)"
! grep -qs "^unit " "$SS_STATE/handover" || fail "restore-knob kept the unit's record: $(cat "$SS_STATE/handover")"
ss --sysfs="$sys" restore-knob
[[ $(k) == 1 ]] || fail "restore-knob is not idempotent"
# Review I, I4: the daemon's restore-knob names its pass's token (--token=). Run late, after the
# next sleep's unit pass began, it leaves that pass's mark and record for its late pass; the
# negative control is the restore without a token, which ends whatever stands.
t1=0123456789abcdef0123456789abcdef
ss --sysfs="$sys" --trigger=unit --token=$t1 run
[[ $(cat "$SS_STATE/unit-pass") == "$t1" ]] || fail "run --token= did not write that token: $(cat "$SS_STATE/unit-pass")"
grep -q "^unit [0-9]* [0-9a-f]\{32\} $t1$" "$SS_STATE/handover" || fail "no record of token $t1"
ss --sysfs="$sys" --trigger=unit run
t2=$(cat "$SS_STATE/unit-pass")
[[ $t2 != "$t1" ]] || fail "the next pass did not write a token of its own"
ss --sysfs="$sys" restore-knob --token=$t1
[[ $(cat "$SS_STATE/unit-pass" 2>&1) == "$t2" ]] || fail "a late restore of $t1 removed the next sleep's mark"
grep -q "^unit [0-9]* [0-9a-f]\{32\} $t2$" "$SS_STATE/handover" ||
        fail "a late restore of $t1 removed the next sleep's record: $(cat "$SS_STATE/handover" 2>&1)"
ss --sysfs="$sys" restore-knob --token=$t2
[[ ! -e $SS_STATE/unit-pass ]] || fail "restore-knob --token= kept its own pass's mark"
! grep -qs "^unit " "$SS_STATE/handover" || fail "restore-knob --token= kept its own pass's record"
ss --sysfs="$sys" --trigger=unit run
ss --sysfs="$sys" restore-knob
[[ ! -e $SS_STATE/unit-pass ]] || fail "restore-knob without --token= kept the mark"
# ... nor the daemon's mark of that sleep (review L, L1: the restore of a daemon restarted since),
# in a mount namespace of its own over the daemon's directory; the control: the restore of its own
# token removes it.
made=0
[[ -d /run/suspend-sync-daemon ]] || { mkdir /run/suspend-sync-daemon && made=1; }
out=$(unshare -m --propagation private bash -c '
        set -e
        mount -t tmpfs none /run/suspend-sync-daemon
        "$0" --state-dir="$1" --config="$2" --sysfs="$3" --trigger=unit --token="$4" run 2>/dev/null
        touch /run/suspend-sync-daemon/pass-done
        "$0" --state-dir="$1" --sysfs="$3" restore-knob --token="$5"
        [[ -e /run/suspend-sync-daemon/pass-done ]] && echo kept || echo removed
        "$0" --state-dir="$1" --sysfs="$3" restore-knob --token="$4"
        [[ -e /run/suspend-sync-daemon/pass-done ]] && echo kept || echo removed' \
        "$SUSPEND_SYNC" "$SS_STATE" "$SS_CONF" "$sys" "$t2" "$t1" 2>&1) || true
((made)) && rmdir /run/suspend-sync-daemon
[[ $out == $'kept\nremoved' ]] || fail "the daemon's mark after a restore of another token, then of its own: '$out' (want kept, removed)"
for bad in "ss --sysfs=$sys restore-knob --token=XYZ" "ss --sysfs=$sys plan --token=$t1" \
        "ss --sysfs=$sys --late run --token=$t1" "env INVOCATION_ID=$t1 $SUSPEND_SYNC --state-dir=$SS_STATE restore-knob --token=$t1"; do
        out=$($bad 2>&1) && fail "accepted: $bad"
        grep -q -- "--token=" <<<"$out" || fail "no word of --token= for: $bad: $out"
done
# Action=skip: no pass syncs the mount, so the unit's pass hands it over as unsynced and the late
# pass keeps the kernel's sync on, though the unit's record is there (review, stop 26: with off, or
# auto with a hung device, the knob went to 0 over it). The control is the complete pass above.
ss_config "[Kernel]
SyncOnSuspend=off
[Rule fz]
Path=$(stack_mnt fz)
Action=skip
$host_root"
ss --sysfs="$sys" --trigger=unit run
grep -q "^unsynced $(mountpoint -d "$(stack_mnt fz)") " "$SS_STATE/handover" &&
        grep -q "^unit " "$SS_STATE/handover" ||
        fail "Action=skip: the unit's pass did not hand the mount over: $(cat "$SS_STATE/handover" 2>&1)"
ss --sysfs="$sys" --trigger=hook --late run 2>"$SS_TMP/late.log"
[[ $(k) == 1 ]] || fail "off, Action=skip: knob is $(k): $(cat "$SS_TMP/late.log")"
grep -q "Action=skip) that this pass did not sync" "$SS_TMP/late.log" ||
        fail "off, Action=skip: no word of why the knob stayed on: $(cat "$SS_TMP/late.log")"
ss --sysfs="$sys" restore-knob

# A partitioned disk for the stuck-device case below, made before any disk hangs (losetup -f, partx
# and mkfs look at other loop devices, and wait for the hung one).
# Not before Linux 6.5: without cachestat the partition would be "cannot be told", the knob on.
raw=0
if ss_has_cachestat; then
        raw=1
        ss_on_exit "exec 8>&- 2>/dev/null"
        ss_partitioned_disk "$SS_TMP/pmnt" || fail "no partitioned loop disk"
fi

# keep: never touched, even with a hung mount.
stack_setup hung ext4 64M
echo data >"$(stack_mnt hung)/f"
stack_ctl hung hang-max 120s >/dev/null
stack_ctl hung hang io >/dev/null
# Each scenario below is a sleep cycle of its own: forget the workers earlier ones left stuck on
# the hung disk (otherwise no pass starts another worker there, see stuck-workers.sh) and what the
# unit's pass left unsynced.
fresh_cycle() { rm -f "$SS_STATE/handover"; }
ss_config "[Kernel]
SyncOnSuspend=keep
[Sync]
MountTimeoutSec=1s
DeadlineSec=3s"
ss --sysfs="$sys" --trigger=unit run || true
[[ $(k) == 1 ]] || fail "keep: knob changed"
fresh_cycle

# off without evidence (a sysfs that shows no device counters): slow and stuck cannot be told
# apart, so the kernel sync stays on (issue 9 case 1: fail closed) — also in a late pass of the
# same sleep that does not reach this device (the same bare sysfs: it cannot classify it and leaves
# it to the main pass) and must know from the unit's pass that it was left unsynced (issue 10: the
# knob is the late pass's alone). A late pass that reaches the device and proves it stuck itself
# turns it off: the kernel's serial sync would block there, not write it.
ss_config "[Kernel]
SyncOnSuspend=off
[Sync]
MountTimeoutSec=1s
DeadlineSec=3s
$host_root"
bare=$SS_TMP/bare-sys
mkdir -p "$bare/power"
echo 1 >"$bare/power/sync_on_suspend"
ss --sysfs="$bare" --trigger=unit run || true
[[ $(tr -d '\n' <"$bare/power/sync_on_suspend") == 1 ]] || fail "off, hung mount without evidence: knob turned off"
grep -q "^unsynced $(mountpoint -d "$(stack_mnt hung)") " "$SS_STATE/handover" ||
        fail "the unit's pass did not hand its unsynced mount over: $(cat "$SS_STATE/handover" 2>&1)"
ss --sysfs="$bare" --trigger=hook --late run 2>"$SS_TMP/late.log" || true
[[ $(tr -d '\n' <"$bare/power/sync_on_suspend") == 1 ]] ||
        fail "off: the late pass turned the knob off although the unit's pass left a mount unsynced"
grep -q "left superblocks unsynced (errors, timeouts, Action=skip) that this pass did not sync" "$SS_TMP/late.log" ||
        fail "off: the late pass did not say it kept the knob for the unit's unsynced mount: $(cat "$SS_TMP/late.log")"
# (the first late pass used up the unit's record: this one is given it back)
# With it, a partition written straight to and held open on another disk, whose other partition
# holds an ext4 of ours: the look at block devices' caches (raw-cache.h) asks that disk, the pass
# syncs the partition itself and says so, and the knob goes off (reviews of 4236419 and b63003b: the
# look first kept the knob on, then was skipped whenever a device was stuck, though the kernel's
# sync wakes every flusher first). WritebackFirst=no: the pass's own wake-up of the flusher threads
# would write the partition back first.
if ((raw)); then
        exec 8<>"${SS_PLOOP}p2" # only now: a daemon started since (the test bed's) would hold it open too
        dd if=/dev/urandom of=/dev/fd/8 bs=1M count=4 status=none
        echo data >"$SS_TMP/pmnt/f"
        echo "${SS_PLOOP}p2 holds $(ss_dirty_pages "${SS_PLOOP}p2") dirty pages before the pass"
fi
ss_config "[Kernel]
SyncOnSuspend=off
[Sync]
MountTimeoutSec=1s
DeadlineSec=3s
WritebackFirst=no
$host_root"
ss_unit_pass_record -a
ss --sysfs="$sys" --trigger=hook --late run 2>"$SS_TMP/late.log" || true
[[ $(k) == 0 ]] ||
        fail "off: the late pass proved the device stuck but kept the knob on: $(cat "$SS_TMP/late.log")"
if ((raw)); then
        # A sync elsewhere on this shared machine may write it back first: then it is clean, and this
        # run does not show the pass syncing it (said, not failed).
        if grep -qE "Synced the page cache of block devices written straight to: (.*, )?${SS_PLOOP#/dev/}p2 \([0-9]+ pages\)" \
                "$SS_TMP/late.log"; then
                echo "off, a stuck device: $(grep -o 'Synced the page cache.*' "$SS_TMP/late.log")"
        elif [[ $(ss_dirty_pages "${SS_PLOOP}p2") == 0 ]]; then
                echo "note: ${SS_PLOOP}p2 was written back before the pass looked (a sync elsewhere): not shown this run"
        else
                fail "off, a stuck device: the partition on another disk was not synced: $(cat "$SS_TMP/late.log")"
        fi
        blockdev --flushbufs "${SS_PLOOP}p2"
        exec 8>&-
        # Gone before the next case: unmounted, its disk alone would be a device no filesystem explains.
        umount "$SS_TMP/pmnt"
        losetup -d "$SS_PLOOP"
fi
ss --sysfs="$sys" restore-knob
grep -qs "^unsynced" "$SS_STATE/handover" && fail "restore-knob kept the unsynced lines of the cycle"
fresh_cycle

# auto: the unit's pass never turns it off (writes may follow it before the late hook), not even
# for a hung mount: only the last pass, having synced everything, may.
ss_config "[Kernel]
SyncOnSuspend=auto
[Sync]
MountTimeoutSec=1s
DeadlineSec=3s"
ss --sysfs="$sys" --trigger=unit run || true
[[ $(k) == 1 ]] || fail "auto, unit pass with a hung mount: knob $(k)"
fresh_cycle

# off: a mount whose device is proven stuck (no I/O completed) is no reason to keep the kernel's
# serial sync, which would block on it: off for this cycle — but only from the late pass. The
# unit's pass leaves the knob alone: if the sleep does not happen after it (require-sync.conf and
# OnTimeout=fail call it off), nothing would put it back (issue 10).
ss_config "[Kernel]
SyncOnSuspend=off
[Sync]
MountTimeoutSec=1s
DeadlineSec=3s
OnTimeout=fail
$host_root"
rc=0
ss --sysfs="$sys" --trigger=unit run || rc=$?
[[ $rc == 75 ]] || fail "OnTimeout=fail, hung mount: exit $rc, expected 75"
[[ $(k) == 1 && ! -e $SS_STATE/knob.orig ]] || fail "off, unit pass with a proven hung mount changed the knob to $(k): a cancelled sleep would leave it"
# The late pass plans the hung loop device too, finds the unit pass's worker still stuck on it and
# starts none: a timeout, so exit 75 with OnTimeout=fail (the hook ignores it).
rc=0
ss --sysfs="$sys" --trigger=hook --late run || rc=$?
[[ $rc == 75 ]] || fail "off, late pass with the hung mount: exit $rc, expected 75"
[[ $(k) == 0 ]] || fail "off, late pass after the unit's pass proved the mount hung: knob $(k)"

# Killed mid-run: the next start puts the original back before anything else. Here a run starts
# with the knob still 0 from the cycle above (never restored), is killed with SIGKILL while a
# worker waits on the hung disk, and the knob must be 1 again.
fresh_cycle
# The binary itself, not the ss function: $! of a function is its subshell, and a SIGKILL to that
# left the run going, which then held the state lock against the next run (a flake, 1 in ~6 suites).
"$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" --sysfs="$sys" --trigger=unit run &
pid=$!
sleep 0.5
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
[[ $(k) == 1 ]] || fail "after kill -9 the knob is $(k), original not restored by the start"
[[ ! -e $SS_STATE/knob.orig ]] || fail "record left behind after restore"

# A manual run that holds the lock and is stopped (SIGSTOP) while its worker waits on the hung
# disk: the unit's pass waits for it no longer than its deadline and LOCK_HOLDER_GRACE (5 s), not
# the 40 s it gives the daemon's pass (review AE, H2), and says who holds the lock.
fresh_cycle
"$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" --sysfs="$sys" --deadline=1s run >/dev/null 2>&1 &
pid=$!
ss_on_exit "kill -CONT $pid 2>/dev/null"
for ((i = 0; i < 100; i++)); do
        [[ $(cat "$SS_STATE/lock-holder" 2>/dev/null) == "$pid "*" manual "* ]] && break
        sleep 0.01
done
kill -STOP "$pid"
[[ $(cat "$SS_STATE/lock-holder" 2>/dev/null) == "$pid "*" manual "* ]] ||
        fail "the manual run wrote no mark of its own: $(cat "$SS_STATE/lock-holder" 2>&1)"
t0=$SECONDS
! INVOCATION_ID=0123456789abcdef0123456789abcdef ss --sysfs="$sys" --trigger=unit run 2>"$SS_TMP/held.log" ||
        fail "a unit's pass ran while a stopped manual run held the lock"
took=$((SECONDS - t0))
# status names it, read only (it never takes the lock); without the mark, only the PID.
ss status >"$SS_TMP/status.txt" 2>&1
grep -q "Running: PID $pid, a manual run, .* past its deadline, still holds the state lock" "$SS_TMP/status.txt" ||
        fail "status does not name the stopped manual run: $(cat "$SS_TMP/status.txt")"
[[ $(ss status --json=short | jq -c '.running | [.pid, .kind, .deadline_left_usec]') == "[$pid,\"manual\",0]" ]] ||
        fail "status --json: $(ss status --json=short | jq -c .running)"
mv "$SS_STATE/lock-holder" "$SS_STATE/lock-holder.away"
ss status | grep -q "Running: PID $pid holds the state lock" || fail "status without the mark: $(ss status)"
mv "$SS_STATE/lock-holder.away" "$SS_STATE/lock-holder"
kill -CONT "$pid"
wait "$pid" || true
grep -q "is held by PID $pid, a manual run, whose deadline is" "$SS_TMP/held.log" &&
        grep -q "PID $pid, a manual run, still holds .* past its deadline" "$SS_TMP/held.log" &&
        grep -q "holds '.*/lock' (PID $pid, a manual run), refusing to run twice" "$SS_TMP/held.log" ||
        fail "no word of the holder, its deadline, or the refusal: $(cat "$SS_TMP/held.log")"
((took < 15)) || fail "the wait for a stopped manual run took ${took}s, past its deadline and 5 s"
echo "a stopped manual run's lock was waited for ${took}s"
stack_ctl hung resume >/dev/null

# Absent knob (kernel < 5.6): said, and the run carries on.
rm -rf "$sys/power"
ss_config "[Kernel]
SyncOnSuspend=off
$host_root"
# This sleep's unit pass first (the killed run above left none): the late pass then gets as far as
# the knob.
ss --sysfs="$sys" --trigger=unit run >/dev/null 2>&1 || fail "absent knob: the unit's pass failed"
rc=0
out=$(ss --sysfs="$sys" --trigger=hook --late run 2>&1) || rc=$?
[[ $rc == 0 ]] || fail "absent knob: run failed ($rc): $out"
grep -q "sync_on_suspend" <<<"$out" || fail "absent knob not reported: $out"
echo PASS
