# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# lib.sh — helpers shared by the reliability tests (bash, sourced; sources suspend-sync.sh, stack.sh
# and common.sh). The prologue of a reliability test:
#
#   set -euo pipefail
#   source "$(dirname "$0")/lib.sh"
#   rel_begin                     # ss_begin (root, loop, fuse; ss_init), then rel_init
#
#   rel_init                      # workload generator path, results file, per-test scratch dir
#   rel_config MOUNT... [-- EXTRA_INI_LINES...]
#                                 # a config whose rules sync (Action=auto) exactly MOUNTs and skip
#                                 # every other mount of this shared machine; [Sync] lines come
#                                 # from $REL_SYNC (default: generous timeouts); the kernel knob is
#                                 # never touched (SyncOnSuspend=keep)
#   rel_gen SEED OPS LATE NAME... # workload on the named stacks; manifests in $REL_TMP/NAME.json;
#                                 # sets REL_CHANGES[NAME] and REL_LAST_CHANGE_MS (wall clock of the
#                                 # last change); REL_GEN_FLAGS=--meta: metadata-only late changes
#   rel_snap NAME...              # manifest of an untouched stack (no change)
#   rel_check NAME                # compare the stack with its manifest; sets REL_LOSSES, REL_ENTRIES
#   rel_cut NAME KEEP SEED        # power cut (random keep), remount (journal replay), unmount, fsck,
#                                 # mount; sets REL_FSCK=ok|FAIL; non-zero if the fs cannot be mounted
#   rel_record KIND FS TRIAL SEED KEEP CHANGES ENTRIES LOSSES FSCK NOTE
#                                 # one tab-separated line in $REL_RESULTS (for run-long.sh)
#   rel_wait_lists_empty MOUNT    # until the bdi of MOUNT's device lists no inode (<= ~50 s)
#   rel_settle MOUNT...           # `run`, wait until the writeback lists drain, twice: the state in
#                                 # which the old ext4 clean rule called an untouched disk clean
#   rel_outcome STATUS_JSON MOUNT # "outcome reason" of MOUNT in the last run
#   rel_ms                        # monotonic-ish milliseconds (date +%s%N)
#   rel_umount_patient NAME       # unmount, retrying for up to 60 s (a shut-down xfs is slow to go)

REL_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
declare -F ss_init >/dev/null || source "${TEST_LIB:-$REL_DIR/../lib}/suspend-sync.sh"
REL_WORKLOAD=$REL_DIR/workload.py
REL_TMP=
REL_RESULTS=${REL_RESULTS:-}
REL_SYNC=${REL_SYNC:-"MountTimeoutSec=30s
DeadlineSec=60s"}
declare -A REL_CHANGES=()
REL_LOSSES=0
REL_ENTRIES=0
REL_FSCK=ok

rel_begin() {
        ss_begin
        rel_init
}

rel_init() {
        command -v python3 >/dev/null || skip "python3 missing"
        REL_TMP=$SS_TMP/rel
        mkdir -p "$REL_TMP"
        [[ -n $REL_RESULTS ]] || REL_RESULTS=$REL_TMP/results.tsv
}

rel_ms() {
        echo $(($(date +%s%N) / 1000000))
}

rel_config() {
        local m i=0 extra=()
        local mounts=()
        while [[ $# -gt 0 ]]; do
                if [[ $1 == -- ]]; then
                        shift
                        extra=("$@")
                        break
                fi
                mounts+=("$1")
                shift
        done
        {
                echo "[Sync]"
                echo "$REL_SYNC"
                echo "[Kernel]"
                echo "SyncOnSuspend=keep"
                for m in "${mounts[@]}"; do
                        i=$((i + 1))
                        echo "[Rule rel$i]"
                        echo "Path=$m"
                        echo "Action=auto"
                done
                printf '%s\n' "${extra[@]}"
                echo "[Rule rel-other-mounts]"
                echo "Action=skip"
        } >"$SS_CONF"
}

# rel_conf_variant NAME KEY=VALUE...: prints the path of a copy of $SS_CONF (rel_config's) with these
# [Sync] keys set (a key it has already is replaced), checked; fails the test when it cannot.
rel_conf_variant() {
        local out=$REL_TMP/$1.conf kv sed_args=() add=""
        shift
        for kv in "$@"; do
                sed_args+=(-e "/^${kv%%=*}=/d")
                add+="\\n$kv"
        done
        sed "${sed_args[@]}" -e "s/^\[Sync\]\$/[Sync]$add/" "$SS_CONF" >"$out" || fail "cannot write $out"
        for kv in "$@"; do
                grep -qx "$kv" "$out" || fail "cannot set $kv in $out"
        done
        echo "$out"
}

rel_gen() {             # SEED OPS LATE NAME...
        local seed=$1 ops=$2 late=$3 n out line
        shift 3
        local args=()
        for n in "$@"; do
                args+=("$(stack_mnt "$n")=$REL_TMP/$n.json")
        done
        # shellcheck disable=SC2086
        out=$(python3 "$REL_WORKLOAD" gen --seed "$seed" --ops "$ops" --late "$late" ${REL_GEN_FLAGS:-} "${args[@]}") ||
                { echo "$out"; fail "workload generator failed (seed $seed)"; }
        for n in "$@"; do
                line=$(grep -F "$(stack_mnt "$n"): " <<<"$out")
                REL_CHANGES[$n]=$(sed -n 's/.*changes=\([0-9]*\).*/\1/p' <<<"$line")
        done
        REL_LAST_CHANGE_MS=$(sed -n 's/^last_change_ms=//p' <<<"$out")
}

rel_snap() {
        local n
        for n in "$@"; do
                python3 "$REL_WORKLOAD" snap "$(stack_mnt "$n")=$REL_TMP/$n.json" >/dev/null || fail "snapshot of $n"
                REL_CHANGES[$n]=0
        done
}

rel_check() {           # NAME
        local out rc=0
        out=$(python3 "$REL_WORKLOAD" check "$(stack_mnt "$1")" "$REL_TMP/$1.json") || rc=$?
        REL_LOSSES=$(sed -n 's/^losses=\([0-9]*\).*/\1/p' <<<"$out")
        REL_ENTRIES=$(sed -n 's/.*entries=\([0-9]*\).*/\1/p' <<<"$out")
        [[ -n $REL_LOSSES ]] || { echo "$out"; fail "check of $1 failed to run"; }
        if [[ $rc != 0 ]]; then
                echo "$out" | sed "s/^/$1: /"
        fi
        return $rc
}

rel_cut() {             # NAME KEEP SEED
        local n=$1
        REL_FSCK=ok
        stack_power_cut "$n" "$2" "$3" >/dev/null || return 1
        # the kernel replays the journal / log on mount, as after a real power loss
        stack_mount "$n" || return 1
        stack_umount "$n" || return 1
        stack_fsck "$n" || REL_FSCK=FAIL
        stack_mount "$n"
}

rel_record() {
        local IFS=$'\t'
        echo "$*" >>"$REL_RESULTS"
}

rel_wait_lists_empty() {
        # A page dirtied after the sync (ext4 writes checkpointed metadata home through the block
        # device's page cache) is only written by periodic writeback once it is older than
        # dirty_expire_centisecs: wait for that, plus two flusher intervals and a margin.
        local bdi i limit
        bdi=$(stat -c '%Hd:%Ld' "$1")
        limit=$(( ($(cat /proc/sys/vm/dirty_expire_centisecs) + 2 * $(cat /proc/sys/vm/dirty_writeback_centisecs)) / 10 + 100 ))
        for ((i = 0; i < limit; i++)); do
                if awk '/^b_/ { s += $2 } END { exit s != 0 }' "/sys/kernel/debug/bdi/$bdi/wb_stats" 2>/dev/null; then
                        return 0
                fi
                sleep 0.1
        done
        echo "writeback lists of $1 (bdi $bdi) still not empty after $((limit / 10)) s:" >&2
        grep -H . "/sys/kernel/debug/bdi/$bdi/wb_stats" | grep -E 'b_|WbCgIno|WbReclaimable' >&2 || true
        return 1
}

rel_settle() {          # MOUNT...: quiescent after our own sync, as between two suspends
        # The first run's syncfs leaves the block device's inode listed until the flusher's next
        # pass, which writes checkpointed metadata home; a second run then finds nothing to write.
        # That is when the removed ext4 clean rule (docs/CLEAN-EVIDENCE.md) called a disk clean.
        local try m
        for ((try = 1; try <= 2; try++)); do
                ss run >/dev/null 2>&1 || return 1
                for m in "$@"; do
                        rel_wait_lists_empty "$m" || return 1
                done
        done
}

rel_outcome() {         # STATUS_JSON MOUNT
        echo "$(ss_mount_field "$1" "$2" outcome) $(ss_mount_field "$1" "$2" reason)"
}

rel_mounted() {         # PATH: by the mount table, not stat(2): `mountpoint -q` fails on a
                        # filesystem that answers stat with EIO (xfs after a shutdown) and calls
                        # it "not mounted"
        findmnt -rn --mountpoint "$1" >/dev/null 2>&1
}

rel_umount_patient() {  # NAME: unmount, also a shut-down filesystem (see rel_mounted)
        local m i
        m=$(stack_mnt "$1")
        for ((i = 0; i < 240; i++)); do
                rel_mounted "$m" || return 0
                umount "$m" 2>/dev/null && continue
                sleep 0.25
        done
        return 1
}

# rel_user_fuse TAG: an unprivileged user (nobody) mounts the fault disk's passthrough FUSE
# filesystem (kernel writeback cache on) without allow_other, as gvfs, the document portal or a
# user's sshfs do: user_id=/group_id= of the user, root gets EACCES. Sets REL_UF_DIR (mount at
# $REL_UF_DIR/mnt, backing directory $REL_UF_DIR/lower, control socket $REL_UF_DIR/ctl), REL_UF_UID,
# REL_UF_GID, REL_UF_PID; unmounts and removes it on exit. Skips (77) without setpriv, nobody/nogroup
# or a setuid fusermount3.
rel_as_user() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
# rel_mapped_writer FILE BYTES: the user (rel_user_fuse's) writes BYTES of random data into FILE through
# a shared mapping and holds them dirty there (no msync, no close) until rel_mapped_writer_stop, or
# 120 s at most; returns once they are written. $REL_MW_SHA: their sha256.
rel_mapped_writer() {
        local file=$1 bytes=$2 py=/usr/bin/python3 i
        [[ -x $py ]] || py=$(command -v python3) # the system's: root's may live below a home
        REL_MW_DIR=$(dirname "$(dirname "$file")") # the test's directory, the user's (not through the mount)
        rm -f "$REL_MW_DIR/mw.ready" "$REL_MW_DIR/mw.stop"
        rel_as_user "$py" - "$file" "$bytes" "$REL_MW_DIR/mw.ready" "$REL_MW_DIR/mw.stop" <<'PY' &
import hashlib, mmap, os, sys, time
n = int(sys.argv[2])
data = os.urandom(n)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, n)
m = mmap.mmap(fd, n)
m[:] = data
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write(hashlib.sha256(data).hexdigest())
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
# Until told to stop, or its directory is gone (at most 120 s): killing the user's wrapper leaves
# this process running, holding the test's output open, and meson waits for it.
for _ in range(2400):
    if os.path.exists(sys.argv[4]) or not os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
PY
        REL_MW_PID=$!
        ss_on_exit "rel_mapped_writer_stop"
        for ((i = 0; i < 100; i++)); do [[ -e $REL_MW_DIR/mw.ready ]] && break; sleep 0.1; done
        [[ -e $REL_MW_DIR/mw.ready ]] || fail "the owner's writer did not map $file"
        REL_MW_SHA=$(cat "$REL_MW_DIR/mw.ready")
}
rel_mapped_writer_stop() {
        [[ -n ${REL_MW_PID:-} ]] || return 0
        touch "$REL_MW_DIR/mw.stop" 2>/dev/null
        wait "$REL_MW_PID" 2>/dev/null || kill "$REL_MW_PID" 2>/dev/null
        REL_MW_PID=
}
_rel_uf_cleanup() {
        local i
        if findmnt -rn --mountpoint "$REL_UF_DIR/mnt" >/dev/null 2>&1; then
                umount "$REL_UF_DIR/mnt" 2>/dev/null || umount -l "$REL_UF_DIR/mnt"
        fi
        if [[ -n ${REL_UF_PID:-} ]]; then
                for ((i = 0; i < 50; i++)); do kill -0 "$REL_UF_PID" 2>/dev/null || break; sleep 0.1; done
                kill -0 "$REL_UF_PID" 2>/dev/null && kill -KILL "$REL_UF_PID"
                wait "$REL_UF_PID" 2>/dev/null
        fi
        rm -rf --one-file-system "$REL_UF_DIR"
}
rel_user_fuse() {
        local caps= i d
        command -v setpriv >/dev/null || skip "setpriv missing"
        getent passwd nobody >/dev/null && getent group nogroup >/dev/null || skip "no nobody/nogroup"
        [[ -u $(command -v fusermount3 || echo /nonexistent) ]] || skip "fusermount3 missing or not setuid"
        REL_UF_UID=$(id -u nobody)
        REL_UF_GID=$(getent group nogroup | cut -d: -f3)
        # A directory the user may use: its own, below the test work dir (which everyone may traverse).
        mkdir -p "$SS_TEST_WORKDIR"
        d=$(mktemp -d "$SS_TEST_WORKDIR/$1.XXXXXX")
        REL_UF_DIR=$d REL_UF_PID=
        chmod 755 "$d"
        mkdir "$d/lower" "$d/mnt"
        cp "$FAULTDISK" "$d/faultdisk"          # the build tree may be closed to the user
        chown -R nobody:nogroup "$d"
        ss_on_exit _rel_uf_cleanup
        # The daemon runs as the user. libfuse mounts with user_id=/group_id= of its real ids; where
        # /dev/fuse is not open to users (0600 in containers) it gets the two capabilities that
        # fusermount3 would use on its behalf — the mount is the same as a user's own.
        if ! rel_as_user test -r /dev/fuse -a -w /dev/fuse; then
                caps="--inh-caps=+sys_admin,+dac_override --ambient-caps=+sys_admin,+dac_override"
        fi
        # shellcheck disable=SC2086
        rel_as_user $caps "$d/faultdisk" --passthrough="$d/lower" --no-allow-other --control="$d/ctl" "$d/mnt" \
                >"$SS_TMP/faultdisk.log" 2>&1 &
        REL_UF_PID=$!
        for ((i = 0; i < 100; i++)); do
                [[ -S $d/ctl ]] && "$FAULTDISK" ctl "$d/ctl" ping >/dev/null 2>&1 && break
                kill -0 "$REL_UF_PID" 2>/dev/null || break
                sleep 0.1
        done
        "$FAULTDISK" ctl "$d/ctl" ping >/dev/null 2>&1 || fail "user FUSE mount did not come up: $(cat "$SS_TMP/faultdisk.log")"
}
