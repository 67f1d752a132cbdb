#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 13 section 5: suspend-sync.service's start timeout follows DeadlineSec= without editing the
# unit. The unit pass sends EXTEND_TIMEOUT_USEC= (the rest of DeadlineSec= plus 10 s) to
# $NOTIFY_SOCKET once it knows its deadline, without blocking, on a path or an abstract socket; a
# manual run sends nothing; no socket, a socket nobody listens on, or an address it does not speak
# cost nothing. The unit has NotifyAccess=main (units-verify.sh).
set -euo pipefail
source "$TEST_LIB/suspend-sync.sh"
ss_begin
ss_config "[Sync]
DeadlineSec=40s"

# listen ADDRESS READY: receive datagrams on ADDRESS ("/path" or "@name") for 10 s, print each;
# READY is created once it is bound.
listen() {
        python3 - "$1" "$2" <<'PY' &
import socket, sys
a = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + a[1:] if a[0] == "@" else a)
open(sys.argv[2], "w").close()
s.settimeout(10)
try:
    while True:
        print(s.recv(4096).decode(), flush=True)
except socket.timeout:
    pass
PY
}

check() {       # ADDRESS TRIGGER WANT(yes|no)
        local addr=$1 out=$SS_TMP/notify.out ready=$SS_TMP/notify.ready pid v i
        rm -f "$ready"
        listen "$addr" "$ready" >"$out"
        pid=$!
        # Bound before the run, however long python takes to start on a loaded machine (a fixed
        # 0.5 s wait lost the datagram once in a full run).
        for ((i = 0; i < 200; i++)); do [[ -e $ready ]] && break; sleep 0.05; done
        [[ -e $ready ]] || fail "the listener on $addr did not start within 10 s"
        NOTIFY_SOCKET=$addr ss --trigger="$2" run >/dev/null 2>&1 || fail "$2 run with NOTIFY_SOCKET=$addr failed"
        # The datagram is queued when the run exits: give the listener time to print it (bounded).
        for ((i = 0; i < 200; i++)); do [[ $3 != yes || -s $out ]] && break; sleep 0.05; done
        sleep 0.2
        kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
        v=$(sed -n 's/^EXTEND_TIMEOUT_USEC=//p' "$out")
        echo "$addr, --trigger=$2: '$(tr '\n' ' ' <"$out")'"
        if [[ $3 == yes ]]; then
                [[ $v =~ ^[0-9]+$ ]] || fail "no EXTEND_TIMEOUT_USEC from the unit pass"
                # 40 s deadline + 10 s margin, less the time the pass took to get there (< 5 s)
                ((v > 45000000 && v <= 50000000)) || fail "EXTEND_TIMEOUT_USEC=$v, expected 45..50 s"
        else
                [[ ! -s $out ]] || fail "a --trigger=$2 run notified: $(cat "$out")"
        fi
}

check "$SS_TMP/notify.sock" unit yes
check "@suspend-sync-test-notify-$$" unit yes
check "$SS_TMP/notify2.sock" manual no
# Nothing listening, no such path, an address it does not speak: the run goes on, exit 0.
for addr in "$SS_TMP/nobody.sock" "vsock:2:1234" ""; do
        NOTIFY_SOCKET=$addr ss --trigger=unit run >/dev/null 2>&1 || fail "NOTIFY_SOCKET='$addr' made the run fail"
done
echo PASS
