#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The long reliability run (issue 4): the same scripts as the meson suite 'reliability', with large
# trial counts, one after the other, under nice; then a summary table.
#
#   test/reliability/run-long.sh --build BUILD_DIR [--out DIR] [--trials N] [--hung N]
#                                [--skip-rounds N] [--parts "power-cut skip-clean hung errors degraded"]
#   test/reliability/run-long.sh --summary DIR      # only print the table of an earlier run
#
# Defaults: --trials 400 (power cuts per filesystem, negative controls every 10 trials), --hung 60
# (hung-device runs, k = 1..4 in turn), --skip-rounds 40; --out /var/tmp/suspend-sync-reliability.
# Each part logs to OUT/<part>.log; every trial appends a line to OUT/results.tsv.
# Exit status: 1 if any part failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=
out=/var/tmp/suspend-sync-reliability
trials=400
hung=60
skip_rounds=40
parts="power-cut skip-clean hung errors degraded"
summary_only=

while [[ $# -gt 0 ]]; do
        case $1 in
        --build) build=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --trials) trials=$2; shift 2 ;;
        --hung) hung=$2; shift 2 ;;
        --skip-rounds) skip_rounds=$2; shift 2 ;;
        --parts) parts=$2; shift 2 ;;
        --summary) summary_only=1; out=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
        esac
done

summary() {
        python3 - "$out/results.tsv" <<'PY'
import collections, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
agg = collections.OrderedDict()
for r in rows:
    kind, fs, trial, seed, keep, changes, entries, losses, fsck, note = (r + [""] * 10)[:10]
    a = agg.setdefault((kind, fs), dict(n=0, changes=0, entries=0, losses=0, lossy=0, fsck=0, notes=[]))
    a["n"] += 1
    a["changes"] += int(changes) if changes.isdigit() else 0
    a["entries"] += int(entries) if entries.isdigit() else 0
    if losses == "all" or (losses.isdigit() and int(losses) > 0):
        a["lossy"] += 1
        a["losses"] += int(losses) if losses.isdigit() else 0
    a["fsck"] += fsck == "FAIL"
    a["notes"].append(note)
print("| kind | fs | trials | changes made | entries checked | trials with loss | losses | fsck failures | notes |")
print("|---|---|---:|---:|---:|---:|---:|---:|---|")
for (kind, fs), a in agg.items():
    notes = a["notes"]
    extra = ""
    over = [float(n.split("over_ms=")[1].split()[0]) for n in notes if "over_ms=" in n]
    if over:
        extra += f"worst return over deadline {max(over):.0f} ms; "
    sk = [n.split("skipped=")[1].split()[0] for n in notes if "skipped=" in n]
    if sk:
        s = sum(int(x.split("/")[0]) for x in sk)
        t = sum(int(x.split("/")[1]) for x in sk)
        extra += f"skipped as clean {s} of {t} untouched mounts; "
    gaps = sorted(int(n.split("gap_ms=")[1].split()[0]) for n in notes if "gap_ms=" in n)
    if gaps:
        extra += f"last change to run start: median {gaps[len(gaps) // 2]} ms, max {gaps[-1]} ms; "
    runs = sorted(int(n.split("run_ms=")[1].split()[0]) for n in notes if "run_ms=" in n)
    if runs:
        extra += f"run: median {runs[len(runs) // 2]} ms; "
    if kind == "note":
        extra = notes[0]
    other = collections.Counter(n for n in notes if n not in ("-", "", "changed") and "over_ms" not in n
                                and "skipped=" not in n and "run_ms" not in n)
    if other and kind != "note":
        extra += ", ".join(f"{n} ×{c}" for n, c in sorted(other.items())[:4])
    print(f"| {kind} | {fs} | {a['n']} | {a['changes']} | {a['entries']} | {a['lossy']} | {a['losses']} | {a['fsck']} | {extra.strip('; ')} |")
PY
}

if [[ -n $summary_only ]]; then
        summary
        exit
fi

[[ -n $build && -x $build/src/suspend-sync ]] || { echo "--build BUILD_DIR (with src/suspend-sync) is required" >&2; exit 2; }
export SUSPEND_SYNC=$build/src/suspend-sync
export FAULTDISK=$build/test/faultdisk/faultdisk
export TEST_LIB=$src/test/lib
export SS_TEST_WORKDIR=${SS_TEST_WORKDIR:-/var/tmp/suspend-sync-test}
export SS_TEST_LEDGER=${SS_TEST_LEDGER:-/run/suspend-sync-test/ledger}
mkdir -p "$out"
export REL_RESULTS=$out/results.tsv

{
        echo "date: $(date -u +%FT%TZ)"
        echo "kernel: $(uname -r)"
        echo "machine: $(nproc) cpus, $(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo), $(. /etc/os-release; echo "$PRETTY_NAME")"
        echo "commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
        echo "command: $0 --build $build --out $out --trials $trials --hung $hung --skip-rounds $skip_rounds --parts '$parts'"
} >>"$out/info.txt"

rc=0
for part in $parts; do
        start=$(date +%s)
        case $part in
        power-cut)  env REL_TRIALS="$trials" REL_NEG_EVERY=10 REL_OPS=60 nice -n 5 bash "$here/power-cut.sh" ;;
        skip-clean) env REL_ROUNDS="$skip_rounds" nice -n 5 bash "$here/skip-clean.sh" ;;
        hung)       env REL_HUNG_RUNS="$hung" nice -n 5 bash "$here/hung.sh" ;;
        errors)     env REL_EIO_ROUNDS=3 nice -n 5 bash "$here/errors.sh" ;;
        degraded)   nice -n 5 bash "$here/degraded.sh" ;;
        *) echo "unknown part $part" >&2; rc=1; continue ;;
        esac >"$out/$part.log" 2>&1
        prc=$?
        echo "$part: exit $prc after $(($(date +%s) - start)) s (log $out/$part.log)" | tee -a "$out/info.txt"
        [[ $prc == 0 ]] || rc=1
done
summary | tee "$out/summary.md"
exit $rc
