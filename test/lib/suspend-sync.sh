# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# suspend-sync.sh — helpers for tests that drive the real suspend-sync binary (bash, sourced; sources
# stack.sh and common.sh: skip, fail). The prologue of such a test:
#
#   set -euo pipefail
#   source "$TEST_LIB/suspend-sync.sh"
#   ss_begin                      # require_root_loop_fuse, then ss_init
#
#   ss_init                       # temp config dir $SS_TMP, state dir $SS_STATE on tmpfs
#                                 # (tmpfs_mktemp); cleanup on EXIT
#   ss_on_exit CMD...             # run CMD on exit, before the stacks are torn down (keeps the exit
#                                 # status; do not install EXIT traps of your own)
#   ss_config TEXT                # write $SS_CONF (used by ss with --config), followed by two rules
#                                 # that keep runs hermetic: mounts outside $SS_TEST_WORKDIR and
#                                 # $SS_TMP are skipped (other processes on a shared machine may
#                                 # have hung or failing mounts of their own). SS_HERMETIC=0: not.
#   ss_config_knob_off DEADLINE   # ss_config where a complete late pass may turn the knob off
#   ss ARGS...                    # run $SUSPEND_SYNC with --state-dir and --config
#   ss_debugfs                    # make debugfs available (mount it if needed; unmounted on exit)
#   ss_json EXPR < json           # evaluate a python expression over the parsed JSON 'j'
#   ss_mount_field FILE MOUNT KEY # field of the entry for MOUNT in .mounts (plan or last_run) of the
#                                 # JSON in FILE
#   ss_wait_gone PID SECONDS      # wait until a process is gone (abandoned workers)
#
# Environment: SUSPEND_SYNC (binary, set by meson).

declare -F stack_setup >/dev/null || source "$(dirname "${BASH_SOURCE[0]}")/stack.sh"

SS_TMP=
SS_CONF=
SS_STATE=
_SS_DEBUGFS_MOUNTED=0

_ss_cleanup() {
        if [[ $_SS_DEBUGFS_MOUNTED == 1 ]]; then
                # Another process may use it meanwhile (another test run, an admin): never lazily,
                # but said, so a debugfs left in the host's namespace has a name.
                umount /sys/kernel/debug 2>/dev/null ||
                        echo "note: debugfs, mounted by this test, is in use elsewhere: left mounted on /sys/kernel/debug" >&2
        fi
        [[ -n $SS_TMP ]] && rm -rf "$SS_TMP"
        [[ -n $SS_STATE ]] && rm -rf "$SS_STATE"
}

_SS_ON_EXIT=()

ss_on_exit() {
        _SS_ON_EXIT+=("$*")
}

_ss_exit_trap() {
        local rc=$? cmd
        set +e
        for cmd in "${_SS_ON_EXIT[@]}"; do
                eval "$cmd"
        done
        stack_cleanup
        _ss_cleanup
        exit "$rc"
}

ss_begin() {
        require_root_loop_fuse
        ss_init
}

ss_init() {
        [[ -x ${SUSPEND_SYNC:-} ]] || skip "SUSPEND_SYNC not set"
        SS_TMP=$(mktemp -d /run/suspend-sync-test.XXXXXX)
        SS_CONF=$SS_TMP/suspend-sync.conf
        trap _ss_exit_trap EXIT
        SS_STATE=$(tmpfs_mktemp suspend-sync-test-state) || fail "no state directory on tmpfs"
        ss_config ""
        ss_sleep_entry installed
}

# ss_sleep_entry installed|masked|none: systemd-sleep's directory as the passes see it (the test
# machine has no suspend-sync installed): the entry `meson install` makes, one masked by the
# administrator (a link to /dev/null), or none (sleep-hooks.h sleep_hook_ours(); a unit's pass
# leaves no commit to a late pass that systemd-sleep would not run). $SYSTEM_SLEEP_DIR: the
# build's (meson).
ss_sleep_entry() {
        local d=$SS_TMP/sleep-root${SYSTEM_SLEEP_DIR:-/usr/lib/systemd/system-sleep}
        mkdir -p "$d" && rm -f "$d/suspend-sync" || return 1
        case $1 in
        installed) ln -s /run/suspend-sync/sleep-hook "$d/suspend-sync" ;;
        masked) ln -s /dev/null "$d/suspend-sync" ;;
        none) ;;
        *) return 1 ;;
        esac
        export SUSPEND_SYNC_TEST_SLEEP_ROOT=$SS_TMP/sleep-root
}

ss_config() {
        printf '%s\n' "$1" >"$SS_CONF"
        if [[ ${SS_HERMETIC:-1} != 0 ]]; then
                printf '\n[Rule test-own-mounts]\nPath=%s/* %s/*\nAction=auto\n[Rule test-foreign-mounts]\nAction=skip\n' \
                        "${SS_TEST_WORKDIR:-/var/tmp/suspend-sync-test}" "$SS_TMP" >>"$SS_CONF"
        fi
}

# ss_config_knob_off DEADLINE: where a complete late pass may turn the knob off (the daemon's
# tests): the host's root synced, the one real filesystem of a fresh machine besides the test's own
# (as integration/knob.sh), DeadlineSec=DEADLINE, SyncOnSuspend=auto, the late pass on every sleep.
ss_config_knob_off() {
        ss_config "[Sync]
DeadlineSec=$1
[Kernel]
SyncOnSuspend=auto
KeepCheapSync=no
[Rule host-root]
Path=/
Action=auto"
}

ss() {
        "$SUSPEND_SYNC" --state-dir="$SS_STATE" --config="$SS_CONF" "$@"
}

# ss_unit_pass_record [-a] [OFFSET_US [BOOT_ID]]: the handover as the unit's pass of this sleep
# leaves it when it synced every superblock of our mount table and left nothing unsynced (handover.h:
# a "synced" line for each, and a "unit" line of this boot, now + OFFSET_US, with the token the pass
# wrote to the state directory's "unit-pass" as it started): a late pass run alone, as if that pass
# had run. -a: the lines added to the handover as it is.
ss_unit_pass_record() {
        local now boot up _ append=0 token
        [[ ${1:-} == -a ]] && { append=1; shift; }
        read -r up _ </proc/uptime # CLOCK_BOOTTIME, "SECONDS.CC" (not awk: mawk's %d stops at 2^31)
        now=$((${up%.*} * 1000000 + 10#${up#*.} * 10000))
        boot=${2:-$(tr -d '\n-' </proc/sys/kernel/random/boot_id)}
        token=$(tr -d '\n-' </proc/sys/kernel/random/uuid)
        printf '%s\n' "$token" >"$SS_STATE/unit-pass"
        ((append)) || printf '# suspend-sync handover v1\n' >"$SS_STATE/handover"
        # what it synced: every superblock our mount table shows (the late pass leans on the record
        # only for the mounts it leaves out that the record lists, handover.h)
        awk -v t="$((now + ${1:-0}))" '!seen[$3]++ { print "synced " $3 " " t }' /proc/self/mountinfo \
                >>"$SS_STATE/handover"
        printf 'unit %s %s %s\n' "$((now + ${1:-0}))" "$boot" "$token" >>"$SS_STATE/handover"
}

# ss_partitioned_disk MNT: a 96 MiB loop disk (its file on tmpfs) with two partitions, an ext4 on
# the first mounted at MNT. Sets SS_PLOOP (the disk's node) and SS_PDISK (its MAJ:MIN). Torn down at
# exit: exactly this loop device, by its backing file (close any fd on its partitions first).
ss_partitioned_disk() {
        local mnt=$1 img
        img=$(tmpfs_mktemp ss-pdisk) || return 1
        truncate -s 96M "$img/disk.img"
        printf 'label: dos\n,48M,L\n,,L\n' | sfdisk -q "$img/disk.img" || return 1
        SS_PLOOP=$(losetup -f -P --show "$img/disk.img") || return 1
        mkdir -p "$mnt"
        ss_on_exit "umount '$mnt' 2>/dev/null; losetup -j '$img/disk.img' | grep -q '^$SS_PLOOP:' && losetup -d '$SS_PLOOP'; rm -rf '$img'"
        # The kernel may not read the table itself (a kernel without its msdos parser): partx adds
        # the partitions through BLKPG all the same.
        [[ -b ${SS_PLOOP}p2 ]] || partx -a "$SS_PLOOP" || return 1
        [[ -b ${SS_PLOOP}p1 && -b ${SS_PLOOP}p2 ]] || return 1
        mkfs.ext4 -q "${SS_PLOOP}p1" && mount "${SS_PLOOP}p1" "$mnt" || return 1
        SS_PDISK=$(lsblk -dno MAJ:MIN "$SS_PLOOP" | tr -d ' ')
}

# ss_dirty_pages DEV: the dirty pages of DEV's page cache (cachestat(2), Linux 6.5), on stdout.
ss_dirty_pages() {
        python3 - "$1" <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Range(ctypes.Structure):
    _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]
class Stat(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("cache", "dirty", "writeback", "evicted", "recently_evicted")]
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
r, s = Range(0, 0), Stat()
if libc.syscall(451, fd, ctypes.byref(r), ctypes.byref(s), 0) != 0:
    sys.exit("cachestat: " + os.strerror(ctypes.get_errno()))
print(s.dirty)
EOF
}

# ss_has_cachestat: the kernel has cachestat(2) (Linux 6.5, CONFIG_CACHESTAT_SYSCALL): it answers
# EBADF for the fd -1, ENOSYS where it does not exist.
ss_has_cachestat() {
        python3 -c '
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if libc.syscall(451, -1, None, None, 0) == 0 or ctypes.get_errno() != errno.ENOSYS else 1)'
}

ss_debugfs() {
        if [[ ! -d /sys/kernel/debug/bdi ]]; then
                mount -t debugfs none /sys/kernel/debug || return 1
                _SS_DEBUGFS_MOUNTED=1
        fi
        [[ -r /sys/kernel/debug/bdi ]]
}

# ss_fixture_sysfs DIR: a sysfs for --sysfs= whose power/ holds a plain sync_on_suspend (1) and
# whose other directories lead to the real /sys, so devices are classified and their I/O progress
# is real, while the kernel's knob is never written.
ss_fixture_sysfs() {
        local d
        mkdir -p "$1/power" || return 1
        for d in dev devices block class fs bus; do ln -s "/sys/$d" "$1/$d" || return 1; done
        echo 1 >"$1/power/sync_on_suspend"
}

# ss_knob_fixture: the test's own fixture sysfs ($sys, as ss_fixture_sysfs makes it) and its knob
# ($knob, a plain file reading 1); k prints the knob's value.
ss_knob_fixture() {
        sys=$SS_TMP/sys
        ss_fixture_sysfs "$sys" || return 1
        knob=$sys/power/sync_on_suspend
}
k() { tr -d '\n' <"$knob"; }

# ss_fixture_sysfs_set DIR RELPATH VALUE: in a sysfs of ss_fixture_sysfs, RELPATH (a file below
# devices/, say) reads VALUE. Each directory above it that was a link into /sys becomes a real
# directory of links to its entries (links of the real sysfs are copied with their own relative
# targets, so they resolve inside DIR as they do in /sys). Can be called again for other paths.
ss_fixture_sysfs_set() {
        local dir=$1 rel=$2 sub="" part real e
        local -a parts
        IFS=/ read -ra parts <<<"${rel%/*}"
        for part in "${parts[@]}"; do
                sub=${sub:+$sub/}$part
                [[ -L $dir/$sub ]] || continue
                real=$(readlink -f "$dir/$sub") || return 1
                rm "$dir/$sub" && mkdir "$dir/$sub" || return 1
                for e in "$real"/*; do
                        if [[ -L $e ]]; then
                                ln -s "$(readlink "$e")" "$dir/$sub/${e##*/}" || return 1
                        else
                                ln -s "$e" "$dir/$sub/${e##*/}" || return 1
                        fi
                done
        done
        rm -f "$dir/$rel" && printf '%s\n' "$3" >"$dir/$rel"
}

ss_json() {
        python3 -c '
import json, sys
j = json.load(sys.stdin)
r = eval(sys.argv[1])
if r is None:
    sys.exit(1)
print(r if not isinstance(r, bool) else str(r).lower())
' "$1"
}

ss_mount_field() {      # FILE MOUNT KEY: the entry in our own mount namespace first (another test's
        python3 -c '  # private namespace may hold a copy of the same path), else any
import json, sys
j = json.load(open(sys.argv[1]))
ms = j["mounts"] if "mounts" in j else j["last_run"]["mounts"]
own = [m for m in ms if not m.get("namespace") and not m.get("namespace_ino")]
for m in own + ms:
    if m["mount_point"] == sys.argv[2]:
        v = m.get(sys.argv[3])
        print("null" if v is None else v)
        sys.exit(0)
sys.exit(1)
' "$1" "$2" "$3"
}

ss_wait_gone() {        # PID SECONDS
        local i
        for ((i = 0; i < $2 * 10; i++)); do
                [[ -d /proc/$1 ]] || return 0
                # a zombie child of ours does not count: it is gone for all purposes but the reaper
                [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) == Z ]] && return 0
                sleep 0.1
        done
        return 1
}
