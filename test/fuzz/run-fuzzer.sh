#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Compiles one libFuzzer target with clang (-fsanitize=fuzzer,address,undefined) against the
# project sources, then runs it: first on its regression inputs (regressions/<target>-*), then for a
# short bounded time seeded from the fixtures. Exits 77 when clang or the libFuzzer runtime is
# missing. Used by the meson suite 'fuzz' and by run-long.sh.
#
# Usage:
#   run-fuzzer.sh TARGET                      build + regressions + short run (meson test)
#   run-fuzzer.sh --build-only TARGET         build only; prints the binary's path
#   run-fuzzer.sh --reproduce TARGET FILE...  build, then run the target once on each FILE
# TARGET is one of: mountinfo meminfo bdi-stats policy conf-read state timespan.
# Environment: FUZZ_BUILD_DIR (default: $MESON_BUILD_ROOT/test/fuzz or /tmp/suspend-sync-fuzz),
# FUZZ_SECONDS (default 15), FUZZ_RUNS (cap on executions, default 5000000), CC_FUZZ (default clang).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../.." && pwd)"

mode=run
case "${1:-}" in
--build-only) mode=build; shift ;;
--reproduce) mode=reproduce; shift ;;
esac
target="${1:?usage: run-fuzzer.sh [--build-only|--reproduce] TARGET [FILE...]}"
shift

case "$target" in
mountinfo) sources=(src/mount-table.c) ;;
meminfo) sources=(src/meminfo.c) ;;
bdi-stats) sources=(src/bdi-stats.c) ;;
policy) sources=(src/policy.c src/policy-keys.c src/policy-parse.c src/device.c src/device-sysfs.c src/fs-type.c) ;;
conf-read) sources=(src/conf-read.c src/sleep-hooks.c src/policy.c src/policy-keys.c src/policy-parse.c src/device.c src/device-sysfs.c
        src/fs-type.c) ;;
state) sources=(src/state.c) ;;
timespan) sources=() ;;
*) echo "unknown target '$target'" >&2; exit 2 ;;
esac

build_root="${MESON_BUILD_ROOT:-}"
out="${FUZZ_BUILD_DIR:-${build_root:+$build_root/test/fuzz}}"
out="${out:-/tmp/suspend-sync-fuzz}"
mkdir -p "$out"
cc="${CC_FUZZ:-clang}"
bin="$out/fuzz-$target"

skip() { echo "SKIP: $*"; exit 77; }

command -v "$cc" >/dev/null || skip "$cc not installed (apt-get install clang libclang-rt-dev)"
# Probe for the libFuzzer runtime once per build dir.
if [ ! -e "$out/.fuzzer-ok" ]; then
        probe="$out/.probe.$$"
        printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' > "$probe.c"
        if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" 2>/dev/null; then
                rm -f "$probe" "$probe.c"
                skip "$cc cannot link -fsanitize=fuzzer (libclang-rt-dev missing?)"
        fi
        rm -f "$probe" "$probe.c"
        touch "$out/.fuzzer-ok"
fi
deps="$(pkg-config --cflags --libs libsystemd libudev inih mount json-c)" || skip "pkg-config dependencies missing"

# Rebuild when any input is newer than the binary.
inputs=("$here/fuzz-$target.c" "$here/fuzz.h" "$here/run-fuzzer.sh" "$src"/src/shared/*.c "$src"/src/shared/*.h "$src"/src/*.h)
[ -n "$build_root" ] && [ -f "$build_root/config.h" ] && inputs+=("$build_root/config.h")
for s in "${sources[@]}"; do inputs+=("$src/$s"); done
stale=0
if [ ! -x "$bin" ]; then stale=1; else
        for f in "${inputs[@]}"; do [ "$f" -nt "$bin" ] && { stale=1; break; }; done
fi
if [ "$stale" -eq 1 ]; then
        incs=(-I"$src/src")
        [ -n "$build_root" ] && [ -f "$build_root/config.h" ] && incs+=(-I"$build_root")
        # shellcheck disable=SC2086
        "$cc" -std=gnu11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                -Wall -Wextra -Wno-unused-parameter "${incs[@]}" \
                "$src"/src/shared/*.c "${sources[@]/#/$src/}" "$here/fuzz-$target.c" \
                $deps -o "$bin.tmp.$$"
        mv -f "$bin.tmp.$$" "$bin"
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

case "$mode" in
build)
        echo "$bin"
        exit 0 ;;
reproduce)
        [ "$#" -gt 0 ] || { echo "--reproduce needs at least one input file" >&2; exit 2; }
        exec "$bin" -error_exitcode=1 -runs=1 "$@" ;;
esac

# 1. Every regression input must pass (a fixed bug stays fixed).
shopt -s nullglob
regressions=("$here"/regressions/"$target"-*)
if [ "${#regressions[@]}" -gt 0 ]; then
        echo "== $target: ${#regressions[@]} regression input(s)"
        "$bin" -error_exitcode=1 -runs=1 "${regressions[@]}"
fi

# 2. A short fuzzing run from the fixture seeds. New inputs go to the build dir, never the tree.
seeds="$out/seeds-$target"
work="$out/corpus-$target"
artifacts="$out/artifacts-$target"
"$here/make-corpus.sh" "$target" "$seeds"
mkdir -p "$work" "$artifacts"
dict=()
[ -f "$here/$target.dict" ] && dict=(-dict="$here/$target.dict")
log="$out/log-$target.txt"
echo "== $target: fuzzing for ${FUZZ_SECONDS:-15} s (at most ${FUZZ_RUNS:-5000000} runs), log in $log"
rc=0
nice -n 10 "$bin" -max_total_time="${FUZZ_SECONDS:-15}" -runs="${FUZZ_RUNS:-5000000}" \
        -error_exitcode=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "${dict[@]}" "$work" "$seeds" >"$log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
        tail -n 80 "$log"
        echo "FAIL: fuzz-$target found a crash (exit $rc); input saved under $artifacts/"
        echo "reproduce: $here/run-fuzzer.sh --reproduce $target $artifacts/<file>"
        exit "$rc"
fi
grep -E '^INFO: seed corpus|DONE|^stat::' "$log" || true
exit 0
