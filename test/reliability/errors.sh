#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 4 item 4: EIO on one device. For each filesystem type (ext4, xfs, btrfs) as the failing one
# and each fault (`eio flush on`, `eio write on`), with dirty data on all three: `suspend-sync run`
# must report that mount, and only that one, `error` with errno 5 / "EIO" in the status JSON (btrfs
# with failing writes: EROFS, see below), name the error on stderr, and
# exit with status 74 (documented: a mount reported a sync error). The healthy ones must be
# `synced` and durable (power cut, random keep, fsck, model comparison). The failing disk is
# rebuilt afterwards.
#
# Environment: REL_EIO_ROUNDS (default 1), REL_EIO_FSTYPES (default "ext4 xfs btrfs"), REL_SEED.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin

rounds=${REL_EIO_ROUNDS:-1}
base=${REL_SEED:-$((RANDOM * 32768 + RANDOM))}
# shellcheck disable=SC2206
fstypes=(${REL_EIO_FSTYPES:-ext4 xfs btrfs})
echo "errors: base seed=$base rounds=$rounds"

for fs in "${fstypes[@]}"; do
        stack_setup "e-$fs" "$fs" 320M
done
reconfigure() {
        local fs mounts=()
        for fs in "${fstypes[@]}"; do
                mounts+=("$(stack_mnt "e-$fs")")
        done
        rel_config "${mounts[@]}"
}
reconfigure

status=$REL_TMP/status.json
failures=0 t=0
err_fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}

for ((r = 1; r <= rounds; r++)); do
        for mode in flush write; do
                for bad in "${fstypes[@]}"; do
                        t=$((t + 1))
                        seed=$((base * 1000 + t))
                        names=()
                        for fs in "${fstypes[@]}"; do names+=("e-$fs"); done
                        rel_gen "$seed" 30 6 "${names[@]}"
                        stack_ctl "e-$bad" eio "$mode" on >/dev/null
                        rc=0
                        ss run >"$REL_TMP/run.log" 2>&1 || rc=$?
                        stack_ctl "e-$bad" eio "$mode" off >/dev/null
                        ss status --json=short >"$status"
                        m=$(stack_mnt "e-$bad")
                        out=$(rel_outcome "$status" "$m")
                        errno=$(ss_mount_field "$status" "$m" errno)
                        ename=$(ss_mount_field "$status" "$m" errno_name)
                        echo "== $t eio $mode on $bad (seed $seed): exit $rc; $bad: $out errno=$errno $ename"
                        ok=1
                        [[ $rc == 74 ]] || { err_fail "eio $mode on $bad: exit status $rc, expected 74"; ok=0; }
                        # btrfs aborts its transaction on a writeback EIO and turns read-only; syncfs
                        # then returns sync_fs()'s EROFS, which takes precedence over the EIO kept in
                        # the superblock's errseq (fs/sync.c): the kernel's errno, reported as is.
                        if [[ $bad == btrfs && $mode == write && $errno == 30 && $ename == EROFS ]]; then
                                errno_ok=1
                        else
                                errno_ok=$([[ $errno == 5 && $ename == EIO ]] && echo 1 || echo 0)
                        fi
                        [[ $out == error* && $errno_ok == 1 ]] ||
                                { cat "$REL_TMP/run.log"; err_fail "eio $mode on $bad: reported '$out' errno=$errno $ename"; ok=0; }
                        grep -qiE "EIO|input/output error|read-only file system" "$REL_TMP/run.log" ||
                                { err_fail "eio $mode on $bad: the run's stderr does not name the error"; ok=0; }
                        i=0
                        for fs in "${fstypes[@]}"; do
                                i=$((i + 1))
                                [[ $fs == "$bad" ]] && continue
                                n=e-$fs
                                o=$(rel_outcome "$status" "$(stack_mnt "$n")")
                                [[ $o == synced* ]] || { err_fail "eio on $bad: healthy $fs reported '$o'"; ok=0; }
                                keep=$((((seed * 7919) + i * 104729) % 1001))
                                rel_cut "$n" "$keep" "$((seed * 10 + i))" || fail "$n cannot be mounted after the cut (seed $seed)"
                                rel_check "$n" || { err_fail "eio on $bad: healthy $fs lost $REL_LOSSES entries (seed $seed keep $keep)"; ok=0; }
                                [[ $REL_FSCK == ok ]] || { err_fail "eio on $bad: healthy $fs fsck not clean (seed $seed)"; ok=0; }
                        done
                        rel_record eio "$bad" "$t" "$seed" - "${REL_CHANGES[e-$bad]}" 0 0 - "mode=$mode rc=$rc outcome=${out%% *} errno=$errno ok=$ok"
                        # the failed filesystem may be shut down or read-only now: rebuild it
                        rel_umount_patient "e-$bad" || fail "cannot unmount e-$bad"
                        stack_cleanup "e-$bad" || fail "cannot clean up e-$bad"
                        stack_setup "e-$bad" "$bad" 320M
                        reconfigure
                done
        done
done
echo "errors: $t runs, $failures failure(s), base seed $base"
((failures == 0)) || exit 1
echo PASS
