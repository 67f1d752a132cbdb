#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# DeferCommit=: in the unit's pass (--trigger=unit), a journaled ext4 gets no worker: the pass wakes
# the flushers for its dirty data and leaves the wait for it, the commit and the cache FLUSH to the
# late pass (the system-sleep hook), or, when that never runs, to the kernel's own sync
# (sync_on_suspend=1). The record says "deferred".
# Checked by power cuts that keep nothing unflushed (fault disk, keep=0), on an ext4 mounted with
# commit=60 so that jbd2 never commits by itself while a scenario runs; one sleep cycle each:
#   1. unit pass (deferred), no late pass, sync(2) as the kernel would: nothing lost;
#   2. unit pass (deferred), late pass (synced), no sync(2): nothing lost;
#   3. control: unit pass (deferred) and nothing after it: something MUST be lost, or the deferral
#      is not real and checks 1 and 2 prove nothing;
#   4-6d. no deferral, the pass commits itself ("synced", nothing lost) when the knob reads 0, with
#      DeferCommit=no, with SUSPEND_SYNC_REQUIRED=1 (require-sync.conf), in a manual run (no
#      --trigger=unit), with WritebackFirst=no, with OnTimeout=fail, and for the disk's real backing
#      file (a FUSE file of the test bed: the fixture sysfs gives the loop device a decoy's node
#      else), also when only the path sysfs reports names the root filesystem (6g);
#   6h-6j. no deferral either when suspend-sync's system-sleep entry is masked or missing, or the
#      link it leads through cannot be made (no late pass runs);
#   6f. an ext4 whose journal is on a journal device (mkfs.ext4 -J device=) is synced by the unit's
#      pass, while one with its journal inside, on the same kind of loop device, is deferred (F9);
#   7. FLUSHes the disk sees (latency disk, 4 MiB overwrite, as writeback-first.sh): unit + late
#      pass send no more than sync(2) alone; the control, DeferCommit=no, sends more;
#   8. data written before the pass, the disk hung before it: deferred all the same (the unit's pass
#      does not touch the device), the late pass proves it hung and does not count the deferred
#      superblock as left unsynced (that would keep the kernel's serial sync on, blocked for good);
#   9. deferred, then the disk hangs before the late pass, with data in flight: the same.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin
ss_debugfs || skip "debugfs not available: the deferral needs the bdi's writeback counters from it"
unset SUSPEND_SYNC_REQUIRED

rounds=${REL_ROUNDS:-2}
stack_setup dc ext4 96M --hang-max=20s || fail "cannot set up the disk"
m=$(stack_mnt dc)
sys=$REL_TMP/sys
knob=$sys/power/sync_on_suspend
# The test bed's disk is a loop device on a FUSE file whose server stands for disk firmware; a FUSE
# backing file is never left to the late pass (its server may run in a user's session, frozen before
# the hooks). Where the file is, suspend-sync asks the loop driver (LOOP_GET_STATUS64 through the
# node the device's uevent names, loop-backing.h), so the fixture sysfs gives the disk's loop device
# the node of a decoy (its uevent's MAJOR, MINOR and DEVNAME): a loop device of ours on a tmpfs file,
# placed in memory, as a loop device on a local disk would be. The disk itself stays the one synced.
decoy_img=$(mktemp /dev/shm/ss-test-dc-decoy.XXXXXX) || fail "cannot make the decoy's file"
_dc_decoy_cleanup() {
        local d
        for d in $(losetup -j "$decoy_img" -O NAME -n 2>/dev/null); do losetup -d "$d"; done
        rm -f "$decoy_img"
}
ss_on_exit _dc_decoy_cleanup
truncate -s 1M "$decoy_img" && decoy=$(losetup -f --show "$decoy_img") || fail "cannot attach the decoy"
decoy_mm=$(cat "/sys/class/block/${decoy#/dev/}/dev")
# fixture_sysfs: the fixture sysfs, (re)made for the disk's current loop device (a power cut gives it
# another one), the knob's value kept. $backing: decoy (above, the default), real (the disk's own
# node: its FUSE file), or path (only loop/backing_file says the root filesystem: a name, which
# must not count).
fixture_sysfs() {
        local k=1 node
        [[ -f $knob ]] && k=$(cat "$knob")
        rm -rf "$sys" && ss_fixture_sysfs "$sys" && echo "$k" >"$knob" || return 1
        node=devices/virtual/block/$(basename "$(stack_dev dc)")
        case ${backing:-decoy} in
        real) ;;
        path) ss_fixture_sysfs_set "$sys" "$node/loop/backing_file" /var/lib/suspend-sync-test/dc.img ;;
        decoy)
                ss_fixture_sysfs_set "$sys" "$node/loop/backing_file" "$decoy_img" &&
                        ss_fixture_sysfs_set "$sys" "$node/uevent" \
                                "$(printf 'MAJOR=%s\nMINOR=%s\nDEVNAME=%s\nDEVTYPE=disk' "${decoy_mm%:*}" \
                                        "${decoy_mm#*:}" "${decoy#/dev/}")" ;;
        esac
}
fixture_sysfs || fail "cannot make the fixture sysfs"

rel_config "$m"
conf_yes=$SS_CONF
conf_no=$(rel_conf_variant no DeferCommit=no)

head -c $((4 << 20)) /dev/urandom >"$REL_TMP/rand"

# mount_dc: the disk mounted (again, after a power cut), with commit=60 in effect
mount_dc() {
        rel_mounted "$m" || stack_mount dc || return 1
        fixture_sysfs || return 1
        mount -o remount,commit=60 "$m" || return 1
        findmnt -rno OPTIONS --mountpoint "$m" | tr , '\n' | grep -qx 'commit=60' ||
                { echo "commit=60 not in effect on $m: $(findmnt -rno OPTIONS --mountpoint "$m")" >&2; return 1; }
}

# pass NAME CONF [VAR=VALUE...]: one pass (NAME unit or late) on the fixture sysfs; its log in
# $REL_TMP/NAME.log, its record (status --json=short) in $REL_TMP/NAME.json; prints the outcome of
# the disk's mount ("missing" when it is not in the record)
pass() {
        local name=$1 conf=$2 rc=0 args
        shift 2
        case $name in
        unit) args=(--trigger=unit run) ;;
        late) args=(--trigger=hook --late run) ;;
        esac
        (
                for kv in "$@"; do export "${kv?}"; done
                SS_CONF=$conf ss --sysfs="$sys" "${args[@]}"
        ) >"$REL_TMP/$name.log" 2>&1 || rc=$?
        if [[ $rc != 0 ]]; then
                echo "$name pass: exit status $rc" >>"$REL_TMP/$name.log"
                echo "failed"
                return 0
        fi
        ss status --json=short >"$REL_TMP/$name.json" 2>>"$REL_TMP/$name.log" || { echo "no-status"; return 0; }
        ss_mount_field "$REL_TMP/$name.json" "$m" outcome 2>/dev/null || echo "missing"
}

# why NAME: what the log of the last pass NAME says about not deferring (information only: the
# record's reason of a synced mount does not say)
why() {
        grep -o 'Committing every filesystem.*' "$REL_TMP/$1.log" | head -n1 || echo "log: -"
}

# begin N: a sleep cycle of its own on a quiet disk (everything before it committed); sets dir, seed
# and writes the oracle's files and a directory made last
begin() {
        rm -f "$SS_STATE/handover" "$REL_TMP"/{unit,late}.{log,json}
        mount_dc || fail "scenario $1: cannot mount the disk with commit=60"
        sync -f "$m"
        dir=$m/s$1
        seed=$((RANDOM + 1))
        oracle_write "$dir" 12 "$seed" || fail "scenario $1: cannot write"
        mkdir "$dir/d"
}

# cut_check: power cut keeping nothing unflushed, mount again; sets lost: how many of the 13 entries (12
# files and the directory) were lost. Not in a subshell: the stack's loop device changes.
cut_check() {
        local out
        stack_power_cut dc 0 "$seed" >"$REL_TMP/cut.log" 2>&1 || { cat "$REL_TMP/cut.log" >&2; fail "power cut failed"; }
        mount_dc || fail "cannot mount after the cut"
        out=$(oracle_check "$dir" 12 "$seed") || true
        lost=$(sed -n 's/^oracle: \([0-9]*\) of .*/\1/p' <<<"$out")
        [[ -n $lost ]] || fail "oracle check did not run: $out"
        [[ -d $dir/d ]] || lost=$((lost + 1))
}

failures=0
bad() {         # MESSAGE: count a failure, show the run logs of the scenario
        local f
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
        for f in "$REL_TMP"/unit.log "$REL_TMP"/late.log; do
                [[ -s $f ]] && sed "s|^|  $(basename "$f"): |" "$f" >&2
        done
        return 0
}

# 1. No late pass; the kernel's sync (sync_on_suspend=1) is the backstop.
begin 1
u=$(pass unit "$conf_yes")
sync
cut_check
echo "1 late pass never runs, sync(2): unit=$u lost=$lost/13"
[[ $u == deferred ]] || bad "1: unit pass outcome '$u', want deferred"
((lost == 0)) || bad "1: $lost of 13 entries lost after the unit's pass and sync(2)"

# 2. The late pass commits what the unit's pass deferred.
begin 2
u=$(pass unit "$conf_yes")
l=$(pass late "$conf_yes")
cut_check
echo "2 late pass runs: unit=$u late=$l lost=$lost/13"
[[ $u == deferred ]] || bad "2: unit pass outcome '$u', want deferred"
[[ $l == synced ]] || bad "2: late pass outcome '$l', want synced"
((lost == 0)) || bad "2: $lost of 13 entries lost after the unit and the late pass"

# 3. Control: the deferral is real, the backstop matters.
begin 3
u=$(pass unit "$conf_yes")
cut_check
echo "3 control, no late pass, no sync(2): unit=$u lost=$lost/13 (want > 0)"
[[ $u == deferred ]] || bad "3: unit pass outcome '$u', want deferred"
((lost > 0)) || bad "3: the control lost nothing: the unit's pass committed after all, or the cut keeps unflushed writes; checks 1 and 2 prove nothing"

# expect_synced TAG WHAT CONF [VAR=VALUE...]: a unit pass that must not defer records "synced", and
# a power cut with no sync(2) after it loses nothing
expect_synced() {
        local tag=$1 what=$2 conf=$3
        shift 3
        begin "$tag"
        u=$(pass unit "$conf" "$@")
        cut_check
        echo "$tag $what: unit=$u lost=$lost/13 ($(why unit))"
        [[ $u == synced ]] || bad "$tag: unit pass outcome '$u', want synced"
        ((lost == 0)) || bad "$tag: $lost of 13 entries lost after the unit's pass ($what)"
}

# 4. The knob reads 0: no backstop, the unit's pass commits.
echo 0 >"$knob"
expect_synced 4 "sync_on_suspend=0" "$conf_yes"
echo 1 >"$knob"
# 5. DeferCommit=no.
expect_synced 5 "DeferCommit=no" "$conf_no"
# 6. require-sync.conf: the unit itself must have committed.
expect_synced 6 "SUSPEND_SYNC_REQUIRED=1" "$conf_yes" SUSPEND_SYNC_REQUIRED=1

# 6b. A manual run (no --trigger=unit): no late pass follows it.
begin 6b
rc=0
SS_CONF=$conf_yes ss --sysfs="$sys" run >"$REL_TMP/unit.log" 2>&1 || rc=$?
ss status --json=short >"$REL_TMP/unit.json" 2>>"$REL_TMP/unit.log" || true
u=$(ss_mount_field "$REL_TMP/unit.json" "$m" outcome 2>/dev/null || echo missing)
((rc == 0)) || u="failed($rc)"
cut_check
echo "6b manual run: outcome=$u lost=$lost/13 ($(why unit))"
[[ $u == synced ]] || bad "6b: manual run outcome '$u', want synced"
((lost == 0)) || bad "6b: $lost of 13 entries lost after a manual run"

# 6d. OnTimeout=fail: the unit's result must tell of a hung device, so it syncs everything itself.
expect_synced 6d "OnTimeout=fail" "$(rel_conf_variant otf OnTimeout=fail)"

# 6e. The disk's real backing file, on the test bed's FUSE server (see fixture_sysfs): not left to
#     the late pass, which may find such a server frozen. Nor when only the path sysfs reports names
#     the root filesystem (a loop device attached in another mount namespace shows such a name).
backing=real
expect_synced 6e "loop device on a FUSE file" "$conf_yes"
backing=path
expect_synced 6g "loop device on a FUSE file, its path on the root filesystem" "$conf_yes"
backing=decoy

# 6c. WritebackFirst=no: nothing would start the data before the late pass, which would commit while
#     it is in flight.
conf_nowb=$(rel_conf_variant nowb WritebackFirst=no)
expect_synced 6c "WritebackFirst=no" "$conf_nowb"

# 6h. suspend-sync's system-sleep entry masked by the administrator (a link to /dev/null), or not
#     there at all: systemd-sleep runs no late pass, so the unit's pass commits itself (review K,
#     K3), and says so.
ss_sleep_entry masked
expect_synced 6h "system-sleep entry masked" "$conf_yes"
grep -q "is not suspend-sync's system-sleep entry as installed (masked or replaced)" "$REL_TMP/unit.log" ||
        bad "6h: no word of the masked entry"
ss_sleep_entry none
expect_synced 6i "no system-sleep entry" "$conf_yes"
grep -q "No system-sleep entry of suspend-sync is installed" "$REL_TMP/unit.log" || bad "6i: no word of the missing entry"
ss_sleep_entry installed
# 6j. The link the entry leads through (/run/suspend-sync/sleep-hook, here the state directory's)
#     cannot be put back (a directory in its place; a full /run): no late pass runs either (review
#     I, I3: what the unit's pass feeds the decision, review K, K4).
rm -f "$SS_STATE/sleep-hook" && mkdir -p "$SS_STATE/sleep-hook/x"
expect_synced 6j "the hook's link cannot be made" "$conf_yes"
grep -q "the system-sleep hook's link is down" "$REL_TMP/unit.log" || bad "6j: no word of the link"
rm -r "$SS_STATE/sleep-hook"

# 6f. An ext4 whose journal lies on a journal device (mkfs.ext4 -J device=): that device is in no
#     stack the late pass is checked to reach (it may be served over the network, or hang), so the
#     unit's pass commits it; the control, an ext4 with its journal inside on the same kind of loop
#     device (a file in /run: memory), is deferred in the same pass. Loop devices of its own, gone
#     after it.
xj=$REL_TMP/xj
xj_loops=()
xj_cleanup() {
        local l
        for l in int ext; do rel_mounted "$xj/$l" && umount "$xj/$l"; done
        for l in "${xj_loops[@]}"; do losetup -d "$l"; done
        xj_loops=()
}
ss_on_exit xj_cleanup
mkdir -p "$xj/int" "$xj/ext"
for l in int jdev ext; do
        truncate -s 32M "$xj/$l.img" || fail "6f: cannot make $xj/$l.img"
        loop=$(losetup -f --show "$xj/$l.img") || fail "6f: cannot make a loop device"
        xj_loops+=("$loop")
done
mkfs.ext4 -q -F "${xj_loops[0]}" || fail "6f: mkfs.ext4 failed"
mkfs.ext4 -q -F -b 4096 -O journal_dev "${xj_loops[1]}" >/dev/null ||
        fail "6f: mkfs.ext4 -O journal_dev failed"
mkfs.ext4 -q -F -b 4096 -J device="${xj_loops[1]}" "${xj_loops[2]}" || fail "6f: mkfs.ext4 -J device= failed"
mount "${xj_loops[0]}" "$xj/int" || fail "6f: cannot mount ${xj_loops[0]}"
mount "${xj_loops[2]}" "$xj/ext" || fail "6f: cannot mount ${xj_loops[2]}"
echo "6f /proc/fs/jbd2: $(echo /proc/fs/jbd2/*)"
fixture_sysfs || fail "6f: cannot make the fixture sysfs"
conf_main=$SS_CONF
rel_config "$m" "$xj/int" "$xj/ext"
conf_xj=$SS_CONF
SS_CONF=$conf_main
rm -f "$SS_STATE/handover" "$REL_TMP"/{unit,late}.{log,json}
echo x >"$xj/int/f" && echo x >"$xj/ext/f"
u=$(pass unit "$conf_xj")
ui=$(ss_mount_field "$REL_TMP/unit.json" "$xj/int" outcome 2>/dev/null || echo missing)
ue=$(ss_mount_field "$REL_TMP/unit.json" "$xj/ext" outcome 2>/dev/null || echo missing)
echo "6f journal inside / on a journal device: disk=$u int=$ui ext=$ue"
[[ $ui == deferred ]] || bad "6f: ext4 with its journal inside: outcome '$ui', want deferred (the control)"
[[ $ue == synced ]] || bad "6f: ext4 with a journal device: outcome '$ue', want synced"
xj_cleanup

# A hung device must meet its syncfs in a pass that can prove it stuck, and a proven stuck device is
# never "left unsynced" (that would keep the kernel's serial sync on, which would block on it for
# good). Short timeouts; the disk is resumed after each, and the workers left in the kernel end.
hang_conf=$(rel_conf_variant hang MountTimeoutSec=3s DeadlineSec=8s)
# resume_dc: the disk answers again; the workers the passes left in the kernel end
resume_dc() {
        local pid
        stack_ctl dc resume >/dev/null
        for pid in $(awk '$1 == "stuck" { print $2 }' "$SS_STATE/handover" 2>/dev/null); do
                ss_wait_gone "$pid" 30 || bad "$1: worker $pid still in the kernel 30 s after the disk resumed"
        done
}

# late_proves_hung TAG WHAT: after a unit pass (outcome in u) on the hung disk, the late pass: the
# unit's pass deferred, the late pass proved the device hung and did not carry the deferral as
# unsynced; then the disk resumes and is mounted again
late_proves_hung() {
        local l lreason
        l=$(pass late "$hang_conf")
        lreason=$(jq -r --arg m "$m" '.last_run.mounts[] | select(.mount_point == $m) | .reason' "$REL_TMP/late.json" 2>/dev/null)
        resume_dc "$1"
        echo "$1 $2: unit=$u late=$l ($lreason)"
        [[ $u == deferred ]] || bad "$1: unit pass outcome '$u', want deferred"
        [[ $l == timeout && $lreason == hung* ]] || bad "$1: late pass outcome '$l' ($lreason), want timeout, hung"
        if grep -qE "left superblocks unsynced that this pass did not sync|own sync on: a mount was left unsynced" "$REL_TMP/late.log"; then
                bad "$1: the late pass counted the deferred superblock on a stuck device as left unsynced"
        fi
        mount_dc || fail "$1: cannot mount the disk again"
}

# 8. The data was written before the pass (as on the whole-suspend benchmark's hung disk, whose
#    writeback ext4 starts at close), then the disk hangs: the unit's pass leaves it to the late
#    pass, which meets its first syncfs on it and must prove it stuck. (On d6f1010 such a disk was
#    counted as left unsynced there, and the kernel's sync stayed on, blocked for good.)
begin 8
# The flushers write the data now (another value in vm.dirty_writeback_centisecs wakes them, as the
# run does); jbd2 does not commit (commit=60). Then nothing is left for the pass's wait to see.
v=$(cat /proc/sys/vm/dirty_writeback_centisecs)
echo $((v + 1)) >/proc/sys/vm/dirty_writeback_centisecs && echo "$v" >/proc/sys/vm/dirty_writeback_centisecs ||
        skip "/proc/sys/vm/dirty_writeback_centisecs is not writable here"
stats=/sys/kernel/debug/bdi/$(mountpoint -d "$m")/stats
for ((i = 0; i < 100; i++)); do
        awk '/^BdiWriteback:|^BdiReclaimable:/ { s += $2 } END { exit !(s <= 200) }' "$stats" && break
        sleep 0.1
done
grep -E '^Bdi(Writeback|Reclaimable):' "$stats" | tr -s ' \n' ' '
echo
stack_ctl dc hang io >/dev/null
u=$(pass unit "$hang_conf")
late_proves_hung 8 "written before the pass, then hung"

# 9. The unit's pass deferred (the flushers woken for the data), then the disk hangs before the late
#    pass, with data in flight: the late pass proves it stuck, and the deferral is not carried as
#    unsynced.
begin 9
u=$(pass unit "$hang_conf")
stack_ctl dc hang io >/dev/null
late_proves_hung 9 "deferred, then hung"

# 7. FLUSHes, by what the disk sees, on a latency-bound disk (serial, 8 MiB/s, 20 ms per FLUSH).
rm -f "$SS_STATE/handover" "$REL_TMP"/{unit,late}.{log,json}
mount_dc || fail "7: cannot mount the disk with commit=60"
cp "$REL_TMP/rand" "$m/data"
sync -f "$m"
stack_ctl dc serial 1 >/dev/null
stack_ctl dc bandwidth $((8 << 20)) >/dev/null
stack_ctl dc flush-delay 20ms >/dev/null

# flushes MODE: sets f, the FLUSHes sent while MODE (sync, yes: unit + late pass, no: the same with
# DeferCommit=no) makes a fresh 4 MiB overwrite durable, and u, l (the passes' outcomes)
flushes() {
        local conf=$conf_yes
        sync -f "$m"
        rm -f "$SS_STATE/handover"
        cp "$REL_TMP/rand" "$m/data"
        stack_ctl dc reset-counters >/dev/null
        u=- l=-
        case $1 in
        sync) sync ;;
        *)
                [[ $1 == no ]] && conf=$conf_no
                u=$(pass unit "$conf")
                l=$(pass late "$conf")
                ;;
        esac
        f=$(stack_get dc flushes) || fail "cannot read the disk's counters"
}

control_more=0
for ((r = 1; r <= rounds; r++)); do
        flushes sync
        fa=$f
        flushes yes
        fb=$f ub=$u lb=$l
        flushes no
        fc=$f uc=$u lc=$l
        echo "7 round $r: FLUSHes sync(2)=$fa unit+late=$fb (unit=$ub late=$lb) DeferCommit=no=$fc (unit=$uc late=$lc)"
        [[ $ub == deferred && $lb == synced ]] || bad "7 round $r: defaults: unit '$ub' late '$lb', want deferred and synced"
        [[ $uc == synced && $lc == synced ]] || bad "7 round $r: DeferCommit=no: unit '$uc' late '$lc', want synced twice"
        ((fb <= fa)) || bad "7 round $r: unit + late pass sent $fb FLUSHes, sync(2) alone $fa"
        ((fc > fb)) && control_more=$((control_more + 1))
done
# The control shows the count can tell: committing in both passes costs FLUSHes.
((control_more > 0)) || bad "7: the control (DeferCommit=no) never sent more FLUSHes than the deferred cycle"

((failures == 0)) || exit 1
echo PASS
