# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# stack.sh — build and tear down fault-injection disk stacks for integration tests (bash, sourced;
# sources common.sh: skip, fail).
#
#   source "$TEST_LIB/stack.sh"        # installs "trap stack_cleanup EXIT" (chain it if you add your own)
#   require_root_loop_fuse             # exit 77 with a one-line reason when not root / no loop / no fuse
#   require_root_mount_point           # exit 77 when "/" is not a mount point (private namespaces fail)
#   stack_setup NAME FSTYPE [SIZE] [FAULTDISK_OPTION...]
#                                      # faultdisk -> loop (losetup -f --show) -> mkfs (4K, no discard)
#                                      # -> mount. FSTYPE: ext4 xfs btrfs vfat ext2 ext4-nojournal
#                                      # ntfs-3g (fuseblk; needs ntfs-3g); ext4-parts: an msdos table
#                                      # of two halves (losetup -P; partx -a where the kernel does not
#                                      # read it), the ext4 on the first, the second left raw
#                                      # (stack_part NAME 2). SIZE default 320M.
#                                      # raw: the loop device only (no mkfs, no mount): for a
#                                      # filesystem over several stacks, mounted by stack_mount_as
#   stack_mount_as NAME FSTYPE OPTIONS # mount NAME's loop device at its mount point with these
#                                      # options (an xfs with rtdev= naming another stack's device)
#   stack_passthrough NAME [FAULTDISK_OPTION...]
#                                      # faultdisk --passthrough over an empty dir ("network fs")
#   stack_mnt NAME / stack_dev NAME / stack_pid NAME / stack_sock NAME / stack_dir NAME
#                                      # print mount point, loop device, daemon pid, control socket,
#                                      # work dir (passthrough: its backing dir is $(stack_dir NAME)/lower)
#   stack_part NAME N                  # print partition N's node (ext4-parts)
#   stack_ctl NAME COMMAND [ARG...]    # send a control command; non-zero on "ERR" (see TESTING.md)
#   stack_get NAME KEY                 # print one status counter (e.g. parked, flushes, bytes_written)
#   stack_umount NAME / stack_mount NAME / stack_fsck NAME   # fsck needs the fs unmounted
#   stack_power_cut NAME [KEEP_PERMILLE] [SEED]
#                                      # cut power, unmount (writes vanish), detach the loop device,
#                                      # power on, attach a new loop device; leaves the fs unmounted
#   stack_power_cut_and_remount NAME [KEEP_PERMILLE] [SEED]   # the above + stack_mount
#   stack_cleanup [NAME...]            # undo exactly what was made (all stacks when no NAME)
#   oracle_write DIR N SEED / oracle_check DIR N SEED   # N files of known content; check = 0 if intact
#
# Environment: FAULTDISK (path of the faultdisk binary, set by meson), SS_TEST_WORKDIR (default
# /var/tmp/suspend-sync-test: images, mount points), SS_TEST_LEDGER (default
# /run/suspend-sync-test/ledger: one directory per live stack recording pid, loop, mounts; the
# testbed-noleaks test checks it is empty). Functions return non-zero on failure and print why.

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SS_TEST_WORKDIR=${SS_TEST_WORKDIR:-/var/tmp/suspend-sync-test}
SS_TEST_LEDGER=${SS_TEST_LEDGER:-/run/suspend-sync-test/ledger}
if [[ -z ${FAULTDISK:-} && -n ${BUILD_ROOT:-} ]]; then
        FAULTDISK=$BUILD_ROOT/test/faultdisk/faultdisk
fi

declare -A _STK_DIR=() _STK_LEDGER=() _STK_PID=() _STK_LOOP=() _STK_FSTYPE=()
_STK_NAMES=()

_stk_log() { echo "stack: $*" >&2; }

require_root_loop_fuse() {
        local why=""
        if [[ $(id -u) != 0 ]]; then why="not root"
        elif [[ ! -c /dev/fuse ]]; then why="no /dev/fuse"
        elif [[ ! -e /dev/loop-control ]] && ! modprobe loop 2>/dev/null; then why="no loop devices"
        elif ! command -v losetup >/dev/null; then why="no losetup"
        elif [[ -z ${FAULTDISK:-} || ! -x $FAULTDISK ]]; then why="faultdisk binary not found (FAULTDISK)"
        fi
        [[ -z $why ]] || skip "$why"
}

# For tests that set up a private mount namespace (`unshare -m --propagation private`): inside a
# chroot whose root is a plain directory the propagation of "/" cannot be changed (EINVAL).
require_root_mount_point() {
        mountpoint -q / ||
                skip "our root is not a mount point (a chroot into a directory): the propagation of \"/\" cannot be changed for a private mount namespace"
}

_stk_record() {         # NAME KEY VALUE: write one ledger fact
        printf '%s\n' "$3" >"${_STK_LEDGER[$1]}/$2"
}

stack_mnt() {
        if [[ ${_STK_FSTYPE[$1]} == passthrough ]]; then echo "${_STK_DIR[$1]}/fuse"; else echo "${_STK_DIR[$1]}/mnt"; fi
}
stack_dir()  { echo "${_STK_DIR[$1]}"; }
stack_dev()  { echo "${_STK_LOOP[$1]}"; }
stack_part() { echo "${_STK_LOOP[$1]}p$2"; }
# The node the filesystem is on: the first partition of an ext4-parts disk, else the loop device.
_stk_fsdev() {
        if [[ ${_STK_FSTYPE[$1]} == ext4-parts ]]; then stack_part "$1" 1; else echo "${_STK_LOOP[$1]}"; fi
}
stack_pid()  { echo "${_STK_PID[$1]}"; }
stack_sock() { echo "${_STK_DIR[$1]}/ctl"; }
stack_backing() {
        if [[ ${_STK_FSTYPE[$1]} == passthrough ]]; then echo ""; else echo "${_STK_DIR[$1]}/fuse/disk"; fi
}

stack_ctl() {
        local name=$1; shift
        timeout 30 "$FAULTDISK" ctl "${_STK_DIR[$name]}/ctl" "$@"
}

stack_get() {
        local line
        line=$(stack_ctl "$1" status) || return 1
        tr ' ' '\n' <<<"$line" | sed -n "s/^$2=//p"
}

_stk_start_daemon() {   # NAME FAULTDISK_ARGS...
        local name=$1; shift
        local d=${_STK_DIR[$name]} i
        "$FAULTDISK" "$@" --control="$d/ctl" --status="$d/status" "$d/fuse" >"$d/faultdisk.log" 2>&1 &
        _STK_PID[$name]=$!
        _stk_record "$name" pid "$!"
        _stk_record "$name" fuse "$d/fuse"
        for ((i = 0; i < 100; i++)); do
                if [[ -S $d/ctl ]] && "$FAULTDISK" ctl "$d/ctl" ping >/dev/null 2>&1; then
                        return 0
                fi
                if ! kill -0 "${_STK_PID[$name]}" 2>/dev/null; then
                        break
                fi
                sleep 0.1
        done
        _stk_log "$name: faultdisk did not come up: $(cat "$d/faultdisk.log")"
        return 1
}

_stk_new() {            # NAME FSTYPE
        local name=$1
        if [[ -n ${_STK_DIR[$name]:-} ]]; then
                _stk_log "stack '$name' exists already"
                return 1
        fi
        mkdir -p "$SS_TEST_WORKDIR" "$SS_TEST_LEDGER" || return 1
        _STK_DIR[$name]=$(mktemp -d "$SS_TEST_WORKDIR/$name.XXXXXX") || return 1
        _STK_LEDGER[$name]=$SS_TEST_LEDGER/$(basename "${_STK_DIR[$name]}")
        mkdir -p "${_STK_LEDGER[$name]}" || return 1
        _STK_NAMES+=("$name")
        _STK_FSTYPE[$name]=$2
        _stk_record "$name" workdir "${_STK_DIR[$name]}"
        _stk_record "$name" owner "$$"
        mkdir -p "${_STK_DIR[$name]}/fuse" "${_STK_DIR[$name]}/mnt"
}

_stk_attach() {         # NAME: a new loop device on the FUSE file
        local name=$1 backing loop parts=()
        backing=$(stack_backing "$name")
        [[ ${_STK_FSTYPE[$name]} == ext4-parts ]] && parts=(-P)
        loop=$(losetup -f "${parts[@]}" --show "$backing") || { _stk_log "$name: losetup failed"; return 1; }
        _STK_LOOP[$name]=$loop
        _stk_record "$name" loop "$loop" || return 1
        _stk_record "$name" backing "$backing" || return 1
        # A table written before (a power cut's re-attach): the kernel may not read it itself (none
        # yet at the first attach: partx finds nothing).
        if [[ ${#parts[@]} -gt 0 && ! -b ${loop}p2 ]]; then partx -a "$loop" 2>/dev/null || true; fi
        return 0
}

_stk_partition() {      # NAME: two halves on its loop device, both nodes there
        local loop=${_STK_LOOP[$1]} i half
        half=$(($(blockdev --getsize64 "$loop") / 2 / 1048576))M
        printf 'label: dos\n,%s,L\n,,L\n' "$half" | sfdisk -q "$loop" >/dev/null 2>&1 || { _stk_log "$1: sfdisk failed"; return 1; }
        [[ -b ${loop}p2 ]] || partx -a "$loop" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do
                [[ -b ${loop}p1 && -b ${loop}p2 ]] && return 0
                sleep 0.1
        done
        _stk_log "$1: no partition nodes on $loop"
        return 1
}

# The mount namespaces other than ours in which DEV (a block device node, or a partition of it) is
# still mounted, one process of each: "PID COMM". A namespace made (unshare -m, a container) while
# our filesystem was mounted keeps its own copy of the mount, so the superblock, and the loop
# device under it, outlive our umount until that namespace ends; no process holds the device open.
_stk_mount_holders() {
        local dev=$1 devs=() d p ns own seen=" "
        own=$(readlink /proc/self/ns/mnt)
        for d in "$dev" "$dev"p*; do
                [[ -b $d ]] && devs+=("$(printf '%d:%d' "0x$(stat -c %t "$d")" "0x$(stat -c %T "$d")")")
        done
        for p in /proc/[0-9]*; do
                ns=$(readlink "$p/ns/mnt" 2>/dev/null) || continue
                [[ $ns == "$own" || $seen == *" $ns "* ]] && continue
                for d in "${devs[@]}"; do
                        if awk -v d="$d" '$3 == d { f = 1 } END { exit !f }' "$p/mountinfo" 2>/dev/null; then
                                seen+="$ns "
                                echo "${p#/proc/} $(cat "$p/comm" 2>/dev/null)"
                                break
                        fi
                done
        done
}

_stk_detach() {         # NAME: detach exactly our loop device, verified by backing file
        local name=$1 loop=${_STK_LOOP[$1]:-} backing i holders
        [[ -n $loop ]] || return 0
        backing=$(stack_backing "$name")
        if losetup -j "$backing" -nO NAME 2>/dev/null | grep -qx "$loop"; then
                # Before the detach, while the device node is there to name its number: a mount of
                # it in another namespace keeps it attached for as long as that namespace lives (on
                # this shared machine another engineer's `unshare -m` made while ours was mounted:
                # reliability/hung-first, twice). The wait below is longer then.
                holders=$(_stk_mount_holders "$loop" | tr '\n' ',')
                [[ -z $holders ]] || _stk_log "$name: $loop still mounted in another mount namespace (${holders%,}): its detach waits for it"
                losetup -d "$loop" || return 1
                # The detach completes once the last opener lets go, and the device's I/O through
                # the FUSE file has ended: on a loaded 2-CPU machine that took more than 5 s once
                # (reliability/hung-first, a full suite beside a compiler). The wait ends as soon as
                # it is done; when it does not, say who still has the device open.
                for ((i = 0; i < (${#holders} ? 1200 : 300); i++)); do
                        losetup -j "$backing" -nO NAME 2>/dev/null | grep -qx "$loop" || break
                        sleep 0.1
                done
                if losetup -j "$backing" -nO NAME 2>/dev/null | grep -qx "$loop"; then
                        _stk_log "$name: $loop still attached after $((i / 10)) s; open by: $(fuser -v "$loop" 2>&1 | grep -v 'Permission denied' | tr '\n' ' ')"
                        return 1
                fi
                ((i < 50)) || _stk_log "$name: $loop took $((i / 10)) s to detach"
        fi
        _STK_LOOP[$name]=""
        rm -f "${_STK_LEDGER[$name]}/loop"
}

_stk_mkfs() {           # FSTYPE DEV
        case $1 in
        ext4|ext4-parts) mkfs.ext4 -q -F -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$2" ;;
        xfs)   mkfs.xfs -q -f -K -b size=4096 "$2" ;;
        btrfs) mkfs.btrfs -q -f -K "$2" >/dev/null ;;
        vfat)  mkfs.vfat -S 4096 "$2" >/dev/null ;;
        ext2)  mkfs.ext2 -q -F -b 4096 -E nodiscard "$2" ;;
        ext4-nojournal) mkfs.ext4 -q -F -b 4096 -O ^has_journal -E nodiscard,lazy_itable_init=0 "$2" ;;
        ntfs-3g) mkntfs -q -F -f -s 4096 "$2" >/dev/null 2>&1 ;;
        *)     _stk_log "unknown fstype $1"; return 1 ;;
        esac
}

stack_setup() {         # NAME FSTYPE [SIZE] [FAULTDISK_OPTION...]
        local name=$1 fstype=$2 size=${3:-320M}
        shift 2; [[ $# -gt 0 ]] && shift
        _stk_new "$name" "$fstype" || return 1
        local d=${_STK_DIR[$name]}
        _stk_start_daemon "$name" --image="$d/image" --size="$size" "$@" || return 1
        _stk_attach "$name" || return 1
        if [[ $fstype == ext4-parts ]]; then _stk_partition "$name" || return 1; fi
        [[ $fstype != raw ]] || return 0
        _stk_mkfs "$fstype" "$(_stk_fsdev "$name")" || { _stk_log "$name: mkfs.$fstype failed"; return 1; }
        stack_mount "$name"
}

stack_passthrough() {   # NAME [FAULTDISK_OPTION...]
        local name=$1; shift
        _stk_new "$name" passthrough || return 1
        local d=${_STK_DIR[$name]}
        mkdir -p "$d/lower"
        _stk_start_daemon "$name" --passthrough="$d/lower" "$@"       # stack_mnt is the FUSE mount
}

stack_mount() {
        local name=$1 mnt
        mnt=$(stack_mnt "$name")
        local type=${_STK_FSTYPE[$name]}
        [[ $type == ext4-nojournal || $type == ext4-parts ]] && type=ext4
        mount -t "$type" "$(_stk_fsdev "$name")" "$mnt" || return 1
        _stk_record "$name" mnt "$mnt"
}

stack_mount_as() {      # NAME FSTYPE OPTIONS
        local name=$1 mnt
        mnt=$(stack_mnt "$name")
        mount -t "$2" -o "$3" "$(_stk_fsdev "$name")" "$mnt" || return 1
        _stk_record "$name" mnt "$mnt"
}

# Mounted, by the mount table: `mountpoint -q` stats the path, and a filesystem that answers stat
# with EIO (xfs after a shutdown) would pass for "not mounted".
_stk_mounted() {
        findmnt -rn --mountpoint "$1" >/dev/null 2>&1
}

stack_umount() {
        local name=$1 mnt i
        mnt=$(stack_mnt "$name")
        for ((i = 0; i < 240; i++)); do
                _stk_mounted "$mnt" || { rm -f "${_STK_LEDGER[$name]}/mnt"; return 0; }
                umount "$mnt" 2>/dev/null && continue
                sleep 0.25
        done
        _stk_mounted "$mnt" || { rm -f "${_STK_LEDGER[$name]}/mnt"; return 0; }
        _stk_log "$name: cannot unmount $mnt"
        return 1
}

stack_fsck() {
        local name=$1 dev out rc i
        dev=$(_stk_fsdev "$name")
        # A checker that cannot open the device exclusively ("Device or resource busy") has checked
        # nothing: some other opener of the device (another engineer's prober on this shared machine)
        # holds it for a moment after our umount. Ask again, bounded (5 s), and name the holders if it
        # stays busy.
        for ((i = 0; i < 20; i++)); do
                rc=0
                case ${_STK_FSTYPE[$name]} in
                ext4|ext2|ext4-nojournal|ext4-parts) out=$(fsck.ext4 -fn "$dev" 2>&1) || rc=$? ;;
                ntfs-3g) out=$(ntfsfix -n "$dev" 2>&1) || rc=$? ;;
                xfs)   out=$(xfs_repair -n "$dev" 2>&1) || rc=$? ;;
                btrfs) out=$(btrfs check --readonly "$dev" 2>&1) || rc=$? ;;
                vfat)  out=$(fsck.vfat -n "$dev" 2>&1) || rc=$? ;;
                esac
                [[ $rc != 0 && $out == *"Device or resource busy"* ]] || break
                sleep 0.25
        done
        if [[ $rc != 0 && $out == *"Device or resource busy"* ]]; then
                _stk_log "$name: $dev stayed busy for 5 s after the umount; holders:" \
                        "$(ls "/sys/class/block/${dev##*/}/holders" 2>/dev/null | tr '\n' ' ')" \
                        "mounted in: $(grep -l " ${dev} " /proc/[0-9]*/mountinfo 2>/dev/null | head -n 5 | tr '\n' ' ')"
        elif ((i > 0)); then
                _stk_log "$name: $dev was busy after the umount, checked on attempt $((i + 1))"
        fi
        if [[ $rc != 0 ]]; then
                _stk_log "$name: fsck of ${_STK_FSTYPE[$name]} on $dev reports problems (rc=$rc):"
                echo "$out" | tail -n 20 >&2
                return 1
        fi
}

stack_power_cut() {     # NAME [KEEP_PERMILLE] [SEED]
        local name=$1 keep=${2:-0} seed=${3:-0}
        stack_ctl "$name" power-cut "keep=$keep" "seed=$seed" >&2 || return 1
        stack_umount "$name" || return 1
        _stk_detach "$name" || return 1
        stack_ctl "$name" power-on >/dev/null || return 1
        _stk_attach "$name"
}

stack_power_cut_and_remount() {
        stack_power_cut "$@" && stack_mount "$1"
}

_stk_cleanup_one() {
        local name=$1 d=${_STK_DIR[$1]:-} pid=${_STK_PID[$1]:-} i rc=0
        [[ -n $d ]] || return 0
        if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && [[ -S $d/ctl ]]; then
                for cmd in resume "eio off" "lie off" power-on; do
                        # shellcheck disable=SC2086
                        timeout 10 "$FAULTDISK" ctl "$d/ctl" $cmd >/dev/null 2>&1
                done
        fi
        if [[ ${_STK_FSTYPE[$name]} != passthrough ]]; then
                stack_umount "$name" || { umount -l "$d/mnt" 2>/dev/null; rc=1; }
                _stk_detach "$name" || rc=1
        fi
        # the FUSE mount; the daemon exits by itself once its connection ends
        for ((i = 0; i < 20; i++)); do
                _stk_mounted "$d/fuse" || break
                umount "$d/fuse" 2>/dev/null || sleep 0.25
        done
        if _stk_mounted "$d/fuse"; then
                _stk_log "$name: FUSE mount busy, detaching lazily"
                umount -l "$d/fuse"
                rc=1
        fi
        if [[ -n $pid ]]; then
                for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                if kill -0 "$pid" 2>/dev/null; then
                        kill -TERM "$pid" 2>/dev/null
                        for ((i = 0; i < 30; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                fi
                if kill -0 "$pid" 2>/dev/null; then
                        # second signal: faultdisk aborts its FUSE connection (needs fusectl, which
                        # is unmounted again when mounted here: the machine's mounts as found)
                        local ctl_mounted=0
                        if ! mountpoint -q /sys/fs/fuse/connections &&
                                mount -t fusectl fusectl /sys/fs/fuse/connections 2>/dev/null; then
                                ctl_mounted=1
                        fi
                        kill -TERM "$pid" 2>/dev/null
                        for ((i = 0; i < 30; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                        ((ctl_mounted)) && umount /sys/fs/fuse/connections 2>/dev/null
                fi
                if kill -0 "$pid" 2>/dev/null; then
                        _stk_log "$name: faultdisk $pid does not exit, killing"
                        kill -KILL "$pid" 2>/dev/null
                        rc=1
                fi
                wait "$pid" 2>/dev/null
        fi
        if ! _stk_mounted "$d/fuse" && ! _stk_mounted "$d/mnt"; then
                rm -rf --one-file-system "$d"
                rm -rf "${_STK_LEDGER[$name]}"
        else
                _stk_log "$name: leaving $d and its ledger entry behind"
                rc=1
        fi
        unset "_STK_DIR[$name]" "_STK_PID[$name]" "_STK_LOOP[$name]"
        return $rc
}

# shellcheck disable=SC2120
stack_cleanup() {
        local names=("$@") n rc=0
        [[ ${#names[@]} -gt 0 ]] || names=("${_STK_NAMES[@]}")
        for n in "${names[@]}"; do
                _stk_cleanup_one "$n" || rc=1
        done
        return $rc
}

# shellcheck disable=SC2329
_stk_exit_trap() {
        local rc=$?
        stack_cleanup || { [[ $rc == 0 || $rc == 77 ]] && rc=1; }
        exit $rc
}
trap _stk_exit_trap EXIT

_oracle_size() {        # SEED I: 0 .. ~256 KiB, unaligned
        echo $(( ((($1 * 7919 + $2 * 104729) % 64) * 4096) + ($2 * 37 % 4096) ))
}

oracle_write() {        # DIR N SEED
        local dir=$1 n=$2 seed=$3 i
        mkdir -p "$dir/sub" || return 1
        for ((i = 1; i <= n; i++)); do
                "$FAULTDISK" gen $((seed * 100000 + i)) "$(_oracle_size "$seed" "$i")" >"$dir/sub/.f$i.tmp" || return 1
                mv "$dir/sub/.f$i.tmp" "$dir/sub/f$i" || return 1
        done
}

oracle_check() {        # DIR N SEED: prints a summary, returns 1 if any file is missing or differs
        local dir=$1 n=$2 seed=$3 i bad=0
        for ((i = 1; i <= n; i++)); do
                if ! "$FAULTDISK" gen $((seed * 100000 + i)) "$(_oracle_size "$seed" "$i")" |
                     cmp -s - "$dir/sub/f$i" 2>/dev/null; then
                        bad=$((bad + 1))
                fi
        done
        echo "oracle: $bad of $n files lost or corrupt in $dir"
        [[ $bad == 0 ]]
}
