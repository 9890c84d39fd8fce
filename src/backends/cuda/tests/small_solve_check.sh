#!/bin/sh
# Checks the small batched solve kernel (lib_small_solve.c) where there is
# no GPU: small_solve_check.c compiles its source with NVRTC for sm_90 (the
# toolkit, no device) and, as C++ for the host (emulate_harness.h), runs
# every n = 1..32 and dtype against a long double reference (pivoting,
# singular members, empty and partial batches). About a minute: one g++
# compile of every instance. Arguments: n (skip NVRTC).
set -e
cd "$(dirname "$0")/../../../.."
. src/backends/cuda/tests/emulate_build.sh
work=${TMPDIR:-/tmp}/nd_cuda_small_solve
rm -rf "$work" && mkdir -p "$work"
emu_cc "$work/small_solve_check" src/backends/cuda/tests/small_solve_check.c src/backends/cuda/small_solve_source.c
"$work/small_solve_check" "$work" "$@"
