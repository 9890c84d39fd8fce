#!/usr/bin/env bash
# Matmul over pieces on the CUDA backend (docs/internals.md "Matmul over
# pieces"), on the GPU machine from the repository root after
# scripts/gpu/stage.sh staged .gpu/ (carry .gpu.tgz):
#   bash scripts/gpu/matmul_ring_check.sh
#  - tests: test_partition's matmul tests (B replicated and in a ring,
#    float32/float64/complex64/int32, chains over 5 syncs counting replicas
#    and ring copies) over logical GPU devices 0,0(,0,0), then all of
#    test_partition and test_matmul with ND_DEVICES=0,0 ND_SPLIT_MIN_BYTES=0;
#  - bench: bench_scaling matmul (a chain of 4 float32 N x N matmuls, B in a
#    ring) and matmul-tall (X @ W, W replicated) with ND_DEVICES=0 against
#    0,0 (and 0,1 on two GPUs): time, and the checksum within 1e-4 of one
#    device's (a ring sums the inner dimension in blocks: not bitwise).
# Logs go to $OUT (or ./gpu-out); the last lines summarise.
set -uo pipefail
OUT=${OUT:-gpu-out}
[ ! -f .gpu.tgz ] || { rm -rf .gpu && tar xzf .gpu.tgz; }
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.gpu/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export ND_BACKEND=cuda ND_CACHE_DIR=/tmp/nd-cache
N=${N:-8192}
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
lists="0,0"
[ "${gpus:-0}" -ge 2 ] && lists="0,0 0,1"
log="$OUT/matmul_ring.txt"
echo "GPUs visible: $gpus" | tee "$log"
summary() { grep -h "Synthesis" "$1" | sed 's/.*Tested/Tested/'; }
status=0
ND_DEVICES=0 .gpu/tests/test_partition --filter 'partition/matmul*' >"$OUT/mm-tests.log" 2>&1; rc=$?
echo "test_partition matmul* over logical devices of GPU 0: $(summary "$OUT/mm-tests.log") exit $rc" | tee -a "$log"
[ $rc -eq 0 ] || status=1
for devs in $lists; do
  for s in partition matmul; do
    ND_DEVICES=$devs ND_SPLIT_MIN_BYTES=0 .gpu/tests/test_$s --jobs 8 >"$OUT/mm-$devs-$s.log" 2>&1; rc=$?
    echo "ND_DEVICES=$devs test_$s: $(summary "$OUT/mm-$devs-$s.log") exit $rc" | tee -a "$log"
    [ $rc -eq 0 ] || status=1
  done
done
for c in matmul matmul-tall; do
  ref=""
  for devs in 0 $lists; do
    # --parts 1: the same problem on every list (matmul-tall would grow with P)
    line=$(ND_DEVICES=$devs ND_LOG=1 .gpu/bench/bench_scaling $c --n "$N" --parts 1 --runs 5 --check 2>"$OUT/$c-$devs.err")
    rc=$?
    [ $rc -eq 0 ] && [ -n "$line" ] || { echo "$c ND_DEVICES=$devs: FAILED (exit $rc)" | tee -a "$log"; tail -3 "$OUT/$c-$devs.err"; status=1; continue; }
    secs=$(echo "$line" | cut -d, -f6); chk=$(echo "$line" | cut -d, -f9)
    [ -n "$ref" ] || { ref=$chk; base=$secs; }
    verdict=$(awk -v a="$chk" -v b="$ref" 'BEGIN { d = a - b; if (d < 0) d = -d; r = d / (b < 0 ? -b : b); printf "%s rel %.1e", (r <= 1e-4 ? "ok" : "DIFFERS"), r }')
    case $verdict in DIFFERS*) status=1 ;; esac
    echo "$c N=$N ND_DEVICES=$devs: $(awk -v s="$secs" 'BEGIN { printf "%.2f", s * 1e3 }') ms per batch," \
      "$(awk -v a="$secs" -v b="$base" 'BEGIN { printf "%.3f", a / b }')x ND_DEVICES=0, checksum $verdict" | tee -a "$log"
  done
done
# Where the time goes with the ring on one GPU: per-step profile.
ND_DEVICES=0,0 ND_PROFILE=1 .gpu/bench/bench_scaling matmul --n "$N" --runs 2 >/dev/null 2>"$OUT/matmul-0,0-profile.txt" || true
echo "matmul ring check: $([ $status -eq 0 ] && echo OK || echo FAILURES)" | tee -a "$log"
exit $status
