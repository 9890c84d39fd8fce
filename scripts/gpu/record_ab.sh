#!/usr/bin/env bash
# Recording cost of two builds on the GPU machine's host, alternated
# (bench/record_cost.c, both loops, CPU backend: the recording path is the
# one the CUDA backend runs, without a device in the way). From the
# repository root, with two CPU-only builds copied into scratch/ab/old and
# scratch/ab/new (each: libnd.so* and bench_record_cost; how they are made
# is in bench/results/2026-11-29-record-cost-vm-7.md, "GPU commands"):
#   bash scripts/gpu/record_ab.sh [PAIRS]
# Prints the host's CPU, then PAIRS (default 5) lines per build, old then
# new in turn, so that the host's drift falls on both alike; the log goes
# to $OUT/record_ab.txt (or ./gpu-out).
set -uo pipefail
pairs=${1:-5}
out=${OUT:-gpu-out}
mkdir -p "$out"
for v in old new; do
  if [ ! -x "scratch/ab/$v/bench_record_cost" ]; then
    echo "record_ab: scratch/ab/$v/bench_record_cost is missing (see the header)" >&2
    exit 2
  fi
done
{
  lscpu | grep 'Model name'
  for i in $(seq "$pairs"); do
    for v in old new; do
      printf '%s %s ' "$i" "$v"
      ND_BACKEND=cpu LD_LIBRARY_PATH="$PWD/scratch/ab/$v${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "scratch/ab/$v/bench_record_cost" 2>&1 | grep -E "freed at once|left to the flush" | tr -s ' ' | tr '\n' ' '
      echo
    done
  done
} | tee "$out/record_ab.txt"
