#!/usr/bin/env bash
# Builds the benchmarks (meson, build-bench/), runs every one of them and the
# NumPy peer on this machine with the CPU backend, and records the results:
#   bench/results/<date>-cpu-<host>.json   raw JSON lines + machine + commands
#   bench/results/<date>-cpu.md            a table: medians, floors, ratios
# Usage: bench/run_cpu.sh [N] [RUNS]   (defaults: 2^24 elements, 9 runs)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
n=${1:-16777216}
runs=${2:-9}
builddir=build-bench

if [ ! -f "$builddir/build.ninja" ]; then
    meson setup "$builddir" --buildtype=release -Dtests=false -Dexamples=false
fi
meson compile -C "$builddir"

# Debian's python3 has python3-numpy; a pyenv/venv python3 first on PATH may not.
python=python3
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    python=/usr/bin/python3
fi

export ND_BACKEND=${ND_BACKEND:-cpu}
date=$(date -u +%Y-%m-%d)
host=$(hostname -s 2>/dev/null || hostname)
host=$(printf '%s' "$host" | tr -c 'A-Za-z0-9_.-' '-')
mkdir -p bench/results
json_out="bench/results/${date}-cpu-${host}.json"
md_out="bench/results/${date}-cpu.md"

log=$(mktemp)
cmds=$(mktemp)
trap 'rm -f "$log" "$cmds"' EXIT
failed=0

# Runs one benchmark, echoing it, keeping its output and its exact command.
run() {
    printf '%s\n' "ND_BACKEND=$ND_BACKEND $*" >>"$cmds"
    echo "+ $*"
    if ! "$@" | tee -a "$log"; then
        echo "run_cpu.sh: '$*' failed" >&2
        failed=1
    fi
}

run "$builddir/bench/bench_record_cost"
run "$builddir/bench/bench_plan_cache"
run "$builddir/bench/bench_membound_chain" "$n" "$runs"
run "$builddir/bench/bench_seed_chain" "$n" "$runs"
run "$python" bench/peers/numpy_chain.py "$n" "$runs"

ND_RESULTS_LOG="$log" ND_RESULTS_CMDS="$cmds" ND_RESULTS_JSON="$json_out" \
ND_RESULTS_MD="$md_out" ND_RESULTS_DATE="$date" "$python" - <<'PY'
import json, math, os, platform, subprocess

def machine():
    info = {"host": platform.node(), "cores": os.cpu_count(), "cpu": platform.machine()}
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                info["memory_kib"] = int(line.split()[1])
    except OSError:
        pass
    return info

def git_commit():
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except Exception:
        return None

results = []
for line in open(os.environ["ND_RESULTS_LOG"]):
    if line.startswith("JSON "):
        # A failed C run may print nan; keep the record, as null.
        text = line[5:].replace("nan", "null").replace("inf", "null")
        results.append(json.loads(text))
commands = [c.rstrip("\n") for c in open(os.environ["ND_RESULTS_CMDS"])]
record = {"date": os.environ["ND_RESULTS_DATE"], "commit": git_commit(), "machine": machine(),
          "env": {k: v for k, v in os.environ.items() if k.startswith("ND_") and
                  not k.startswith("ND_RESULTS_")},
          "commands": commands, "results": results}
with open(os.environ["ND_RESULTS_JSON"], "w") as f:
    json.dump(record, f, indent=2)
    f.write("\n")

def find(bench, impl=None):
    for r in results:
        if r.get("bench") == bench and (impl is None or r.get("impl") == impl):
            return r
    return {}

def num(v, fmt="{:.3f}"):
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)

def status(ok):
    return "-" if ok is None else ("met" if ok else "missed")

rows = []
rc = find("record_cost")
ns = rc.get("median_ns_per_op")
rows.append(["record_cost: record + free one op", num(ns, "{:.1f} ns"), "-", "-", "<= 100 ns",
             status(None if ns is None else ns <= 100)])
fns = rc.get("flushed_median_ns_per_op")
rows.append(["record_cost: the same, dead nodes left to the flush", num(fns, "{:.1f} ns"), "-", "-", "-", "-"])
pc = find("plan_cache")
us = pc.get("us_per_flush")
rows.append(["plan_cache: cached flush of a 10-node body", num(us, "{:.2f} us"),
             "hits {} / misses {}".format(pc.get("cache_hits", "-"), pc.get("cache_misses", "-")),
             "-", "<= 5 us, all hits",
             status(None if us is None else (us <= 5 and pc.get("all_hits") is True))])
# The C benchmark's line has no "impl"; the NumPy peer's says "numpy".
mb = next((r for r in results if r.get("bench") == "membound_chain" and "impl" not in r), {})
floor = mb.get("floor_ms")
rows.append(["membound_chain fused (y = expr)", num(mb.get("fused_ms"), "{:.2f} ms"),
             num(floor, "{:.2f} ms"), num(mb.get("ratio_to_floor"), "{:.2f}x"), "-", "-"])
rows.append(["membound_chain fused (assign into y)", num(mb.get("fused_into_ms"), "{:.2f} ms"),
             num(floor, "{:.2f} ms"), num(mb.get("ratio_to_floor_into"), "{:.2f}x"), "-", "-"])
rows.append(["membound_chain ND_FUSION=0", num(mb.get("unfused_ms"), "{:.2f} ms"),
             num(floor, "{:.2f} ms"),
             num(None if not mb.get("unfused_ms") or not floor else mb["unfused_ms"] / floor,
                 "{:.2f}x"), "-", "-"])
sp = mb.get("fusion_speedup")
rows.append(["membound_chain fusion speed-up", num(sp, "{:.2f}x"), "-", "-", ">= 2.5x",
             status(None if sp is None else sp >= 2.5)])
npm = find("membound_chain", "numpy")
rows.append(["membound_chain NumPy", num(npm.get("median_ms"), "{:.2f} ms"),
             num(floor, "{:.2f} ms"),
             num(None if not npm.get("median_ms") or not floor else npm["median_ms"] / floor,
                 "{:.2f}x"), "-", "-"])
sc = find("seed_chain", "nd")
npc = find("seed_chain", "numpy")
rows.append(["seed_chain nd", num(sc.get("median_ms"), "{:.2f} ms"),
             num(sc.get("floor_ms"), "{:.2f} ms"), num(sc.get("ratio_to_floor"), "{:.2f}x"),
             "-", "-"])
rows.append(["seed_chain NumPy", num(npc.get("median_ms"), "{:.2f} ms"),
             num(sc.get("floor_ms"), "{:.2f} ms"),
             num(None if not npc.get("median_ms") or not sc.get("floor_ms")
                 else npc["median_ms"] / sc["floor_ms"], "{:.2f}x"), "-", "-"])
if sc.get("median_ms") and npc.get("median_ms"):
    rows.append(["seed_chain nd speed-up over NumPy",
                 "{:.2f}x".format(npc["median_ms"] / sc["median_ms"]), "-", "-", "-", "-"])

m = record["machine"]
with open(os.environ["ND_RESULTS_MD"], "w") as f:
    f.write("# CPU benchmarks, {}\n\n".format(record["date"]))
    f.write("Machine: {} ({} cores, {:.1f} GiB), host `{}`; commit `{}`.\n\n".format(
        m.get("cpu"), m.get("cores"), m.get("memory_kib", 0) / 1048576, m.get("host"),
        record["commit"]))
    f.write("Medians of >= 7 runs after a checked warm-up, fresh random inputs per run "
            "(see bench/README.md). Floor = bytes that must move / measured copy "
            "bandwidth.\n\n")
    f.write("| benchmark | measured | floor / detail | ratio to floor | target | status |\n")
    f.write("|---|---|---|---|---|---|\n")
    for r in rows:
        f.write("| " + " | ".join(r) + " |\n")
    if mb.get("copy_GBps"):
        f.write("\nCopy bandwidth (read + write): {:.2f} GB/s with {} thread(s).\n".format(
            mb["copy_GBps"], mb.get("copy_threads")))
    f.write("\nAnswers checked against float64 references before timing: "
            "membound_chain {}, seed_chain {} (NumPy: {}, {}).\n".format(
                mb.get("checked"), sc.get("checked"), npm.get("checked"), npc.get("checked")))
    f.write("\nCommands:\n\n```\n" + "\n".join(commands) + "\n```\n")
print("wrote", os.environ["ND_RESULTS_JSON"], "and", os.environ["ND_RESULTS_MD"])
PY
exit "$failed"
