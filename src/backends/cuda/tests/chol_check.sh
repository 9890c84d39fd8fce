#!/bin/sh
# Checks Cholesky's pack pass (lib_cholesky.c) where there is no GPU:
# chol_check.c compiles its source with NVRTC for sm_90, and
# chol_emulate.cpp runs the same source as C++ on the host (a block's 256
# threads as real threads) before a stand-in potrf (and the zeros kernel of
# ND_CUDA_CHOL_SIDE_ZEROS before and after it), for the four dtypes,
# tile edges and tile-group edges, batches, in place and out of place,
# against a long double Cholesky of A's lower triangle (the harness:
# emulate_harness.h), with nd's tile groups and with blocks walking single
# tile rows (NDK_GROUP 1, the order bench_linalg_bench compares against).
# About a minute of CPU.
set -e
cd "$(dirname "$0")/../../../.."
. src/backends/cuda/tests/emulate_build.sh
work=${TMPDIR:-/tmp}/nd_cuda_chol
rm -rf "$work" && mkdir -p "$work"
emu_cc "$work/chol_check" -DCHOL_EMULATE="\"$PWD/src/backends/cuda/tests/chol_emulate.cpp\"" \
  src/backends/cuda/tests/chol_check.c src/backends/cuda/chol_source.c
"$work/chol_check" "$work"
