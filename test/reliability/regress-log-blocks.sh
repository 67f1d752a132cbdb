#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regression (issue 9, case 4a): logging blocked the run past its deadline. sd_journal_sendv() is a
# blocking datagram send: with journald not reading (stuck on the hung disk holding
# /var/log/journal) a DeadlineSec=2s run was killed after 15 s, and the first blocked message came
# before the kernel-knob decision. A full stderr pipe blocked the same way.
#
# Mechanism: the run is started in a private mount namespace (unshare -m) where a tmpfs covers
# /run/systemd and our own datagram socket, never read and filled up, is bound at
# /run/systemd/journal/socket; nothing in the binary can point it elsewhere, so production has no
# such knob. Cases:
#   journal  stderr is a full stream socket named by $JOURNAL_STREAM (as under systemd), the journal
#            socket is full;
#   pipe     stderr is a full pipe (blocking file description, as a shell or a hook runner gives).
# Each run has DeadlineSec=2s, SyncOnSuspend=off, --late --trigger=hook and a fixture --sysfs whose
# power/sync_on_suspend is a plain file; it must return within 2 x DeadlineSec (a safety bound, not
# a performance figure) and must have written 0 there (the knob decision was made and applied).
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"

require_root
command -v unshare >/dev/null || skip "unshare missing"
command -v python3 >/dev/null || skip "python3 missing"
[[ -d /run/systemd ]] || skip "no /run/systemd to cover in a private mount namespace"
ss_init
# The knob goes off only with debugfs to look at (evidence.h: no dirty data on devices without a
# superblock); a fresh machine may have none mounted.
ss_debugfs || fail "debugfs cannot be mounted: the knob would stay on for want of evidence"

# A sysfs whose devices are the machine's (the late pass classifies them: a device it cannot tell
# would rightly keep the knob on, see knob-late-facts.sh) and whose power/sync_on_suspend is a file.
sys=$SS_TMP/sys
ss_fixture_sysfs "$sys"
knob=$sys/power/sync_on_suspend
# The host's root is synced, not skipped by the tests' usual rule: a superblock skipped by rule
# keeps the knob on (run.c).
ss_config "[Sync]
DeadlineSec=2s
[Kernel]
SyncOnSuspend=off
[Rule host-root]
Path=/
Action=auto"

for case in ${REL_LOG_CASES:-journal pipe}; do
        echo 1 >"$knob"
        rm -f "$SS_STATE/knob.orig"
        ss_unit_pass_record # SyncOnSuspend=off needs the unit's pass of the sleep (handover.h)
        out=$(unshare -m --propagation private python3 - "$case" "$SUSPEND_SYNC" "$SS_STATE" "$SS_CONF" "$sys" <<'EOF'
import fcntl, os, socket, subprocess, sys, time

case, binary, state, conf, sysfs = sys.argv[1:6]
deadline = 2.0

subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "ss-test-journal", "/run/systemd"], check=True)
os.mkdir("/run/systemd/journal")
journal = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
journal.bind("/run/systemd/journal/socket")
filler = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
filler.connect("/run/systemd/journal/socket")
filler.setblocking(False)
n_fill = 0
try:
    while True:
        filler.send(b"MESSAGE=filler\n")
        n_fill += 1
except BlockingIOError:
    pass

env = dict(os.environ)
env.pop("JOURNAL_STREAM", None)
env["SUSPEND_SYNC_LOG_LEVEL"] = "debug"
if case == "journal":
    err, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    err.setblocking(False)
    try:
        while True:
            err.send(b"x" * 4096)
    except BlockingIOError:
        pass
    err.setblocking(True)
    st = os.fstat(err.fileno())
    env["JOURNAL_STREAM"] = "%d:%d" % (st.st_dev, st.st_ino)
    err_fd = err.fileno()
else:
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        while True:
            os.write(w, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(w, True)
    err_fd = w

t0 = time.monotonic()
p = subprocess.Popen([binary, "--state-dir=" + state, "--config=" + conf, "--sysfs=" + sysfs,
                      "--trigger=hook", "--late", "run"], stderr=err_fd, env=env)
try:
    rc = p.wait(timeout=2 * deadline)
    took = time.monotonic() - t0
except subprocess.TimeoutExpired:
    took = time.monotonic() - t0
    p.kill()
    p.wait()
    rc = "killed"
print("case=%s fill=%d rc=%s took=%.3f" % (case, n_fill, rc, took))
EOF
)
        echo "$out"
        grep -q "rc=0 " <<<"$out" || fail "$case: run did not return within 2 x DeadlineSec: $out"
        [[ $(tr -d '\n' <"$knob") == 0 ]] || fail "$case: knob decision not applied (sync_on_suspend is $(tr -d '\n' <"$knob"))"
        [[ $(tr -d '\n' <"$SS_STATE/knob.orig" 2>/dev/null) == 1 ]] || fail "$case: original knob value not recorded"
done
echo PASS
