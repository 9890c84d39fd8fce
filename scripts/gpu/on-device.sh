#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, after scripts/gpu/stage.sh
# staged .gpu/: the Criterion suites and examples with ND_BACKEND=cuda, the
# suites again under compute-sanitizer memcheck, and the GPU benchmarks.
# Logs go to $OUT (or ./gpu-out); the last lines summarise.
set -uo pipefail
# Unpacks .gpu.txz/.gpu.tgz; LD_LIBRARY_PATH, ND_BACKEND, ND_CACHE_DIR, $OUT.
. "$(dirname "$0")/common.sh"
what=${1:-all}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
summary() { grep -h "Synthesis" "$1" | sed 's/.*Tested/Tested/' | awk -v n="$2" '{print n": "$0}'; }
if [ "$what" = all ] || [ "$what" = tests ]; then
  : > "$OUT/tests.log"
  for t in .gpu/tests/test_*; do
    n=$(basename "$t")
    "$t" --jobs 8 >"$OUT/$n.log" 2>&1; rc=$?
    summary "$OUT/$n.log" "$n" | tee -a "$OUT/tests.log"
    [ $rc -eq 0 ] || echo "$n: exit $rc" | tee -a "$OUT/tests.log"
  done
  for e in .gpu/examples/*; do
    n=$(basename "$e")
    if "$e" >"$OUT/example-$n.log" 2>&1; then echo "example $n: OK" | tee -a "$OUT/tests.log"
    else echo "example $n: FAIL" | tee -a "$OUT/tests.log"; tail -3 "$OUT/example-$n.log"; fi
  done
fi
if [ "$what" = all ] || [ "$what" = memcheck ]; then
  : > "$OUT/memcheck.log"
  for t in .gpu/tests/test_*; do
    n=$(basename "$t")
    /usr/local/cuda/bin/compute-sanitizer --tool memcheck --target-processes all --error-exitcode 99 \
      "$t" --jobs 8 >"$OUT/memcheck-$n.log" 2>&1; rc=$?
    errs=$(grep -h "ERROR SUMMARY" "$OUT/memcheck-$n.log" | awk '{s+=$4} END {print s+0}')
    echo "memcheck $n: exit $rc, sanitizer errors $errs, $(summary "$OUT/memcheck-$n.log" x | sed 's/^x: //')" | tee -a "$OUT/memcheck.log"
  done
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  .gpu/bench/bench_gpu_suite 2>&1 | tee "$OUT/gpu_suite.log"
  [ ! -x .gpu/bench/bench_interop_stream ] || .gpu/bench/bench_interop_stream 2>&1 | tee "$OUT/interop_stream.log"
fi
if [ "$what" = interop ]; then
  # Wrapped memory (a cudaMalloc'd 1 GiB buffer) against nd-owned memory,
  # and DLPack round trips with CuPy and PyTorch where installed.
  .gpu/bench/bench_interop_wrap --runs 9 2>&1 | tee "$OUT/interop_wrap.jsonl"
  GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536 \
    python3 scripts/gpu/dlpack_peers.py .gpu/lib/libnd.so 2>&1 | tee "$OUT/dlpack_peers.log"
fi
if [ "$what" = suite-profile ]; then
  # The suite's nd workloads (or those named after it): timed, then every
  # generated kernel's source ($OUT/kernel-src.tgz) and per-kernel ncu
  # figures ($OUT/suite-ncu.csv: duration, DRAM traffic, occupancy).
  shift
  rm -rf /tmp/nd-src /tmp/nd-cache-cold && mkdir -p /tmp/nd-src /tmp/nd-cache-cold
  ND_CACHE_DIR=/tmp/nd-cache-cold ND_CUDA_SOURCE_DIR=/tmp/nd-src \
    .gpu/bench/bench_nd_suite --runs 9 "$@" >"$OUT/suite.jsonl" 2>"$OUT/suite.txt"
  tar -C /tmp -czf "$OUT/kernel-src.tgz" nd-src
  /usr/local/cuda/bin/ncu --csv -k regex:'^nd_' --metrics \
gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,\
dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,\
sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size \
    .gpu/bench/bench_nd_suite --runs 1 "$@" >"$OUT/suite-ncu.csv" 2>"$OUT/suite-ncu.err"
fi
if [ "$what" = timeline ]; then
  # The device's timeline of the suite's nd workloads named after it (all
  # if none): every kernel's start and end through CUPTI
  # (scripts/gpu/kernel_timeline.c) in $OUT/timeline.csv, and where the
  # device idled in the last runs in $OUT/timeline.txt. Timed runs under
  # CUPTI are a few percent slower: read the gaps, not the totals.
  shift
  ND_TIMELINE_OUT="$OUT/timeline.csv" LD_PRELOAD="$PWD/.gpu/lib/libnd_timeline.so" \
    .gpu/bench/bench_nd_suite --runs 3 "$@" >"$OUT/timeline-suite.txt" 2>&1
  python3 scripts/gpu/timeline_gaps.py "$OUT/timeline.csv" | tee "$OUT/timeline.txt"
fi
if [ "$what" = profile ]; then
  # Kernel durations alone (no host time), to separate kernel speed from
  # recording/launch/synchronisation overhead in gpu_suite's wall times.
  /usr/local/cuda/bin/ncu --metrics gpu__time_duration.sum --csv -k regex:'^nd_' \
    .gpu/bench/bench_gpu_suite > "$OUT/ncu.csv" 2>"$OUT/ncu.err"
  python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; k = hdr.index("Kernel Name"); v = hdr.index("Metric Value"); u = hdr.index("Metric Unit")
d = collections.defaultdict(list)
for r in rows[1:]:
    val = float(r[v].replace(",", "")); unit = r[u]
    us = {"ns": val / 1000, "nsecond": val / 1000, "us": val, "usecond": val,
          "ms": val * 1000, "msecond": val * 1000}.get(unit, val)
    d[r[k][:60]].append(us)
for name, xs in d.items():
    xs.sort(); print("%-60s n=%3d median %9.1f us (unit %s)" % (name, len(xs), xs[len(xs)//2], unit))
PY
fi
