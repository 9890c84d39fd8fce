#!/usr/bin/env python3
"""ND_PROFILE's unique bytes per call against Nsight Compute's DRAM bytes
per launch (read + write), kernel by kernel.

Usage: profile_vs_ncu.py PROFILE_STDERR NCU_CSV

PROFILE_STDERR holds the table ND_PROFILE=1 prints at exit; NCU_CSV is
`ncu --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,
dram__bytes_write.sum` of the same program. Kernels are matched by name
(a profile row is "name: kernel" when the value is named; names in the
table are cut at 56 characters). Prints, per kernel: launches, ND_PROFILE
bytes per call, ncu's median DRAM bytes per launch, their ratio (1.00 =
the profile counts what the kernel moves), and ncu's median duration.
"""
import collections
import csv
import re
import sys

UNITS = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}
BYTE_UNITS = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9}


def profile_rows(path):
    rows = {}
    for line in open(path):
        m = re.match(r"kernel\s+(.{56})\s+(\d+)\s+[\d.]+\s+[\d.]+%\s+[\d.]+\s+([\d.]+) (B|kB|MB|GB)\s", line)
        if m:
            rows[m.group(1).strip()] = (int(m.group(2)), float(m.group(3)) * UNITS[m.group(4)])
    return rows


def ncu_rows(path):
    lines = [r for r in csv.reader(open(path)) if len(r) > 10]
    if not lines:
        return {}
    hdr = lines[0]
    k, mname, v, u = (hdr.index(c) for c in ("Kernel Name", "Metric Name", "Metric Value", "Metric Unit"))
    idcol = hdr.index("ID")
    per = collections.defaultdict(dict)
    names = {}
    for r in lines[1:]:
        val = float(r[v].replace(",", ""))
        if r[mname].startswith("dram__bytes"):
            val *= BYTE_UNITS.get(r[u], 1)
        per[r[idcol]][r[mname]] = val
        names[r[idcol]] = r[k].split("(")[0]
    out = collections.defaultdict(list)
    for launch, m in per.items():
        out[names[launch]].append((m.get("dram__bytes_read.sum", 0) + m.get("dram__bytes_write.sum", 0),
                                   m.get("gpu__time_duration.sum", 0)))
    return out


def main():
    prof, ncu = profile_rows(sys.argv[1]), ncu_rows(sys.argv[2])
    print(f"  {'kernel':50s} {'calls':>6s} {'ND_PROFILE':>12s} {'ncu DRAM':>12s} {'ratio':>6s} {'ncu time':>10s}")
    for row, (calls, per_call) in sorted(prof.items(), key=lambda x: -x[1][1]):
        name = row.split(": ")[-1]  # "jacobi sweep/grid: nd_add_mul..." -> the kernel
        match = [n for n in ncu if n.startswith(name[:50])]
        if not match:
            print(f"  {row[:50]:50s} {calls:6d} {per_call / 1e6:10.2f}MB {'(not in ncu)':>12s}")
            continue
        launches = sorted(ncu[match[0]])
        dram, dur = launches[len(launches) // 2]
        ratio = per_call / dram if dram else float("nan")
        print(f"  {row[:50]:50s} {calls:6d} {per_call / 1e6:10.2f}MB {dram / 1e6:10.2f}MB {ratio:6.2f} {dur:10.0f}")


if __name__ == "__main__":
    main()
