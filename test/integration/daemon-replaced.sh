#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Reviews AH, M1 and AI, AI-1: a package upgrade that does not restart suspend-sync-daemon.service
# leaves the daemon running the old binary, and the late pass it forks is the old code, which may lack
# what the new version fixed (the knob gate's second look, say). Against fake-logind, the daemon run
# from a copy of the binary, which is then replaced as dpkg replaces it: the old file kept as a backup
# link (so it still has one), a new file renamed over the path:
#   control: before that, the daemon runs the unit's pass of a sleep and takes the hook's late pass;
#   1. after it, the daemon runs no pass for the next sleep, and says why (the unit runs the new one),
#      and warns once that it needs a restart;
#   2. a hook of a version without the hook's own check (a raw request on the socket) is not taken
#      either: the connection is closed without an ack, and the daemon says why;
#   3. this version's hook where nothing is installed where it execs the binary (a build run from its
#      tree, as here) goes by the daemon's link count: it asks while the old file is linked (and the
#      daemon's own check declines), and once it is not, it sends no request and runs the late pass;
#   4. with a binary installed there that the daemon does not run (a stub in a private mount
#      namespace), the hook sends no request and runs it. (The hook's comparison with the installed
#      binary while dpkg's backup link stands is test-hook-client's peer_replaced and e2e-daemon's
#      check 6b.)
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
require_root_loop_fuse
command -v python3 >/dev/null || skip "no python3"
[[ -n ${SUSPEND_SYNC_INSTALLED:-} ]] || skip "SUSPEND_SYNC_INSTALLED not set"
source "$TEST_LIB/fake-logind.sh"
fake_logind_require hook
[[ ! -e /run/suspend-sync/knob.orig ]] || skip "/run/suspend-sync/knob.orig exists: the hook would write this machine's knob"
ss_begin
ss_knob_fixture || fail "no fixture sysfs"
ss_config "[Sync]
DeadlineSec=3s
[Kernel]
SyncOnSuspend=keep"
fake_logind_begin

bin=$SS_TMP/bin/suspend-sync
mkdir "$SS_TMP/bin"
cp "$SUSPEND_SYNC" "$bin"
late_passes() { grep -c "The late pass of this sleep runs in PID" "$SS_TMP/daemon.log" || true; }
hook_pre() {
        env -i PATH="$PATH" SYSTEMD_SLEEP_ACTION=suspend "$SLEEP_HOOK" pre suspend >"$SS_TMP/hook.out" 2>&1
}

DAEMON_OPTS=(--sysfs="$sys")
SUSPEND_SYNC=$bin daemon_start "$SS_CONF"
fake_wait "granted 1"
fake "signal 1"
fake_wait "released 1"
grep -q "The pass took" "$SS_TMP/daemon.log" || fail "control: the daemon ran no pass: $(cat "$SS_TMP/daemon.log")"
ss_unit_pass_record
hook_pre
(($(late_passes) == 1)) || fail "control: the daemon did not take the late pass: $(cat "$SS_TMP/hook.out" "$SS_TMP/daemon.log")"
fake "signal 0"
fake_wait "granted 2"
echo "ok: control: the daemon from its binary ran the unit's pass and took the late pass"

# The upgrade, as dpkg unpacks: the old file kept as a backup link, a new one renamed over the path.
ln "$bin" "$bin.dpkg-tmp"
cp "$SUSPEND_SYNC" "$bin.new"
mv -f "$bin.new" "$bin"

# 1. The next sleep: no pass of the daemon's.
fake "signal 1"
fake_wait "released 2"
ping
grep -q "No pass of ours for this sleep (this daemon does not run the installed binary" "$SS_TMP/daemon.log" ||
        fail "the daemon with a replaced binary did not leave the pass to the unit: $(cat "$SS_TMP/daemon.log")"
(($(grep -c "is not the binary this daemon runs" "$SS_TMP/daemon.log") == 1)) ||
        fail "no warning, or more than one, that the daemon needs a restart: $(cat "$SS_TMP/daemon.log")"
(($(grep -c "The pass took" "$SS_TMP/daemon.log") == 1)) || fail "the daemon ran a second pass"
echo "ok: 1: the daemon with its binary replaced (the old one still linked) left the sleep's pass to the unit, and warned once"

# 2. A hook without the check: the daemon does not take its request.
python3 - "$RUNDIR/late-pass" <<'PY' || fail "the daemon took a request with its binary replaced"
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(10)
s.connect(sys.argv[1])
s.send(b"suspend suspend")
sys.exit(0 if s.recv(256) == b"" else 1)
PY
ping
grep -q "Not taking the late pass: this daemon does not run the installed binary" "$SS_TMP/daemon.log" ||
        fail "the daemon did not say why it closed the request: $(cat "$SS_TMP/daemon.log")"
(($(late_passes) == 1)) || fail "the daemon forked a late pass"
echo "ok: 2: a request of an older hook was closed without an ack"

not_taken() { grep -c "Not taking the late pass" "$SS_TMP/daemon.log" || true; }
# 3. This version's hook where no binary is installed (a build run from its tree, as here): it goes by
# the daemon's link count. a: the old file still linked (dpkg's backup): it asks, and the daemon's
# own check declines; b: the backup gone: it sends no request and runs the late pass itself (its
# exec of the binary that is not installed fails, and says so).
hook_pre
grep -q "the daemon did not take the pass" "$SS_TMP/hook.out" && (($(not_taken) == 2)) ||
        fail "3a: the hook's request: $(cat "$SS_TMP/hook.out"), declined $(not_taken) times"
rm "$bin.dpkg-tmp"
hook_pre
grep -q "the daemon does not run the installed binary" "$SS_TMP/hook.out" && (($(not_taken) == 2)) ||
        fail "3b: the hook did not leave the daemon out by its link count: $(cat "$SS_TMP/hook.out"), declined $(not_taken) times"
(($(late_passes) == 1)) || fail "the daemon took a late pass after all"
echo "ok: 3: where nothing is installed, the hook asked while the old file was linked (the daemon declined), and not once it was not"

# 4. A binary installed where the hook execs it (a stub over its directory in a private mount
# namespace), which the daemon does not run: the hook sends no request and runs the stub.
stub_out=$SS_TMP/stub.out
unshare -m bash -c '
        set -e
        mount -t tmpfs -o mode=0755 ss-stub "${1%/*}"
        printf "#!/bin/sh\necho \"stub \$*\" >%s\n" "$2" >"$1"
        chmod 0755 "$1"
        exec env -i PATH="$PATH" SYSTEMD_SLEEP_ACTION=suspend "$3" pre suspend' \
        _ "$SUSPEND_SYNC_INSTALLED" "$stub_out" "$SLEEP_HOOK" >"$SS_TMP/hook.out" 2>&1
grep -q "the daemon does not run the installed binary" "$SS_TMP/hook.out" ||
        fail "4: the hook did not say it leaves the daemon out: $(cat "$SS_TMP/hook.out")"
[[ $(cat "$stub_out" 2>&1) == "stub pre suspend" ]] ||
        fail "4: the hook did not run the late pass itself: $(cat "$stub_out" 2>&1) $(cat "$SS_TMP/hook.out")"
(($(late_passes) == 1 && $(not_taken) == 2)) || fail "4: the daemon was asked"
echo "ok: 4: with a binary installed that the daemon does not run, the hook sent no request and ran the installed one"

fake "signal 0"
fake_wait "granted 3"
daemon_stop
echo PASS
