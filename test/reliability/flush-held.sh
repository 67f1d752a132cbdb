#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A disk stuck on a cache FLUSH alone: its ext4 is clean, so the pass's syncfs sends nothing but the
# FLUSH, and the disk (a fault disk, hang io) never completes it.
#  1. What progress.h's held rule reads, on this kernel, while the FLUSH is held: the disk's stat
#     field 9, and its blk-mq debugfs busy files (block/<disk>/hctx<N>/busy). Asserted: busy shows a
#     FLUSH request (the evidence progress_read() asks for before Linux 6.10, whose field 9 counts
#     no pending FLUSH); on 6.10 and later field 9 counts it too (7be835694dae), which is what the
#     pass reads there. The negative control: with the disk resumed, both show nothing.
#  2. The pass proves the disk stuck within its deadline (no completion, a request held), reports the
#     mount "timeout hung" with its abandoned worker, and the late pass turns the kernel's sync off
#     (SyncOnSuspend=off: every mount left unsynced is proven stuck): with field 9 (this kernel),
#     and with the busy files alone ($SUSPEND_SYNC_TEST_BUSY_ONLY=1: what kernels before 6.10 get,
#     bounded child and all). Negative control: busy only and no blk-mq debugfs, so nothing shows
#     the held FLUSH: a timeout without proof, and the kernel's sync stays on.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
rel_begin

deadline_s=3
slack=${REL_SLACK_MS:-1000}
ss_debugfs || skip "debugfs not available (the blk-mq busy files are there)"

stack_setup fl ext4 64M
m=$(stack_mnt fl)
dev=$(stack_dev fl)
name=${dev#/dev/}
[[ -d /sys/kernel/debug/block/$name ]] || skip "no blk-mq debugfs directory for $name (CONFIG_BLK_DEBUG_FS)"
# The busy files themselves (block/<disk>/hctx<N>/busy) need CONFIG_BLK_DEBUG_FS; block/<disk>
# alone is made for blktrace too (seen: a 6.18 kernel whose block/* are all empty). Without them
# the rounds that read them are left out, said so, and field 9 (what 6.10 and later read) is
# checked alone; before 6.10 there is nothing to check then.
have_busy=0
compgen -G "/sys/kernel/debug/block/$name/hctx*/busy" >/dev/null && have_busy=1
if ((!have_busy)); then
        [[ $(printf '%s\n' "$(uname -r)" 6.10 | sort -V | head -1) == 6.10 ]] ||
                skip "no blk-mq busy files for $name (CONFIG_BLK_DEBUG_FS) on a kernel before 6.10"
        echo "note: no blk-mq busy files under /sys/kernel/debug/block/$name (CONFIG_BLK_DEBUG_FS off):" \
                "the busy-file round is left out"
fi
stack_ctl fl hang-max 60s >/dev/null
echo data >"$m/file"
sync -f "$m"
sync -f "$m" # the second one finds the journal idle: one FLUSH, nothing else

sysfs=$REL_TMP/sysfs
ss_fixture_sysfs "$sysfs"
knob() { cat "$sysfs/power/sync_on_suspend"; }
REL_SYNC="MaxParallel=2
MountTimeoutSec=10s
DeadlineSec=${deadline_s}s
OnTimeout=continue"
# Nothing skipped by rule, which would keep the knob on (as in hung-first.sh): the host's root and
# the test bed's own mounts are synced too.
rel_config "$m" -- "[Kernel]" "SyncOnSuspend=off" "[Rule host-root]" "Path=/" "Action=auto" \
        "[Rule test-bed]" "Path=$SS_TEST_WORKDIR/*" "Action=auto"

field9() { awk '{ print $9 }' "/sys/block/$name/stat"; }
# every line of the disk's busy files; `timeout`: from Linux 6.16 the read takes a queue lock
busy() {
        ((have_busy)) || return 0
        timeout 5 sh -c "cat /sys/kernel/debug/block/$name/hctx*/busy" || echo "(busy read failed: $?)"
}

# negative control: an idle disk shows nothing in either
[[ $(field9) == 0 ]] || fail "field 9 of $name is $(field9) on an idle disk"
[[ -z $(busy) ]] || fail "busy of $name is not empty on an idle disk: $(busy)"

# a pass still running when a check fails is ended before the disks are torn down
PASS_PID=
ss_on_exit '[[ -z $PASS_PID ]] || { kill "$PASS_PID"; wait "$PASS_PID"; }'

# round NAME DEBUGFS WANT: one sleep's two passes against the disk holding a FLUSH alone, with
# $SUSPEND_SYNC_TEST_BUSY_ONLY as the caller exports it; WANT "hung" (proven stuck, knob 0) or
# "unproven" (a timeout without proof, knob 1).
round() {
        local label=$1 debugfs=$2 want=$3 pass rc=0 t0 t1 over out pid b f held_busy="" held_f9=0 i
        echo "== $label (busy only: ${SUSPEND_SYNC_TEST_BUSY_ONLY:-0}, debugfs $debugfs)"
        echo 1 >"$sysfs/power/sync_on_suspend"
        stack_ctl fl hang io >/dev/null
        t0=$(rel_ms)
        ss run --trigger=unit --sysfs="$sysfs" --debugfs="$debugfs" >"$REL_TMP/run.log" 2>&1 &
        pass=$!
        PASS_PID=$pass
        # Until the FLUSH shows (in both, on 6.10+) or the pass has ended: only a sample that lists a
        # flush request by its address is kept.
        while kill -0 "$pass" 2>/dev/null; do
                b=$(busy)
                f=$(field9)
                grep -q '^[0-9a-f]* {.op=FLUSH,' <<<"$b" && held_busy=$b
                ((f > held_f9)) && held_f9=$f
                [[ -n $held_busy || $have_busy == 0 ]] && ((held_f9 > 0)) && break
                sleep 0.05
        done
        echo "$label: while the FLUSH is held: field 9 = $held_f9; busy:"
        echo "${held_busy:-(empty)}"
        if ((have_busy)); then
                grep -qi 'op=FLUSH' <<<"$held_busy" || fail "$label: no FLUSH request in the busy files of $name"
                grep -q '^[0-9a-f]' <<<"$held_busy" || fail "$label: busy lines do not start with a request's address"
        fi
        if [[ $(printf '%s\n' "$(uname -r)" 6.10 | sort -V | head -1) == 6.10 ]]; then
                ((held_f9 >= 1)) || fail "$label: kernel $(uname -r): field 9 did not count the held FLUSH"
        else
                echo "$label: kernel $(uname -r), before 6.10: field 9 = $held_f9 (the pass asks busy)"
        fi
        wait "$pass" || rc=$?
        PASS_PID=
        t1=$(rel_ms)
        over=$((t1 - t0 - deadline_s * 1000))
        echo "$label: unit pass exit $rc after $((t1 - t0)) ms (over the deadline by $over ms)"
        [[ $rc == 0 ]] || { cat "$REL_TMP/run.log"; fail "$label: unit pass exit status $rc"; }
        ((over <= slack)) || fail "$label: the unit pass returned $over ms after the deadline"
        ss status --json=short >"$REL_TMP/status.json"
        out=$(rel_outcome "$REL_TMP/status.json" "$m")
        pid=$(ss_mount_field "$REL_TMP/status.json" "$m" abandoned_pid)
        echo "$label: $m: $out (worker $pid)"
        [[ $out == timeout* && $pid =~ ^[0-9]+$ ]] || { cat "$REL_TMP/run.log"; fail "$label: $m reported '$out' (pid '$pid')"; }
        if [[ $want == hung ]]; then
                [[ $out == "timeout hung:"* ]] || fail "$label: not proven stuck: '$out'"
        else
                [[ $out != "timeout hung:"* ]] || fail "$label: proven stuck without held evidence: '$out'"
        fi
        ss run --late --trigger=hook --sysfs="$sysfs" --debugfs="$debugfs" >>"$REL_TMP/run.log" 2>&1 ||
                fail "$label: late pass failed"
        echo "$label: knob after the late pass: $(knob)"
        if [[ $want == hung ]]; then
                [[ $(knob) == 0 ]] || { cat "$REL_TMP/run.log"; fail "$label: the kernel's sync stayed on: the FLUSH-only stall was not proven stuck"; }
        else
                [[ $(knob) == 1 ]] || { cat "$REL_TMP/run.log"; fail "$label: the kernel's sync went off without proof"; }
        fi
        stack_ctl fl resume >/dev/null
        ss_wait_gone "$pid" 30 || fail "$label: abandoned worker $pid still there 30 s after resume"
        # the control again: resumed, nothing held
        for ((i = 0; i < 100; i++)); do [[ $(field9) == 0 && -z $(busy) ]] && break; sleep 0.05; done
        [[ $(field9) == 0 ]] || fail "$label: field 9 of $dev is $(field9) after resume"
        [[ -z $(busy) ]] || fail "$label: busy of $dev not empty after resume: $(busy)"
}

# a debugfs with the bdi stats but no blk-mq directories: no busy files to read
nobusy=$REL_TMP/debugfs-no-block
mkdir -p "$nobusy"
ln -s /sys/kernel/debug/bdi "$nobusy/bdi"

round "field 9 (this kernel)" /sys/kernel/debug hung
# The path kernels before 6.10 take, on this one: field 9 not read for held I/O.
export SUSPEND_SYNC_TEST_BUSY_ONLY=1
if ((have_busy)); then
        round "busy files" /sys/kernel/debug hung
fi
# negative control: no busy files, field 9 not read: the FLUSH is held but nothing shows it
round "no evidence" "$nobusy" unproven
unset SUSPEND_SYNC_TEST_BUSY_ONLY
echo PASS
