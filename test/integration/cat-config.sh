#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 5: `systemd-analyze cat-config suspend-sync.conf` and `suspend-sync cat-config` agree on the
# files and their order (systemd's drop-in semantics), on the config fixture trees. systemd lists
# masked (-> /dev/null) entries and directories too, which it does not read: those are left out of
# the comparison. Then what the command line does to cat-config: an override (--deadline=) is shown
# next to the file's value, never as its value; a --config= that cannot be read fails.
set -euo pipefail
source "$TEST_LIB/common.sh"
command -v systemd-analyze >/dev/null || skip "no systemd-analyze"
[[ -x ${SUSPEND_SYNC:-} ]] || skip "SUSPEND_SYNC not set"

dropins=$FIXTURES_DIR/config/dropins
out=$("$SUSPEND_SYNC" --root="$dropins" --deadline=5s cat-config)
want=$'# from /etc/suspend-sync.conf:4\n# overridden on the command line: --deadline=5s\nDeadlineSec=20s'
if [[ $out != *"$want"* || $out == *DeadlineSec=5s* ]]; then
        echo "FAIL: --deadline=5s not shown apart from DeadlineSec=20s of /etc/suspend-sync.conf:4"
        echo "$out"
        exit 1
fi
echo "override: shown apart from the file's value"

for config in /etc/nonexistent.conf /etc/suspend-sync.conf.d; do
        rc=0
        err=$("$SUSPEND_SYNC" --root="$dropins" --config="$config" cat-config 2>&1 >/dev/null) || rc=$?
        if ((rc != 1)) || [[ $err != *"Failed to read configuration file '$config' (--config=)"* ]]; then
                echo "FAIL: cat-config --config=$config: exit status $rc, stderr: $err"
                exit 1
        fi
        echo "--config=$config: exit status 1, $err"
done
"$SUSPEND_SYNC" --root="$dropins" --config=/etc/custom.conf cat-config | grep -qx 'MaxParallel=11' ||
        { echo "FAIL: --config=/etc/custom.conf not shown"; exit 1; }

# Review Q (M1, L3): a drop-in directory that cannot be listed (a symlink loop) is named as not read
# and stands as a disabled rule, and the main file still applies; a file where /etc's drop-in
# directory would be and a dangling drop-in link get a notice each, and the vendor's drop-in of that
# name still applies (as in systemd).
tree=$(mktemp -d /tmp/cat-config-review-q.XXXXXX)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/etc" "$tree/run/suspend-sync.conf.d" "$tree/usr/lib/suspend-sync.conf.d"
printf '[Sync]\nMaxParallel=4\n' >"$tree/etc/suspend-sync.conf"
: >"$tree/etc/suspend-sync.conf.d"
printf '[Sync]\nDeadlineSec=7s\n' >"$tree/usr/lib/suspend-sync.conf.d/20-v.conf"
ln -s missing.conf "$tree/run/suspend-sync.conf.d/20-v.conf"
mkdir -p "$tree/usr/local/lib"
ln -s suspend-sync.conf.d "$tree/usr/local/lib/suspend-sync.conf.d"
err=$("$SUSPEND_SYNC" --root="$tree" cat-config 2>&1 >"$tree/cat-config.out") || { echo "FAIL: cat-config failed: $err"; exit 1; }
out=$(cat "$tree/cat-config.out")
for want in \
        "/etc/suspend-sync.conf.d: Not a directory, so no drop-ins are read from it, ignoring" \
        "/run/suspend-sync.conf.d/20-v.conf: Symbolic link to nothing, not read: '/usr/lib/suspend-sync.conf.d/20-v.conf' applies in its place" \
        "/usr/local/lib/suspend-sync.conf.d: Failed to read directory: Too many levels of symbolic links, ignoring its drop-ins"; do
        [[ $err == *"$want"* ]] || { echo "FAIL: stderr lacks '$want':"; echo "$err"; exit 1; }
done
for want in $'# Not read (see the warnings):\n#   /usr/local/lib/suspend-sync.conf.d\n#   /run/suspend-sync.conf.d/20-v.conf\n# Files read, in order:\n#   /etc/suspend-sync.conf\n#   /usr/lib/suspend-sync.conf.d/20-v.conf\n' \
        $'# from /etc/suspend-sync.conf:2\nMaxParallel=4' $'# from /usr/lib/suspend-sync.conf.d/20-v.conf:2\nDeadlineSec=7s' \
        $'# from /usr/local/lib/suspend-sync.conf.d\n# DISABLED: the drop-in directory could not be read (/usr/local/lib/suspend-sync.conf.d).'; do
        [[ $out == *"$want"* ]] || { echo "FAIL: cat-config lacks '$want':"; echo "$out"; exit 1; }
done
[[ $out != *"(:0)"* ]] || { echo "FAIL: a stand-in without its origin"; echo "$out"; exit 1; }
echo "unlistable directory, dangling link, file for a directory: warned (the link not read), noticed, the rest applies"

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
