#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Builds the seed corpus of one fuzz target from the test fixtures plus the committed seeds under
# test/fuzz/corpus/<target>/ (for inputs the fixtures do not cover).
# Usage: make-corpus.sh TARGET OUTDIR   (TARGET without the "fuzz-" prefix; OUTDIR is emptied)
set -euo pipefail

target="$1"
out="$2"
here="$(cd "$(dirname "$0")" && pwd)"
fixtures="$here/../fixtures"

rm -rf "$out"
mkdir -p "$out"

n=0
add() {
        # Name each seed after its path, so that a crash on a seed is easy to trace back.
        local f name
        for f in "$@"; do
                if [ ! -f "$f" ] || [ ! -r "$f" ]; then continue; fi
                name="${f#"$fixtures"/}"
                name="${name#"$here"/corpus/}"
                cp -- "$f" "$out/$(printf '%s' "$name" | tr '/' '_')"
                n=$((n + 1))
        done
}

shopt -s nullglob globstar
case "$target" in
mountinfo)
        add "$fixtures"/mountinfo/*.mountinfo "$fixtures"/roots/*/proc/self/mountinfo ;;
meminfo)
        add "$fixtures"/meminfo/*.meminfo "$fixtures"/roots/*/proc/meminfo ;;
bdi-stats)
        add "$fixtures"/bdi/*.stats "$fixtures"/roots/*/debugfs/bdi/*/stats ;;
policy)
        add "$fixtures"/config/**/*.conf ;;
state)
        add "$fixtures"/state/*.json ;;
timespan)
        ;;
conf-read)
        ;;      # committed seeds only (records as the reader child sends them)
*)
        echo "unknown target '$target'" >&2
        exit 2 ;;
esac
add "$here"/corpus/"$target"/*

if [ "$n" -eq 0 ]; then
        echo "no seeds for '$target'" >&2
        exit 1
fi
