#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Emulate the kernel's suspend sync for a fake /sys/power (test/bench/suspend-e2e).

    kernel-sync-emu.py OUTPUT POWER_DIR

In a container the fake /sys/power/state is a plain file: writing "mem" into it does not run the
kernel's suspend path, whose first step (kernel/power/suspend.c: enter_state() -> ksys_sync_helper()
when /sys/power/sync_on_suspend is 1) is a sync(2) of every filesystem. This program does that step
on the host at that moment: one inotify instance watches POWER_DIR's `state` and `sync_on_suspend`
(IN_MODIFY, IN_CLOSE_WRITE); when `state` is first seen holding "mem" after having held something
else (the harness puts "freeze mem disk" back before each cycle), the value sync_on_suspend had
at that write decides: 1 -> sync(2) now, in a thread (a hung disk must not stop the recording),
timed with CLOCK_MONOTONIC (the journal's clock).

The value of sync_on_suspend "at the write" is the content read when its last write before the
state write was handled (the events come out of one queue in the order the kernel saw them).
The real state write blocks until the resume; this one returns at once, so the resume's restore
of sync_on_suspend may follow within a few ms, and the content read may already be that later
value. Any write the read could have seen has its event queued by the time the state write is
handled, so the events after it in the same batch, and those queued by then (read without
blocking, again after 1 ms for a write caught between its data and its event), are looked at:
a write of sync_on_suspend among them makes the line say race=1 (the value read is not known to
be the one at the state write). The events read that way are then handled in their turn.

Output lines (flushed at once, MONO in µs of CLOCK_MONOTONIC):

    MONO READY
    MONO WRITE knob=K knob_now=K2 race=0|1      the "mem" write seen (an upper bound of its time)
    MONO SYNC start=MONO0 end=MONO1 usec=D      the emulated kernel sync (only when K == 1; it may
                                                come out before the WRITE line)

Runs until SIGTERM (a sync(2) still blocked on a hung disk is left to finish by itself).
"""
import ctypes
import os
import select
import signal
import struct
import sys
import threading
import time

IN_MODIFY = 0x002
IN_CLOSE_WRITE = 0x008


def mono_usec():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def main():
    out = open(sys.argv[1], "a", buffering=1)
    power = sys.argv[2]
    lock = threading.Lock()

    def emit(line):
        with lock:
            out.write(line + "\n")

    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0:
        sys.exit("inotify_init1: " + os.strerror(ctypes.get_errno()))
    wds = {}
    for name in ("state", "sync_on_suspend"):
        wd = libc.inotify_add_watch(fd, os.path.join(power, name).encode(), IN_MODIFY | IN_CLOSE_WRITE)
        if wd < 0:
            sys.exit(f"inotify_add_watch {name}: " + os.strerror(ctypes.get_errno()))
        wds[wd] = name

    def read(name):
        try:
            with open(os.path.join(power, name), "rb") as f:
                return f.read(64).decode(errors="replace").strip()
        except OSError as e:
            return f"<{e.strerror}>"

    def kernel_sync():
        t0 = mono_usec()
        libc.sync()
        t1 = mono_usec()
        emit(f"{t1} SYNC start={t0} end={t1} usec={t1 - t0}")

    def parse(buf):
        names = []
        off = 0
        while off < len(buf):
            wd, _mask, _cookie, length = struct.unpack_from("iIII", buf, off)
            off += 16 + length
            names.append(wds.get(wd))
        return names

    def pending():
        """The events queued by now, read without blocking."""
        names = []
        while select.select([fd], [], [], 0)[0]:
            names += parse(os.read(fd, 65536))
        return names

    knob = read("sync_on_suspend")
    armed = not read("state").startswith("mem")
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    emit(f"{mono_usec()} READY")
    while True:
        events = parse(os.read(fd, 65536))
        i = -1
        while i + 1 < len(events):
            i += 1
            name = events[i]
            if name == "sync_on_suspend":
                v = read("sync_on_suspend")
                if v in ("0", "1"):     # (a write may be caught half way: after O_TRUNC, before the data)
                    knob = v
            elif name == "state":
                content = read("state")
                if not content.startswith("mem"):
                    armed = True
                    continue
                if not armed:
                    continue
                now = mono_usec()
                armed = False
                if knob == "1":
                    threading.Thread(target=kernel_sync, daemon=True).start()
                # (after the sync's start: the look for a race must not delay it)
                events += pending()
                time.sleep(0.001)
                events += pending()
                race = int("sync_on_suspend" in events[i + 1:])
                emit(f"{now} WRITE knob={knob} knob_now={read('sync_on_suspend')} race={race}")


if __name__ == "__main__":
    main()
