#!/usr/bin/env bash
# fft(x*w) of 2^26 complex64 with the multiply folded into a radix-R first
# stage ahead of cuFFT's batched plan (bench/fft_split_variants.cu, no nd),
# on the GPU machine from the repository root: builds the program with the
# machine's nvcc (no staged .gpu/ needed), runs its host check of the index
# math, then the GPU run. About a minute of build and under 30 s of run.
# One log: $OUT/fft_split.log (default ./gpu-out); exit status non-zero if
# the build, the host check or any variant's check failed.
#
#   bash scripts/gpu/fft_split.sh [LOG2_N]     (default 26)
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
L=$OUT/fft_split.log
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
BIN=${TMPDIR:-/tmp}/fft_split_variants
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  git rev-parse --short HEAD 2>/dev/null || true
  "$NVCC" --version | tail -1
} > "$L" 2>&1
export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! "$NVCC" -O3 -arch=sm_90 -std=c++17 -o "$BIN" bench/fft_split_variants.cu -lcufft >> "$L" 2>&1; then
  echo "build failed" | tee -a "$L"
  tail -20 "$L"
  exit 1
fi
"$BIN" --host-check >> "$L" 2>&1
hc=$?
timeout 300 "$BIN" "${1:-26}" >> "$L" 2>&1
rc=$?
echo "host check rc=$hc, gpu run rc=$rc$([ $rc -eq 124 ] && echo ' (timed out)')" >> "$L"
cat "$L"
[ $hc -eq 0 ] && [ $rc -eq 0 ]
