#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A mount namespace the kernel lists but no process of which is seen (kept alive by an fd only) was
# not scanned: a superblock mounted only there was in no table, and nothing said so. vfat on a loop
# device is the case no other scan covers (no sysfs fs/ list, its bdi is the disk's); where the
# kernel has no vfat, ext4 (which sysfs fs/ext4 would also show, but the namespace is scanned first
# and named). Now such a namespace is listed through listmount: `plan` says the view is incomplete
# and names it.
# Negative control: once the fd is closed the namespace and its mount are gone, and nothing is said.
# Needs Linux 6.12 (the kernel's list of mount namespaces) and 6.11 (listmount by namespace id).
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
command -v unshare >/dev/null || skip "no unshare"
fs=ext4
grep -qw vfat /proc/filesystems && command -v mkfs.vfat >/dev/null && fs=vfat

stack_setup nsu "$fs" 64M
stack_umount nsu
dev=$(stack_dev nsu)
mnt=$(stack_mnt nsu)

fifo=$SS_TMP/go
mkfifo "$fifo"
unshare -m --propagation private bash -c 'mount "$1" "$2" && echo data >"$2/file" && touch "$3.ready" &&
        read -r _ <"$3"' nsu "$dev" "$mnt" "$fifo" &
nspid=$!
for ((i = 0; i < 100; i++)); do [[ -e $fifo.ready ]] && break; sleep 0.1; done
[[ -e $fifo.ready ]] || fail "namespace did not come up"
ino=$(stat -L -c %i "/proc/$nspid/ns/mnt")
exec {nsfd}<"/proc/$nspid/ns/mnt"
echo go >"$fifo"
wait "$nspid" || fail "the namespace's process failed"
release() { [[ -n ${nsfd:-} ]] && { exec {nsfd}<&-; nsfd=; } || true; }
ss_on_exit release
echo "mnt:[$ino] held by fd $nsfd only, $fs $dev mounted in it at $mnt"

# The kernel must list it, or there is nothing to test here.
python3 - "$nsfd" <<'PY' || skip "no NS_MNT_GET_NEXT (Linux 6.12+) or not allowed to list namespaces"
import fcntl, os, struct, sys
NS_MNT_GET_NEXT = (2 << 30) | (16 << 16) | (0xb7 << 8) | 11
buf = bytearray(struct.pack("IIQ", 16, 0, 0))
fd = os.open("/proc/self/ns/mnt", os.O_RDONLY)
try:
    fcntl.ioctl(fd, NS_MNT_GET_NEXT, buf)
except OSError as e:
    if e.errno != 2:  # ENOENT: ours is the last, fine
        sys.exit(1)
PY

plan=$SS_TMP/plan.json
ss plan --json=short >"$plan"
why=$(ss_json '"\n".join(j.get("incomplete_why") or [])' <"$plan" || true)
echo "incomplete_why:"; printf '%s\n' "$why" | sed 's/^/  /'
grep -F "mnt:[$ino]" <<<"$why" | grep -qF "no process in it seen" ||
        fail "the namespace held by an fd only is not named among the reasons"
[[ $(ss_json 'j["complete"]' <"$plan") == false ]] || fail "plan claims a complete view"

# Negative control: the fd closed, the namespace and its mount are gone.
release
for ((i = 0; i < 50; i++)); do
        ss plan --json=short >"$plan"
        ss_json '"\n".join(j.get("incomplete_why") or [])' <"$plan" | grep -qF "mnt:[$ino]" || break
        sleep 0.1
done
ss_json '"\n".join(j.get("incomplete_why") or [])' <"$plan" | grep -qF "mnt:[$ino]" &&
        fail "negative control: mnt:[$ino] still named after its fd was closed"
echo "negative control: the namespace is gone with its fd, and no longer named"
echo PASS
