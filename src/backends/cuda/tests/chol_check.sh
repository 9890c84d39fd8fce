#!/bin/sh
# Checks Cholesky's triangle passes (lib_cholesky.c) where there is no GPU:
# chol_check.c compiles their source with NVRTC for sm_90, and
# chol_emulate.cpp runs the same source as C++ on the host (a block's 256
# threads as real threads) around a stand-in potrf, for the four dtypes,
# tile edges and tile-group edges, batches, in place and out of place, against a long double
# Cholesky of A's lower triangle. About a minute of CPU.
set -e
cd "$(dirname "$0")/../../../.."
CUDA=${CUDA_PATH:-/usr/local/cuda}
work=${TMPDIR:-/tmp}/nd_cuda_chol
rm -rf "$work" && mkdir -p "$work"
cc -std=c11 -O1 -g -Wall -Wextra -Iinclude -Isrc -I"$CUDA/include" \
  src/backends/cuda/tests/chol_check.c src/backends/cuda/chol_source.c \
  -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lnvrtc -o "$work/chol_check"
"$work/chol_check" "$work"
# nd's tile groups (the source's NDK_GROUP), and blocks walking single
# tile rows (NDK_GROUP 1, the order bench_linalg_bench compares against)
for group in "" 1; do
  g++ -std=c++17 -O1 -Wall -Wextra -DCHOL_SOURCE="\"$work/chol.cu\"" ${group:+-DNDK_GROUP=$group} \
    src/backends/cuda/tests/chol_emulate.cpp -lpthread -o "$work/chol_emulate$group"
  "$work/chol_emulate$group"
done
