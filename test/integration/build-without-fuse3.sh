#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Issue 13 section 5: a distribution build on a machine without fuse3 headers must not fail. With
# the default -Dtests=true it builds the product and the unit suite (the root suites need the
# fault-injection disk, which needs libfuse3); with -Dtests=false, the product alone. fuse3 is hidden
# from pkg-config by a directory of links to every other .pc file.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"
src=${SOURCE_ROOT:?}
command -v meson >/dev/null && command -v ninja >/dev/null && command -v pkg-config >/dev/null ||
        skip "meson, ninja or pkg-config missing"
pkg-config --exists fuse3 || skip "fuse3 is not installed here: nothing to hide"
tmp=$(mktemp -d /var/tmp/ss-nofuse.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/pc"
for d in $(pkg-config --variable pc_path pkg-config | tr ':' ' ') /usr/lib/*/pkgconfig /usr/share/pkgconfig; do
        [[ -d $d ]] || continue
        for f in "$d"/*.pc; do
                [[ -e $f && $(basename "$f") != fuse3.pc && ! -e $tmp/pc/$(basename "$f") ]] && ln -s "$f" "$tmp/pc/"
        done
done
export PKG_CONFIG_LIBDIR=$tmp/pc
pkg-config --exists fuse3 && fail "fuse3 still visible"

meson setup "$tmp/b" "$src" >"$tmp/setup.log" 2>&1 || { tail -20 "$tmp/setup.log"; fail "meson setup without fuse3 failed"; }
grep -q "fuse3 not found: only the unit suite" "$tmp/setup.log" || fail "no message that the root suites are left out"
ninja -C "$tmp/b" >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log"; fail "build without fuse3 failed"; }
suites=$(meson test -C "$tmp/b" --list 2>/dev/null | sed -n 's/^suspend-sync:\([a-z0-9-]*\) .*/\1/p' | sort -u | tr '\n' ' ')
echo "without fuse3, -Dtests=true: suites: $suites"
[[ $suites == *unit* && $suites != *integration* && $suites != *reliability* ]] || fail "unexpected suites: $suites"
meson setup "$tmp/p" "$src" -Dtests=false >"$tmp/setup2.log" 2>&1 || { tail -20 "$tmp/setup2.log"; fail "-Dtests=false without fuse3 failed"; }
ninja -C "$tmp/p" src/suspend-sync >/dev/null 2>&1 || fail "-Dtests=false build failed"
echo PASS
