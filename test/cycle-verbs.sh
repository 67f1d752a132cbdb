#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The sleep-cycle verbs on recorded cycles (fixtures/cycles): `metrics` through `promtool check
# metrics`, `record-cycle` twice per boot and across a simulated reboot (another boot id), then
# `history --json` percentiles, and `plot` through rsvg-convert. Unprivileged; writes only to a
# temporary directory. promtool (Debian: prometheus) and rsvg-convert (librsvg2-bin) are installed
# by tools/setup; without them those two checks are skipped with a reason and the test exits 77.
set -euo pipefail

fx=$FIXTURES_DIR/cycles
export TZ=UTC LC_ALL=C
tmp=$(mktemp -d /tmp/ss-cycle-verbs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0 skipped=0
bad() { echo "FAIL: $*"; fail=1; }

# a copy: record-cycle writes what the ETA learns into the state directory
cp -r "$fx/state" "$tmp/state"
# the summary's JSON form of before: record-cycle removes it
echo '{"mounts":[]}' >"$tmp/state/eta-learned.json"
ss() { "$SUSPEND_SYNC" --state-dir="$tmp/state" --history-dir="$tmp/lib" "$@"; }

# metrics: the last cycle is cycle 2 (unit + late pass, the USB stick timed out)
ss metrics >"$tmp/m.prom"
grep -qx 'suspend_sync_cycles 2' "$tmp/m.prom" || bad "metrics: expected 2 cycles"
grep -qx 'suspend_sync_pass_mounts{pass="unit",outcome="timeout"} 1' "$tmp/m.prom" || bad "metrics: unit pass timeout count"
grep -qx 'suspend_sync_mount_duration_seconds{pass="unit",mount_point="/media/usb stick",fstype="vfat",outcome="timeout"} 10.000000' \
        "$tmp/m.prom" || bad "metrics: the hung stick's series"
promtool=$(command -v promtool || true)
if [[ -n $promtool ]]; then
        "$promtool" check metrics <"$tmp/m.prom" || bad "promtool check metrics rejected the textfile"
        # negative control: promtool must reject a broken line
        if printf 'suspend_sync_cycles{x="\\q"} 1\n' | "$promtool" check metrics 2>/dev/null; then
                bad "promtool accepted a malformed textfile (negative control)"
        fi
else
        echo "SKIP part: promtool not installed (Debian: prometheus)"; skipped=1
fi

# record-cycle: written after resume, once per cycle; the textfile goes to [Metrics]
# TextfileDirectory= when that directory exists
# (the configuration is read below --root=, so each root gets its own /etc/suspend-sync.conf)
mkdir -p "$tmp/textfile"
for b in boot1 boot1-absent boot2; do
        cp -r "$fx/${b%-absent}" "$tmp/$b"
        mkdir -p "$tmp/$b/etc"
done
printf '[Metrics]\nTextfileDirectory=%s\n' "$tmp/textfile" >"$tmp/boot1/etc/suspend-sync.conf"
printf '[Metrics]\nTextfileDirectory=%s\n' "$tmp/absent" >"$tmp/boot1-absent/etc/suspend-sync.conf"
printf '[Metrics]\nTextfileDirectory=no\n' >"$tmp/boot2/etc/suspend-sync.conf"
ss --root="$tmp/boot1" record-cycle
ss --root="$tmp/boot1" record-cycle
n=$(find "$tmp/lib/cycles" -name '*.json' | wc -l)
[[ $n == 1 ]] || bad "record-cycle twice wrote $n cycle files, expected 1"
cmp -s "$tmp/textfile/suspend_sync.prom" "$tmp/m.prom" || bad "the textfile differs from 'metrics'"
[[ $(stat -c %a "$tmp/lib/cycles/"*.json) == 644 ]] || bad "cycle file not world-readable"
ss --root="$tmp/boot1-absent" record-cycle
[[ ! -e $tmp/absent ]] || bad "record-cycle created a missing metrics directory"

# what the plan's ETA learns: the shortest and median sync time per mount and pass, in the state
# directory (tmpfs); plan adds the shortest to its own estimate
# (history.h: a header, then PASS NAMESPACE_INO MIN_USEC P50_USEC HEX_MOUNT_POINT per line)
python3 - "$tmp/state/eta-learned" <<'PY' || fail=1
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
ok = lines[0] == b"suspend-sync eta-learned 1" and lines[-1] == b""
m = {}
for l in lines[1:-1]:
    p, ns, lo, p50, mp = l.decode().split(" ")
    m[(p, bytes.fromhex(mp).decode())] = (int(ns), int(lo), int(p50))
ok = ok and m.get(("unit", "/")) == (0, 1290000, 1290000)
ok = ok and ("unit", "/media/usb stick") not in m   # never synced: nothing to learn
if not ok:
    print("FAIL: eta-learned:", lines[0], m)
sys.exit(0 if ok else 1)
PY
[[ ! -e $tmp/state/eta-learned.json ]] || bad "record-cycle left the summary's JSON form"
# ... and the plan reads it: / gets its shortest past time (1.29 s) on top of its own estimate,
# /home (no estimate of its own) its median; the JSON form of before teaches nothing (control)
plan_etas() {
        "$SUSPEND_SYNC" plan --root="$FIXTURES_DIR/roots/laptop" --sysfs="$FIXTURES_DIR/sysfs/laptop" \
                --debugfs="$FIXTURES_DIR/roots/laptop/debugfs" --state-dir="$1" --json=short 2>/dev/null |
                python3 -c 'import json, sys
e = {m["mount_point"]: m.get("eta_usec") for m in json.load(sys.stdin)["mounts"] if m["action"] == "sync"}
print(e["/"], e["/home"])'
}
[[ $(plan_etas "$tmp/state") == "1366860 300000" ]] || bad "plan: learned ETAs: $(plan_etas "$tmp/state")"
mkdir -p "$tmp/old-state"
python3 - "$tmp/old-state/eta-learned.json" <<'PY'
import json, sys
json.dump({"mounts": [{"pass": "unit", "mount_point": m, "namespace_ino": 0, "min_usec": t, "p50_usec": t}
                      for m, t in (("/", 1290000), ("/home", 300000))]}, open(sys.argv[1], "w"))
PY
[[ $(plan_etas "$tmp/old-state") == "76860 None" ]] || bad "plan learned from the JSON form: $(plan_etas "$tmp/old-state")"

# how close past ETAs came: actual/ETA of the five fixture runs, 0.75 .. 7.88, median 1.04
"$SUSPEND_SYNC" plan --root="$FIXTURES_DIR/roots/laptop" --sysfs="$FIXTURES_DIR/sysfs/laptop" \
        --debugfs="$tmp/no-debugfs" --state-dir="$tmp/state" >"$tmp/plan.txt" 2>/dev/null
grep -qx 'Past ETAs: the runs took 1.04x their ETA (median of 5; 0.75x to 7.88x).' "$tmp/plan.txt" ||
        bad "plan: past ETA accuracy line: $(grep 'Past ETA' "$tmp/plan.txt")"

# what the ETA expects past a limit: / (ETA 1.366 s, learned) against a deadline of 1 s and, with
# [Sync] MountTimeoutSec=1s, against its timeout; /home (0.3 s) against neither (the whole pass's ETA
# is unknown here: the remote mounts have none, so only --deadline= shows nothing of the pass); and
# what becomes of it, by SyncOnSuspend=; the defaults (10 s) expect nothing past them (control)
cp -a "$FIXTURES_DIR/roots/laptop" "$tmp/limits-root"
mkdir -p "$tmp/limits-root/etc"
plan_limits() {
        printf '%b' "$1" >"$tmp/limits-root/etc/suspend-sync.conf"
        "$SUSPEND_SYNC" plan --root="$tmp/limits-root" --sysfs="$FIXTURES_DIR/sysfs/laptop" \
                --debugfs="$tmp/limits-root/debugfs" --state-dir="$tmp/state" "${@:2}" 2>/dev/null |
                sed -n '/^Expected past a limit/,/^What is not synced/p'
}
[[ -z $(plan_limits '' --deadline=1s) ]] || bad "plan: a limit expected to be passed: $(plan_limits '' --deadline=1s)"
want="Expected past a limit (an estimate):
  /: ETA 1.366s, timeout 1s
What is not synced by its limit is left to the kernel's own suspend sync, which then stays on (suspend-sync turns it off only after a pass that synced everything, or over a device proven stuck)."
got=$(plan_limits '[Sync]\nMountTimeoutSec=1s\n')
[[ $got == "$want" ]] || bad "plan: past a mount's timeout: $got"
got=$(plan_limits '[Sync]\nMountTimeoutSec=1s\n[Kernel]\nSyncOnSuspend=keep\n')
[[ $got == *"which SyncOnSuspend=keep leaves as /sys/power/sync_on_suspend has it." ]] ||
        bad "plan: past a mount's timeout, SyncOnSuspend=keep: $got"
# the whole pass: the late scope, with a late time learned for / and the overlay: 1.367 s in all, the
# disk's dirty data (76.86 ms) counted once for / and /boot/efi, its partitions (1.444 s before, twice)
mkdir -p "$tmp/limits-state"
hex() { printf %s "$1" | od -An -tx1 | tr -d ' \n'; }
printf 'suspend-sync eta-learned 1\nlate 0 1290000 1290000 %s\nlate 0 1000 1000 %s\n' "$(hex /)" \
        "$(hex /var/lib/containers/storage/overlay/merged)" >"$tmp/limits-state/eta-learned"
got=$(plan_limits '' --late --state-dir="$tmp/limits-state" --deadline=1s)
[[ $got == "Expected past a limit (an estimate):
  the pass: ETA 1.367s, deadline 1s
What is not synced"* ]] || bad "plan: past the deadline: $got"
[[ -z $(plan_limits '' --late --state-dir="$tmp/limits-state" --deadline=2s) ]] ||
        bad "plan: past a deadline of 2 s: $(plan_limits '' --late --state-dir="$tmp/limits-state" --deadline=2s)"

# a reboot: /run is empty (only the older cycle's records are left here), another boot id
mkdir -p "$tmp/run2/history"
cp "$fx"/state/history/00001767225600000000-11.json "$fx"/state/history/00001767225600600000-12.json "$tmp/run2/history/"
"$SUSPEND_SYNC" --state-dir="$tmp/run2" --history-dir="$tmp/lib" --root="$tmp/boot2" record-cycle
"$SUSPEND_SYNC" --history-dir="$tmp/lib" history --json=short >"$tmp/h.json"
python3 - "$tmp/h.json" <<'PY' || fail=1
import json, sys
h = json.load(open(sys.argv[1]))
c = h["cycles"]
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("FAIL: history:", what); ok = False
check(len(c) == 2, "2 cycles, got %d" % len(c))
check(c[0]["boot_id"] == "0d1e2f304a5b4c6d8e9fa0b1c2d3e4f5", "newest first, boot 1's cycle 2")
check(c[1]["boot_id"] == "9f8e7d6c5b4a439281706f5e4d3c2b1a", "the other boot's cycle kept")
m = {(x["pass"], x["mount_point"]): x for x in h["mounts"]}
root = m.get(("unit", "/"))
check(root and root["cycles"] == 2 and root["p50_usec"] == 380000 and root["max_usec"] == 1290000, "/ percentiles: %s" % root)
usb = m.get(("unit", "/media/usb stick"))
check(usb and usb["timeout"] == 1 and usb["synced"] == 0, "usb stick outcomes: %s" % usb)
check(("unit", "/proc") not in m, "skipped mounts have no percentiles")
sys.exit(0 if ok else 1)
PY
# Review BB, L2: the resume is paired with the late pass by boot and CLOCK_BOOTTIME (review BD, M4: not
# tested). The late pass of boot b1 at boottime 7200 s; a last-resume of boot b1 after it by boottime
# but not by the wall clock set back, of another boot later by the wall clock: neither is its resume
# (the cycle ends now), and one of its boot after it by both is (the cycle ends at its REALTIME=).
b1=0d1e2f304a5b4c6d8e9fa0b1c2d3e4f5
resumed_of() { # BOOT_ID BOOTTIME_USEC REALTIME: the cycle's resumed_realtime as record-cycle keeps it
        rm -rf "$tmp/pair" && mkdir -p "$tmp/pair" && cp -r "$fx/state" "$tmp/pair/state"
        python3 - "$tmp/pair/state/history/00001767232810400000-22.json" "$b1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["boot_id"] = sys.argv[2]
r["started_boottime_usec"] = 7200000000
json.dump(r, open(sys.argv[1], "w"))
PY
        printf 'ACTION=suspend\nSYSTEMD_SLEEP_ACTION=suspend\nREALTIME=%s\nBOOTTIME_SEC=1.00\nBOOT_ID=%s\nBOOTTIME_USEC=%s\n' \
                "$3" "$1" "$2" >"$tmp/pair/state/last-resume"
        "$SUSPEND_SYNC" --state-dir="$tmp/pair/state" --history-dir="$tmp/pair/lib" --root="$tmp/boot1" record-cycle
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["resumed_realtime"])' "$tmp/pair/lib/cycles/"*.json
}
[[ $(resumed_of $b1 10800000000 2026-01-01T03:00:00.000000000Z) == 1767236400000000 ]] ||
        bad "record-cycle: the resume of the late pass's boot after it not paired"
[[ $(resumed_of ffffffffffffffffffffffffffffffff 10800000000 2026-01-01T03:00:00.000000000Z) != 1767236400000000 ]] ||
        bad "record-cycle: a resume of another boot paired with the late pass"
[[ $(resumed_of $b1 7000000000 2026-01-01T03:00:00.000000000Z) != 1767236400000000 ]] ||
        bad "record-cycle: a resume before the late pass by CLOCK_BOOTTIME paired with it"
# Review BG, F-6: a sleep whose late pass the unit's pass left out (KeepCheapSync=, the defaults' clean
# sleep) has no late record; restore-knob records its resume (no hook of ours ran). It was kept as
# never resumed (0). resumed_unit_only LEFT_OUT [BOOTTIME_USEC REALTIME]: the cycle's resumed_realtime
# with the late record gone and the unit's record saying (or not) that it left the late pass out, its
# resume after it (by default; the unit's pass began at boottime 7200 s and took 10.25 s).
resumed_unit_only() {
        rm -rf "$tmp/pair" && mkdir -p "$tmp/pair" && cp -r "$fx/state" "$tmp/pair/state"
        rm "$tmp/pair/state/history/00001767232810400000-22.json"
        python3 - "$tmp/pair/state/history/00001767232800000000-21.json" "$b1" "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["boot_id"] = sys.argv[2]
r["started_boottime_usec"] = 7200000000
r["late_left_out"] = sys.argv[3] == "1"
json.dump(r, open(sys.argv[1], "w"))
PY
        printf 'ACTION=unknown\nSYSTEMD_SLEEP_ACTION=\nREALTIME=%s\nBOOTTIME_SEC=1.00\nBOOT_ID=%s\nBOOTTIME_USEC=%s\n' \
                "${3:-2026-01-01T03:00:00.000000000Z}" "$b1" "${2:-10800000000}" >"$tmp/pair/state/last-resume"
        "$SUSPEND_SYNC" --state-dir="$tmp/pair/state" --history-dir="$tmp/pair/lib" --root="$tmp/boot1" record-cycle
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["resumed_realtime"])' "$tmp/pair/lib/cycles/"*.json
}
[[ $(resumed_unit_only 1) == 1767236400000000 ]] ||
        bad "record-cycle: the resume of a sleep whose late pass was left out not kept"
[[ $(resumed_unit_only 0) == 0 ]] ||
        bad "record-cycle: a cycle without its late pass, none left out, given a resume"
# ... the resume is after the unit's pass's end, not its start: a last-resume written while it ran (a
# sleep before it, resumed late) is not this sleep's (review BH, R10)
[[ $(resumed_unit_only 1 7205000000 2026-01-01T02:00:05.000000000Z) != 1767232805000000 ]] ||
        bad "record-cycle: a resume written while the unit's pass ran paired with its left-out late pass"
# stamp BOOT AT HOOK FILE...: each record of boot BOOT, begun at CLOCK_BOOTTIME AT (a late pass's HOOK
# microseconds after it)
stamp() {
        local boot=$1 at=$2 hook=$3 f
        shift 3
        for f; do
                python3 - "$f" "$boot" "$at" "$hook" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["boot_id"] = sys.argv[2]
r["started_boottime_usec"] = int(sys.argv[3]) + (int(sys.argv[4]) if r["trigger"] == "hook" else 0)
json.dump(r, open(sys.argv[1], "w"))
PY
        done
}
# Review BG, F-2: the daemon's record-cycle for a sleep that ran after the next sleep had begun kept
# that half cycle. --cycle-before-boottime= (the daemon's): the newest cycle this boot began before it,
# by CLOCK_BOOTTIME. before_of BOUND [BOOT]: the start of the cycle kept, the newest cycle (21, 22) of
# boot BOOT (b1, the running one) begun at boottime 7200 s, the one before it (11, 12) of no known
# boot (with $BEFORE_ALL 1: of boot b1, begun at boottime 3600 s).
before_of() {
        local h=$tmp/pair/state/history
        rm -rf "$tmp/pair" && mkdir -p "$tmp/pair" && cp -r "$fx/state" "$tmp/pair/state"
        stamp "${2:-$b1}" 7200000000 10400000 "$h/00001767232800000000-21.json" "$h/00001767232810400000-22.json"
        if ((${BEFORE_ALL:-0})); then
                stamp "$b1" 3600000000 600000 "$h/00001767225600000000-11.json" "$h/00001767225600600000-12.json"
        fi
        "$SUSPEND_SYNC" --state-dir="$tmp/pair/state" --history-dir="$tmp/pair/lib" --root="$tmp/boot1" \
                --cycle-before-boottime="$1" record-cycle
        python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["unit"]["started_realtime_usec"])' "$tmp/pair/lib/cycles/"*.json
}
[[ $(before_of 7100000000) == 1767225600000000 ]] ||
        bad "record-cycle --cycle-before-boottime=: a cycle begun after it kept"
# ... and the metrics textfile ($tmp/boot1's [Metrics]) is of the cycle kept, not of the newest (review
# BH, R12)
grep -q '^suspend_sync_pass_start_timestamp_seconds{pass="unit"} 1767225600\.' "$tmp/textfile/suspend_sync.prom" ||
        bad "record-cycle --cycle-before-boottime=: the textfile is not of the cycle kept"
[[ $(before_of 7200000001) == 1767232800000000 ]] ||
        bad "record-cycle --cycle-before-boottime=: the newest cycle begun before it not kept"
# review BH: a cycle of another boot began before it, whatever its CLOCK_BOOTTIME (R2: a state
# directory that outlives a boot, the cycle owed found at the next boot's start) ...
[[ $(before_of 7100000000 ffffffffffffffffffffffffffffffff) == 1767232800000000 ]] ||
        bad "record-cycle --cycle-before-boottime=: a cycle of another boot compared by CLOCK_BOOTTIME"
# ... and none of this boot begun before it: none recorded, not the newest (R11)
BEFORE_ALL=1 before_of 1000000 >/dev/null 2>&1 || true
[[ -z $(find "$tmp/pair/lib" -name '*.json' 2>/dev/null) ]] ||
        bad "record-cycle --cycle-before-boottime=: a cycle begun after it recorded when none began before"
BEFORE_ALL=1 before_of 3600000001 >"$tmp/before-all" 2>&1 || true
[[ $(cat "$tmp/before-all") == 1767225600000000 ]] ||
        bad "record-cycle --cycle-before-boottime=: the control, a cycle of this boot begun before it, not kept"
"$SUSPEND_SYNC" --cycle-before-boottime=1 status >/dev/null 2>&1 &&
        bad "--cycle-before-boottime= taken by another verb than record-cycle"
INVOCATION_ID=0123456789abcdef0123456789abcdef "$SUSPEND_SYNC" --state-dir="$tmp/pair/state" \
        --history-dir="$tmp/pair/lib" --cycle-before-boottime=1 record-cycle >/dev/null 2>&1 &&
        bad "--cycle-before-boottime= taken from a unit's command line"

# ... and the cycle's boot is its records', not the running one's (F-6: a state directory that
# outlives a boot, a cycle recorded after the reboot)
rm -rf "$tmp/pair" && mkdir -p "$tmp/pair" && cp -r "$fx/state" "$tmp/pair/state"
for f in "$tmp/pair/state/history/00001767232800000000-21.json" "$tmp/pair/state/history/00001767232810400000-22.json"; do
        python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["boot_id"] = "ffffffffffffffffffffffffffffffff"; json.dump(r, open(sys.argv[1], "w"))' "$f"
done
"$SUSPEND_SYNC" --state-dir="$tmp/pair/state" --history-dir="$tmp/pair/lib" --root="$tmp/boot1" record-cycle
[[ $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["boot_id"])' "$tmp/pair/lib/cycles/"*.json) == ffffffffffffffffffffffffffffffff ]] ||
        bad "record-cycle: the cycle named the running boot, not its records'"

# The kernel's suspend counts at both ends of a sleep (suspend-stats.h): the late pass records them
# with its boot, the unit's pass its boot only, the post hook both with the last failure; a sysfs
# without them records none.
cp -r "$FIXTURES_DIR/sysfs/laptop" "$tmp/sys"
mkdir -p "$tmp/sys/power/suspend_stats"
printf '41\n' >"$tmp/sys/power/suspend_stats/success"
printf '3\n' >"$tmp/sys/power/suspend_stats/fail"
printf -- '-16\n' >"$tmp/sys/power/suspend_stats/last_failed_errno"
printf 'suspend\n' >"$tmp/sys/power/suspend_stats/last_failed_step"
printf 'cciss!c0d0\n' >"$tmp/sys/power/suspend_stats/last_failed_dev"
counts_of() { # SYSFS ARGS...: a pass's record's boot_id, suspend_success and suspend_fail
        rm -rf "$tmp/cs" && mkdir "$tmp/cs"
        "$SUSPEND_SYNC" --state-dir="$tmp/cs" --root="$FIXTURES_DIR/roots/laptop" --sysfs="$1" \
                --debugfs="$FIXTURES_DIR/roots/laptop/debugfs" "${@:2}" >/dev/null 2>&1 || true
        python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(len(r.get("boot_id", "")), r.get("suspend_success"), r.get("suspend_fail"))' \
                "$tmp/cs/last.json"
}
[[ $(counts_of "$tmp/sys" run --late --trigger=hook) == "32 41 3" ]] ||
        bad "the late pass did not record the kernel's counts: $(counts_of "$tmp/sys" run --late --trigger=hook)"
[[ $(counts_of "$tmp/sys" run --trigger=unit) == "32 None None" ]] ||
        bad "the unit's pass: $(counts_of "$tmp/sys" run --trigger=unit)"
[[ $(counts_of "$FIXTURES_DIR/sysfs/laptop" run --late --trigger=hook) == "32 None None" ]] ||
        bad "the late pass without counts in sysfs recorded some"
"$SUSPEND_SYNC" --state-dir="$tmp/cs" --root="$FIXTURES_DIR/roots/laptop" --sysfs="$tmp/sys" post suspend \
        >/dev/null 2>&1 || true
for kv in SUSPEND_SUCCESS=41 SUSPEND_FAIL=3 SUSPEND_LAST_FAILED_STEP=suspend SUSPEND_LAST_FAILED_DEV=cciss?c0d0 \
        SUSPEND_LAST_FAILED_ERRNO=-16; do
        grep -qxF "$kv" "$tmp/cs/last-resume" || bad "post: no $kv in last-resume: $(cat "$tmp/cs/last-resume")"
done
grep -qE '^BOOT_ID=[0-9a-f]{32}$' "$tmp/cs/last-resume" && grep -qE '^BOOTTIME_USEC=[1-9][0-9]*$' "$tmp/cs/last-resume" ||
        bad "post: no boot or boot time in last-resume"

"$SUSPEND_SYNC" --history-dir="$tmp/lib" history >"$tmp/h.txt"
grep -q '^/media/usb stick' "$tmp/h.txt" || bad "history table lacks the stick"

# plot: the last cycle as SVG, rendered
ss plot >"$tmp/c.svg"
for want in '>/home</text>' '>/media/usb stick</text>' '>deadline</text>' '>late pass</text>'; do
        grep -qF "$want" "$tmp/c.svg" || bad "plot: '$want' missing"
done
if command -v rsvg-convert >/dev/null; then
        rsvg-convert -o "$tmp/c.png" "$tmp/c.svg" || bad "rsvg-convert failed"
        [[ -s $tmp/c.png ]] || bad "empty PNG"
        [[ $(head -c 8 "$tmp/c.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] || bad "not a PNG"
else
        echo "SKIP part: rsvg-convert not installed (Debian: librsvg2-bin)"; skipped=1
fi

(( fail )) && exit 1
(( skipped )) && exit 77
exit 0
