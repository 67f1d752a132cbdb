#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Review B, F4 and F5: bytes that are not UTF-8 in a mount point, a source, a FUSE subtype, a rule's
# name and a reason (fixtures/roots/non-utf8), and in a run record's reasons of an incomplete view.
# - `plan --json`, `history --json` and `status --json` are strict UTF-8 JSON (python3 decodes the
#   bytes as UTF-8, then parses), the lossy strings have their "<key>_hex" twin with the exact bytes;
# - a record with such a reason (incomplete_why_hex) is read by `status`, and `record-cycle` keeps
#   it: the cycle file is strict UTF-8 and `history` reads it (no "could not be read");
# - the tables and legends of plan, status and history show such a byte as "\xff", never raw.
# Negative control: the same checks on the code before the fix fail (see the commit). Unprivileged;
# writes only to a temporary directory.
set -euo pipefail

fx=$FIXTURES_DIR
export TZ=UTC LC_ALL=C
tmp=$(mktemp -d /tmp/ss-non-utf8.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# Strict: the bytes are UTF-8 and the text is JSON; then each check, a Python expression over j.
check_json() {
        local file=$1; shift
        python3 - "$file" "$@" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
try:
    j = json.loads(raw.decode("utf-8"))
except (UnicodeDecodeError, ValueError) as e:
    print("FAIL: %s is not strict UTF-8 JSON: %s" % (sys.argv[1], e))
    sys.exit(1)
h = bytes.fromhex
ok = True
for expr in sys.argv[2:]:
    try:
        good = eval(expr)
    except Exception as e:
        good = False
        expr += " (%r)" % e
    if not good:
        print("FAIL: %s: %s" % (sys.argv[1], expr))
        ok = False
sys.exit(0 if ok else 1)
PY
}

# Text that a terminal shows as it is: valid UTF-8, the bytes escaped; each pattern present.
check_text() {
        local file=$1; shift
        python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$file" 2>/dev/null ||
                bad "$file holds bytes that are not UTF-8: $(grep -a -n -P '[\x80-\xff]' "$file" | head -3)"
        for want in "$@"; do
                grep -qF -- "$want" "$file" || bad "$file lacks '$want'"
        done
}

# plan: the mount table and the rule's name
plan=("$SUSPEND_SYNC" --root="$fx/roots/non-utf8" --sysfs="$tmp/no-sysfs" --debugfs="$tmp/no-debugfs"
      --state-dir="$tmp/plan-state")
"${plan[@]}" plan --json=short >"$tmp/plan.json" 2>/dev/null
check_json "$tmp/plan.json" \
        'len(j["mounts"]) == 4' \
        'all("_hex" not in k for k in j["mounts"][0])' \
        '[m for m in j["mounts"] if m.get("mount_point_hex")] == [m for m in j["mounts"] if m["mount_id"] == 50]' \
        'all(h(m[k + "_hex"]) == b"/mnt/bad\xff\xfebyte" and m[k] == "/mnt/bad\ufffd\ufffdbyte"
             for m in j["mounts"] if m["mount_id"] == 50 for k in ("mount_point", "path"))' \
        'any(m.get("source_hex") and h(m["source_hex"]) == b"/dev/sdb\xff1" for m in j["mounts"])' \
        'any(m.get("source_hex") and h(m["source_hex"]) == b"me@host:/d\xffir x" for m in j["mounts"])' \
        'any(m.get("fstype_hex") and h(m["fstype_hex"]) == b"fuse.x\xfey" and h(m["source_hex"]) == b"fs\xfdname"
             for m in j["mounts"])' \
        'any(m.get("rule_hex") and h(m["rule_hex"]) == b"\xff\xfe\"q" and m["rule"] == "\ufffd\ufffd\"q"
             and h(m["reason_hex"]) == b"rule '"'"'\xff\xfe\"q'"'"': Action=skip" for m in j["mounts"])' ||
        fail=1
"${plan[@]}" plan --all >"$tmp/plan.txt" 2>/dev/null
check_text "$tmp/plan.txt" '/mnt/bad\xff\xfebyte' "rule '\\xff\\xfe\"q': Action=skip" 'fuse.x\xfey'

# the run records: a mount point, a reason and an incomplete view's reasons that are not UTF-8
cp -r "$fx/cycles/state" "$tmp/state"
python3 - "$tmp/state/history" <<'PY'
import glob, json, sys
for f in glob.glob(sys.argv[1] + "/*.json"):
    r = json.load(open(f))
    for m in r["mounts"]:
        if m["mount_point"] == "/home":
            m["mount_point"], m["mount_point_hex"] = "/home\ufffd", "2f686f6d65ff"
            m["reason"], m["reason_hex"] = "rule '\ufffd'", "72756c652027fe27"
    r["complete"] = False
    r["incomplete_why"] = ["ext4 superblock 7:3, at /tmp/m/hid\ufffd", "plain"]
    r["incomplete_why_hex"] = [b"ext4 superblock 7:3, at /tmp/m/hid\xff".hex(), None]
    json.dump(r, open(f, "w"))
PY
ss() { "$SUSPEND_SYNC" --state-dir="$tmp/state" --history-dir="$tmp/lib" --root="$fx/cycles/root" "$@"; }
ss status --json=short >"$tmp/status.json"
check_json "$tmp/status.json" \
        'h(j["history"][0]["incomplete_why_hex"][0]) == b"ext4 superblock 7:3, at /tmp/m/hid\xff"' \
        'j["history"][0]["incomplete_why_hex"][1] is None and j["history"][0]["incomplete_why"][1] == "plain"' \
        'any(h(m.get("mount_point_hex", "")) == b"/home\xff" for m in j["history"][0]["mounts"])' || fail=1
ss status >"$tmp/status.txt" 2>&1
check_text "$tmp/status.txt" '- ext4 superblock 7:3, at /tmp/m/hid\xff' "/home\\xff" "rule '\\xfe'"

# record-cycle keeps the bytes; history reads the cycle back
mkdir -p "$tmp/boot1/etc"
cp -r "$fx/cycles/boot1/." "$tmp/boot1/"
"$SUSPEND_SYNC" --state-dir="$tmp/state" --history-dir="$tmp/lib" --root="$tmp/boot1" record-cycle
for f in "$tmp/lib/cycles/"*.json; do
        check_json "$f" 'h(j["unit"]["incomplete_why_hex"][0]) == b"ext4 superblock 7:3, at /tmp/m/hid\xff"' ||
                fail=1
done
"$SUSPEND_SYNC" --history-dir="$tmp/lib" history --json=short >"$tmp/history.json" 2>"$tmp/history.err"
! grep -q "could not be read" "$tmp/history.err" || bad "history: $(cat "$tmp/history.err")"
check_json "$tmp/history.json" \
        'len(j["cycles"]) == 1' \
        'any(m["mount_point"] == "/home\ufffd" and h(m["mount_point_hex"]) == b"/home\xff" for m in j["mounts"])' \
        'all("mount_point_hex" not in m for m in j["mounts"] if m["mount_point"] != "/home\ufffd")' || fail=1
"$SUSPEND_SYNC" --history-dir="$tmp/lib" history >"$tmp/history.txt"
check_text "$tmp/history.txt" '/home\xff'

exit $fail
