#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck disable=SC2016 # backticks are Markdown here, in single quotes on purpose
#
# docs/ARCHITECTURE.md stays a one-page map (review X, X12): at most 14 KiB, no line over 400 bytes
# (a table row that reads like design notes belongs in the module's header comment or in
# docs/RELIABILITY.md), and every module named: each src/*.c by its base name in backticks
# (`name`, `name.c` or `name.h`; the verb-*.c files by `verb-*`), each src/shared/*.c by its base
# name. Negative controls, on copies in a temporary directory: 20 KiB appended, one line made
# 500 bytes long, and one module's mentions taken out must each fail. Unprivileged.
set -uo pipefail

root=${SOURCE_ROOT:?SOURCE_ROOT not set}
doc=$root/docs/ARCHITECTURE.md
max_bytes=$((14 * 1024))
max_line=400
tmp=$(mktemp -d /tmp/ss-docs-architecture.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Prints one line per problem of the file $1; returns 1 when there is any.
check() {
        local f=$1 bad=0 size long path name
        size=$(stat -c %s "$f")
        if ((size > max_bytes)); then
                echo "$f: $size bytes, more than $max_bytes: move details to the module headers or docs/"
                bad=1
        fi
        long=$(LC_ALL=C awk -v m="$max_line" 'length($0) > m { printf "%s%d (%d bytes)", s, NR, length($0); s = ", " }' "$f")
        if [[ -n $long ]]; then
                echo "$f: lines over $max_line bytes: $long"
                bad=1
        fi
        for path in "$root"/src/*.c; do
                name=$(basename "$path" .c)
                if [[ $name == verb-* ]]; then
                        grep -qF '`verb-*`' "$f" && continue
                else
                        grep -qE "\`$name(\.[ch])?\`" "$f" && continue
                fi
                echo "$f: module src/$name.c is not named (\`$name\`)"
                bad=1
        done
        for path in "$root"/src/shared/*.c; do
                name=$(basename "$path" .c)
                grep -qE "(^|[^A-Za-z0-9_-])$name([^A-Za-z0-9_-]|$)" "$f" && continue
                echo "$f: shared module src/shared/$name.c is not named"
                bad=1
        done
        return $bad
}

[[ -r $doc ]] || { echo "FAIL: cannot read $doc"; exit 1; }
compgen -G "$root/src/*.c" >/dev/null || { echo "FAIL: no src/*.c below $root"; exit 1; }

fail=0
if ! check "$doc"; then
        echo "FAIL: docs/ARCHITECTURE.md is no longer a one-page map"
        fail=1
fi

# Negative controls: each copy breaks one rule and must fail.
cp "$doc" "$tmp/big.md"
head -c $((20 * 1024)) /dev/zero | tr '\0' 'x' | fold -w 100 >>"$tmp/big.md"
{ cat "$doc"; printf '| `x` | %0500d |\n' 0; } >"$tmp/long.md"
# The executor's mentions gone ("`executor`" and "`executor.c`" alike).
sed -e 's/`executor\(\.[ch]\)\{0,1\}`/`exec`/g' "$doc" >"$tmp/unnamed.md"
for c in big long unnamed; do
        if check "$tmp/$c.md" >"$tmp/$c.out"; then
                echo "FAIL: negative control '$c' passed the check"
                fail=1
        elif ! [[ -s $tmp/$c.out ]]; then
                echo "FAIL: negative control '$c' failed without saying why"
                fail=1
        else
                echo "ok: negative control '$c' fails: $(head -n 1 "$tmp/$c.out" | cut -c 1-160)"
        fi
done
grep -q 'not named (`executor`)' "$tmp/unnamed.out" ||
        { echo "FAIL: negative control 'unnamed' did not name the executor"; fail=1; }

((fail == 0)) && echo "ok: docs/ARCHITECTURE.md: $(stat -c %s "$doc") bytes, every module named"
exit $fail
