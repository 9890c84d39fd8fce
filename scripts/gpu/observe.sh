#!/usr/bin/env bash
# Checks nd's observability on the GPU machine, after scripts/gpu/stage.sh
# staged .gpu/ (run from the repository root; logs in $OUT or ./gpu-out):
#
#   1. ND_PROFILE's bytes against Nsight Compute's DRAM bytes: the seed
#      examples (heat, Black-Scholes, pi, matmul chain) run once with
#      ND_PROFILE=1 (the table: unique bytes per call, achieved GB/s, share
#      of the measured device copy bandwidth) and once under ncu
#      (dram__bytes_read.sum + dram__bytes_write.sum per launch, caches
#      flushed between kernels, so DRAM bytes are what a kernel must move);
#      scripts/gpu/profile_vs_ncu.py matches the kernels by name and prints
#      both figures and their ratio ($OUT/profile-vs-ncu.txt).
#   2. NVTX ranges as an Nsight Systems user sees them (the machine has no
#      nsys): the CUPTI timeline tool (scripts/gpu/kernel_timeline.c) with
#      ND_TIMELINE_NVTX=1 records the NVTX ranges of the heat example, whose
#      grid and sweep are named; once with CUDA graphs off (a range per
#      named step: "jacobi sweep/grid: nd_add_mul_...") and once with them
#      on (graph replays: the flush's range only); $OUT/nvtx.txt lists the
#      ranges and how many of each.
#   3. ND_TRACE of the same run: the events carry the names ($OUT/trace.json).
set -uo pipefail
. "$(dirname "$0")/common.sh" # unpacks .gpu; LD_LIBRARY_PATH, ND_BACKEND, ND_CACHE_DIR, $OUT
NCU=/usr/local/cuda/bin/ncu
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"

# 1. ND_PROFILE against ncu.
declare -A RUNS=([heat]="2048 20" [black_scholes]="16777216" [pi]="16777216" [matmul_chain]="2048")
: > "$OUT/profile-vs-ncu.txt"
for ex in heat black_scholes pi matmul_chain; do
  args=${RUNS[$ex]}
  # shellcheck disable=SC2086
  ND_PROFILE=1 ".gpu/examples/$ex" $args >"$OUT/$ex-run.txt" 2>"$OUT/$ex-profile.txt"
  # shellcheck disable=SC2086
  "$NCU" --csv -k regex:'^nd_' --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    ".gpu/examples/$ex" $args >"$OUT/$ex-ncu.csv" 2>"$OUT/$ex-ncu.err"
  echo "== $ex $args" | tee -a "$OUT/profile-vs-ncu.txt"
  python3 scripts/gpu/profile_vs_ncu.py "$OUT/$ex-profile.txt" "$OUT/$ex-ncu.csv" | tee -a "$OUT/profile-vs-ncu.txt"
done

# 2. NVTX ranges through CUPTI.
cupti=$(ls .gpu/lib/libcupti.so.* 2>/dev/null | head -1)
if [ -f .gpu/lib/libnd_timeline.so ] && [ -n "$cupti" ]; then
  : > "$OUT/nvtx.txt"
  for graphs in 0 1; do
    ND_CUDA_GRAPHS=$graphs ND_TIMELINE_NVTX=1 NVTX_INJECTION64_PATH="$PWD/$cupti" \
      ND_TIMELINE_OUT="$OUT/nvtx-graphs$graphs.csv" LD_PRELOAD="$PWD/.gpu/lib/libnd_timeline.so" \
      .gpu/examples/heat 1024 50 >"$OUT/nvtx-heat-graphs$graphs.txt" 2>&1
    echo "== NVTX ranges, heat 1024 50, ND_CUDA_GRAPHS=$graphs" | tee -a "$OUT/nvtx.txt"
    python3 - "$OUT/nvtx-graphs$graphs.csv" <<'PY' | tee -a "$OUT/nvtx.txt"
import collections, csv, re, sys
names, count, kernels = {}, collections.Counter(), 0
for row in csv.reader(open(sys.argv[1])):
    if row and row[0] == "M" and row[4] == "1":
        names[row[5]] = row[7]
    elif row and row[0] == "M" and row[4] == "2" and row[5] in names:
        count[re.sub(r"flush \d+", "flush N", names.pop(row[5]))] += 1
    elif row and row[0] == "K":
        kernels += 1
for name, n in count.most_common(20):
    print(f"  {n:6d} x {name}")
print(f"  ({len(count)} distinct ranges, {sum(count.values())} in all; {kernels} kernels ran)")
PY
  done
else
  echo "no CUPTI timeline tool staged (scripts/gpu/stage.sh builds it where cupti.h is found)" | tee "$OUT/nvtx.txt"
fi

# 3. ND_TRACE with names.
ND_TRACE="$OUT/trace.json" .gpu/examples/heat 1024 10 >/dev/null 2>&1
grep -o '"name":"[^"]*"' "$OUT/trace.json" | sort | uniq -c | sort -rn | head -5 | tee "$OUT/trace-names.txt"
