#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Record writes to files in some directories with their CLOCK_MONOTONIC time (the journal's clock).

    watch.py OUTPUT LABEL=DIR [LABEL=DIR...]

One inotify instance watches every DIR (IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_TO, IN_CREATE, IN_DELETE); events
come out of the one queue in the order the kernel saw them, so the ORDER of writes across files is
exact. Each event is printed as one line, flushed at once:

    MONO_USEC LABEL NAME EVENT CONTENT

MONO_USEC is read when the event is handled (an upper bound of the write time, normally within a
few ms); CONTENT is the file's first 64 bytes read at that moment, JSON-quoted (a later write may
already show: the harness checks the sequence is consistent). A first line "MONO_USEC - - READY -"
says every watch is in place. Runs until SIGTERM.
"""
import ctypes
import json
import os
import signal
import struct
import sys
import time

IN_MODIFY = 0x002
IN_CLOSE_WRITE = 0x008
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
NAMES = {IN_MODIFY: "MODIFY", IN_CLOSE_WRITE: "CLOSE_WRITE", IN_MOVED_TO: "MOVED_TO", IN_CREATE: "CREATE",
         IN_DELETE: "DELETE"}


def mono_usec():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def main():
    out = open(sys.argv[1], "a", buffering=1)
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0:
        sys.exit("inotify_init1: " + os.strerror(ctypes.get_errno()))
    wds = {}
    for arg in sys.argv[2:]:
        label, _, path = arg.partition("=")
        wd = libc.inotify_add_watch(fd, path.encode(), IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE)
        if wd < 0:
            sys.exit(f"inotify_add_watch {path}: " + os.strerror(ctypes.get_errno()))
        wds[wd] = (label, path)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    out.write(f"{mono_usec()} - - READY -\n")
    while True:
        buf = os.read(fd, 65536)
        now = mono_usec()
        off = 0
        while off < len(buf):
            wd, mask, _cookie, length = struct.unpack_from("iIII", buf, off)
            name = buf[off + 16:off + 16 + length].rstrip(b"\0").decode(errors="replace")
            off += 16 + length
            label, path = wds.get(wd, ("?", ""))
            ev = "|".join(v for k, v in NAMES.items() if mask & k) or hex(mask)
            try:
                with open(os.path.join(path, name), "rb") as f:
                    content = f.read(64).decode(errors="replace")
            except OSError as e:
                content = f"<{e.strerror}>"
            out.write(f"{now} {label} {name} {ev} {json.dumps(content)}\n")


if __name__ == "__main__":
    main()
