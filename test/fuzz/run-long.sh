#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Long fuzzing run: every target, at most 2 at a time (nice -n 10), each for a share of the total
# executions or for a number of seconds, then a table: target, executions, crashes, coverage.
#
# Usage: run-long.sh [--total-runs N | --seconds S] [--jobs J] [--out DIR] [TARGET...]
#   --total-runs N   split N executions evenly across the targets (-runs=N/targets each)
#   --seconds S      run each target for S seconds instead (-max_total_time=S)
#   --jobs J         parallel fuzzers (default 2, the machine has 2 cores)
#   --out DIR        build dir, corpora, logs and crash inputs (default /tmp/suspend-sync-fuzz-long)
# Exits 1 when any target crashed (its input is under DIR/artifacts-<target>/).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
all_targets=(mountinfo meminfo bdi-stats policy conf-read state timespan)
total_runs=""
seconds=""
jobs=2
out=/tmp/suspend-sync-fuzz-long

while [ "$#" -gt 0 ]; do
        case "$1" in
        --total-runs) total_runs="$2"; shift 2 ;;
        --seconds) seconds="$2"; shift 2 ;;
        --jobs) jobs="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        -h|--help) sed -n '3,13p' "$0"; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) break ;;
        esac
done
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=("${all_targets[@]}")
if [ -z "$total_runs" ] && [ -z "$seconds" ]; then
        total_runs=10000000
fi

mkdir -p "$out"
export FUZZ_BUILD_DIR="$out"

# Build all first (serially), so that the timed part only fuzzes.
for t in "${targets[@]}"; do
        "$here/run-fuzzer.sh" --build-only "$t" >/dev/null
done

if [ -n "$total_runs" ]; then
        per=$(( (total_runs + ${#targets[@]} - 1) / ${#targets[@]} ))
        limit=(-runs="$per")
else
        limit=(-max_total_time="$seconds" -runs=-1)
fi

fuzz_one() {
        local t="$1" dict=() rc=0
        "$here/make-corpus.sh" "$t" "$out/seeds-$t"
        mkdir -p "$out/corpus-$t" "$out/artifacts-$t"
        [ -f "$here/$t.dict" ] && dict=(-dict="$here/$t.dict")
        nice -n 10 "$out/fuzz-$t" "${limit[@]}" -error_exitcode=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
                -print_final_stats=1 -artifact_prefix="$out/artifacts-$t/" "${dict[@]}" \
                "$out/corpus-$t" "$out/seeds-$t" >"$out/log-$t.txt" 2>&1 || rc=$?
        echo "$rc" >"$out/rc-$t"
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

start=$(date +%s)
running=0
for t in "${targets[@]}"; do
        rm -f "$out/rc-$t" "$out/artifacts-$t"/* 2>/dev/null || true
        fuzz_one "$t" &
        running=$((running + 1))
        if [ "$running" -ge "$jobs" ]; then
                wait -n || true
                running=$((running - 1))
        fi
done
wait
elapsed=$(( $(date +%s) - start ))

failed=0
sum=0
printf '| %-10s | %12s | %7s | %5s | %8s |\n' target executions crashes cov exec/s
printf '|%s|%s|%s|%s|%s|\n' ------------ -------------- --------- ------- ----------
for t in "${targets[@]}"; do
        log="$out/log-$t.txt"
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
        # Coverage from the last status line (DONE, or the last one before a crash).
        cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
        crashes=$(find "$out/artifacts-$t" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
                -o -name 'oom-*' -o -name 'slow-unit-*' \) | wc -l)
        [ "$(cat "$out/rc-$t" 2>/dev/null || echo 1)" -eq 0 ] || { failed=1; [ "$crashes" -gt 0 ] || crashes="?"; }
        sum=$((sum + ${execs:-0}))
        printf '| %-10s | %12s | %7s | %5s | %8s |\n' "$t" "${execs:-?}" "$crashes" "${cov:-?}" "${rate:-?}"
done
printf '| %-10s | %12s | %7s | %5s | %8s |\n' total "$sum" "" "" ""
echo "wall time: ${elapsed} s; logs, corpora and crash inputs under $out"
exit "$failed"
