#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fuse-sync.sh [ROUNDS] — what the kernel's own sync (sync(2): ksys_sync(), the sync that
# /sys/power/sync_on_suspend switches) costs and touches with FUSE mounts present, and what the
# FUSE bdi's debugfs stats show clean, dirty and while writeback waits for the daemon. Measurements
# behind "FUSE mounts and SyncOnSuspend=auto" in docs/CLEAN-EVIDENCE.md.
#
#   flock /run/ss-heavy.lock env FAULTDISK=build-dev/test/faultdisk/faultdisk test/bench/fuse-sync.sh 7
#
# Root, /dev/fuse, debugfs (mounted on /sys/kernel/debug if it is not). FUSE mounts are the test
# bed's faultdisk in --passthrough mode (kernel writeback cache on), made and removed through
# test/lib/stack.sh below one mktemp -d directory. A hung daemon is only ever hung with a hang-max
# of 2 s (it resumes by itself): a `sync` anywhere on the machine waits for it meanwhile.
# Times are wall time of one `sync` process, µs ($EPOCHREALTIME), ROUNDS (default 7) each; the
# summary line is "median [min..max] µs". Not run by meson.

set -u -o pipefail
rounds=${1:-7}
SOURCE_ROOT=${SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
FAULTDISK=${FAULTDISK:-$SOURCE_ROOT/build-dev/test/faultdisk/faultdisk}
FAULTDISK=$(realpath "$FAULTDISK")
work=$(mktemp -d /var/tmp/ss-fuse-sync.XXXXXX) || exit 1
export SS_TEST_WORKDIR=$work/w SS_TEST_LEDGER=$work/ledger FAULTDISK
source "$SOURCE_ROOT/test/lib/stack.sh"
trap 'stack_cleanup; rm -rf "$work"' EXIT
require_root_loop_fuse
dbg=/sys/kernel/debug
if [[ ! -d $dbg/bdi ]]; then
        mount -t debugfs debugfs "$dbg" || { echo "SKIP: no debugfs"; exit 77; }
fi

us() { local t=${1/./}; echo $((10#$t)); }
# time_sync LABEL [CMD_BEFORE_EACH]: ROUNDS timed runs of `sync`, one summary line.
time_sync() {
        local label=$1 before=${2:-:} t0 t1 i
        local -a s=()
        for ((i = 0; i < rounds; i++)); do
                eval "$before"
                t0=$EPOCHREALTIME
                sync
                t1=$EPOCHREALTIME
                s+=($(($(us "$t1") - $(us "$t0"))))
        done
        summary "$label" "${s[@]}"
}
summary() {
        local label=$1; shift
        local -a v
        mapfile -t v < <(printf '%s\n' "$@" | sort -n)
        printf '%-44s %9s [%s..%s] µs   (n=%d; %s; load %s)\n' "$label" "${v[$((${#v[@]} / 2))]}" "${v[0]}" \
                "${v[-1]}" "${#v[@]}" "$(printf '%s ' "$@")" "$(cut -d' ' -f1-3 /proc/loadavg)"
}
bdi_of() { mountpoint -d "$(stack_mnt "$1")"; }
# The counters of one FUSE bdi that say whether the kernel's sync would have anything to send.
bdi_stats() {
        grep -E '^(BdiWriteback|BdiReclaimable|BdiDirtied|BdiWritten|b_dirty|b_io|b_more_io|b_dirty_time):' \
                "$dbg/bdi/$1/stats" | tr -s ' ' | tr '\n' ';'
        echo
}

echo "kernel $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(grep -c . /proc/self/mountinfo) mounts," \
        "$(grep -c ' fuse' /proc/self/mounts) FUSE mounts before"
echo "vm.dirty_expire_centisecs $(cat /proc/sys/vm/dirty_expire_centisecs)," \
        "vm.dirty_writeback_centisecs $(cat /proc/sys/vm/dirty_writeback_centisecs)"

echo "== (a) idle FUSE mounts"
sync
time_sync "N=0 FUSE mounts of ours"
stack_passthrough f1 || exit 1
dd if=/dev/zero of="$(stack_mnt f1)/file" bs=1M count=4 conv=fsync status=none
time_sync "N=1 idle"
for n in 2 3 4; do
        stack_passthrough f$n || exit 1
        dd if=/dev/zero of="$(stack_mnt f$n)/file" bs=1M count=4 conv=fsync status=none
done
time_sync "N=4 idle"
for n in 1 2 3 4; do stack_ctl f$n hang-max 2s >/dev/null; stack_ctl f$n hang all >/dev/null; done
time_sync "N=4 idle, every daemon hung (all requests)"
for n in 1 2 3 4; do stack_ctl f$n resume >/dev/null; done
echo "requests the daemons got during the hung runs: $(for n in 1 2 3 4; do printf '%s ' "$(stack_get f$n parked)"; done)(parked, per daemon)"
echo "f1 idle: bdi $(bdi_of f1): $(bdi_stats "$(bdi_of f1)")"
[[ -f $dbg/bdi/$(bdi_of f1)/wb_stats ]] &&
        echo "f1 writeback contexts (wb_stats): $(grep -c '^WbCgIno' "$dbg/bdi/$(bdi_of f1)/wb_stats")"
for n in 2 3 4; do stack_cleanup f$n; done

echo "== (b) one FUSE mount with dirty page-cache data (writeback cache), the others idle"
b=$(bdi_of f1)
f=$(stack_mnt f1)/file
dirty16() { dd if=/dev/zero of="$f" bs=1M count=16 conv=notrunc status=none; }
dirty16
echo "(c) right after writing and closing 16 MiB: $(bdi_stats "$b")"
sync
echo "(c) after sync:                             $(bdi_stats "$b")"
stack_ctl f1 reset-counters >/dev/null
time_sync "16 MiB written just before (daemon serving)" dirty16
echo "daemon WRITEs during those rounds: $(stack_get f1 writes) (bytes $(stack_get f1 bytes_written)): all sent by dd itself"

# A writer whose data sits in FUSE writeback at a daemon that stopped answering (a frozen
# user.slice): writes parked first ("io"), then every request ("all", as a frozen daemon).
echo "== (b2) dirty data in FUSE writeback, daemon hung (resumes by itself after 2 s)"
declare -a s2=()
wpid=""
for ((i = 0; i < rounds; i++)); do
        stack_ctl f1 resume >/dev/null
        [[ -n $wpid ]] && wait "$wpid"
        stat "$f" >/dev/null
        stack_ctl f1 hang-max 2s >/dev/null
        stack_ctl f1 hang io >/dev/null
        dd if=/dev/zero of="$f" bs=4K count=4 conv=notrunc status=none &
        wpid=$!
        sleep 0.3
        stack_ctl f1 hang all >/dev/null
        pre="$(bdi_stats "$b") parked=$(stack_get f1 parked) writer=$(awk '{print $3}' "/proc/$wpid/stat" 2>/dev/null)"
        t0=$EPOCHREALTIME
        sync
        t1=$EPOCHREALTIME
        s2+=($(($(us "$t1") - $(us "$t0"))))
        echo "round $i: before sync: $pre; sync ${s2[-1]} µs; after: $(bdi_stats "$b" | grep -o "b_dirty: [0-9]*") parked=$(stack_get f1 parked)"
done
stack_ctl f1 resume >/dev/null
wait "$wpid"
summary "16 KiB in writeback at a hung daemon" "${s2[@]}"
echo "after resume: $(bdi_stats "$b") writes=$(stack_get f1 writes)"
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
