#!/bin/sh
# Checks the small batched solve kernel (lib_small_solve.c) where there is
# no GPU: small_solve_check.c compiles its source with NVRTC for sm_90 (the
# toolkit, no device) and, as C++ for the host, runs every n = 1..32 and
# dtype against a long double reference (pivoting, singular members, empty
# and partial batches). About a minute: one g++ compile of every instance.
# Arguments: n (skip NVRTC).
set -e
cd "$(dirname "$0")/../../../.."
CUDA=${CUDA_PATH:-/usr/local/cuda}
work=${TMPDIR:-/tmp}/nd_cuda_small_solve
rm -rf "$work" && mkdir -p "$work"
cc -std=c11 -O1 -g -Wall -Wextra -D_GNU_SOURCE -DND_BUILDING_LIBRARY -Iinclude -Isrc -I"$CUDA/include" \
  src/backends/cuda/tests/small_solve_check.c src/backends/cuda/small_solve_source.c \
  src/common/error.c src/common/dtype.c src/common/strbuf.c src/common/fault.c src/common/api_guard.c \
  src/common/callsite.c src/backends/cuda/cuda_loader.c \
  -L"$CUDA/lib64" -Wl,-rpath,"$CUDA/lib64" -lnvrtc -ldl -lm -lpthread -o "$work/small_solve_check"
"$work/small_solve_check" "$work" "$@"
