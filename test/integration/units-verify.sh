#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Installs the build tree into a temporary DESTDIR and checks the systemd pieces there, without
# systemd running as PID 1:
#  1. `systemd-analyze verify --root=DESTDIR` on the installed units (suspend-sync.service, and
#     suspend-sync-daemon.service with stubs of the targets its default dependencies name, which
#     DESTDIR does not have). --root makes verify resolve
#     ExecStart=/ExecStop= binaries inside DESTDIR (without it, 252 fails with "Command ... is not
#     executable" unless the package is installed on the host); MANPATH points verify's
#     Documentation=man: check at DESTDIR's man pages (--man=no when they were not built).
#     verify exits 0 on "Unknown key ..., ignoring" style warnings, so ANY output is a failure.
#  2. The same with the require-sync.conf example drop-in activated under DESTDIR/etc.
#  3. `systemctl --root=DESTDIR enable`: default → sleep.target.wants/; with the drop-in, after
#     disable + enable → sleep.target.requires/ (the procedure documented in the drop-in).
#  4. Hardening: the unit sets none of the options that imply a private mount namespace; the
#     daemon's unit has the same hardening lines. The daemon's mark: the path in the unit's
#     ConditionPathExists=! is DAEMON_PASS_MARK of src/daemon.h, in the daemon's RuntimeDirectory=;
#     require-sync.conf resets the condition; enabling suspend-sync.service enables the daemon.
#  5. Journal catalog: `journalctl --root=DESTDIR --update-catalog` accepts the installed catalog and
#     lists exactly the MESSAGE_IDs defined in src/message-ids.h.
#
# Env: BUILD_ROOT (built meson build dir), SOURCE_ROOT (for src/message-ids.h). Exit 77 when a
# prerequisite is missing.

# shellcheck disable=SC2015,SC2001 # ok() never fails; sed indents multi-line output
set -u -o pipefail

source "$(dirname "$0")/../lib/common.sh"
checks_begin

require_build_root
command -v systemd-analyze >/dev/null || skip "systemd-analyze not found"
command -v systemctl >/dev/null || skip "systemctl not found"
SOURCE_ROOT=${SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

tmp=$(mktemp -d /tmp/units-verify.XXXXXX) || exit 1
trap 'rm -rf -- "$tmp"' EXIT
dest=$tmp/dest

if ! meson install -C "$BUILD_ROOT" --destdir "$dest" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
        cat "$tmp/install.log"
        echo "FAIL: meson install"
        exit 1
fi

unit=$(cd "$dest" && find . -path '*/systemd/system/suspend-sync.service' -printf '/%P\n' | head -n1)
[ -n "$unit" ] || { echo "FAIL: no suspend-sync.service installed"; exit 1; }
dropin=$(cd "$dest" && find . -name require-sync.conf -printf '/%P\n' | head -n1)
mandir=$(find "$dest" -path '*/man8/suspend-sync.8' -printf '%h\n' | head -n1)
mandir=${mandir#"$dest"}
echo "unit: $unit  drop-in example: ${dropin:-none}  man: ${mandir:-not built}"

verify() {              # description [UNIT]
        local out manopt=() u=${2:-$unit}
        if [ -n "$mandir" ]; then
                export MANPATH=$dest${mandir%/man8}
        else
                manopt=(--man=no)
        fi
        out=$(systemd-analyze verify "${manopt[@]}" --root="$dest" "$dest$u" 2>&1)
        local rc=$?
        if [ $rc -ne 0 ] || [ -n "$out" ]; then
                fail "$1: systemd-analyze verify rc=$rc"
                echo "$out" | sed 's/^/    /'
        else
                ok "$1: systemd-analyze verify clean"
        fi
}

# 1. the units as installed
verify "installed unit"
daemon_unit=${unit%/*}/suspend-sync-daemon.service
if [ -f "$dest$daemon_unit" ]; then
        for t in sysinit basic shutdown multi-user; do
                [ -e "$dest${unit%/*}/$t.target" ] || printf '[Unit]\nDescription=stub for verify\n' >"$dest${unit%/*}/$t.target"
        done
        # ExecReload=kill ...: verify --root looks for kill(1) in DESTDIR, where nothing installs it.
        mkdir -p "$dest/usr/bin" && printf '#!/bin/sh\n' >"$dest/usr/bin/kill" && chmod 755 "$dest/usr/bin/kill"
        verify "installed daemon unit" "$daemon_unit"
else
        fail "no suspend-sync-daemon.service installed"
fi

# 2. with the drop-in activated as documented
if [ -n "$dropin" ]; then
        mkdir -p "$dest/etc/systemd/system/suspend-sync.service.d"
        cp "$dest$dropin" "$dest/etc/systemd/system/suspend-sync.service.d/require-sync.conf"
        verify "unit + require-sync.conf"
        rm -rf "$dest/etc/systemd/system/suspend-sync.service.d"
else
        fail "require-sync.conf example not installed"
fi

# 3. enabling (offline)
links() { (cd "$dest/etc/systemd/system" 2>/dev/null && find . -type l -name suspend-sync.service -printf '%h\n' | sort); }
if systemctl --root="$dest" enable suspend-sync.service >"$tmp/enable.log" 2>&1; then
        [ "$(links)" = "./sleep.target.wants" ] && ok "enable: sleep.target.wants/" ||
                fail "enable created: $(links | tr '\n' ' ') (expected ./sleep.target.wants)"
        [ -L "$dest/etc/systemd/system/multi-user.target.wants/suspend-sync-daemon.service" ] &&
                ok "enable: the daemon too (Also=), multi-user.target.wants/" ||
                fail "enabling suspend-sync.service did not enable suspend-sync-daemon.service"
else
        fail "systemctl --root enable: $(cat "$tmp/enable.log")"
fi
if [ -n "$dropin" ]; then
        mkdir -p "$dest/etc/systemd/system/suspend-sync.service.d"
        cp "$dest$dropin" "$dest/etc/systemd/system/suspend-sync.service.d/"
        systemctl --root="$dest" disable suspend-sync.service >/dev/null 2>&1
        systemctl --root="$dest" enable suspend-sync.service >/dev/null 2>&1
        [ "$(links)" = "./sleep.target.requires" ] && ok "drop-in + disable/enable: sleep.target.requires/ only" ||
                fail "with drop-in, links are: $(links | tr '\n' ' ') (expected ./sleep.target.requires)"
        rm -rf "$dest/etc/systemd/system/suspend-sync.service.d"
        systemctl --root="$dest" disable suspend-sync.service >/dev/null 2>&1
        systemctl --root="$dest" enable suspend-sync.service >/dev/null 2>&1
        [ "$(links)" = "./sleep.target.wants" ] && ok "drop-in removed + disable/enable: back to wants/" ||
                fail "after undo, links are: $(links | tr '\n' ' ')"
fi

# 4. no option that creates a mount namespace (systemd's exec_needs_mount_namespace())
mntns='^(PrivateTmp|PrivateDevices|PrivateMounts|PrivateNetwork|PrivateIPC|ProtectSystem|ProtectHome|ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectControlGroups|ProtectProc|ProcSubset|ReadOnlyPaths|ReadWritePaths|InaccessiblePaths|ExecPaths|NoExecPaths|BindPaths|BindReadOnlyPaths|TemporaryFileSystem|MountFlags|MountAPIVFS|RootDirectory|RootImage|MountImages|ExtensionImages|ExtensionDirectories|LogNamespace|DynamicUser|NetworkNamespacePath|IPCNamespacePath)='
if grep -Eq "$mntns" "$dest$unit"; then
        fail "unit sets an option implying a mount namespace: $(grep -E "$mntns" "$dest$unit" | tr '\n' ' ')"
else
        ok "no mount-namespace options"
fi
for k in 'Type=oneshot' 'RemainAfterExit=yes' 'DefaultDependencies=no' 'Before=sleep.target' \
         'StopWhenUnneeded=yes' 'WantedBy=sleep.target'; do
        grep -qxF "$k" "$dest$unit" || fail "unit lacks $k"
done
# Directories the binary makes itself: each of these costs systemd 257 ~3 ms per start, on the sleep
# path (test/bench/unit-start).
if grep -Eq '^(RuntimeDirectory|StateDirectory|CacheDirectory|LogsDirectory)=' "$dest$unit"; then
        fail "unit sets a *Directory= the binary makes itself: $(grep -E '^[A-Za-z]*Directory=' "$dest$unit" | tr '\n' ' ')"
fi
grep -Eq '^TimeoutStartSec=[1-9]' "$dest$unit" || fail "unit lacks a finite TimeoutStartSec="
grep -Eq '^ExecStart=/.*/suspend-sync run --trigger=unit$' "$dest$unit" || fail "unit ExecStart= unexpected"
grep -Eq '^ExecStopPost=/.*/suspend-sync restore-knob$' "$dest$unit" || fail "unit ExecStopPost= unexpected"
# The binary extends the start timeout to DeadlineSec= (EXTEND_TIMEOUT_USEC=, test/integration/notify.sh).
grep -qx 'NotifyAccess=main' "$dest$unit" || fail "unit lacks NotifyAccess=main: EXTEND_TIMEOUT_USEC= would be ignored"

# The daemon: same hardening, its mark where the binary makes it and the unit's condition looks.
hardening() { sed -n '/^# Hardening that does NOT/,/^SystemCallErrorNumber=/p' "$1"; }
if [ -f "$dest$daemon_unit" ]; then
        [ -n "$(hardening "$dest$unit")" ] && [ "$(hardening "$dest$unit")" = "$(hardening "$dest$daemon_unit")" ] &&
                ok "daemon unit: the same hardening as suspend-sync.service" ||
                fail "daemon unit's hardening differs from suspend-sync.service's"
        grep -Eq "$mntns" "$dest$daemon_unit" && fail "daemon unit sets an option implying a mount namespace"
        rundir=$(sed -n 's/^#define DAEMON_RUNTIME_DIR "\(.*\)"$/\1/p' "$SOURCE_ROOT/src/daemon.h")
        mark=$rundir/$(sed -n 's/^#define DAEMON_PASS_MARK DAEMON_RUNTIME_DIR "\/\(.*\)"$/\1/p' "$SOURCE_ROOT/src/daemon.h")
        cond=$(sed -n 's/^ConditionPathExists=!//p' "$dest$unit")
        [ -n "$rundir" ] && [ "$cond" = "$mark" ] && ok "condition: ConditionPathExists=!$cond is src/daemon.h's mark" ||
                fail "unit's ConditionPathExists=!'$cond', src/daemon.h's mark '$mark'"
        grep -qx "RuntimeDirectory=${rundir#/run/}" "$dest$daemon_unit" && ok "daemon unit: RuntimeDirectory=${rundir#/run/}" ||
                fail "daemon unit's RuntimeDirectory= is not ${rundir#/run/}"
        grep -qx 'Type=notify' "$dest$daemon_unit" && grep -qx 'NotifyAccess=main' "$dest$daemon_unit" ||
                fail "daemon unit: Type=notify and NotifyAccess=main expected"
        grep -Eq '^ExecStart=/.*/suspend-sync daemon$' "$dest$daemon_unit" || fail "daemon unit ExecStart= unexpected"
fi
[ -n "$dropin" ] && { grep -qx 'ConditionPathExists=' "$dest$dropin" && ok "require-sync.conf resets the condition" ||
        fail "require-sync.conf does not reset ConditionPathExists="; }

# 5. catalog
if ! command -v journalctl >/dev/null; then
        echo "note: journalctl not found, catalog not checked"
elif [ ! -f "$SOURCE_ROOT/src/message-ids.h" ]; then
        fail "src/message-ids.h not found under SOURCE_ROOT=$SOURCE_ROOT"
else
        if ! journalctl --root="$dest" --update-catalog >"$tmp/cat.log" 2>&1 || [ -s "$tmp/cat.log" ]; then
                fail "journalctl --update-catalog: $(cat "$tmp/cat.log")"
        fi
        journalctl --root="$dest" --list-catalog 2>/dev/null | awk '{print $1}' | sort >"$tmp/catalog.ids"
        sed -n 's/^#define SUSPEND_SYNC_MESSAGE_[A-Z_]* SD_ID128_MAKE(\(.*\))$/\1/p' "$SOURCE_ROOT/src/message-ids.h" |
                tr -d ', ' | sort >"$tmp/header.ids"
        if [ ! -s "$tmp/header.ids" ]; then
                fail "no SD_ID128_MAKE() IDs found in src/message-ids.h"
        elif diff -u "$tmp/header.ids" "$tmp/catalog.ids" >"$tmp/ids.diff"; then
                ok "catalog: $(wc -l <"$tmp/catalog.ids") entries, same IDs as src/message-ids.h"
        else
                fail "catalog IDs differ from src/message-ids.h:"
                sed 's/^/    /' "$tmp/ids.diff"
        fi
        # _STR and binary forms must agree
        a=$(sed -n 's/^#define \(SUSPEND_SYNC_MESSAGE_[A-Z_]*\) SD_ID128_MAKE(\(.*\))$/\1 \2/p' "$SOURCE_ROOT/src/message-ids.h" | tr -d ',' | sort)
        b=$(sed -n 's/^#define \(SUSPEND_SYNC_MESSAGE_[A-Z_]*\)_STR SD_ID128_MAKE_STR(\(.*\))$/\1 \2/p' "$SOURCE_ROOT/src/message-ids.h" | tr -d ',' | sort)
        [ "$a" = "$b" ] && ok "message-ids.h: binary and _STR forms agree" || fail "message-ids.h: _STR forms differ"
fi

checks_end "unit"
