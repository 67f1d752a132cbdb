#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 5: `systemd-analyze cat-config suspend-sync.conf` and `suspend-sync cat-config` agree on the
# files and their order (systemd's drop-in semantics), on the config fixture trees. systemd lists
# masked (-> /dev/null) entries and directories too, which it does not read: those are left out of
# the comparison.
set -euo pipefail
source "$TEST_LIB/common.sh"
command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
[[ -x ${SUSPEND_SYNC:-} ]] || skip "SUSPEND_SYNC not set"

n=0
for root in "$FIXTURES_DIR"/config/*/; do
        root=${root%/}
        [[ -d $root/etc || -d $root/usr || -d $root/run ]] || continue
        ours=$("$SUSPEND_SYNC" --root="$root" cat-config 2>/dev/null |
                sed -n '/^# Files read/,/^$/p' | sed -n 's/^#   //p')
        # (it exits 1 when it meets a directory or an unreadable file; the listing is still complete)
        theirs=$({ systemd-analyze cat-config --root="$root" suspend-sync.conf 2>/dev/null || true; } |
                sed -n "s|^# $root||p" | while read -r f; do
                        [[ -L $root$f && $(readlink "$root$f") == /dev/null ]] && continue
                        [[ -d $root$f ]] && continue
                        echo "$f"
                done)
        if [[ "$ours" != "$theirs" ]]; then
                echo "FAIL: $(basename "$root"): file order differs"
                diff <(echo "$ours") <(echo "$theirs") || true
                exit 1
        fi
        echo "$(basename "$root"): $(grep -c . <<<"$ours" || true) files, same order"
        n=$((n + 1))
done
((n >= 2)) || { echo "FAIL: only $n fixture trees compared"; exit 1; }
echo PASS
