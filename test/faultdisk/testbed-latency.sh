#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Latency model: on a serial, bandwidth-limited faultdisk the time of syncfs (`sync -f`) must be
# within 10 % of  bytes_written/bandwidth + flushes * flush_delay + writes * write_delay + host,
# with bytes/flushes/writes taken from the status counters around the sync, and host the time the
# same sync takes without injected latency, measured just before (on one Firecracker host 40-80 ms:
# without it the model was +5 to +12 % on an idle machine). Two settings.
# Faster than the model is a defect of the bed (it would not enforce its latency): fails at once.
# Slower can be this shared machine (CPU time of FUSE, the loop driver and ext4 on 2 busy CPUs; on
# one Firecracker host the first sync of a fresh bed took +13 % in two runs out of two, the next
# -3 %, as the backing file's blocks are first allocated on the host): up to three attempts, one
# within the model passes; a bed whose model is off fails all three. So does one that never shows
# enough I/O to measure (the writeback started before the sync measured: retried, not judged).
set -u
source "${TEST_LIB:?}/stack.sh"
require_root_loop_fuse

stack_setup lat ext4 || fail "setup"
mnt=$(stack_mnt lat)

n_files=0
# timed_sync BANDWIDTH FLUSH_DELAY WRITE_DELAY MIB: MIB written to a new file, then `sync -f` timed
# with those settings (0: none); sets T (ns) and the counters' deltas B, F, W.
timed_sync() {
        local bw=$1 fd=$2 wd=$3 mib=$4 w0 f0 b0 t0 t1
        sync -f "$mnt" || fail "sync"
        stack_ctl lat serial on >/dev/null && stack_ctl lat bandwidth "$bw" >/dev/null &&
                stack_ctl lat flush-delay "$fd" >/dev/null && stack_ctl lat write-delay "$wd" >/dev/null ||
                fail "configure"
        # A file that does not exist yet, each time: dd truncates one that does (even an empty one
        # from mktemp), and ext4 then starts its writeback at close (auto_da_alloc), before the sync
        # measured here.
        n_files=$((n_files + 1))
        dd if=/dev/urandom of="$mnt/data-$bw-$n_files" bs=1M count="$mib" status=none || fail "dd"
        w0=$(stack_get lat writes); f0=$(stack_get lat flushes); b0=$(stack_get lat bytes_written)
        t0=$(date +%s%N)
        sync -f "$mnt" || fail "sync -f"
        t1=$(date +%s%N)
        W=$(($(stack_get lat writes) - w0)); F=$(($(stack_get lat flushes) - f0))
        B=$(($(stack_get lat bytes_written) - b0)); T=$((t1 - t0))
        stack_ctl lat serial off >/dev/null; stack_ctl lat bandwidth 0 >/dev/null
        stack_ctl lat flush-delay 0 >/dev/null; stack_ctl lat write-delay 0 >/dev/null
}
measure() {             # BANDWIDTH(bytes/s) FLUSH_DELAY(us) WRITE_DELAY(us) MIB
        local base
        # The same sync without injected latency, just before: what this host itself takes (FUSE,
        # loop driver, ext4), which the model adds to the latency it injects.
        timed_sync 0 0 0 "$4"
        base=$T
        timed_sync "$@"
        awk -v t="$T" -v b="$B" -v f="$F" -v w="$W" -v o="$base" \
            -v bw="$1" -v fd="$2" -v wd="$3" 'BEGIN {
                m = t / 1e9; p = b / bw + f * fd / 1e6 + w * wd / 1e6 + o / 1e9;
                err = (m - p) / p;
                printf "bandwidth=%d flush_delay=%dus write_delay=%dus: bytes=%d flushes=%d writes=%d " \
                       "measured=%.3fs predicted=%.3fs (host %.3fs) error=%+.1f%%\n", bw, fd, wd, b, f, w, m, p,
                       o / 1e9, err * 100;
                if (b < 1048576 || f < 1) { print "too little I/O observed"; exit 2 }
                exit err < -0.10 ? 3 : err > 0.10 ? 1 : 0 }'
}

# attempts SETTINGS...: measure until one is within the model, three times at most.
attempts() {
        local i rc
        for i in 1 2 3; do
                measure "$@"
                rc=$?
                ((rc == 0)) && return 0
                ((rc == 3)) && fail "faster than the 10 % model: the bed does not enforce its latency"
                echo "attempt $i: $( ((rc == 1)) && echo "slower than the model (load?)" || echo "too little I/O to measure"), again"
        done
        fail "outside the 10 % model in three attempts"
}
attempts $((16 * 1024 * 1024)) 100000 0 8
attempts $((64 * 1024 * 1024)) 250000 2000 8
echo "PASS"
