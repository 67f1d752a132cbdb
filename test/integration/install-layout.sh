#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Installs the build tree into a temporary DESTDIR and checks that every expected file is where the
# build options (or pkg-config, when an option is empty) say it must be, with the right mode and
# with no unsubstituted @placeholders@. Lists the installed tree.
#
# Env: BUILD_ROOT (meson build directory, already built). Exit 77 when a prerequisite is missing.

# shellcheck disable=SC2154 # opt_* variables are assigned by an eval of meson introspect output
set -u -o pipefail

source "$(dirname "$0")/../lib/common.sh"
checks_begin

require_build_root
command -v python3 >/dev/null || skip "python3 not found"

tmp=$(mktemp -d /tmp/install-layout.XXXXXX) || exit 1
trap 'rm -rf -- "$tmp"' EXIT

if ! meson install -C "$BUILD_ROOT" --destdir "$tmp/dest" --no-rebuild --quiet >"$tmp/install.log" 2>&1; then
        cat "$tmp/install.log"
        echo "FAIL: meson install"
        exit 1
fi
dest=$tmp/dest

# Build options → shell variables (opt_prefix, opt_sbindir, opt_man, ...).
meson introspect --buildoptions "$BUILD_ROOT" >"$tmp/options.json" || { echo "FAIL: meson introspect"; exit 1; }
eval "$(python3 - "$tmp/options.json" <<'PY'
import json, shlex, sys
opts = {o["name"]: o["value"] for o in json.load(open(sys.argv[1]))}
for k in ["prefix", "sbindir", "libexecdir", "datadir", "mandir", "sysconfdir", "man", "systemdsystemunitdir",
          "systemsleepdir", "tmpfilesdir", "catalogdir", "bashcompletiondir"]:
    v = opts.get(k, "")
    print("opt_%s=%s" % (k, shlex.quote(str(v))))
PY
)"

abs() { case "$1" in /*) echo "$1" ;; *) echo "$opt_prefix/$1" ;; esac; }
pc() { pkg-config --variable="$2" "$1" 2>/dev/null; }

sbindir=$(abs "$opt_sbindir")
libexecdir=$(abs "$opt_libexecdir")
unitdir=${opt_systemdsystemunitdir:-$(pc systemd systemdsystemunitdir)}
unitdir=${unitdir:-$opt_prefix/lib/systemd/system}
sleepdir=${opt_systemsleepdir:-$(pc systemd systemdsleepdir)}
sleepdir=${sleepdir:-$opt_prefix/lib/systemd/system-sleep}
tmpfilesdir=${opt_tmpfilesdir:-$(pc systemd tmpfilesdir)}
tmpfilesdir=${tmpfilesdir:-$opt_prefix/lib/tmpfiles.d}
catalogdir=${opt_catalogdir:-$(pc systemd catalogdir)}
catalogdir=${catalogdir:-$opt_prefix/lib/systemd/catalog}
compdir=${opt_bashcompletiondir:-$(pc bash-completion completionsdir)}
compdir=${compdir:-$(abs "$opt_datadir")/bash-completion/completions}
mandir=$(abs "$opt_mandir")
exampledir=$(abs "$opt_datadir")/doc/suspend-sync/examples

echo "== installed tree ($dest)"
(cd "$dest" && find . -mindepth 1 \( -type f -o -type l \) -printf '%M %p\n' | sort)
echo "== checks"

expect_file() {         # path mode-regex description
        local p=$dest$1
        if [ ! -f "$p" ]; then
                fail "$3 missing: $1"
                return 1
        fi
        if ! stat -c %A "$p" | grep -qE "$2"; then
                fail "$3 has mode $(stat -c %A "$p"), expected $2: $1"
                return 1
        fi
        if grep -qE '@[a-z_]+@' "$p" 2>/dev/null && ! file -b "$p" | grep -q ELF; then
                fail "$3 contains unsubstituted placeholders: $(grep -oE '@[a-z_]+@' "$p" | sort -u | tr '\n' ' ')"
                return 1
        fi
        ok "$3: $1"
}

expect_file "$sbindir/suspend-sync" '^-rwx' "binary"
expect_file "$unitdir/suspend-sync.service" '^-rw-r--r--$' "unit" &&
        { grep -qxF "ExecStart=$sbindir/suspend-sync run --trigger=unit" "$dest$unitdir/suspend-sync.service" ||
                  fail "unit ExecStart= does not point at $sbindir/suspend-sync"; }
expect_file "$unitdir/suspend-sync-daemon.service" '^-rw-r--r--$' "daemon unit" &&
        { grep -qxF "ExecStart=$sbindir/suspend-sync daemon" "$dest$unitdir/suspend-sync-daemon.service" ||
                  fail "daemon unit ExecStart= does not point at $sbindir/suspend-sync"; }
expect_file "$exampledir/require-sync.conf" '^-rw-r--r--$' "require-sync drop-in example"
[ -e "$dest$unitdir/suspend-sync.service.d" ] && fail "a drop-in directory is installed: the require drop-in must not be active"
# The hook is a small binary of libc alone (src/sleep-hook.c: it asks the daemon for the late pass,
# else execs $sbindir/suspend-sync), linked into systemd's system-sleep directory, absolute (the
# link is read on the installed system, not in DESTDIR).
hook=$libexecdir/suspend-sync-sleep-hook
expect_file "$hook" '^-rwx' "system-sleep hook binary" && {
        needed=$(readelf -d "$dest$hook" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
        case " $needed" in
        *libsystemd* | *libjson* | *libinih* | *libudev* | *libmount*)
                fail "the system-sleep hook links more than libc: $needed" ;;
        *) ok "the system-sleep hook needs only: $needed" ;;
        esac
        grep -qaF "$sbindir/suspend-sync" "$dest$hook" ||
                fail "the system-sleep hook does not fall back to $sbindir/suspend-sync"
}
# systemd-sleep reaches it through /run/suspend-sync/sleep-hook, which the unit's pass removes for a
# suspend that needs no late pass (KeepCheapSync=) and tmpfiles.d makes at boot, pointing at the
# binary (src/late-skip.h).
link=/run/suspend-sync/sleep-hook
if [ ! -L "$dest$sleepdir/suspend-sync" ]; then
        fail "system-sleep hook missing or not a symlink: $sleepdir/suspend-sync"
elif [ "$(readlink "$dest$sleepdir/suspend-sync")" != "$link" ]; then
        fail "system-sleep hook points at $(readlink "$dest$sleepdir/suspend-sync"), not $link"
else
        ok "system-sleep hook: $sleepdir/suspend-sync -> $link"
fi
expect_file "$tmpfilesdir/suspend-sync.conf" '^-rw-r--r--$' "tmpfiles.d entry" && {
        grep -qxE "L $link +- +- +- +- +$hook" "$dest$tmpfilesdir/suspend-sync.conf" &&
                ok "tmpfiles.d: $link -> $hook" ||
                fail "tmpfiles.d does not link $link to $hook"
        grep -qxE "d /run/suspend-sync +0755 +root +root +-" "$dest$tmpfilesdir/suspend-sync.conf" ||
                fail "tmpfiles.d does not make /run/suspend-sync 0755"
        if command -v systemd-tmpfiles >/dev/null; then
                mkdir -p "$tmp/troot"
                if systemd-tmpfiles --root="$tmp/troot" --create "$dest$tmpfilesdir/suspend-sync.conf" \
                        2>"$tmp/tmpfiles.err" && [ "$(readlink "$tmp/troot$link")" = "$hook" ]; then
                        ok "systemd-tmpfiles makes $link"
                else
                        fail "systemd-tmpfiles did not make $link: $(cat "$tmp/tmpfiles.err")"
                fi
        fi
}
expect_file "$catalogdir/suspend-sync.catalog" '^-rw-r--r--$' "journal catalog"

# Default configuration: shipped in /usr/lib (preferred) or in sysconfdir.
if [ -f "$dest$opt_prefix/lib/suspend-sync.conf" ]; then
        expect_file "$opt_prefix/lib/suspend-sync.conf" '^-rw-r--r--$' "default config"
elif [ -f "$dest$(abs "$opt_sysconfdir")/suspend-sync.conf" ]; then
        expect_file "$(abs "$opt_sysconfdir")/suspend-sync.conf" '^-rw-r--r--$' "default config"
else
        fail "default config missing: neither $opt_prefix/lib/suspend-sync.conf nor $(abs "$opt_sysconfdir")/suspend-sync.conf"
fi

case "$opt_man" in
enabled) want_man=1 ;;
disabled) want_man=0 ;;
*) command -v scdoc >/dev/null && want_man=1 || want_man=0 ;;
esac
for page in man8/suspend-sync.8 man5/suspend-sync.conf.5; do
        if [ "$want_man" = 1 ]; then
                expect_file "$mandir/$page" '^-rw-r--r--$' "man page" &&
                        { grep -q '^\.SH' "$dest$mandir/$page" || fail "man page is not roff: $page"; }
        elif [ -e "$dest$mandir/$page" ]; then
                fail "man page installed although -Dman=$opt_man: $page"
        else
                ok "man page not built (-Dman=$opt_man): $page"
        fi
done

if [ "$opt_bashcompletiondir" = no ]; then
        [ -e "$dest/no/suspend-sync" ] && fail "completion installed to ./no"
        ok "bash completion disabled"
else
        expect_file "$compdir/suspend-sync" '^-rw-r--r--$' "bash completion"
fi

# Nothing may be installed outside the expected roots (a typo in an install_dir would show here).
while IFS= read -r f; do
        case "$f" in
        "$sbindir"/*|"$hook"|"$unitdir"/*|"$sleepdir"/*|"$tmpfilesdir/suspend-sync.conf"|"$catalogdir"/*|"$compdir"/*|"$mandir"/*) ;;
        "$(abs "$opt_datadir")/doc/suspend-sync"/*) ;;
        "$opt_prefix/lib/suspend-sync.conf"|"$opt_prefix/lib/suspend-sync.conf.d"*) ;;
        "$(abs "$opt_sysconfdir")"/suspend-sync*) ;;
        *) echo "note: unexpected installed file $f" ;;
        esac
done < <(cd "$dest" && find . \( -type f -o -type l \) -printf '/%P\n')

checks_end "install layout"
