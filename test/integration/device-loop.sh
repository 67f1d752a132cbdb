#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Device classification on real loop devices: ext4 on a loop device, ext4 on a partition of a
# partitioned loop device, and btrfs (anonymous superblock device, bdi "btrfs-N"). Checks the
# libudev backend ("/sys") against the facts in sysfs and against the directory-fd backend
# ("/sys/.") run on the same devices. Where the loop driver says a backing file is
# (LOOP_GET_STATUS64, loop-backing.h: test-loop-backing --query) is checked against stat(1).
#
# Usage: device-loop.sh [TEST_DEVICE]   (or env TEST_DEVICE: path of the test-device binary;
#        env TEST_LOOP_BACKING: path of the test-loop-backing binary; SUSPEND_SYNC: the binary)
# Needs root and loop devices; exits 77 otherwise. Cleans up exactly what it created.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

bin=${1:-${TEST_DEVICE:-}}

[ -n "$bin" ] && [ -x "$bin" ] || fail "test-device binary not given (argv[1] or \$TEST_DEVICE)"
require_root
command -v losetup >/dev/null || skip "no losetup"
[ -e /dev/loop-control ] || skip "no /dev/loop-control"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4"

work=$(mktemp -d /tmp/device-loop.XXXXXX)
mounts=()
nodeloop=
devlink=/dev/ss-test-device-loop.$$
devdir=/dev/ss-test-device-loop-dir.$$
cleanup() {
        local m img dev
        rm -f "$devlink"
        rm -rf "$devdir"
        [ -z "$nodeloop" ] || losetup -d "$nodeloop" 2>/dev/null || true
        for m in "${mounts[@]}"; do
                umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        done
        # Detach exactly the loop devices backed by our images.
        for img in "$work"/*.img; do
                [ -e "$img" ] || continue
                for dev in $(losetup -j "$img" -O NAME -n 2>/dev/null); do
                        losetup -d "$dev" 2>/dev/null || true
                done
        done
        rm -rf "$work"
}
trap cleanup EXIT

# majmin MOUNTPOINT: the superblock device of a mount point from mountinfo.
majmin() { awk -v m="$1" '$5 == m { print $3 }' /proc/self/mountinfo | tail -n 1; }
# field KEY OUTPUT
field() { printf '%s\n' "$2" | sed -n "s/^$1=//p"; }
expect() { # KEY EXPECTED OUTPUT LABEL
        local got
        got=$(field "$1" "$3")
        [ "$got" = "$2" ] || fail "$4: $1='$got', expected '$2'"
}
expect_class() { # CLASS OUTPUT LABEL
        case ",$(field classes "$2")," in
                *",$1,"*) ;;
                *) fail "$3: class $1 missing in '$(field classes "$2")'" ;;
        esac
}
# both MAJ:MIN FSTYPE SOURCE: runs both backends, insists on identical output, prints it.
both() {
        local a b
        a=$("$bin" --live "$1" "$2" "$3") || fail "test-device --live $* failed"
        b=$("$bin" --live "$1" "$2" "$3" udev) || fail "test-device --live $* udev failed"
        if [ "$a" != "$b" ]; then
                printf 'fd backend:\n%s\nlibudev:\n%s\n' "$a" "$b" >&2
                fail "backends disagree for $*"
        fi
        printf '%s\n' "$a"
}

# --- ext4 on a whole loop device -----------------------------------------------------------------
truncate -s 64M "$work/ext4.img"
dev=$(losetup -f --show "$work/ext4.img") || skip "losetup failed"
mkfs.ext4 -q -F "$dev"
mkdir "$work/m1"
mount "$dev" "$work/m1"
mounts+=("$work/m1")
mm=$(majmin "$work/m1")
name=${dev#/dev/}
[ "$mm" = "$(cat /sys/block/"$name"/dev)" ] || fail "mountinfo $mm != sysfs $(cat /sys/block/"$name"/dev)"
out=$(both "$mm" ext4 "$dev")
echo "ext4 on $dev:"; printf '%s\n' "$out" | sed 's/^/  /'
expect is_block 1 "$out" ext4
expect classified 1 "$out" ext4
expect whole_disk "$mm" "$out" ext4
expect bdi "$mm" "$out" ext4
expect leaves "$mm" "$out" ext4
expect backing_file "$work/ext4.img" "$out" ext4
expect loop "$mm $name" "$out" ext4
# The driver's answer is the file's st_dev and inode, whatever path sysfs shows.
lb=${TEST_LOOP_BACKING:-}
[ -n "$lb" ] && [ -x "$lb" ] || fail "test-loop-backing binary not given (\$TEST_LOOP_BACKING)"
want="dev=$(stat -c '%Hd:%Ld' "$work/ext4.img") ino=$(stat -c %i "$work/ext4.img") rdev=0:0"
got=$("$lb" --query "$mm" "$name") || fail "test-loop-backing --query $mm $name failed"
[ "$got" = "$want" ] || fail "loop backing of $dev: '$got', expected '$want'"
echo "loop backing of $dev: $got (stat: $want)"
# Negative controls: a node that is not the device asked for (ENOTBLK), a name with a slash (EINVAL).
got=$("$lb" --query 1:3 "$name")
[ "$got" = "error=15" ] || fail "a node of another device answered: '$got'"
got=$("$lb" --query "$mm" "../dev/$name")
[ "$got" = "error=22" ] || fail "a name with a slash answered: '$got'"
# A loop device on a device node (here: on the ext4's loop device): the driver names the node's
# device (lo_rdevice), which suspend-sync never takes for memory or a local disk.
nodeloop=$(losetup -f --show -r "$dev") || fail "losetup on $dev failed"
got=$("$lb" --query "$(cat "/sys/block/${nodeloop#/dev/}/dev")" "${nodeloop#/dev/}")
case $got in *" rdev=$mm") echo "loop on a node: $got" ;; *) fail "loop on the node $dev: '$got', want rdev=$mm" ;; esac
losetup -d "$nodeloop" && nodeloop=
# And `plan --json` shows what DeferCommit= went by: the same placement.
[ -n "${SUSPEND_SYNC:-}" ] && [ -x "$SUSPEND_SYNC" ] || fail "suspend-sync binary not given (\$SUSPEND_SYNC)"
command -v jq >/dev/null || fail "no jq (tools/setup installs it)"
{
        got=$("$SUSPEND_SYNC" plan --json=short | jq -c --arg m "$work/m1" \
                '.mounts[] | select(.mount_point == $m) | .loop')
        want="{\"backing_file\":\"$work/ext4.img\",\"loop_devices\":1,\"backing_device\":\"$(stat -c '%Hd:%Ld' "$work/ext4.img")\",\"backing_rdev\":null,\"backing_error\":null}"
        [ "$got" = "$want" ] || fail "plan --json loop: '$got', expected '$want'"
        echo "plan --json: $got"
        # queue/rotational, read by plan's sample in a bounded child (review O, O9), as here.
        got=$("$SUSPEND_SYNC" plan --json=short | jq -c --arg m "$work/m1" \
                '.mounts[] | select(.mount_point == $m) | .device_classes | index("rotational") != null')
        want=$([ "$(cat /sys/block/"$name"/queue/rotational)" = 1 ] && echo true || echo false)
        [ "$got" = "$want" ] || fail "plan --json rotational: '$got', expected '$want'"
        echo "plan --json rotational: $got"
}
expect_class loop "$out" ext4
[ "$(cat /sys/block/"$name"/queue/rotational)" = 1 ] && expect_class rotational "$out" ext4
case ",$(field classes "$out")," in *,usb,*|*,crypt,*|*,network,*) fail "ext4: unexpected class" ;; esac

# --- ext4 on a partition of a partitioned loop device --------------------------------------------
# The partition is added with BLKPG (addpart): works without any partition table parser in the
# kernel (the test kernel has CONFIG_MSDOS_PARTITION and CONFIG_EFI_PARTITION off).
truncate -s 64M "$work/part.img"
pdev=$(losetup -f --show -P "$work/part.img") || fail "losetup -P failed"
pname=${pdev#/dev/}
command -v addpart >/dev/null && addpart "$pdev" 1 2048 $((64 * 2048 - 2048)) 2>/dev/null || true
for _ in $(seq 50); do [ -e "/sys/block/$pname/${pname}p1/dev" ] && break; sleep 0.1; done
for _ in $(seq 50); do [ -b "${pdev}p1" ] && break; sleep 0.1; done
if [ -e "/sys/block/$pname/${pname}p1/dev" ] && [ -b "${pdev}p1" ]; then
        mkfs.ext4 -q -F "${pdev}p1"
        mkdir "$work/m2"
        mount "${pdev}p1" "$work/m2"
        mounts+=("$work/m2")
        pmm=$(majmin "$work/m2")
        disk=$(cat "/sys/block/$pname/dev")
        [ "$pmm" != "$disk" ] || fail "partition has the disk's device number"
        out=$(both "$pmm" ext4 "${pdev}p1")
        echo "ext4 on ${pdev}p1:"; printf '%s\n' "$out" | sed 's/^/  /'
        expect is_block 1 "$out" partition
        expect whole_disk "$disk" "$out" partition
        expect bdi "$disk" "$out" partition
        expect leaves "$disk" "$out" partition
        expect backing_file "$work/part.img" "$out" partition
        expect loop "$disk $pname" "$out" partition
        expect_class loop "$out" partition
else
        echo "partition scanning unavailable, partition case not run"
fi

# --- btrfs on a loop device ----------------------------------------------------------------------
if command -v mkfs.btrfs >/dev/null &&
   { grep -qw btrfs /proc/filesystems || modprobe btrfs 2>/dev/null; }; then
        truncate -s 256M "$work/btrfs.img"
        bdev=$(losetup -f --show "$work/btrfs.img") || fail "losetup failed"
        mkfs.btrfs -q -f "$bdev" >/dev/null
        mkdir "$work/m3"
        mount "$bdev" "$work/m3"
        mounts+=("$work/m3")
        bmm=$(majmin "$work/m3")
        bname=${bdev#/dev/}
        [ "${bmm%%:*}" = 0 ] || fail "btrfs superblock device $bmm is not anonymous"
        want_bdi=
        for u in /sys/fs/btrfs/*/; do
                [ -e "$u/devices/$bname" ] && want_bdi=$(basename "$(readlink "$u/bdi")")
        done
        [ -n "$want_bdi" ] || fail "no /sys/fs/btrfs/*/devices/$bname"
        out=$(both "$bmm" btrfs "$bdev")
        echo "btrfs on $bdev:"; printf '%s\n' "$out" | sed 's/^/  /'
        expect is_block 0 "$out" btrfs
        expect classified 1 "$out" btrfs
        expect bdi "$want_bdi" "$out" btrfs
        case "$want_bdi" in btrfs-*) ;; *) fail "btrfs bdi '$want_bdi'" ;; esac
        [ -e "/sys/class/bdi/$want_bdi" ] || fail "no /sys/class/bdi/$want_bdi"
        expect leaves "$(cat /sys/block/"$bname"/dev)" "$out" btrfs
        expect backing_file "$work/btrfs.img" "$out" btrfs
        expect_class loop "$out" btrfs
        # A source named through a link in /dev (as /dev/mapper/x, /dev/disk/by-uuid/...): resolved
        # to its member without waiting (device.c dev_path_resolve(): /dev from the lookup cache, the
        # links below it followed by hand). A link never followed since it was made is the case a
        # cached walk through it failed on, whenever following it had to update its atime (it
        # failed this test about one run in three: ls -l, which reads no link, did not help).
        ln -s "$bdev" "$devlink"
        out=$(both "$bmm" btrfs "$devlink")
        expect classified 1 "$out" btrfs-link
        expect bdi "$want_bdi" "$out" btrfs-link
        # As udev makes them: relative, in a directory, through another link (by-uuid -> ../../x,
        # x -> ../loopN as mapper/x -> ../dm-N).
        mkdir -p "$devdir/by-uuid"
        ln -s "../${bname}" "$devdir/member"
        ln -s ../member "$devdir/by-uuid/fs"
        out=$(both "$bmm" btrfs "$devdir/by-uuid/fs")
        expect classified 1 "$out" btrfs-link-chain
        expect bdi "$want_bdi" "$out" btrfs-link-chain
        # Negative control: a link that leaves /dev is not followed (nor is the name as given a member).
        ln -s "$work/btrfs.img" "$devdir/outside"
        out=$("$bin" --live "$bmm" btrfs "$devdir/outside")
        expect classified 0 "$out" btrfs-link-outside
        # Negative control: a wrong source is not resolved.
        out=$("$bin" --live "$bmm" btrfs /dev/nonexistent-loop)
        expect classified 0 "$out" btrfs-wrong-source
        expect leaves "$bmm" "$out" btrfs-wrong-source
else
        echo "btrfs unavailable, btrfs case not run"
fi

# --- every block device of the machine, ours included, through both backends -------------------
"$bin" --compare-all || fail "backends disagree on some block device"

# --- an anonymous pseudo superblock --------------------------------------------------------------
mkdir "$work/m4"
mount -t tmpfs tmpfs "$work/m4"
mounts+=("$work/m4")
tmm=$(majmin "$work/m4")
out=$(both "$tmm" tmpfs tmpfs)
expect is_block 0 "$out" tmpfs
expect leaves "$tmm" "$out" tmpfs
expect classes "" "$out" tmpfs

echo "PASS"
