#!/usr/bin/env bash
# The CUDA scan kernels side by side on the GPU machine: bench_gpu_speed
# (bench/gpu_speed.cu) once per variant, each in its own process with its
# own time limit, so a kernel that hangs or faults costs only its own line.
# Each prints its ms and x the floor (a device-to-device copy of the same
# bytes, read + write) for 2^28 float32, 4096 rows of 2^16 and 2^27
# float64, each checked first (within 1e-5 of a float64 host scan, the same
# bits on 2 more runs, edge cases bit for bit); CUB's DeviceScan and the
# floor are printed once. Then the scans suite (tests/test_scans, against
# NumPy's semantics through the whole library) once per variant, chosen by
# ND_SCAN_VARIANT. Run from the repository root after
# scripts/gpu/stage.sh, carrying .gpu.tgz or the smaller
#   tar czf .gpu-speed.tgz .gpu/COMMIT .gpu/lib .gpu/bench/bench_gpu_speed .gpu/tests/test_scans
#
#   bash bench/scan_variants.sh [VARIANTS]     (comma-separated; logs under $OUT)
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
if [ -f .gpu-speed.tgz ]; then rm -rf .gpu && tar xzf .gpu-speed.tgz
elif [ -f .gpu.tgz ]; then rm -rf .gpu && tar xzf .gpu.tgz; fi
export LD_LIBRARY_PATH="$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
VARIANTS=${1:-agg,one_pass,default}
cat .gpu/COMMIT 2>/dev/null
first=1 fail=0
for v in ${VARIANTS//,/ }; do
  timeout 60 .gpu/bench/bench_gpu_speed 10 28 scan "$v" > "$OUT/scan_$v.log" 2>&1
  rc=$?
  if [ $first = 1 ]; then
    grep -E '^gpu_speed:|^floor:|copy kernel|cub_inclusive' "$OUT/scan_$v.log"
    first=0
  fi
  grep -E "^  $v(_rows|_f64)? " "$OUT/scan_$v.log"
  if [ $rc -ne 0 ]; then
    echo "  $v: exit $rc $([ $rc -eq 124 ] && echo '(timed out)')"
    grep -E 'FAIL|error|failed' "$OUT/scan_$v.log" | head -3
    fail=1
  fi
done
if [ -x .gpu/tests/test_scans ]; then
  for v in ${VARIANTS//,/ }; do
    ( ND_BACKEND=cuda ND_SCAN_VARIANT=$v timeout 120 .gpu/tests/test_scans --jobs 4 > "$OUT/test_scans_$v.log" 2>&1 )
    rc=$?
    echo "test_scans ND_SCAN_VARIANT=$v rc=$rc $(grep -h Synthesis "$OUT/test_scans_$v.log" | sed 's/.*Tested/Tested/')"
    [ $rc -eq 0 ] || { fail=1; grep -B2 -A8 "FAIL\|CRASH" "$OUT/test_scans_$v.log" | head -20; }
  done
fi
exit $fail
