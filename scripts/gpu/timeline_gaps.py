#!/usr/bin/env python3
"""Summarises a kernel_timeline.c CSV: where the device idled.

The device work is cut into bursts at idle gaps over --burst-gap us (a
benchmark's runs, one nd_sync each). For the last --bursts bursts: the span
from first start to last end, the time no kernel/copy ran, the idle time
before the burst (the host's share: recording, planning, launching), and
every gap over 0.5 us inside it, labelled with the CUDA graphs on either
side (a gap at a graph boundary is a flush boundary).

usage: timeline_gaps.py timeline.csv [--bursts 3] [--burst-gap 10]
"""
import argparse
import csv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--bursts", type=int, default=3)
    ap.add_argument("--burst-gap", type=float, default=10.0, help="us of idle that starts a new burst")
    a = ap.parse_args()
    ops = []
    for r in csv.reader(open(a.csv)):
        if len(r) >= 8 and r[0] in "KCS":
            ops.append((int(r[1]), int(r[2]), int(r[4]), r[0], ",".join(r[7:])))
    ops.sort()
    if not ops:
        print("no device work recorded")
        return
    bursts, cur = [], [ops[0]]
    for op in ops[1:]:
        if (op[0] - max(o[1] for o in cur[-4:])) / 1e3 > a.burst_gap:
            bursts.append(cur)
            cur = []
        cur.append(op)
    bursts.append(cur)
    print("%d operations, %d bursts (idle > %.0f us apart)" % (len(ops), len(bursts), a.burst_gap))
    first = max(0, len(bursts) - a.bursts)
    for i in range(first, len(bursts)):
        b = bursts[i]
        start, end = b[0][0], max(o[1] for o in b)
        busy, reach, gaps = 0, start, []
        for o in b:
            if o[0] > reach:
                gaps.append((o[0] - reach, o))
            busy += max(0, o[1] - max(o[0], reach))
            reach = max(reach, o[1])
        before = (start - max(o[1] for o in bursts[i - 1])) / 1e3 if i > 0 else float("nan")
        graphs = sorted({o[2] for o in b})
        print("burst %d: %d ops in %d graphs, span %.1f us, idle inside %.1f us, idle before it %.1f us"
              % (i, len(b), len(graphs), (end - start) / 1e3, (end - start - busy) / 1e3, before))
        for g, o in gaps:
            if g > 500:
                print("   gap %6.2f us before %s %s (graph %d)" % (g / 1e3, o[3], o[4][:48], o[2]))


if __name__ == "__main__":
    main()
