#!/usr/bin/env bash
# The CUB plugin's scans and sorts on the GPU machine, in about 2 minutes:
# run from the repository root after scripts/gpu/stage.sh (which builds
# .gpu/bench/bench_gpu_speed with the plugin and packs .gpu.tgz):
#
#   bash bench/gpu_speed_check.sh            (logs under $OUT, default gpu-out)
#
# 1. bench_gpu_speed (bench/gpu_speed.cu): every scan variant against the
#    copy floor, the sorts against CUB alone, each checked bit for bit on the
#    host first (the scan also run to run); device time only.
# 2. The CUDA suites that run the plugin's scans and sorts (test_scans,
#    test_sorting, test_order_stats) with ND_BACKEND=cuda.
# 3. The same workloads through nd (bench_scan_hist, bench_sort_bench):
#    recording, running and synchronising, as a program sees them.
# The last lines summarise; exit status 1 if a check or suite failed.
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
# The device call carries .gpu.tgz, or only what this needs (smaller):
#   tar czf .gpu-speed.tgz .gpu/COMMIT .gpu/lib .gpu/bench/bench_{gpu_speed,scan_hist,sort_bench} \
#       .gpu/tests/test_{scans,sorting,order_stats}
if [ -f .gpu-speed.tgz ]; then rm -rf .gpu && tar xzf .gpu-speed.tgz
elif [ -f .gpu.tgz ]; then rm -rf .gpu && tar xzf .gpu.tgz; fi
export LD_LIBRARY_PATH="$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export ND_BACKEND=cuda ND_CACHE_DIR=/tmp/nd-cache
L=$OUT/gpu_speed.log
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat .gpu/COMMIT 2>/dev/null; } | tee "$L"
fail=0

echo "=== 1. bench_gpu_speed (plugin kernels, device time)" | tee -a "$L"
# Sorts and scans in two processes: a hang or fault in one keeps the other's figures.
# The scan variants timed (every one takes ~10 s of checks): SCAN_VARIANTS.
SCAN_VARIANTS=${SCAN_VARIANTS:-default,agg,one_pass}
for what in sort scan; do
  timeout 300 .gpu/bench/bench_gpu_speed 10 28 $what $SCAN_VARIANTS 2>&1 | tee -a "$L"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "bench_gpu_speed $what: exit $rc" | tee -a "$L"; fail=1; }
done

echo "=== 2. CUDA suites" | tee -a "$L"
for t in test_scans test_sorting test_order_stats; do
  ( timeout 120 ".gpu/tests/$t" --jobs 4 > "$OUT/$t.log" 2>&1; echo $? > "$OUT/$t.rc" ) &
done
wait
for t in test_scans test_sorting test_order_stats; do
  rc=$(cat "$OUT/$t.rc")
  echo "$t rc=$rc $(grep -h Synthesis "$OUT/$t.log" | sed 's/.*Tested/Tested/')" | tee -a "$L"
  if [ "$rc" -ne 0 ]; then fail=1; grep -B2 -A8 "FAIL\|CRASH" "$OUT/$t.log" | head -40 | tee -a "$L"; fi
done

# The scans suite again through other kernels (ND_SCAN_VARIANT).
for v in agg one_pass; do
  ( ND_SCAN_VARIANT=$v timeout 120 .gpu/tests/test_scans --jobs 4 > "$OUT/test_scans_$v.log" 2>&1 ); rc=$?
  echo "test_scans_$v rc=$rc $(grep -h Synthesis "$OUT/test_scans_$v.log" | sed 's/.*Tested/Tested/')" | tee -a "$L"
  [ "$rc" -eq 0 ] || { fail=1; grep -B2 -A8 "FAIL\|CRASH" "$OUT/test_scans_$v.log" | head -40 | tee -a "$L"; }
done

echo "=== 3. through nd (wall time: record + run + sync)" | tee -a "$L"
timeout 60 .gpu/bench/bench_scan_hist 268435456 7 2>&1 | grep -v '^JSON' | tee -a "$L"
timeout 90 .gpu/bench/bench_sort_bench 268435456 67108864 4096 65536 7 2>&1 | tee -a "$L"

echo "=== summary" | tee -a "$L"
{ sed -n "/^targets:/,/check(s) failed/p" "$L"; grep "^bench_gpu_speed .*: exit" "$L"; grep -E "^test_[a-z_]+ rc=" "$L"
  grep -E "^  (copy|cumsum) " "$L" | sed 's/^/nd end to end: /'; grep '"sort_bench"' "$L"; } | tee "$OUT/summary.txt"
[ "$fail" -eq 0 ] && echo "gpu_speed_check: PASS (checks and suites)" || echo "gpu_speed_check: FAIL (see $L)"
exit $fail
