#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Summarise test/bench/run samples (TSV) into the results table: median, spread (min..max), ratio
# against the scenario's reference contender, and the issue-6 targets with PASS/MISS.
import statistics
import sys


def fmt_us(us):
    if us >= 1e6:
        return "%.3f s" % (us / 1e6)
    if us >= 1e3:
        return "%.2f ms" % (us / 1e3)
    return "%d µs" % us


rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
data = {}
order = []
for sc, co, rnd, wall, rss, st, extra in rows:
    if sc not in data:
        data[sc] = {}
        order.append(sc)
    data[sc].setdefault(co, []).append((int(wall), int(rss), st, extra))

targets = []


def med(sc, co, idx=0):
    v = [x[idx] for x in data.get(sc, {}).get(co, [])]
    return statistics.median(v) if v else None


def phases(sc):
    """median of each phase over the runs' records"""
    acc = {}
    for _, _, _, extra in data[sc].get("run", []):
        for kv in extra.split(","):
            k, _, v = kv.partition("=")
            if v.isdigit():
                acc.setdefault(k, []).append(int(v))
    return {k: statistics.median(v) for k, v in acc.items()}


print("%-12s %-12s %5s %11s %23s %8s  %s" % ("scenario", "contender", "n", "median", "spread (min..max)",
                                             "ratio", "notes"))
for sc in order:
    cs = data[sc]
    ref = "sync" if sc.startswith("clean") else "limit" if ("lat" in sc or sc == "mixed") else None
    refm = med(sc, ref) if ref else None
    for co, v in cs.items():
        if co in ("mounts", "deadline", "resume-drain"):
            continue
        walls = [x[0] for x in v]
        m = statistics.median(walls)
        ratio = "%.2fx" % (m / refm) if refm and co != ref and co != "decision" else ""
        note = ""
        bad = [x[2] for x in v if x[2] not in ("0",)]
        if co == "run":
            ph = phases(sc)
            note = "phases " + " ".join("%s=%s" % (k, fmt_us(ph[k])) for k in
                                        ("read", "sample", "plan", "execute", "record") if k in ph)
            note += "; peak RSS %.1f MiB" % (statistics.median([x[1] for x in v]) / 1024)
            res = sorted(set(x[3].split("result=")[1].split(",")[0] for x in v if "result=" in x[3]))
            note += "; result " + "/".join(res)
        elif co.startswith("run-"):
            note = "peak RSS %.1f MiB" % (statistics.median([x[1] for x in v]) / 1024)
        elif co == "decision":
            ph = {}
            for x in v:
                for kv in x[3].split(","):
                    k, _, val = kv.partition("=")
                    ph.setdefault(k, []).append(int(val))
            note = "read+sample+plan from `plan`: " + " ".join(
                "%s=%s" % (k, fmt_us(statistics.median(ph[k]))) for k in ph)
        if bad and co != "decision":
            note += (" " if note else "") + "status " + ",".join(sorted(set(bad)))
        print("%-12s %-12s %5d %11s %23s %8s  %s" % (sc, co, len(walls), fmt_us(m),
                                                     fmt_us(min(walls)) + " .. " + fmt_us(max(walls)), ratio,
                                                     note))
    for co in ("mounts", "deadline", "resume-drain"):
        if co in cs:
            x = cs[co][0]
            print("%-12s %-12s %5s %11s %23s %8s  %s" % (sc, co, "", fmt_us(x[0]) if co != "mounts" else x[0],
                                                         "", "", x[3] if x[3] != "-" else ""))

# targets
print()
print("targets (issue 6):")


def check(label, value, limit, unit=""):
    if value is None:
        print("  %-52s %s" % (label, "not measured"))
        return
    print("  %-52s %s  (%s%s vs %s%s)" % (label, "PASS" if value <= limit else "MISS",
                                        ("%.3f" % value).rstrip("0").rstrip("."), unit,
                                        ("%.3f" % limit).rstrip("0").rstrip("."), unit))


for n in (20, 200, 1000):
    sc = "clean-%d" % n
    if sc in data and med(sc, "sync"):
        check("clean %d mounts: run wall / sync wall" % n, med(sc, "run") / med(sc, "sync"), 1.0, "x")
for n, lim in ((20, 200), (1000, 2000)):
    sc = "clean-%d" % n
    if sc in data:
        check("clean %d mounts: read+sample+plan (plan verb)" % n, med(sc, "decision"), lim, " µs")
        ph = phases(sc)
        if ph:
            check("clean %d mounts: read+sample+plan (run record)" % n,
                  ph.get("read", 0) + ph.get("sample", 0) + ph.get("plan", 0), lim, " µs")
if "clean-1000" in data:
    for co, what in (("run-nohist", "empty history"), ("run-fullhist", "history full of 1000-mount runs")):
        if co in data["clean-1000"]:
            check("peak RSS of run at 1000 mounts, %s" % what, med("clean-1000", co, 1) / 1024, 6.0, " MiB")
for sc in order:
    if sc.startswith("lat-K") and "limit" in data[sc]:
        k = int(sc[5:].split("-")[0])
        # The latency scenarios run with the default MaxParallel= (16): K = 8 is issue 11's target.
        label = "%s: run / limit (default MaxParallel)" % sc
        check(label, med(sc, "run") / med(sc, "limit"), 1.10, "x")
if "mixed" in data:
    check("mixed: run / limit", med("mixed", "run") / med("mixed", "limit"), 1.10, "x")
if "hung" in data:
    dl = data["hung"]["deadline"][0][0]
    worst = max(x[0] for x in data["hung"]["run"])
    check("hung: worst run wall - DeadlineSec", (worst - dl) / 1000, 50, " ms")
