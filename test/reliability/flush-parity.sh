#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 9 case 8, device flush parity: filesystems whose sync_fs sends no cache FLUSH (like vfat),
# or sends it before their last writes, must get one from the worker after syncfs (an fsync of the
# block device), else a successful run leaves their data in the disk's volatile cache. For each
# filesystem and each WritebackFirst= mode: write files and a directory, `suspend-sync run`; then
# the disk must hold NO written-but-unflushed block (the fault disk counts them), and a power cut
# keeping nothing unflushed (keep=0) must lose no file.
#   ntfs-3g (fuseblk): 0 FLUSH per syncfs without the fix — fails on 664a966 (all files lost).
#   ext2: on kernels where the ext4 driver serves "ext2" (Debian's), its sync_fs flushes by itself;
#     the fs/ext2 driver does not. Both must pass either way.
#   ext4 without a journal: ext4_sync_fs() flushes before sync_filesystem()'s last sync_blockdev()
#     writes the metadata (extents converted when their data completed, inode tables). With
#     WritebackFirst=no that is 2 unflushed blocks after every run on 29f4d0c; with yes, a race
#     that lost a file in CI once (29f4d0c). Fixed by the device flush unless sysfs shows a journal.
#   ext4-nobarrier (journaled ext4 remounted nobarrier): its sync_fs sends no FLUSH at all; the
#     device is fsynced (in mode nodev: an ENODEV error, as ext2 and ntfs-3g).
#   xfs-overwrite (review Z, Z1): xfs's sync_fs forces its log, which flushes only when the log has
#     work. A file overwritten in place (no allocation: no transaction when its I/O completes) after
#     the log was forced (another file's fsync) had its data written by syncfs and no FLUSH: 0
#     flushes, 256 unflushed blocks, the overwrite lost (as with sync(2)). Only the overwrite is
#     written in this case (new files would give the log work, and a FLUSH, by themselves).
#   ext4-sbnobarrier (review AA, AA1): a journaled ext4 whose superblock sets nobarrier as its own
#     default (tune2fs -o nobarrier; -E mount_opts=nobarrier alike). The mount table shows only
#     "rw" (ext4 shows what differs from the superblock's defaults), so the plan said flush none;
#     its sync_fs and commits send no FLUSH: 0 flushes, 477 unflushed blocks, every file lost. The
#     plan reads proc fs/ext4/<device>/options, which lists every option.
#   Mode "nodev": the run sees an empty /dev (a container without the device nodes). ext4 without
#     a journal then gets its FLUSH from a second syncfs; the others cannot get one and must say so
#     (outcome error, ENODEV), never report synced.
# Environment: FLUSH_PARITY_FSTYPES (default "ext2 ext4-nojournal ext4-nobarrier ext4-sbnobarrier ntfs-3g
#   xfs-overwrite"),
#   FLUSH_PARITY_MODES (default "no yes nodev": WritebackFirst=no, =yes, and no /dev nodes).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin

fstypes=()
for fs in ${FLUSH_PARITY_FSTYPES:-ext2 ext4-nojournal ext4-nobarrier ext4-sbnobarrier ntfs-3g xfs-overwrite}; do
        case $fs in
        ntfs-3g)
                if ! command -v mkntfs >/dev/null || ! command -v ntfs-3g >/dev/null; then
                        echo "ntfs-3g: not run, ntfs-3g is not installed (tools/setup installs it)"
                        continue
                fi ;;
        xfs-overwrite)
                if ! command -v mkfs.xfs >/dev/null || ! command -v xfs_io >/dev/null || ! grep -qw xfs /proc/filesystems; then
                        echo "xfs-overwrite: not run, no xfs here (tools/setup installs xfsprogs)"
                        continue
                fi ;;
        esac
        fstypes+=("$fs")
done
((${#fstypes[@]} > 0)) || skip "none of the filesystems can be made here"

# ext4-nobarrier is a journaled ext4 mounted (again after each power cut) with nobarrier.
mkfs_type() {
        case $1 in
        ext4-nobarrier | ext4-sbnobarrier) echo ext4 ;;
        xfs-overwrite) echo xfs ;;
        *) echo "$1" ;;
        esac
}
# xfs needs 300 MiB (xfsprogs 5.19 and later).
fs_size() { [[ $1 == xfs-overwrite ]] && echo 320M || echo 96M; }
# The round's writes: files and a directory; xfs-overwrite: a file made durable, then overwritten in
# place without fsync, and the log forced by another file's fsync.
round_write() {         # FS MOUNT ROUND SEED
        if [[ $1 == xfs-overwrite ]]; then
                xfs_io -f -c "pwrite -q -S 0x11 0 1m" -c fsync "$2/ow$3" &&
                        sync -f "$2" &&
                        xfs_io -c "pwrite -q -S 0x22 0 1m" "$2/ow$3" &&
                        xfs_io -f -c "pwrite -q -S 0x33 0 4k" -c fsync "$2/log$3"
                return
        fi
        oracle_write "$2/x$3" 12 "$4" && mkdir "$2/dir-made-last$3"
}
# Whether the round's writes survived the power cut.
round_kept() {          # FS MOUNT ROUND SEED
        if [[ $1 == xfs-overwrite ]]; then
                cmp -s <(head -c 1048576 /dev/zero | tr '\0' '\042') "$2/ow$3"
                return
        fi
        oracle_check "$2/x$3" 12 "$4" >/dev/null && [[ -d $2/dir-made-last$3 ]]
}
nobarrier() {
        [[ $1 == ext4-nobarrier ]] || return 0
        mount -o remount,nobarrier "$(stack_mnt "$1")" || return 1
        findmnt -rn -o FS-OPTIONS --mountpoint "$(stack_mnt "$1")" | tr , '\n' | grep -qx nobarrier ||
                { echo "ext4-nobarrier: nobarrier not shown in the superblock options"; return 1; }
}

# ext4-sbnobarrier: nobarrier in the superblock's default mount options, which the mount table
# does not show (it must not: else this case tests what ext4-nobarrier does).
sb_nobarrier() {
        local dev
        dev=$(stack_dev "$1")
        stack_umount "$1" && tune2fs -o nobarrier "$dev" >/dev/null && stack_mount "$1" || return 1
        grep -qx nobarrier "/proc/fs/ext4/${dev#/dev/}/options" ||
                { echo "ext4-sbnobarrier: the superblock does not say nobarrier"; return 1; }
        ! findmnt -rn -o FS-OPTIONS --mountpoint "$(stack_mnt "$1")" | tr , '\n' | grep -q barrier ||
                { echo "ext4-sbnobarrier: the mount table shows a barrier option"; return 1; }
}

mounts=()
for fs in "${fstypes[@]}"; do
        stack_setup "$fs" "$(mkfs_type "$fs")" "$(fs_size "$fs")" || fail "$fs: cannot set up"
        [[ $fs != ext4-sbnobarrier ]] || sb_nobarrier "$fs" || fail "$fs: cannot set nobarrier in the superblock"
        mounts+=("$(stack_mnt "$fs")")
done

# What the plan says, read from the real sysfs: the journal and the flush of each mount.
rel_config "${mounts[@]}"
for fs in "${fstypes[@]}"; do nobarrier "$fs" || fail "$fs: cannot remount nobarrier"; done
ss plan --json=short >"$REL_TMP/plan.json" || fail "plan failed"
for fs in "${fstypes[@]}"; do
        case $fs in
        ext2 | ntfs-3g) want="device null" ;;
        ext4-nojournal) want="device-or-syncfs false" ;;
        ext4-nobarrier | ext4-sbnobarrier) want="device true" ;;
        xfs-overwrite) want="device null" ;;
        *) want="?" ;;
        esac
        got="$(ss_mount_field "$REL_TMP/plan.json" "$(stack_mnt "$fs")" flush) $(ss_mount_field "$REL_TMP/plan.json" "$(stack_mnt "$fs")" journal)"
        got=${got/True/true}; got=${got/False/false}; got=${got/None/null}
        echo "plan: $fs: flush, journal = $got"
        [[ $got == "$want" ]] || fail "$fs: plan says flush, journal = '$got', expected '$want'"
done

failures=0
round=0
for mode in ${FLUSH_PARITY_MODES:-no yes nodev}; do
        round=$((round + 1))
        REL_SYNC="MountTimeoutSec=30s
DeadlineSec=60s
WritebackFirst=${mode/nodev/no}"
        rel_config "${mounts[@]}"
        seed=$((RANDOM + 1))
        echo "mode $mode (oracle seed $seed)"
        for fs in "${fstypes[@]}"; do
                m=$(stack_mnt "$fs")
                nobarrier "$fs" || fail "$fs: cannot remount nobarrier"
                sync -f "$m"
                round_write "$fs" "$m" "$round" "$seed" || fail "$fs: cannot write"
                stack_ctl "$fs" reset-counters >/dev/null
        done

        rc=0
        state=$SS_STATE
        if [[ $mode == nodev ]]; then
                # A state directory the empty /dev does not hide (the test library's may be in
                # /dev/shm where /run is no tmpfs): this run records no knob, so any filesystem does.
                state=$REL_TMP/state-nodev
                # shellcheck disable=SC2016
                unshare -m --propagation private bash -c 'mount -t tmpfs -o mode=755 nodev /dev && exec "$@"' \
                        - "$SUSPEND_SYNC" --state-dir="$state" --config="$SS_CONF" run >"$REL_TMP/run.log" 2>&1 || rc=$?
        else
                ss run >"$REL_TMP/run.log" 2>&1 || rc=$?
        fi
        [[ $rc == 0 || ($mode == nodev && $rc == 74) ]] || { cat "$REL_TMP/run.log"; fail "run exit status $rc"; }
        "$SUSPEND_SYNC" --state-dir="$state" --config="$SS_CONF" status --json=short >"$REL_TMP/status.json"

        for fs in "${fstypes[@]}"; do
                m=$(stack_mnt "$fs")
                out=$(rel_outcome "$REL_TMP/status.json" "$m")
                flushes=$(stack_get "$fs" flushes)
                dirty=$(stack_get "$fs" dirty_blocks)
                fstype=$(findmnt -rn -o FSTYPE --mountpoint "$m")
                stack_power_cut "$fs" 0 "$seed" >/dev/null || fail "$fs: power cut failed"
                stack_mount "$fs" || fail "$fs: cannot mount after the cut"
                lost=0
                round_kept "$fs" "$m" "$round" "$seed" || lost=1
                echo "  $fs ($fstype): outcome '$out', flushes during run=$flushes, unflushed blocks after the run=$dirty, lost=$lost"
                if [[ $mode == nodev && $fs != ext4-nojournal ]]; then
                        # (ext4-nobarrier: a second syncfs would not flush either)
                        # no node and no second syncfs that would flush: an error, not "synced"
                        errno_name=$(ss_mount_field "$REL_TMP/status.json" "$m" errno_name)
                        if [[ $out != "error "* || $errno_name != ENODEV ]]; then
                                echo "FAIL: $fs, no device node: outcome '$out' ($errno_name), expected an ENODEV error" >&2
                                failures=$((failures + 1))
                        fi
                        continue
                fi
                if [[ $out != synced* ]]; then
                        echo "FAIL: $fs, mode $mode: outcome '$out'" >&2
                        failures=$((failures + 1))
                fi
                if [[ $dirty != 0 ]]; then
                        echo "FAIL: $fs, mode $mode: $dirty blocks written but not flushed after a successful run" >&2
                        failures=$((failures + 1))
                fi
                if ((lost)); then
                        [[ $fs == xfs-overwrite ]] || oracle_check "$m/x$round" 12 "$seed" >&2 || true
                        echo "FAIL: $fs, mode $mode: data lost after a successful run" >&2
                        failures=$((failures + 1))
                fi
                if ((flushes == 0)); then
                        echo "FAIL: $fs, mode $mode: the run sent no FLUSH" >&2
                        failures=$((failures + 1))
                fi
        done
done

((failures == 0)) || exit 1
echo PASS
